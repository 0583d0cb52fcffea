//! Replication between two sandboxes of one lab: the primary writes a binary log (its role's
//! settings, `qpslab_sandbox::Role::Primary`), the replica reads it over TCP on 127.0.0.1 with
//! an account of its own, GTID-based (MariaDB `MASTER_USE_GTID = slave_pos`).
//!
//! A new replica starts from the same template as its primary and replays the primary's binary
//! log from its first GTID, so everything written on the primary since its first start as a
//! primary (a prepared dataset included) arrives. The replication account's password is
//! generated here and handed to `CHANGE MASTER` only: it is never printed or stored by
//! qpslab (the server keeps it in the replica's `master.info`, inside its private datadir).

use qpslab_core::fault::{user_if, Blame, Fault};
use qpslab_core::literal::quote;
use qpslab_core::ConnectOptions;
use qpslab_probe::replica::{replica_status, LagMonitor, ReplicaStatus};
use qpslab_probe::Sampler;
use qpslab_sandbox::{Role, Sandbox, SandboxHome, SandboxInfo, SandboxSpec};
use qpslab_wire::Conn;
use std::io::Read;
use std::time::{Duration, Instant};

/// How long a new replica's threads may take to start.
const START_WAIT: Duration = Duration::from_secs(15);

/// Why replication could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum ReplicaError {
    /// The primary writes no binary log.
    #[error(
        "sandbox '{0}' writes no binary log: restart it as a primary with \
         `qpslab server stop {0} && qpslab server start {0} --primary` (a replica only gets \
         what the primary wrote since)"
    )]
    NoBinlog(String),
    /// The replication threads did not start.
    #[error("replication from '{primary}' did not start: {why}")]
    NotStarted {
        /// The primary's name.
        primary: String,
        /// The replica's last error, or its threads' states.
        why: String,
    },
    /// A server query failed.
    #[error(transparent)]
    Wire(#[from] qpslab_wire::Error),
    /// A replication status could not be read.
    #[error(transparent)]
    Probe(#[from] qpslab_probe::Error),
    /// No randomness for the password.
    #[error("reading /dev/urandom: {0}")]
    Random(std::io::Error),
}

/// The user's when the user can fix it: a primary without a binary log.
impl Blame for ReplicaError {
    fn fault(&self) -> Fault {
        user_if(matches!(self, ReplicaError::NoBinlog(_)))
    }
}

/// Makes the sandbox `replica` (reached through `replica_opts`) replicate from `primary`, and
/// waits until both replication threads run. A replica that already replicates (a restart) is
/// only pointed at the primary's current port and started.
pub fn attach(
    primary: &SandboxInfo,
    replica: &str,
    replica_opts: &ConnectOptions,
) -> Result<ReplicaStatus, ReplicaError> {
    let mut p = primary_conn(primary)?;
    let mut r = Conn::connect(replica_opts)?;
    let mariadb = r.is_mariadb();
    let user = format!("repl_{replica}");
    let existing = replica_status(&mut r)?;
    match existing {
        Some(s) if s.source == format!("127.0.0.1:{}", primary.port) => {}
        Some(_) => {
            // Same primary, new port: the GTID position and the account stay.
            r.execute(stop_sql(mariadb))?;
            r.execute(&repoint_sql(mariadb, primary.port))?;
        }
        None => {
            let password = generate_password().map_err(ReplicaError::Random)?;
            create_account(&mut p, &user, &password)?;
            if mariadb {
                r.execute("SET GLOBAL gtid_slave_pos = ''")?;
            }
            r.execute(&change_sql(mariadb, primary.port, &user, &password))?;
        }
    }
    r.execute(if mariadb {
        "START SLAVE"
    } else {
        "START REPLICA"
    })?;
    wait_running(&mut r, &primary.name)
}

/// A setup's sandbox writes a binary log when the setup has a replica.
pub(crate) fn configure(spec: &mut SandboxSpec, has_replica: bool) {
    if has_replica {
        spec.role = Role::Primary;
    }
}

/// The lag monitor of a setup's replica, if it has one, for its sampler.
pub(crate) struct Watch(Option<LagMonitor>);

impl Watch {
    /// `sampler`, measuring the replica's lag on every tick.
    pub(crate) fn watched_by(self, mut sampler: Sampler) -> Sampler {
        if let Some(m) = self.0 {
            sampler.watch_replica(m);
        }
        sampler
    }
}

/// The replica of a study setup (`replica = { set = ... }`: its `settings`, none without a
/// replica), started next to the setup's sandbox `primary` from the same server installation
/// (`basedir`) and replicating, named after it (`NAME-r`), and the monitor of its lag; nothing
/// without one. An error is one line.
pub(crate) fn for_setup(
    home: &SandboxHome,
    settings: Option<&[(String, String)]>,
    basedir: Option<&std::path::Path>,
    primary: &Option<Sandbox>,
) -> Result<(Option<Sandbox>, Watch), String> {
    let (Some(settings), Some(primary)) = (settings, primary) else {
        return Ok((None, Watch(None)));
    };
    let name = format!("{}-r", primary.name());
    let mut spec = SandboxSpec::build(&name, settings, None, None, basedir)
        .map_err(|e| format!("replica: {e}"))?;
    spec.role = Role::Replica {
        of: primary.name().to_string(),
    };
    // A replica left running by a killed qpslab holds the name: stop it first.
    if qpslab_sandbox::find(home, &name).is_ok_and(|i| i.alive) {
        let _ = qpslab_sandbox::stop_by_name(home, &name);
    }
    let first_line = |e: String| format!("replica: {}", e.lines().next().unwrap_or(""));
    let sb = qpslab_sandbox::start(home, &spec).map_err(|e| first_line(e.to_string()))?;
    attach(primary.info(), &name, &sb.connect_options()).map_err(|e| first_line(e.to_string()))?;
    let monitor = LagMonitor::start(&primary.connect_options(), &sb.connect_options())
        .map_err(|e| first_line(e.to_string()))?
        .with_pid(sb.pid());
    Ok((Some(sb), Watch(Some(monitor))))
}

/// Checks that `primary` writes a binary log (before a replica is started for it).
pub fn check_primary(primary: &SandboxInfo) -> Result<(), ReplicaError> {
    primary_conn(primary).map(drop)
}

/// A connection to `primary`, which must write a binary log.
/// The replication state of a sandbox: `None` for one that is stopped or no replica.
pub fn replication_of(info: &SandboxInfo) -> Result<Option<ReplicaStatus>, ReplicaError> {
    if !info.alive {
        return Ok(None);
    }
    let mut c = Conn::connect(&info.connect_options())?;
    Ok(replica_status(&mut c)?)
}

/// The names of the running sandboxes of `home` that replicate from `name`.
pub fn replicas_of(home: &SandboxHome, name: &str) -> Vec<String> {
    qpslab_sandbox::list(home)
        .unwrap_or_default()
        .into_iter()
        .filter(|i| i.alive && matches!(&i.role, Role::Replica { of } if of == name))
        .map(|i| i.name)
        .collect()
}

fn primary_conn(primary: &SandboxInfo) -> Result<Conn, ReplicaError> {
    let mut p = Conn::connect(&primary.connect_options())?;
    if p.query("SELECT @@log_bin")?.first_value() != Some("1") {
        return Err(ReplicaError::NoBinlog(primary.name.clone()));
    }
    Ok(p)
}

/// The replication account on the primary, kept out of its binary log.
fn create_account(p: &mut Conn, user: &str, password: &str) -> Result<(), ReplicaError> {
    let account = format!("{}@'127.0.0.1'", quote(user));
    let pw = quote(password);
    p.execute("SET SESSION sql_log_bin = 0")?;
    p.execute(&format!(
        "CREATE USER IF NOT EXISTS {account} IDENTIFIED BY {pw}"
    ))?;
    p.execute(&format!("ALTER USER {account} IDENTIFIED BY {pw}"))?;
    p.execute(&format!("GRANT REPLICATION SLAVE ON *.* TO {account}"))?;
    p.execute("SET SESSION sql_log_bin = 1")?;
    Ok(())
}

fn stop_sql(mariadb: bool) -> &'static str {
    if mariadb {
        "STOP SLAVE"
    } else {
        "STOP REPLICA"
    }
}

/// `CHANGE MASTER TO` for a new replica. MySQL's form (GTID auto-position, which needs
/// `gtid_mode=ON` and `enforce_gtid_consistency=ON` on both) is untested.
fn change_sql(mariadb: bool, port: u16, user: &str, password: &str) -> String {
    let (user, pw) = (quote(user), quote(password));
    if mariadb {
        format!(
            "CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = {port}, \
             MASTER_USER = {user}, MASTER_PASSWORD = {pw}, MASTER_USE_GTID = slave_pos"
        )
    } else {
        format!(
            "CHANGE REPLICATION SOURCE TO SOURCE_HOST = '127.0.0.1', SOURCE_PORT = {port}, \
             SOURCE_USER = {user}, SOURCE_PASSWORD = {pw}, SOURCE_AUTO_POSITION = 1, \
             GET_SOURCE_PUBLIC_KEY = 1"
        )
    }
}

fn repoint_sql(mariadb: bool, port: u16) -> String {
    if mariadb {
        format!("CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = {port}")
    } else {
        format!("CHANGE REPLICATION SOURCE TO SOURCE_HOST = '127.0.0.1', SOURCE_PORT = {port}")
    }
}

/// Waits until both threads run; an error the replica reports ends the wait at once.
fn wait_running(r: &mut Conn, primary: &str) -> Result<ReplicaStatus, ReplicaError> {
    let t0 = Instant::now();
    loop {
        let s = replica_status(r)?.unwrap_or_default();
        if s.running() {
            return Ok(s);
        }
        if s.last_error.is_some() || t0.elapsed() > START_WAIT {
            let why = s.last_error.clone().unwrap_or_else(|| {
                format!("IO thread {}, SQL thread {}", s.io_running, s.sql_running)
            });
            return Err(ReplicaError::NotStarted {
                primary: primary.to_string(),
                why,
            });
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// 32 hex digits from the OS RNG.
fn generate_password() -> std::io::Result<String> {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn change_master_uses_gtids_over_tcp_and_quotes() {
        let sql = change_sql(true, 3307, "repl_r'1", "p");
        assert!(
            sql.contains("MASTER_HOST = '127.0.0.1', MASTER_PORT = 3307"),
            "{sql}"
        );
        assert!(sql.contains("MASTER_USER = 'repl_r\\'1'"), "{sql}");
        assert!(sql.ends_with("MASTER_USE_GTID = slave_pos"), "{sql}");
        assert!(change_sql(false, 1, "u", "p").contains("SOURCE_AUTO_POSITION = 1"));
        let a = generate_password().unwrap();
        assert_eq!(a.len(), 32);
        assert_ne!(a, generate_password().unwrap());
    }
}
