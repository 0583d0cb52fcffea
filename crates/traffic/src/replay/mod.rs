//! Replaying a captured slow or general log against a server (`qpslab replay`).
//!
//! A log is read once into a [`ReplayLog`]: its statements in log order, each with its original
//! connection, its start in the log's clock, its class (fingerprint) and whether it reads or
//! writes. Then:
//!
//! - [`lanes`] plans the sessions: in sessions mode each original connection keeps its
//!   statements in order on one of our sessions, and connections whose lifetimes do not
//!   overlap share a session (interval scheduling), so our session count is the log's peak
//!   concurrency (or `--threads`, when smaller: connections then wait for a free session);
//! - [`exec`] runs them on blocking sessions (one thread each, `wire::Conn`), at the log's
//!   pace scaled by the speed (sessions mode) or as fast as possible from a shared cursor (max
//!   mode), and reports one `Sample` per interval with per-class tallies ([`tally`]);
//! - the phase is stored like a run's (`exec::measure_with`): one run, one phase.
//!
//! Why its own loop and not the engine's: the engine's sessions generate their statements and
//! are driven by event loops that never wait for a clock other than a fixed rate; a replay's
//! statements are given, each has its own start time and its own database, and a session must
//! block until its connection's previous statement ended. One blocking thread per session keeps
//! that plain; a replay's sessions are as many as the log's peak concurrency.

pub mod account;
pub mod exec;
pub mod lanes;
mod reading;
pub mod source;
pub mod tally;
pub mod xa;

use qpslab_core::env::ServerInfo;
use qpslab_core::replay::ReplayMode;
use qpslab_core::ConnectOptions;
use qpslab_lab::run::exec::{measure_with, Measured, Observer};
use qpslab_lab::run::ready::ReadyError;
use qpslab_lab::run::sweep::{close, Closed};
use qpslab_lab::ExecError;
use qpslab_probe::Sampler;
use qpslab_sqllog::{Effect, Policy, Verdict};
use qpslab_store::{RunMeta, RunStatus, Store};
use qpslab_wire::Conn;
use std::collections::BTreeSet;
use std::sync::atomic::AtomicBool;

pub use reading::{classify_on, Reading, Sessions};

/// What a statement does, for the read/write/other counts (the classifier's effect, folded).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// SELECT, SHOW... (locking reads included).
    Read,
    /// Anything that may change data, the schema or the server.
    Write,
    /// BEGIN, COMMIT, SET (session), USE...
    Other,
}

impl Kind {
    /// The kind of a statement of effect `e`.
    pub fn of(e: Effect) -> Kind {
        match e {
            Effect::Read => Kind::Read,
            Effect::Session => Kind::Other,
            _ => Kind::Write,
        }
    }
}

/// One statement to replay.
#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    /// The original connection (0 when the log does not say).
    pub conn: u64,
    /// When it started in the log's clock, µs.
    pub start_us: i64,
    /// When it ended in the log's clock, µs (its start when the log has no duration).
    pub end_us: i64,
    /// The statement's bytes as logged, sent to the server unchanged.
    pub sql: Vec<u8>,
    /// Index of its class in [`ReplayLog::classes`].
    pub class: u32,
    /// Read, write or other.
    pub kind: Kind,
    /// What it may do (the mode's policy decides whether it runs).
    pub verdict: Verdict,
    /// The database in effect when it ran, as logged.
    pub db: Option<String>,
}

/// A log read for replay: its statements in log order and what was skipped.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReplayLog {
    /// The statements, in log order.
    pub stmts: Vec<Stmt>,
    /// Class fingerprints, by class index (order of first appearance).
    pub classes: Vec<String>,
    /// Each original connection's lifetime in the log's clock (from `Connect`/`Quit` when
    /// logged, else its first and last statement), by connection id.
    pub spans: std::collections::BTreeMap<u64, (i64, i64)>,
    /// Admin commands and other non-statements skipped.
    pub skipped_admin: u64,
    /// Entries the reader could not parse.
    pub skipped_unparsed: u64,
    /// The last timestamp seen, so entries without one inherit it.
    last_us: i64,
    /// Each connection's latest statement start.
    last_start: std::collections::BTreeMap<u64, i64>,
    /// Class index by fingerprint.
    class_index: std::collections::HashMap<String, u32>,
}

/// A statement as the log gives it.
#[derive(Clone, Debug, PartialEq)]
pub struct Logged {
    /// The original connection (0 when the log does not say).
    pub conn: u64,
    /// When it started, in the log's clock (µs); none: when the previous entry did.
    pub start_us: Option<i64>,
    /// How long it ran, seconds (0 when the log does not say).
    pub query_s: f64,
    /// The statement's bytes as logged.
    pub sql: Vec<u8>,
    /// Its class key.
    pub fingerprint: String,
    /// What it may do.
    pub verdict: Verdict,
    /// The database in effect.
    pub db: Option<String>,
}

impl ReplayLog {
    /// Adds a logged statement.
    pub fn add_statement(&mut self, l: Logged) {
        let logged = l.start_us.unwrap_or(self.last_us);
        self.last_us = logged;
        let duration_us = (l.query_s.max(0.0) * 1e6) as i64;
        // A connection's statements start in order even when whole-second times would put one
        // before its predecessor.
        let floor = self.last_start.get(&l.conn).copied().unwrap_or(i64::MIN);
        let start_us = logged.max(floor);
        self.last_start.insert(l.conn, start_us);
        let end_us = start_us.saturating_add(duration_us);
        let class = self.class_of(&l.fingerprint);
        self.touch(l.conn, start_us);
        self.touch(l.conn, end_us);
        self.stmts.push(Stmt {
            conn: l.conn,
            start_us,
            end_us,
            sql: l.sql,
            class,
            kind: Kind::of(l.verdict.effect),
            verdict: l.verdict,
            db: l.db,
        });
    }

    /// Notes that connection `conn` was connected or quit at `at_us` (when the log has a time).
    pub fn add_connection_event(&mut self, conn: u64, at_us: Option<i64>) {
        let at = at_us.unwrap_or(self.last_us);
        self.last_us = at;
        self.touch(conn, at);
    }

    /// The original connections' count.
    pub fn connections(&self) -> u64 {
        self.spans.len() as u64
    }

    fn touch(&mut self, conn: u64, at: i64) {
        let span = self.spans.entry(conn).or_insert((at, at));
        span.0 = span.0.min(at);
        span.1 = span.1.max(at);
    }

    fn class_of(&mut self, fingerprint: &str) -> u32 {
        if let Some(&i) = self.class_index.get(fingerprint) {
            return i;
        }
        let i = self.classes.len() as u32;
        self.classes.push(fingerprint.to_string());
        self.class_index.insert(fingerprint.to_string(), i);
        i
    }

    /// The databases the statements ran in, as logged.
    pub fn databases(&self) -> std::collections::BTreeSet<&str> {
        self.stmts.iter().filter_map(|s| s.db.as_deref()).collect()
    }
}

/// The class id shown for class index `i` (`c1`, `c2`...).
pub fn class_id(i: usize) -> String {
    format!("c{}", i + 1)
}

/// How to replay.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplayOptions {
    /// Sessions or max.
    pub mode: ReplayMode,
    /// Log time divided by this (0: no waiting).
    pub speed: f64,
    /// The session cap (sessions mode) or count (max mode, default 4).
    pub threads: Option<u32>,
    /// Every statement runs here (none: as logged).
    pub database: Option<String>,
    /// Which statements run (`--read-only`, `--allow-admin`, `--allow-destructive`).
    pub policy: Policy,
    /// Seconds per sample.
    pub report_interval_s: f64,
    /// Latency percentiles to summarize.
    pub percentiles: Vec<f64>,
}

/// Sessions a replay of `log` uses: the lanes of sessions mode, or the threads of max mode.
pub fn sessions(log: &ReplayLog, o: &ReplayOptions) -> u32 {
    match o.mode {
        ReplayMode::Sessions => lanes::plan(log, o.threads).len() as u32,
        ReplayMode::Max => o.threads.unwrap_or(exec::DEFAULT_MAX_SESSIONS).max(1),
    }
}

/// Readies the server of `target` for a replay of `log`: the control connection and the
/// server's facts ([`qpslab_lab::run::ready::control`], said to `obs`), then the databases the replay
/// needs ([`check_databases`], whose failure is [`ReadyError::Dataset`]). Returns the
/// telemetry sampler on the control connection and the server's facts.
pub fn ready(
    target: &ConnectOptions,
    server_pid: Option<u32>,
    log: &ReplayLog,
    o: &ReplayOptions,
    obs: &mut dyn Observer,
) -> Result<(Sampler, ServerInfo), ReadyError> {
    let (mut sampler, server) = qpslab_lab::run::ready::control(target, server_pid, obs)?;
    // Just opened: the connection is there.
    if let Some(conn) = sampler.conn() {
        check_databases(conn, log, o).map_err(ReadyError::Dataset)?;
    }
    Ok((sampler, server))
}

/// Refuses, before anything runs, a replay whose databases (`--database`, else the log's)
/// the server reached by `conn` lacks.
pub fn check_databases(
    conn: &mut Conn,
    log: &ReplayLog,
    o: &ReplayOptions,
) -> Result<(), ExecError> {
    let have: BTreeSet<String> = conn
        .query("SHOW DATABASES")
        .map_err(|e| ExecError::Replay(format!("listing the target's databases: {e}")))?
        .rows
        .iter()
        .filter_map(|r| r.first().cloned().flatten())
        .collect();
    let wanted: Vec<&str> = match &o.database {
        Some(db) => vec![db.as_str()],
        None => log.databases().into_iter().collect(),
    };
    let missing: Vec<&str> = wanted.into_iter().filter(|d| !have.contains(*d)).collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(ExecError::Replay(format!(
        "the target has no database {}: create it, or replay into one with --database NAME",
        missing.join(", ")
    )))
}

/// A class that the policy keeps from running: its index, statements and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    /// Class index in [`ReplayLog::classes`].
    pub class: u32,
    /// Its statements that will not run.
    pub count: u64,
    /// Why, with the flag that would run them.
    pub reason: String,
}

/// The classes of `log` that `policy` keeps (in part or whole) from running, in class order:
/// what a replay or a diff says before it starts.
pub fn refused(log: &ReplayLog, policy: &Policy) -> Vec<Refused> {
    let mut by_class: std::collections::BTreeMap<u32, Refused> = Default::default();
    for s in &log.stmts {
        if let Some(reason) = policy.refusal(&s.verdict) {
            by_class
                .entry(s.class)
                .or_insert(Refused {
                    class: s.class,
                    count: 0,
                    reason,
                })
                .count += 1;
        }
    }
    by_class.into_values().collect()
}

/// The error a replay that ended early stands for (none when it ran to its end): the user's
/// stop, or the server gone (a runtime failure). Its phase is stored whole either way.
pub fn ended_early(p: &qpslab_core::PhaseResult) -> Option<ExecError> {
    let why = p.replay.as_ref()?.ended_early.as_ref()?;
    Some(if why == exec::INTERRUPTED {
        ExecError::Run(qpslab_engine::RunError::Interrupted)
    } else {
        ExecError::Stalled(why.clone())
    })
}

/// How a replay's run ended.
pub enum Ended {
    /// Replayed to the end; the run is stored and closed as completed.
    Done(Box<Measured>),
    /// Stopped, failed or ended early; the run is closed with what was stored of it
    /// ([`qpslab_lab::run::sweep::close`]).
    Unfinished(Box<Unfinished>),
}

/// A replay that did not run to its end, its run closed.
pub struct Unfinished {
    /// The phase, when it was measured whole but ended early (the user's stop, the server
    /// gone): stored, with its errors.
    pub measured: Option<Measured>,
    /// Why it ended.
    pub source: ExecError,
    /// How the run was closed.
    pub closed: Closed,
}

/// Replays `log` on `target` and stores it as the one phase of the run `meta` (whose plan
/// describes the replay), with telemetry from `sampler` on every interval, as it is measured
/// (see [`qpslab_lab::run::exec::measure_with`]), then closes the run: completed, or with what was
/// stored of it when the replay did not run to its end. The XA transactions the replay started
/// are noted in `xa` (see [`xa::roll_back_new`]). The error is the store's failing to close a
/// completed run.
#[allow(clippy::too_many_arguments)]
pub fn measure(
    store: &mut Store,
    meta: &RunMeta,
    target: &ConnectOptions,
    log: &ReplayLog,
    o: &ReplayOptions,
    sampler: &mut Sampler,
    obs: &mut dyn Observer,
    stop: &AtomicBool,
    xa: &xa::Started,
) -> Result<Ended, qpslab_store::Error> {
    let threads = sessions(log, o);
    let measured = measure_with(store, meta, threads, sampler, obs, |on_sample| {
        exec::replay(target, log, o, on_sample, stop, xa)
    });
    let (measured, source) = match measured {
        Err(e) => (None, e),
        // A replay stopped, or whose server went away, keeps its whole phase (errors included).
        Ok(m) => match ended_early(&m.phase) {
            Some(e) => (Some(m), e),
            None => {
                store.finish_run(&meta.uuid, RunStatus::Completed)?;
                return Ok(Ended::Done(Box::new(m)));
            }
        },
    };
    let closed = close(store, meta, &source);
    Ok(Ended::Unfinished(Box::new(Unfinished {
        measured,
        source,
        closed,
    })))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use qpslab_sqllog::Dialect;

    pub(crate) fn logged(conn: u64, start_s: Option<i64>, query_s: f64, sql: &str) -> Logged {
        Logged {
            conn,
            start_us: start_s.map(|s| s * 1_000_000),
            query_s,
            sql: sql.as_bytes().to_vec(),
            fingerprint: sql.to_string(),
            verdict: qpslab_sqllog::classify(sql),
            db: None,
        }
    }

    #[test]
    fn statements_start_when_logged_in_order_per_connection() {
        let mut log = ReplayLog::default();
        log.add_statement(logged(7, Some(10), 0.5, "select a"));
        // Logged a second earlier (whole-second clocks): it still starts after `a`.
        log.add_statement(logged(7, Some(9), 2.0, "update b"));
        log.add_statement(Logged {
            db: Some("d".into()),
            ..logged(8, None, 0.0, "select a")
        });
        assert_eq!(log.stmts[0].start_us, 10_000_000);
        assert_eq!(log.stmts[1].start_us, 10_000_000);
        assert_eq!(log.stmts[1].end_us, 12_000_000);
        // No time of its own: the previous entry's.
        assert_eq!(log.stmts[2].start_us, 9_000_000);
        assert_eq!(log.classes, ["select a", "update b"]);
        assert_eq!(
            (log.stmts[0].kind, log.stmts[1].kind),
            (Kind::Read, Kind::Write)
        );
        assert_eq!(log.stmts[2].class, 0);
        assert_eq!(log.connections(), 2);
        assert_eq!(log.spans[&7], (10_000_000, 12_000_000));
        assert_eq!(log.databases().into_iter().collect::<Vec<_>>(), ["d"]);
    }

    #[test]
    fn each_connection_is_read_in_its_own_sql_mode_by_the_targets_version() {
        let sneaky = r"SELECT '\', db.f_del() #'";
        let mut log = ReplayLog::default();
        log.add_statement(logged(
            1,
            Some(1),
            0.0,
            "SET sql_mode='NO_BACKSLASH_ESCAPES'",
        ));
        log.add_statement(logged(2, Some(1), 0.0, sneaky));
        log.add_statement(logged(1, Some(2), 0.0, sneaky));
        log.add_statement(logged(
            2,
            Some(2),
            0.0,
            "SELECT 1 /*!110000 , db.f_del() */",
        ));
        let effects = |l: &ReplayLog| l.stmts.iter().map(|s| s.verdict.effect).collect::<Vec<_>>();
        // One statement at a time, connection 1's string ends at its backslash unseen.
        assert_eq!(effects(&log)[2], Effect::Read);
        log.classify_for(&[Reading::unknown()], Sessions::Kept);
        assert_eq!(
            effects(&log),
            [Effect::Session, Effect::Read, Effect::Write, Effect::Write]
        );
        assert_eq!(log.stmts[2].kind, Kind::Write);
        // MariaDB 10.11 skips the 11.0 comment; a server in NO_BACKSLASH_ESCAPES reads
        // connection 2's string as connection 1's does.
        let mariadb = |sql_mode: &str| Reading {
            dialect: Dialect::of_server("10.11.19-MariaDB"),
            sql_mode: Some(sql_mode.into()),
            charset: Some("utf8mb4".into()),
        };
        log.classify_for(&[mariadb("STRICT_TRANS_TABLES")], Sessions::Kept);
        assert_eq!(
            effects(&log),
            [Effect::Session, Effect::Read, Effect::Write, Effect::Read]
        );
        log.classify_for(&[mariadb("NO_BACKSLASH_ESCAPES")], Sessions::Kept);
        assert_eq!(effects(&log)[1], Effect::Write);
        // Two servers (diff's sides): the worst of their readings.
        let mut both = Reading::unknown();
        both.dialect = Dialect::of_server("11.4.2-MariaDB");
        log.classify_for(&[mariadb(""), both], Sessions::Kept);
        assert_eq!(
            effects(&log),
            [Effect::Session, Effect::Read, Effect::Write, Effect::Write]
        );
    }

    /// A statement given as bytes.
    fn logged_bytes(conn: u64, sql: &[u8]) -> Logged {
        Logged {
            sql: sql.to_vec(),
            verdict: qpslab_sqllog::classify(sql),
            ..logged(conn, Some(1), 0.0, "")
        }
    }

    #[test]
    fn what_a_session_set_is_read_with_a_new_sessions_state_and_across_interleaved_sessions() {
        // In gbk the string closes after `0xbf 0x5c` and SHUTDOWN runs; in utf8mb4 it does
        // not. The other way round, `0xbf 0x5c 0x5c` hides the clause from gbk only.
        let gbk_reveals = b"SELECT '\xbf\x5c', 1; SHUTDOWN -- '";
        let utf8_reveals = b"SET @s='\xbf\x5c\x5c', SESSION tx_read_only=0 -- '";
        let mut log = ReplayLog::default();
        log.add_statement(logged_bytes(1, b"SET NAMES gbk"));
        log.add_statement(logged_bytes(1, gbk_reveals));
        log.add_statement(logged_bytes(1, utf8_reveals));
        log.add_statement(logged_bytes(2, gbk_reveals));
        let target = Reading {
            dialect: Dialect::of_server("10.11.19-MariaDB"),
            sql_mode: Some(String::new()),
            charset: Some("utf8mb4".into()),
        };
        let effects = |l: &ReplayLog| l.stmts.iter().map(|s| s.verdict.effect).collect::<Vec<_>>();
        // Connection 1 read in gbk, and as a new session (a reconnection) reads it; connection
        // 2 never set gbk.
        log.classify_for(std::slice::from_ref(&target), Sessions::Kept);
        assert_eq!(
            effects(&log),
            [Effect::Session, Effect::Admin, Effect::Write, Effect::Read]
        );
        // One of our sessions may run connection 2's statement after connection 1's SET NAMES.
        log.classify_for(&[target], Sessions::Interleaved);
        assert_eq!(effects(&log)[3], Effect::Admin);
    }

    #[test]
    fn refused_classes_are_listed_once_with_their_count_and_reason() {
        let mut log = ReplayLog::default();
        for sql in [
            "select 1",
            "shutdown",
            "update t",
            "shutdown",
            "drop database x",
        ] {
            log.add_statement(logged(1, Some(1), 0.0, sql));
        }
        let r = refused(&log, &Policy::default());
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!((r[0].class, r[0].count), (1, 2));
        assert!(r[0].reason.contains("--allow-admin"), "{r:?}");
        assert!(r[1].reason.contains("--allow-destructive"), "{r:?}");
        let read_only = Policy {
            read_only: true,
            ..Policy::default()
        };
        assert_eq!(refused(&log, &read_only).len(), 3);
    }
}
