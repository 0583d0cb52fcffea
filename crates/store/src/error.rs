//! The store's error type.

use crate::model::RunId;
use qpslab_core::fault::{user_if, Blame, Fault};
use std::path::PathBuf;

/// Everything that can go wrong opening, writing or reading a results store.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file could not be opened or created (missing directory, permissions...).
    #[error("cannot open results store {path}: {source}")]
    Open {
        /// The path given to [`crate::Store::open`].
        path: PathBuf,
        /// What SQLite said.
        source: rusqlite::Error,
    },
    /// The file exists but is not an SQLite database at all.
    #[error(
        "{path} is not an SQLite database (not a qpslab results store); pass another --db path"
    )]
    NotADatabase {
        /// The offending file.
        path: PathBuf,
    },
    /// The file is an SQLite database that some other program owns.
    #[error("{path} is an SQLite database but not a qpslab results store; pass another --db path")]
    NotQpslab {
        /// The offending file.
        path: PathBuf,
    },
    /// The store was written by a newer qpslab whose schema this build does not know.
    #[error("{path} has results schema version {found}, newer than this qpslab supports ({supported}); upgrade qpslab")]
    NewerSchema {
        /// The store's file.
        path: PathBuf,
        /// `PRAGMA user_version` found in the file.
        found: i64,
        /// The newest schema version this build knows.
        supported: i64,
    },
    /// `--db` names something that cannot hold a store: a directory, or a file in a directory
    /// that does not exist.
    #[error("results store {path}: {why}; pass another --db path")]
    BadPath {
        /// The path given.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// The store exists but this process may not write it (file mode, read-only mount).
    #[error("results store {path} is read-only here ({why}); pass another --db path to measure")]
    ReadOnly {
        /// The store's file.
        path: PathBuf,
        /// What SQLite or the file system said.
        why: String,
    },
    /// A reading command found no store at the path.
    #[error("no results store at {path} (nothing measured there yet; run something first, or pass --db)")]
    Missing {
        /// The path given.
        path: PathBuf,
    },
    /// No run has this id.
    #[error("no run with id {0} in the results store")]
    RunNotFound(RunId),
    /// No study has this name.
    #[error("no study named '{0}' in the results store (`qpslab lab show` lists them)")]
    StudyNotFound(String),
    /// A study of this name already exists.
    #[error("a study named '{0}' already exists in the results store; `qpslab lab resume` continues it, or rename the study")]
    StudyExists(String),
    /// Another live qpslab process drives this study (`lab run` or `lab resume`).
    #[error("study '{name}' is being measured by another qpslab (pid {pid}); wait for it to end, or stop it (kill {pid}) and continue with `qpslab lab resume`")]
    StudyBusy {
        /// The study.
        name: String,
        /// The process driving it.
        pid: u32,
    },
    /// A counter too large for SQLite's signed 64-bit integers.
    #[error("{what} = {value} does not fit the store's 64-bit signed integers")]
    OutOfRange {
        /// Which value.
        what: &'static str,
        /// The value itself.
        value: u64,
    },
    /// A stored value that this build cannot read back (hand-edited or damaged store).
    #[error("damaged results store: {0}")]
    Corrupt(String),
    /// A query that should have found a row found none (see `db::OptionalExtension`).
    #[error("results store: a query found no row")]
    NoRows,
    /// A run measured on the server that holds the store (refused unless accepted).
    #[error("{0}: writing results there would disturb the measurement; pass another --db, or --db-on-target to accept it")]
    OnTarget(String),
    /// The store's server failed a statement or went away.
    #[error("results store server: {0}")]
    Server(String),
    /// Another writer held the store's write lock too long.
    #[error("results store busy: {0}")]
    Busy(String),
    /// Any other SQLite failure.
    #[error("results store: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// A JSON column could not be encoded or decoded.
    #[error("results store JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// Writing an export failed.
    #[error("writing export: {0}")]
    Io(#[from] std::io::Error),
    /// Writing CSV failed.
    #[error("writing CSV: {0}")]
    Csv(#[from] csv::Error),
}

impl Error {
    /// Writing failed where reading may not: a read-only store, a full disk, a file system
    /// that refuses writes.
    pub fn is_write_failure(&self) -> bool {
        use rusqlite::ErrorCode as C;
        let code = match self {
            Error::ReadOnly { .. } => return true,
            Error::Open { source, .. } | Error::Sqlite(source) => source.sqlite_error_code(),
            _ => None,
        };
        matches!(
            code,
            Some(C::DiskFull | C::ReadOnly | C::SystemIoFailure | C::CannotOpen)
        )
    }
}

impl Blame for Error {
    /// The user pointed at the wrong thing (a directory, another program's file, a read-only
    /// or missing store, a newer qpslab's store): exit 2. Everything else (a full disk, an I/O
    /// error) is a runtime failure.
    fn fault(&self) -> Fault {
        user_if(matches!(
            self,
            Error::BadPath { .. }
                | Error::ReadOnly { .. }
                | Error::Missing { .. }
                | Error::NotADatabase { .. }
                | Error::NotQpslab { .. }
                | Error::NewerSchema { .. }
                | Error::RunNotFound(_)
                | Error::StudyNotFound(_)
                | Error::StudyExists(_)
                | Error::OnTarget(_)
        ))
    }
}

impl From<crate::model::UnknownStatus> for Error {
    fn from(e: crate::model::UnknownStatus) -> Error {
        Error::Corrupt(e.to_string())
    }
}
