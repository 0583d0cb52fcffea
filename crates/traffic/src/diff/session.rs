//! Executing a class's statements on one side: the one function every pass uses (results
//! check, timed rounds, counters, a side run alone while it is profiled).
//!
//! Nothing is left running (see [`crate::replay::exec::limits`]): each connection carries the
//! server's limit on a statement's time (the side's statement timeout), and a statement whose
//! reply the side stopped reading (the timeout, an interrupt, a broken connection) is killed
//! with its connection, from a new one as the same account, before the error goes up.

use super::{ClassWork, DiffSide, Sampled, Work};
use crate::replay::exec::limits::{self, Kill};
use qpslab_core::ConnectOptions;
use qpslab_engine::RunError;
use qpslab_lab::ExecError;
use qpslab_wire::{Conn, Row, Streamed};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// A connection to one side that runs logged statements in the right database.
pub struct SideConn {
    conn: Conn,
    /// How to reach the side as its account, for the kill of a statement given up on.
    control: ConnectOptions,
    /// The side names its database: every statement runs there.
    pinned: bool,
    /// The database in effect (none: the connection's default).
    db: Option<String>,
}

impl SideConn {
    /// Connects to `side`.
    pub fn open(side: &DiffSide) -> Result<SideConn, ExecError> {
        let conn = connect(side).map_err(|source| ExecError::Connect {
            target: side.label.clone(),
            source,
        })?;
        Ok(SideConn {
            conn,
            control: ConnectOptions {
                database: None,
                ..side.options.clone()
            },
            pinned: side.options.database.is_some(),
            db: side.options.database.clone(),
        })
    }

    /// Replaces the connection with a new one to `side` (a new server thread).
    pub fn reopen(&mut self, side: &DiffSide) -> Result<(), qpslab_wire::Error> {
        self.conn = connect(side)?;
        self.db.clone_from(&side.options.database);
        Ok(())
    }

    /// The server's version string.
    pub fn version(&self) -> &str {
        self.conn.server_version()
    }

    /// Runs `f` on the connection (statements of our own: EXPLAIN, SHOW STATUS); a statement
    /// it gave up on is killed before its error is returned.
    pub fn guard<T>(
        &mut self,
        f: impl FnOnce(&mut Conn) -> Result<T, qpslab_wire::Error>,
    ) -> Result<T, qpslab_wire::Error> {
        let r = f(&mut self.conn);
        if let Err(e) = &r {
            if limits::left_running(e) {
                // A server that is gone took the statement with it: nothing to report.
                let id = self.conn.connection_id();
                let _ = limits::kill(&self.control, id, Kill::Connection);
            }
        }
        r
    }

    /// Switches to `s`'s logged database when the side names none and it differs.
    pub fn use_database(&mut self, s: &Sampled) -> Result<(), qpslab_wire::Error> {
        if self.pinned {
            return Ok(());
        }
        let mut current = self.db.take();
        let r = self.guard(|c| crate::replay::exec::switch_database(c, &mut current, &s.db));
        self.db = current;
        r
    }

    /// Runs `s` (a write inside `BEGIN ... ROLLBACK`), handing its rows to `each` as they
    /// arrive (none is kept); returns its counts and its latency in µs (the statement alone,
    /// not the transaction around it).
    pub fn run_each(
        &mut self,
        s: &Sampled,
        write: bool,
        each: &mut dyn FnMut(&Row<'_>),
    ) -> Result<(Streamed, u64), qpslab_wire::Error> {
        self.use_database(s)?;
        if write {
            self.guard(|c| c.execute("BEGIN"))?;
        }
        let t = Instant::now();
        let r = self.guard(|c| c.query_each(&s.sql, each));
        let us = t.elapsed().as_micros() as u64;
        match r {
            Err(e) if limits::left_running(&e) => Err(e),
            r => {
                if write {
                    self.guard(|c| c.execute("ROLLBACK"))?;
                }
                Ok((r?, us))
            }
        }
    }

    /// [`SideConn::run_each`] with the rows only counted.
    pub fn run(&mut self, s: &Sampled, write: bool) -> Result<(Streamed, u64), qpslab_wire::Error> {
        self.run_each(s, write, &mut |_| {})
    }

    /// Runs class `c`'s sample once, pushing each statement's latency onto `lat`; returns the
    /// sample's total µs.
    pub fn run_class(
        &mut self,
        c: &ClassWork,
        lat: &mut Vec<u64>,
    ) -> Result<u64, qpslab_wire::Error> {
        let mut total = 0;
        for s in &c.sample {
            let (_, us) = self.run(s, c.write)?;
            lat.push(us);
            total += us;
        }
        Ok(total)
    }
}

/// A connection to `side`, its reads and writes bounded by the side's statement timeout, its
/// transactions read-only when the side is.
fn connect(side: &DiffSide) -> Result<Conn, qpslab_wire::Error> {
    let mut conn = Conn::connect(&side.options)?;
    conn.set_timeout(side.statement_timeout)?;
    limits::limit(&mut conn, side.statement_timeout)?;
    if side.read_only {
        conn.execute("SET SESSION TRANSACTION READ ONLY")?;
    }
    Ok(conn)
}

/// Whether `e` is a statement that outlived the side's statement timeout: the client's wait,
/// or the server's limit, whichever ended first.
pub fn timed_out(e: &qpslab_wire::Error) -> bool {
    match e {
        qpslab_wire::Error::Io(io) => matches!(
            io.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ),
        e => e
            .server_code()
            .is_some_and(|c| limits::TIMED_OUT.contains(&c)),
    }
}

/// Runs `work` on `side` alone, class after class, until `until` (or `stop`); returns the
/// statements executed. A failing statement fails the run.
pub fn run_side(
    side: &DiffSide,
    work: &Work,
    until: Instant,
    stop: &AtomicBool,
) -> Result<u64, ExecError> {
    let mut conn = SideConn::open(side)?;
    let mut executed = 0u64;
    let mut lat = Vec::new();
    while Instant::now() < until && !work.classes.is_empty() {
        for c in &work.classes {
            if stop.load(Ordering::Relaxed) {
                return Err(ExecError::Run(RunError::Interrupted));
            }
            lat.clear();
            conn.run_class(c, &mut lat).map_err(|e| {
                ExecError::Replay(format!("{}: {}: {e}", side.label, c.fingerprint))
            })?;
            executed += lat.len() as u64;
        }
    }
    Ok(executed)
}
