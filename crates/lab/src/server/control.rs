//! The control connection of a command that reads and changes a server's settings (`capture`,
//! `restore`): connected with a reply timeout, its failures said with the target or the
//! statement, and judged the user's when the account may not log in or set globals.

use qpslab_core::fault::{user_if, Blame, Fault};
use qpslab_core::ConnectOptions;
use qpslab_wire::{Conn, QueryResult};
use std::time::{Duration, Instant};

/// How long a control connection waits for the server before giving up on a reply.
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(30);

/// Why a control connection failed.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    /// The server could not be reached.
    #[error("connecting to {target}: {source}")]
    Connect {
        /// The redacted target.
        target: String,
        /// The client's error.
        source: qpslab_wire::Error,
    },
    /// A statement failed.
    #[error("{sql}: {source}")]
    Query {
        /// The statement.
        sql: String,
        /// The client's error.
        source: qpslab_wire::Error,
    },
}

/// The user's when the user can fix it: an account without the privilege to set global
/// variables (1227) or to log in (1045, 1698).
impl Blame for ControlError {
    fn fault(&self) -> Fault {
        let (ControlError::Connect { source, .. } | ControlError::Query { source, .. }) = self;
        user_if(matches!(source.server_code(), Some(1045 | 1227 | 1698)))
    }
}

/// A connection to `target` whose replies wait at most [`REPLY_TIMEOUT`].
pub fn connect(target: &ConnectOptions) -> Result<Conn, ControlError> {
    Conn::connect_timeout(target, REPLY_TIMEOUT).map_err(|source| ControlError::Connect {
        target: target.describe(),
        source,
    })
}

/// `sql` on `conn`, its failure naming the statement.
pub fn query(conn: &mut Conn, sql: &str) -> Result<QueryResult, ControlError> {
    conn.query(sql).map_err(|source| ControlError::Query {
        sql: sql.to_string(),
        source,
    })
}

/// How long a restore keeps trying while the server refuses (a buffer-pool resize still in
/// progress refuses another until it is done).
const RESTORE_PATIENCE: Duration = Duration::from_secs(30);

/// `SET GLOBAL name = value` (an SQL literal) on a new connection, retried while the server
/// says an earlier change is still in progress.
pub(crate) fn put_back(target: &ConnectOptions, name: &str, value: &str) -> Result<(), String> {
    let stmt = format!("SET GLOBAL {name} = {value}");
    let started = Instant::now();
    loop {
        let result = Conn::connect(target).and_then(|mut c| c.execute(&stmt));
        match result {
            Ok(_) => return Ok(()),
            Err(e) if started.elapsed() < RESTORE_PATIENCE && busy(&e) => {
                std::thread::sleep(Duration::from_millis(250));
            }
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// Whether the server refused only because an earlier change is still being applied.
fn busy(e: &qpslab_wire::Error) -> bool {
    e.to_string().contains("in progress")
}
