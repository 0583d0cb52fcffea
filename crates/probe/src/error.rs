//! The probe's error type.

use qpslab_core::fault::{user_if, Blame, Fault};
use std::path::PathBuf;

/// What can go wrong reading telemetry.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A `/proc` file could not be read (for a process: it has most likely exited).
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A `/proc` file or a server reply did not have the expected shape.
    #[error("unexpected format of {what}: {detail}")]
    Format {
        /// Which source (`/proc/123/stat`, `SHOW GLOBAL STATUS`...).
        what: String,
        /// What was wrong.
        detail: String,
    },
    /// The server's profile could not be taken.
    #[error(transparent)]
    Profile(#[from] crate::profile::ProfileError),
    /// A placement policy this server cannot take (performance_schema off, a connection-thread
    /// rule under the thread pool): the user's to fix.
    #[error("{0}")]
    Refused(String),
    /// The server named as a replica has no replication configured.
    #[error("{0}")]
    NotReplica(String),
    /// The server query failed.
    #[error(transparent)]
    Wire(#[from] qpslab_wire::Error),
}

impl Blame for Error {
    /// Whether the user can fix it (a refused placement policy, a server that is no replica).
    fn fault(&self) -> Fault {
        user_if(matches!(self, Error::Refused(_) | Error::NotReplica(_)))
    }
}
