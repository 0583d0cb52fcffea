//! Executing a class's statements on one side: the one function every pass uses (results
//! check, timed rounds, counters, a side run alone while it is profiled).

use super::{ClassWork, DiffSide, Sampled, Work};
use qpslab_engine::RunError;
use qpslab_lab::ExecError;
use qpslab_wire::{Conn, QueryResult};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// A connection to one side that runs logged statements in the right database.
pub struct SideConn {
    conn: Conn,
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

    /// The connection, for statements of our own (EXPLAIN, SHOW STATUS).
    pub fn conn(&mut self) -> &mut Conn {
        &mut self.conn
    }

    /// Switches to `s`'s logged database when the side names none and it differs.
    pub fn use_database(&mut self, s: &Sampled) -> Result<(), qpslab_wire::Error> {
        if self.pinned {
            return Ok(());
        }
        crate::replay::exec::switch_database(&mut self.conn, &mut self.db, &s.db)
    }

    /// Runs `s` (a write inside `BEGIN ... ROLLBACK`), returning its result and its latency in
    /// µs (the statement alone, not the transaction around it).
    pub fn run(
        &mut self,
        s: &Sampled,
        write: bool,
    ) -> Result<(QueryResult, u64), qpslab_wire::Error> {
        self.use_database(s)?;
        if write {
            self.conn.execute("BEGIN")?;
        }
        let t = Instant::now();
        let r = self.conn.query(&s.sql);
        let us = t.elapsed().as_micros() as u64;
        if write {
            self.conn.execute("ROLLBACK")?;
        }
        Ok((r?, us))
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
    if side.read_only {
        conn.execute("SET SESSION TRANSACTION READ ONLY")?;
    }
    Ok(conn)
}

/// Whether `e` is a statement that outlived the side's statement timeout.
pub fn timed_out(e: &qpslab_wire::Error) -> bool {
    matches!(e, qpslab_wire::Error::Io(io)
        if matches!(io.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut))
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
