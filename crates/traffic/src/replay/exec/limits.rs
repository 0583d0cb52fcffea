//! Nothing of ours left running on the server: every session that runs statements on a user's
//! behalf (replay's, diff's) carries the server's own limit on a statement's time, and a
//! statement we give up on is killed from a control connection before we go.
//!
//! - [`limit`]: MariaDB's `max_statement_time` (every statement) or MySQL's
//!   `max_execution_time` (SELECT only), set on the session to the wait the client allows
//!   itself (`--read-timeout` for replay, `--statement-timeout` for diff), so even a client
//!   killed with `kill -9` leaves nothing running past it. A session setting is undone by
//!   COM_RESET_CONNECTION and absent on a new connection: callers set it again after both.
//! - [`kill`]: when the client stops waiting for a reply (its read timeout, Ctrl-C or SIGTERM,
//!   an I/O error), the server is still running the statement. A new connection as the same
//!   account (which may always kill its own threads) kills it, every wait bounded by
//!   [`KILL_WAIT`]; a connection opened after [`qpslab_wire::interrupt`] is not interrupted by
//!   it, so this works on the way out of a stopped command.

use qpslab_core::ConnectOptions;
use qpslab_wire::{Conn, Error};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// The longest a kill may wait for the server (connecting included).
pub const KILL_WAIT: Duration = Duration::from_secs(5);

/// Sets the server's limit on each statement of `conn`'s session to `limit` (none: the
/// server's default stays). A server without such a variable (MySQL before 5.7.8) keeps none.
pub fn limit(conn: &mut Conn, limit: Option<Duration>) -> Result<(), Error> {
    let Some(sql) = limit.map(|l| statement(conn.is_mariadb(), l)) else {
        return Ok(());
    };
    match conn.execute(&sql) {
        Err(e) if e.server_code() == Some(UNKNOWN_VARIABLE) => Ok(()),
        r => r.map(|_| ()),
    }
}

/// `ER_UNKNOWN_SYSTEM_VARIABLE`.
const UNKNOWN_VARIABLE: u16 = 1193;

/// The statement setting the limit: MariaDB's in seconds (at least a millisecond: 0 would be
/// none), MySQL's in milliseconds.
fn statement(mariadb: bool, limit: Duration) -> String {
    if mariadb {
        let s = limit.as_secs_f64().max(0.001);
        format!("SET SESSION max_statement_time = {s:.3}")
    } else {
        let ms = limit.as_millis().clamp(1, u32::MAX as u128);
        format!("SET SESSION max_execution_time = {ms}")
    }
}

/// Server errors of a statement the server's limit ended: MariaDB's `max_statement_time`
/// (1969), MySQL's `max_execution_time` (3024).
pub const TIMED_OUT: [u16; 2] = [1969, 3024];

/// Whether the client stopped reading the reply to its statement (a timeout, an interrupt, a
/// broken connection): the server may still be running it. A server error is a reply read
/// whole: the statement is over.
pub fn left_running(e: &Error) -> bool {
    e.server_code().is_none()
}

/// What [`kill`] ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kill {
    /// The statement only: the session stays usable (`KILL QUERY`).
    Query,
    /// The session and its statement (`KILL CONNECTION`).
    Connection,
}

/// Kills what connection `id` runs, from a new connection as `options` say (the account that
/// owns `id`). A thread already gone is no error.
pub fn kill(options: &ConnectOptions, id: u32, what: Kill) -> Result<(), Error> {
    let mut control = Conn::connect_timeout(options, KILL_WAIT)?;
    kill_on(&mut control, id, what)
}

/// As [`kill`], on an open control connection.
pub fn kill_on(control: &mut Conn, id: u32, what: Kill) -> Result<(), Error> {
    let verb = match what {
        Kill::Query => "KILL QUERY",
        Kill::Connection => "KILL CONNECTION",
    };
    match control.execute(&format!("{verb} {id}")) {
        // ER_NO_SUCH_THREAD: it ended meanwhile.
        Err(e) if e.server_code() == Some(1094) => Ok(()),
        r => r.map(|_| ()),
    }
}

/// The coordinator's kills once the replay is stopped or halted: each statement still running
/// is killed once (`KILL QUERY`: its session sees an error, then the stop), from one control
/// connection opened for it; [`CONTROL_TRIES`] failures to open one end the attempts (the
/// server is gone: its statements with it).
#[derive(Default)]
pub(super) struct Stopping {
    control: Option<Conn>,
    tries: u32,
    killed: BTreeSet<u32>,
}

/// Attempts at a control connection for the kills of a stopped replay.
const CONTROL_TRIES: u32 = 3;

impl Stopping {
    /// Kills the statement of each session whose connection id `running` holds (0: none),
    /// once each, on the server `target` names.
    pub(super) fn kill_running(&mut self, running: &[AtomicU32], target: &ConnectOptions) {
        for r in running {
            let id = r.load(Ordering::Acquire);
            if id == 0 || self.killed.contains(&id) {
                continue;
            }
            let Some(control) = self.control(target) else {
                return;
            };
            if kill_on(control, id, Kill::Query).is_ok() {
                self.killed.insert(id);
            } else {
                self.control = None;
            }
        }
    }

    fn control(&mut self, target: &ConnectOptions) -> Option<&mut Conn> {
        if self.control.is_none() && self.tries < CONTROL_TRIES {
            self.tries += 1;
            let t = ConnectOptions {
                database: None,
                ..target.clone()
            };
            self.control = Conn::connect_timeout(&t, KILL_WAIT).ok();
        }
        self.control.as_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_is_in_each_servers_unit_and_never_none() {
        let l = Duration::from_millis(2500);
        assert_eq!(statement(true, l), "SET SESSION max_statement_time = 2.500");
        assert_eq!(statement(false, l), "SET SESSION max_execution_time = 2500");
        assert_eq!(
            statement(true, Duration::from_micros(10)),
            "SET SESSION max_statement_time = 0.001"
        );
        assert_eq!(
            statement(false, Duration::from_micros(10)),
            "SET SESSION max_execution_time = 1"
        );
        assert!(left_running(&Error::Interrupted));
        let refused = Error::Server {
            code: 1969,
            sqlstate: "70100".into(),
            message: "Query execution was interrupted (max_statement_time exceeded)".into(),
        };
        assert!(!left_running(&refused));
    }
}
