//! Building and removing sysbench datasets: `qpslab prepare` and `qpslab cleanup`.
//!
//! [`prepare`] creates the database if asked to (else a missing one is an error) and the `sbtestN` tables exactly as sysbench
//! 1.0.20 does, loads their rows from several connections at once (a table's id range is split
//! into chunks, so one big table loads in parallel too) from a generator (no temporary file):
//! on MariaDB as binary parameter rows of one prepared INSERT (COM_STMT_BULK_EXECUTE), else
//! streamed through `LOAD DATA LOCAL INFILE`, else as multi-row INSERTs; and it builds
//! each `k_N` index as soon as its table is loaded. What it built is recorded in the
//! `qpslab_datasets` table, which lets [`dataset_status`] tell whether a dataset matches a
//! workload and lets [`cleanup`] drop only what qpslab created.

use crate::workload::dataset::{rows_to_load, tables_used};
use crate::workload::schema::{create_table_sql, table_name};
use crate::workload::{Workload, WorkloadError};
use qpslab_core::fault::{user_if, Blame, Fault};
use qpslab_core::workload::{WorkloadKind, WorkloadOptions};
use qpslab_core::ConnectOptions;
use qpslab_wire::Conn;
use std::collections::HashMap;
use std::time::{Duration, Instant};

mod catalog;
mod load;
mod tpcc;

pub use catalog::DatasetStatus;
pub use tpcc::{check as check_tpcc, cleanup as cleanup_tpcc};

/// The database used when the connection options name none (sysbench's `--mysql-db`).
pub const DEFAULT_DATABASE: &str = "sbtest";

/// How rows reach the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadMethod {
    /// [`LoadMethod::Bulk`] on MariaDB, else `LOAD DATA LOCAL INFILE` when the server allows
    /// it (`local_infile`), else INSERTs.
    Auto,
    /// MariaDB's COM_STMT_BULK_EXECUTE: one prepared single-row INSERT run over batches of
    /// binary parameter rows (about 512 KiB each). Nothing for the server to parse per row:
    /// on 2 cores it took 29% less server CPU than `LOAD DATA` for 8 × 1M rows.
    Bulk,
    /// `LOAD DATA LOCAL INFILE` streamed from the generator.
    LoadData,
    /// Multi-row INSERTs of about 512 KiB, as sysbench sends them.
    Insert,
}

impl LoadMethod {
    /// How the method shows in messages.
    pub fn describe(self) -> &'static str {
        match self {
            LoadMethod::Auto => "automatic",
            LoadMethod::Bulk => "bulk INSERT (COM_STMT_BULK_EXECUTE)",
            LoadMethod::LoadData => "LOAD DATA LOCAL INFILE",
            LoadMethod::Insert => "multi-row INSERT",
        }
    }
}

/// Tuning of [`prepare_with`] (for TPC-C, `threads` loaders take whole warehouses, and
/// [`LoadMethod::LoadData`] falls back to INSERTs).
#[derive(Clone, Debug)]
pub struct PrepareConfig {
    /// Connections loading at once (at least 1).
    pub threads: u32,
    /// How rows are sent.
    pub method: LoadMethod,
    /// Rows per chunk; 0 picks one from the table size and thread count.
    pub chunk_rows: u64,
    /// Create the database when it does not exist; when false a missing database is
    /// [`PrepareError::MissingDatabase`] (an external server's schemas are the user's).
    pub create_database: bool,
}

impl PrepareConfig {
    /// `threads` connections, automatic method and chunk size, creating the database if needed.
    pub fn new(threads: u32) -> PrepareConfig {
        PrepareConfig {
            threads,
            method: LoadMethod::Auto,
            chunk_rows: 0,
            create_database: true,
        }
    }
}

/// Progress of a running prepare, reported a few times per second.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PrepareProgress {
    /// Rows sent so far.
    pub rows_done: u64,
    /// Rows to send in all.
    pub rows_total: u64,
    /// Tables whose secondary index is built (or that need none) so far.
    pub tables_done: u32,
    /// Tables being prepared.
    pub tables_total: u32,
    /// Time since prepare started.
    pub elapsed: Duration,
}

/// What [`prepare`] did.
#[derive(Clone, Debug, PartialEq)]
pub struct PrepareReport {
    /// The database holding the tables.
    pub database: String,
    /// Tables created (0 when a matching dataset was already there).
    pub tables: u32,
    /// Rows loaded.
    pub rows: u64,
    /// The method used ([`LoadMethod::Auto`] resolved).
    pub method: LoadMethod,
    /// True when a matching dataset was found and nothing was built.
    pub already_present: bool,
    /// Wall time from start to the last index built.
    pub elapsed: Duration,
}

/// What [`cleanup`] dropped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CleanupReport {
    /// The database cleaned.
    pub database: String,
    /// Tables dropped, in order.
    pub dropped: Vec<String>,
}

/// Why a prepare, status check or cleanup failed.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    /// The workload options are invalid.
    #[error(transparent)]
    Workload(#[from] WorkloadError),
    /// A statement failed; `context` says which step.
    #[error("{context}: {source}")]
    Server {
        /// The step that failed, e.g. "loading sbtest3".
        context: String,
        /// The client's error.
        #[source]
        source: qpslab_wire::Error,
    },
    /// Tables are in the way: a different qpslab dataset, or tables qpslab did not create.
    #[error("{0}")]
    Conflict(String),
    /// The request cannot be done as asked (e.g. select_random_* with more than one table).
    #[error("{0}")]
    Unsupported(String),
    /// The database does not exist and creating it was not asked for.
    #[error("database {0} does not exist")]
    MissingDatabase(String),
    /// The loaded tables do not hold the rows they should (checked after loading).
    #[error("{0}")]
    Verify(String),
}

impl Blame for PrepareError {
    /// True when the user's input or the state they asked us to use is at fault (exit code 2):
    /// invalid options, tables in the way, a missing database. A failing statement or a failed
    /// verification of what was loaded is not.
    fn fault(&self) -> Fault {
        user_if(!matches!(
            self,
            PrepareError::Server { .. } | PrepareError::Verify(_)
        ))
    }
}

/// Adds the step to a client error.
pub(crate) trait Context<T> {
    fn context(self, what: impl FnOnce() -> String) -> Result<T, PrepareError>;
}

impl<T> Context<T> for Result<T, qpslab_wire::Error> {
    fn context(self, what: impl FnOnce() -> String) -> Result<T, PrepareError> {
        self.map_err(|source| PrepareError::Server {
            context: what(),
            source,
        })
    }
}

/// Prepares with `threads` connections, choosing the fastest method the server allows and
/// creating the database when missing.
pub fn prepare(
    opts: &ConnectOptions,
    w: &WorkloadOptions,
    threads: u32,
    progress: &mut dyn FnMut(PrepareProgress),
) -> Result<PrepareReport, PrepareError> {
    prepare_with(opts, w, &PrepareConfig::new(threads), progress)
}

/// Prepares as `cfg` says. A matching dataset is left alone; a different one, or sbtest
/// tables qpslab did not create, are an error (nothing is dropped here: see [`cleanup`]).
pub fn prepare_with(
    opts: &ConnectOptions,
    w: &WorkloadOptions,
    cfg: &PrepareConfig,
    progress: &mut dyn FnMut(PrepareProgress),
) -> Result<PrepareReport, PrepareError> {
    if w.kind == WorkloadKind::Tpcc {
        return tpcc::prepare(opts, w, cfg, progress);
    }
    Workload::new(w)?;
    if matches!(
        w.kind,
        WorkloadKind::SelectRandomPoints | WorkloadKind::SelectRandomRanges
    ) && w.tables != 1
    {
        return Err(PrepareError::Unsupported(format!(
            "{} does not support --tables > 1 (as in sysbench)",
            w.kind
        )));
    }
    let started = Instant::now();
    let (db_opts, database) = ensure_database(opts, cfg.create_database)?;
    let mut conn = Conn::connect(&db_opts).context(|| format!("connecting to {database}"))?;
    let report = |tables, rows, method, already_present| PrepareReport {
        database: database.clone(),
        tables,
        rows,
        method,
        already_present,
        elapsed: started.elapsed(),
    };
    match dataset_status(&mut conn, w)? {
        DatasetStatus::Matches => return Ok(report(0, 0, cfg.method, true)),
        DatasetStatus::Missing => {}
        DatasetStatus::Different(why) => {
            return Err(PrepareError::Conflict(format!(
                "a different dataset is in {database}: {why}; run cleanup first"
            )))
        }
        DatasetStatus::Foreign => {
            return Err(PrepareError::Conflict(format!(
                "{database} already holds usable sbtest tables not created by qpslab; \
                 use them as they are, or drop them yourself"
            )))
        }
    }
    let method = resolve_method(&mut conn, cfg.method)?;
    let tables = tables_used(w);
    catalog::create_catalog(&mut conn)?;
    for t in 1..=tables {
        let name = table_name(t);
        conn.execute(&create_table_sql(w, t))
            .context(|| format!("creating {name}"))?;
        catalog::record(&mut conn, w, t)?;
    }
    let rows_per_table = rows_to_load(w);
    let max_packet = max_packet(&mut conn)?;
    load::load_all(&db_opts, w, cfg, method, max_packet, started, progress)?;
    for t in 1..=tables {
        catalog::mark_complete(&mut conn, t)?;
    }
    Ok(report(
        tables,
        rows_per_table * u64::from(tables),
        method,
        false,
    ))
}

/// The server's `max_allowed_packet`, when it says.
fn max_packet(conn: &mut Conn) -> Result<Option<usize>, PrepareError> {
    Ok(conn
        .query("SELECT @@max_allowed_packet")
        .context(|| "reading max_allowed_packet".into())?
        .first_value()
        .and_then(|v| v.parse().ok()))
}

/// Checks the tables the workload needs in the connection's current database.
pub fn dataset_status(conn: &mut Conn, w: &WorkloadOptions) -> Result<DatasetStatus, PrepareError> {
    if w.kind == WorkloadKind::Tpcc {
        tpcc::status(conn, w)
    } else {
        catalog::dataset_status(conn, w)
    }
}

/// The connection's current database; an error when none is selected.
fn current_database(conn: &mut Conn) -> Result<String, PrepareError> {
    let r = conn
        .query("SELECT DATABASE()")
        .context(|| "reading the current database".into())?;
    r.first_value().map(str::to_string).ok_or_else(|| {
        PrepareError::Unsupported(
            "no database selected: connect with a database (sysbench uses sbtest)".into(),
        )
    })
}

/// Checks that the database exists, creating it when missing if `create`; returns options that
/// select it, and its name.
fn ensure_database(
    opts: &ConnectOptions,
    create: bool,
) -> Result<(ConnectOptions, String), PrepareError> {
    let database = opts
        .database
        .clone()
        .unwrap_or_else(|| DEFAULT_DATABASE.to_string());
    let mut admin = opts.clone();
    admin.database = None;
    let mut conn =
        Conn::connect(&admin).context(|| format!("connecting to {}", opts.describe()))?;
    if !catalog::database_exists(&mut conn, &database)? {
        if !create {
            return Err(PrepareError::MissingDatabase(database));
        }
        conn.execute(&format!("CREATE DATABASE {}", quote_ident(&database)))
            .context(|| format!("creating database {database}"))?;
    }
    let mut db_opts = opts.clone();
    db_opts.database = Some(database.clone());
    Ok((db_opts, database))
}

/// `name` as a backquoted identifier.
pub(crate) fn quote_ident(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

fn resolve_method(conn: &mut Conn, m: LoadMethod) -> Result<LoadMethod, PrepareError> {
    if m == LoadMethod::Bulk && !conn.capabilities().bulk_operations() {
        return Err(PrepareError::Unsupported(
            "bulk loading needs a MariaDB server (COM_STMT_BULK_EXECUTE)".into(),
        ));
    }
    if m != LoadMethod::Auto {
        return Ok(m);
    }
    if conn.capabilities().bulk_operations() {
        return Ok(LoadMethod::Bulk);
    }
    let r = conn
        .query("SELECT @@global.local_infile")
        .context(|| "reading local_infile".into())?;
    let on = matches!(r.first_value(), Some("1" | "ON"));
    Ok(if on {
        LoadMethod::LoadData
    } else {
        LoadMethod::Insert
    })
}

/// Drops the tables qpslab recorded in the database of `opts` (default `sbtest`): all of
/// them, or `sbtest1..=n` with `tables = Some(n)`. Refuses, dropping nothing, when one of
/// those sbtest tables exists but was not created by qpslab.
pub fn cleanup(opts: &ConnectOptions, tables: Option<u32>) -> Result<CleanupReport, PrepareError> {
    let database = opts
        .database
        .clone()
        .unwrap_or_else(|| DEFAULT_DATABASE.to_string());
    let mut report = CleanupReport {
        database: database.clone(),
        dropped: Vec::new(),
    };
    let mut admin = opts.clone();
    admin.database = None;
    let mut conn =
        Conn::connect(&admin).context(|| format!("connecting to {}", opts.describe()))?;
    let present = catalog::sbtest_tables(&mut conn, &database)?;
    let recorded = if catalog::has_catalog(&mut conn, &database)? {
        catalog::records(&mut conn, &database)?
    } else {
        HashMap::new()
    };
    let targets: Vec<String> = match tables {
        None => {
            let mut v: Vec<String> = recorded.keys().cloned().collect();
            v.sort_by_key(|n| catalog::table_number(n));
            v
        }
        Some(n) => (1..=n).map(table_name).collect(),
    };
    let foreign: Vec<&String> = targets
        .iter()
        .filter(|t| present.contains(*t) && !recorded.contains_key(*t))
        .collect();
    // A recorded name is not enough: the table there now must be the one qpslab built.
    for t in targets.iter().filter(|t| present.contains(*t)) {
        if let Some(rec) = recorded.get(t) {
            if let Some(why) = catalog::not_ours(&mut conn, &database, t, rec)? {
                return Err(PrepareError::Conflict(format!(
                    "refusing to drop {t} in {database}: {why}; it was replaced after qpslab \
                     created it, so drop it yourself if it is not needed"
                )));
            }
        }
    }
    if !foreign.is_empty() {
        let names: Vec<&str> = foreign.iter().map(|s| s.as_str()).collect();
        return Err(PrepareError::Conflict(format!(
            "refusing to drop {} in {database}: not created by qpslab (no record in \
             qpslab_datasets); drop them yourself or with `sysbench ... cleanup`",
            names.join(", ")
        )));
    }
    let db = quote_ident(&database);
    for t in targets.iter().filter(|t| recorded.contains_key(*t)) {
        conn.execute(&format!("DROP TABLE IF EXISTS {db}.{}", quote_ident(t)))
            .context(|| format!("dropping {t}"))?;
        catalog::forget(&mut conn, &database, t)?;
        report.dropped.push(t.to_string());
    }
    if !recorded.is_empty() {
        catalog::drop_catalog_if_empty(&mut conn, &database)?;
    }
    Ok(report)
}
