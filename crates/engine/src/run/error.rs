//! Why a phase stopped early.

use qpslab_core::fault::{user_if, Blame, Fault};
use qpslab_core::input::excerpt;
use std::io;

/// Server codes that mean the session is gone (shutdown, killed, idle timeout).
pub(crate) const LOST_CODES: [u16; 3] = [1053, 1927, 4031];

/// A phase that could not run or was stopped.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The phase settings cannot run (no sessions, a zero report interval...).
    #[error("invalid phase settings: {0}")]
    Config(String),
    /// The workload options are invalid.
    #[error(transparent)]
    Workload(#[from] crate::workload::WorkloadError),
    /// A session could not be opened before the phase started.
    #[error("cannot connect to {target}: {source}{hint}", hint = connect_hint(source))]
    Connect {
        /// The redacted target, `user@host:port/db`.
        target: String,
        /// What the wire client reported.
        #[source]
        source: qpslab_wire::Error,
    },
    /// A statement could not be prepared right after connecting.
    #[error("cannot prepare `{}`: {source}{hint}", excerpt(sql), hint = prepare_hint(source))]
    Prepare {
        /// The statement.
        sql: String,
        /// What the server (or the socket) reported.
        #[source]
        source: qpslab_wire::Error,
    },
    /// The server answered an error that the run does not retry; the phase stops.
    #[error("server error {code} on `{}`: {message}", excerpt(statement))]
    Server {
        /// The server's error number.
        code: u16,
        /// The server's message (empty when it could not be read back).
        message: String,
        /// The SQL of the failing statement.
        statement: String,
    },
    /// A session lost its connection and could not reconnect in time.
    #[error("lost the connection to {target} and could not reconnect: {source}")]
    Reconnect {
        /// The redacted target.
        target: String,
        /// The last reconnection failure.
        #[source]
        source: qpslab_wire::Error,
    },
    /// A reading the phase takes from the server on a connection of its own (TPC-C's
    /// New-Order count) failed: the server went away or refused it.
    #[error("cannot read {what} (`{sql}`) from {target}: {source}")]
    Reading {
        /// What was being read.
        what: &'static str,
        /// The statement.
        sql: &'static str,
        /// The redacted target.
        target: String,
        /// What the wire client reported.
        #[source]
        source: qpslab_wire::Error,
    },
    /// A script's expression failed at run time (`FILE:LINE: division by zero`...); the phase
    /// stops, as it does on a server error it does not retry.
    #[error("script error: {0}")]
    Script(String),
    /// The server sent bytes the client did not expect.
    #[error("protocol error: {0}")]
    Protocol(String),
    /// The event loop itself failed (epoll, thread creation, CPU affinity).
    #[error("event loop failed: {0}")]
    Io(#[from] io::Error),
    /// The stop flag was raised (Ctrl-C).
    #[error("interrupted")]
    Interrupted,
    /// The shards of a run did not meet before the phase (one did not arrive in time, or the
    /// meeting place on the server failed): nobody measures alone.
    #[error("shards did not meet: {0}")]
    Meeting(String),
    /// An event-loop thread died unexpectedly.
    #[error("internal error: {0}")]
    Internal(String),
}

fn connect_hint(e: &qpslab_wire::Error) -> &'static str {
    match e.server_code() {
        Some(1040) => {
            " (more sessions than the server's max_connections: lower --threads or raise it)"
        }
        _ => "",
    }
}

fn prepare_hint(e: &qpslab_wire::Error) -> &'static str {
    match e.server_code() {
        Some(1461) => " (raise the server's max_prepared_stmt_count, or use --ps off)",
        Some(1146) => " (is the dataset prepared? run `qpslab prepare` first)",
        _ => "",
    }
}

impl RunError {
    /// The server's error number, when the phase stopped on a server error.
    pub fn server_code(&self) -> Option<u16> {
        match self {
            RunError::Server { code, .. } => Some(*code),
            RunError::Connect { source, .. }
            | RunError::Prepare { source, .. }
            | RunError::Reading { source, .. }
            | RunError::Reconnect { source, .. } => source.server_code(),
            _ => None,
        }
    }

    /// The server refused the credentials (1045, or 1044/1698 for access to the database or
    /// the auth plugin), or the client could not authenticate at all.
    pub fn is_access_denied(&self) -> bool {
        match self {
            RunError::Connect { source, .. } => {
                matches!(source.server_code(), Some(1044 | 1045 | 1698))
                    || matches!(source, qpslab_wire::Error::Auth(_))
            }
            _ => false,
        }
    }

    /// Nothing answered at the target (refused, no such socket, unknown host, timed out, not
    /// a MySQL server).
    pub fn is_unreachable(&self) -> bool {
        matches!(
            self,
            RunError::Connect {
                source: qpslab_wire::Error::Io(_) | qpslab_wire::Error::Unreachable(_),
                ..
            }
        )
    }
}

impl Blame for RunError {
    /// The user can fix this by changing what they typed or the server's settings: bad
    /// options, wrong credentials or target, unknown database, missing tables, too many
    /// prepared statements. Everything else is a runtime failure.
    fn fault(&self) -> Fault {
        user_if(match self {
            RunError::Config(_) | RunError::Workload(_) => true,
            RunError::Connect { source, .. } => {
                self.is_access_denied()
                    || self.is_unreachable()
                    || matches!(source.server_code(), Some(1049 | 1040))
            }
            RunError::Prepare { source, .. } => {
                matches!(source.server_code(), Some(1461 | 1146 | 1049))
            }
            _ => false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(code: u16) -> qpslab_wire::Error {
        qpslab_wire::Error::Server {
            code,
            sqlstate: "HY000".into(),
            message: "m".into(),
        }
    }

    #[test]
    fn classifies_for_the_cli() {
        let denied = RunError::Connect {
            target: "root@h:1/".into(),
            source: server(1045),
        };
        assert!(denied.is_access_denied() && denied.is_user_error());
        assert!(!denied.is_unreachable());
        let refused = RunError::Connect {
            target: "root@h:1/".into(),
            source: io::Error::from(io::ErrorKind::ConnectionRefused).into(),
        };
        assert!(refused.is_unreachable() && refused.is_user_error());
        let too_many = RunError::Prepare {
            sql: "SELECT 1".into(),
            source: server(1461),
        };
        assert!(too_many.is_user_error());
        assert!(too_many.to_string().contains("max_prepared_stmt_count"));
        assert_eq!(too_many.server_code(), Some(1461));
        let dup = RunError::Server {
            code: 1062,
            message: "Duplicate entry".into(),
            statement: "INSERT".into(),
        };
        assert!(!dup.is_user_error());
        assert_eq!(dup.server_code(), Some(1062));
        assert!(!RunError::Interrupted.is_user_error());
    }
}
