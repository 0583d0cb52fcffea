//! What the advisor knows about a server: its version and variables, its counters, which
//! variables need a restart, how much InnoDB data it holds, and (for a server on this host)
//! the machine and the storage of its datadir.

use super::restart;
use qpslab_core::env::{HostFacts, ServerInfo};
use qpslab_core::status::GlobalStatus;
use qpslab_core::ConnectOptions;
use qpslab_probe::StorageFacts;
use qpslab_wire::Conn;
use std::collections::BTreeMap;
use std::path::Path;

/// Everything the rules read. Built from a live server by [`gather`], or by hand in tests.
#[derive(Clone, Debug, Default)]
pub struct Facts {
    /// Version, flavour and `SHOW GLOBAL VARIABLES` (without secrets).
    pub server: ServerInfo,
    /// `SHOW GLOBAL STATUS`.
    pub status: GlobalStatus,
    /// Whether each variable is read-only at run time (needs a restart), by lowercase name:
    /// MariaDB's `information_schema.SYSTEM_VARIABLES.READ_ONLY`; empty when the server does
    /// not say (MySQL), where [`restart::needs_restart`] falls back to a small table.
    pub read_only: BTreeMap<String, bool>,
    /// Bytes of InnoDB data and indexes (`information_schema.TABLES`).
    pub innodb_bytes: u64,
    /// The machine and the datadir's storage, only for a server on this host.
    pub local: Option<Local>,
}

/// Facts of the host a local server runs on.
#[derive(Clone, Debug, Default)]
pub struct Local {
    /// Cores, memory, THP, swappiness, governor.
    pub host: HostFacts,
    /// Where the datadir lives: file system, I/O scheduler, rotational or not.
    pub storage: StorageFacts,
}

impl Facts {
    /// A global variable's value, if the server has it.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.server.variables.get(name).map(String::as_str)
    }

    /// A global variable as a number, if the server has it and it is one.
    pub fn num(&self, name: &str) -> Option<u64> {
        self.var(name)?.parse().ok()
    }

    /// A status counter (0 when absent or not a number).
    pub fn counter(&self, name: &str) -> u64 {
        self.status.get(name).and_then(|v| v.as_u64()).unwrap_or(0)
    }

    /// The server's uptime in seconds.
    pub fn uptime_s(&self) -> u64 {
        self.counter("Uptime")
    }

    /// Whether the server is MariaDB.
    pub fn is_mariadb(&self) -> bool {
        self.server.flavor == "mariadb"
    }

    /// Whether changing `variable` needs a restart on this server.
    pub fn needs_restart(&self, variable: &str) -> bool {
        restart::needs_restart(&self.read_only, variable)
    }
}

/// Why the facts of a server could not be read ([`read_facts`]).
#[derive(Debug, thiserror::Error)]
pub enum FactsError {
    /// The server could not be reached.
    #[error("connecting to {target}: {source}")]
    Connect {
        /// The redacted target.
        target: String,
        /// The client's error.
        source: qpslab_wire::Error,
    },
    /// A fact could not be read.
    #[error("reading the facts of {target}: {source}")]
    Read {
        /// The redacted target.
        target: String,
        /// The probe's error.
        source: qpslab_probe::Error,
    },
}

/// Connects to the server at `target` and reads its facts ([`gather`]); a server on this host
/// (socket, sandbox, localhost) has its host and storage read too.
pub fn read_facts(target: &ConnectOptions) -> Result<Facts, FactsError> {
    let describe = || target.describe();
    let mut conn = Conn::connect(target).map_err(|source| FactsError::Connect {
        target: describe(),
        source,
    })?;
    gather(&mut conn, target.endpoint.is_local()).map_err(|source| FactsError::Read {
        target: describe(),
        source,
    })
}

/// Reads the facts of the server on `conn`; `local` says it runs on this host (socket,
/// sandbox, localhost), so the host and its datadir's storage are read too.
pub fn gather(conn: &mut Conn, local: bool) -> Result<Facts, qpslab_probe::Error> {
    let server = qpslab_probe::server_info(conn)?;
    let status = qpslab_probe::global_status(conn)?;
    let read_only = if server.flavor == "mariadb" {
        // MariaDB before 10.2 has no SYSTEM_VARIABLES table: fall back to the table of knobs.
        read_only_flags(conn).unwrap_or_default()
    } else {
        BTreeMap::new()
    };
    let innodb_bytes = innodb_bytes(conn)?;
    let local = local.then(|| Local {
        host: qpslab_probe::host_facts(),
        storage: qpslab_probe::storage_facts(Path::new(
            server.variables.get("datadir").map_or("/", String::as_str),
        )),
    });
    Ok(Facts {
        server,
        status,
        read_only,
        innodb_bytes,
        local,
    })
}

/// MariaDB's own word on which variables can change at run time.
fn read_only_flags(conn: &mut Conn) -> Result<BTreeMap<String, bool>, qpslab_probe::Error> {
    let r = conn.query(
        "SELECT VARIABLE_NAME, READ_ONLY FROM information_schema.SYSTEM_VARIABLES \
         WHERE VARIABLE_SCOPE <> 'SESSION ONLY'",
    )?;
    Ok(r.rows
        .iter()
        .filter_map(|row| match row.as_slice() {
            [Some(name), Some(ro)] => Some((name.to_ascii_lowercase(), ro == "YES")),
            _ => None,
        })
        .collect())
}

/// Data and index bytes of every InnoDB table.
fn innodb_bytes(conn: &mut Conn) -> Result<u64, qpslab_probe::Error> {
    let r = conn.query(
        "SELECT COALESCE(SUM(DATA_LENGTH + INDEX_LENGTH), 0) FROM information_schema.TABLES \
         WHERE ENGINE = 'InnoDB'",
    )?;
    let cell = r
        .rows
        .first()
        .and_then(|row| row.first().cloned().flatten());
    cell.as_deref()
        .unwrap_or("0")
        .parse::<f64>()
        .map(|b| b as u64)
        .map_err(|_| qpslab_probe::Error::Format {
            what: "information_schema.TABLES".into(),
            detail: format!("data size {cell:?} is not a number"),
        })
}
