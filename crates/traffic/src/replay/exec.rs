//! The replay loop: blocking sessions, one thread each, and a coordinator that cuts a `Sample`
//! per report interval from the sessions' tallies.
//!
//! Sessions mode: each session replays its lane (see [`super::lanes`]) in order, waiting until
//! each statement is due (its log start over the speed) and counting how late it started. Max
//! mode: each session takes the next statement from one shared cursor. A statement the policy
//! refuses (`--read-only`, server-level, destructive) is counted as skipped with its reason. A
//! failed statement is counted for its class and code and the replay goes on; a lost connection
//! is re-established with `run`'s backoff (the statement counts as error 2013, each failed
//! attempt under 2002/2003 as `run` counts them); a server still gone after `RECONNECT_FOR` ends
//! the replay. The stop flag ends every session after its current statement. Either way the
//! phase is returned with what was measured, its outcome saying why it ended early.
//!
//! Under `--read-only` every session runs in a read-only transaction (`SET SESSION
//! TRANSACTION READ ONLY`: every later transaction of the session is read-only, a logged BEGIN,
//! COMMIT or autocommit statement included), set again after each reconnection and reset. A
//! statement the server refuses (read-only transaction, missing privilege) is counted as
//! skipped, `refused by the server: ...`, not as an error: the server, not the classifier, had
//! the last word. In sessions mode a session that goes on with another logged connection is
//! reset first (COM_RESET_CONNECTION), so no transaction, lock, temporary table, prepared
//! statement or user variable of one logged connection is seen by the next. A replay whose
//! server is gone at its end (its own SHUTDOWN, say) ended early, whatever it ran.
//!
//! Nothing is left running ([`limits`]): every session carries the server's limit on a
//! statement's time (the connection's `--read-timeout`), set again after each reset and
//! reconnection; a statement whose reply a session stopped reading (its read timeout, an
//! interrupt, a broken connection) is killed with its connection before the session goes on;
//! and once the replay is stopped or halted, the coordinator kills the statements still
//! running (`KILL QUERY`), so every session sees the stop at once. Rows are counted as they
//! arrive and never kept ([`Conn::query_each`]), and a statement goes to the server as the
//! bytes the log holds.

pub mod limits;

use super::lanes::{self, Lanes};
use super::tally::{Tally, LOST_CONNECTION};
use super::{ReplayLog, ReplayOptions, Stmt};
use limits::Kill;
use qpslab_core::replay::ReplayMode;
use qpslab_core::result::{CpuUsage, PhaseResult, Sample};
use qpslab_core::ConnectOptions;
use qpslab_engine::run::{
    connect_error_code, summarize, CpuSnapshot, FIRST_BACKOFF, MAX_BACKOFF, RECONNECT_FOR,
};
use qpslab_lab::ExecError;
use qpslab_wire::Conn;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Sessions in max mode when `--threads` is not given.
pub const DEFAULT_MAX_SESSIONS: u32 = 4;

/// The longest nap while waiting, so a raised stop flag is seen.
const NAP: Duration = Duration::from_millis(50);

/// Which statements a session replays.
enum Work {
    /// Sessions mode: lane `i` for session `i`, with each statement's due time (none: speed 0).
    Lanes(Lanes, Option<Vec<u64>>),
    /// Max mode: the next statement of the log.
    Cursor(AtomicUsize),
}

/// What every session shares.
struct Shared<'a> {
    log: &'a ReplayLog,
    opts: &'a ReplayOptions,
    target: &'a ConnectOptions,
    work: Work,
    stop: &'a AtomicBool,
    /// The XA transactions the sessions started, for the cleanup at the end.
    xa: &'a super::xa::Started,
    t0: Instant,
    tallies: Vec<Mutex<Tally>>,
    done: AtomicUsize,
    /// Why the server is taken as gone (a session could not reconnect for `RECONNECT_FOR`).
    gone: Mutex<Option<String>>,
    /// Raised with `gone`: every session stops.
    halt: AtomicBool,
    /// The connection id of each session's statement in flight (0: none), for the kill when
    /// the replay stops.
    running: Vec<AtomicU32>,
}

impl Shared<'_> {
    /// Whether sessions must stop: the user's stop, or the server gone.
    fn halted(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || self.halt.load(Ordering::Relaxed)
    }

    /// Takes the server as gone, for `why`; the first reason is kept.
    fn give_up(&self, why: String) {
        self.gone
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert(why);
        self.halt.store(true, Ordering::Relaxed);
    }
}

/// Replays `log` on `target` as `opts` say, calling `on_sample` once per report interval, and
/// returns the phase (its `replay` field says what happened per class, and why it ended early
/// when it did: `interrupted` by the stop flag, or the server gone). Every session is opened
/// before the clock starts; a session that cannot be opened fails the replay. Each `XA START`
/// or `XA BEGIN` a session runs without error is noted in `xa`.
pub fn replay(
    target: &ConnectOptions,
    log: &ReplayLog,
    opts: &ReplayOptions,
    on_sample: &mut dyn FnMut(&Sample),
    stop: &AtomicBool,
    xa: &super::xa::Started,
) -> Result<PhaseResult, ExecError> {
    if log.stmts.is_empty() {
        return Err(ExecError::Replay(
            "the log holds no statement to replay".into(),
        ));
    }
    let work = match opts.mode {
        ReplayMode::Sessions => Work::Lanes(
            lanes::plan(log, opts.threads),
            (opts.speed > 0.0).then(|| lanes::due_us(log, opts.speed)),
        ),
        ReplayMode::Max => Work::Cursor(AtomicUsize::new(0)),
    };
    let sessions = match &work {
        Work::Lanes(l, _) => l.len(),
        Work::Cursor(_) => opts.threads.unwrap_or(DEFAULT_MAX_SESSIONS).max(1) as usize,
    };
    let conns = (0..sessions)
        .map(|_| open(target, opts))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|source| ExecError::Connect {
            target: target.describe(),
            source,
        })?;
    let shared = Shared {
        log,
        opts,
        target,
        work,
        stop,
        xa,
        t0: Instant::now(),
        tallies: (0..sessions)
            .map(|_| Mutex::new(Tally::default()))
            .collect(),
        done: AtomicUsize::new(0),
        gone: Mutex::new(None),
        halt: AtomicBool::new(false),
        running: (0..sessions).map(|_| AtomicU32::new(0)).collect(),
    };
    let (total, samples) = std::thread::scope(|scope| {
        for (i, conn) in conns.into_iter().enumerate() {
            let shared = &shared;
            scope.spawn(move || {
                Session::new(shared, i, conn).run();
                shared.done.fetch_add(1, Ordering::Release);
            });
        }
        coordinate(&shared, sessions, on_sample)
    });
    let mut phase = phase_of(&shared, sessions, total, samples);
    let gone = shared.gone.lock().unwrap_or_else(|p| p.into_inner()).take();
    if let Some(r) = phase.replay.as_mut() {
        r.ended_early = if stop.load(Ordering::Relaxed) {
            Some(INTERRUPTED.to_string())
        } else {
            gone.or_else(|| gone_at_end(target, opts))
        };
        r.complete = r.ended_early.is_none();
    }
    Ok(phase)
}

/// [`ReplayOutcome::ended_early`](qpslab_core::replay::ReplayOutcome) of a replay stopped by
/// its stop flag.
pub const INTERRUPTED: &str = "interrupted";

/// A connection for a session: to `--database` when given; read-only under `--read-only`.
fn open(target: &ConnectOptions, opts: &ReplayOptions) -> Result<Conn, qpslab_wire::Error> {
    let mut t = target.clone();
    if opts.database.is_some() {
        t.database.clone_from(&opts.database);
    }
    let mut conn = Conn::connect(&t)?;
    limits::limit(&mut conn, t.timeouts.read)?;
    read_only(&mut conn, opts)?;
    Ok(conn)
}

/// Makes every later transaction of the session read-only, under `--read-only`.
fn read_only(conn: &mut Conn, opts: &ReplayOptions) -> Result<(), qpslab_wire::Error> {
    if opts.policy.read_only {
        conn.execute("SET SESSION TRANSACTION READ ONLY")?;
    }
    Ok(())
}

/// Server errors that refuse a statement rather than fail it: a read-only transaction, the
/// server's `read_only`, or a privilege the account lacks.
const REFUSALS: [u16; 8] = [1044, 1142, 1143, 1211, 1227, 1290, 1370, 1792];

/// `ER_PROCACCESS_DENIED_ERROR`: no EXECUTE on the routine.
const NO_EXECUTE: u16 = 1370;

/// Why the server refused a statement, when its error is a refusal (replay's and diff's);
/// `read_only`: the sessions run as a read-only account, which may execute only SQL SECURITY
/// INVOKER routines (see [`super::account`]).
pub(crate) fn refusal(e: &qpslab_wire::Error, read_only: bool) -> Option<String> {
    match e {
        qpslab_wire::Error::Server { code, message, .. } if REFUSALS.contains(code) => {
            let message: String = message.chars().take(200).collect();
            let why = if read_only && *code == NO_EXECUTE {
                " (under --read-only only SQL SECURITY INVOKER routines run, with \
                 --grant-execute: a SQL SECURITY DEFINER routine runs with its definer's \
                 rights, which no read-only account limits)"
            } else {
                ""
            };
            Some(format!("refused by the server: {code} {message}{why}"))
        }
        _ => None,
    }
}

/// Why the server is taken as gone after a replay that ran to its end: no new connection can
/// be opened (a server error, such as too many connections, says it is there).
fn gone_at_end(target: &ConnectOptions, opts: &ReplayOptions) -> Option<String> {
    match open(target, opts) {
        Ok(_) => None,
        Err(e) if e.server_code().is_some() && !e.is_connection_lost() => None,
        Err(e) => Some(format!(
            "the server {} went away during the replay: {e}",
            target.describe()
        )),
    }
}

/// Cuts a sample per interval until every session is done; returns the phase's total tally
/// and its samples.
fn coordinate(
    shared: &Shared<'_>,
    sessions: usize,
    on_sample: &mut dyn FnMut(&Sample),
) -> (Tally, Vec<Sample>) {
    let interval = Duration::from_secs_f64(shared.opts.report_interval_s.max(0.01));
    let mut total = Tally::default();
    let mut samples = Vec::new();
    let mut last = Duration::ZERO;
    let mut next = interval;
    let mut cpu = CpuSnapshot::now();
    let mut stopping = limits::Stopping::default();
    loop {
        let finished = shared.done.load(Ordering::Acquire) == sessions;
        if !finished && shared.halted() {
            stopping.kill_running(&shared.running, shared.target);
        }
        let now = shared.t0.elapsed();
        if finished || now >= next {
            let tally = take(shared);
            let mut s = tally.sample(
                now.as_secs_f64(),
                (now - last).as_secs_f64(),
                &shared.opts.percentiles,
            );
            let cpu_now = CpuSnapshot::now();
            s.client_cpu = cpu_now.since(&cpu);
            cpu = cpu_now;
            // A last sliver with nothing in it is no interval.
            if !finished || s.events + s.errors > 0 || samples.is_empty() {
                on_sample(&s);
                samples.push(s);
            }
            total.merge(&tally);
            last = now;
            // A late wake-up (a busy machine) makes one longer interval, not a burst of empty ones.
            while next <= now {
                next += interval;
            }
        }
        if finished {
            return (total, samples);
        }
        std::thread::sleep(next.saturating_sub(shared.t0.elapsed()).min(NAP));
    }
}

/// Every session's tally since the last call, merged.
fn take(shared: &Shared<'_>) -> Tally {
    let mut t = Tally::default();
    for m in &shared.tallies {
        // A session that panicked left a tally that is still whole numbers; take it.
        let mut g = m.lock().unwrap_or_else(|p| p.into_inner());
        t.merge(&std::mem::take(&mut *g));
    }
    t
}

/// The phase from the total tally.
fn phase_of(shared: &Shared<'_>, sessions: usize, t: Tally, samples: Vec<Sample>) -> PhaseResult {
    let log = shared.log;
    let duration_s: f64 = samples.iter().map(|s| s.interval_s).sum();
    let (statements, histograms) = t.statements(log, &shared.opts.percentiles);
    // Failed reconnections count as `run` counts them, outside any class.
    let mut errors: BTreeMap<u16, u64> = t.connect_errors.clone();
    for c in t.classes.values() {
        for (code, n) in &c.errors {
            *errors.entry(*code).or_insert(0) += n;
        }
    }
    let rate = matches!(shared.work, Work::Lanes(_, Some(_))).then(|| {
        let first = log.stmts.iter().map(|s| s.start_us).min().unwrap_or(0);
        let last = log.stmts.iter().map(|s| s.start_us).max().unwrap_or(0);
        let span_s = (last - first) as f64 / 1e6 / shared.opts.speed;
        t.rate(duration_s, t.timed, span_s)
    });
    let outcome = t.outcome(log);
    let client_cpu = samples.iter().fold(CpuUsage::default(), |a, s| CpuUsage {
        user_s: a.user_s + s.client_cpu.user_s,
        sys_s: a.sys_s + s.client_cpu.sys_s,
        max_rss_kib: a.max_rss_kib.max(s.client_cpu.max_rss_kib),
    });
    PhaseResult {
        threads: sessions as u32,
        duration_s,
        events: t.queries.total(),
        queries: t.queries,
        errors,
        reconnects: t.reconnects,
        latency: summarize(&t.all, &shared.opts.percentiles),
        statements,
        samples,
        rate,
        histograms,
        client_cpu,
        replay: Some(outcome),
        ..Default::default()
    }
}

/// One of our sessions.
struct Session<'a> {
    shared: &'a Shared<'a>,
    index: usize,
    conn: Conn,
    /// The database in effect on `conn` (none: the connection's default).
    db: Option<String>,
    /// The logged connection whose statement ran last on `conn`.
    logged: Option<u64>,
}

impl<'a> Session<'a> {
    fn new(shared: &'a Shared<'a>, index: usize, conn: Conn) -> Self {
        Session {
            shared,
            index,
            conn,
            db: None,
            logged: None,
        }
    }

    fn run(&mut self) {
        let shared = self.shared;
        let mut pos = 0;
        while !shared.halted() {
            let i = match &shared.work {
                Work::Lanes(lanes, _) => lanes[self.index].get(pos).copied(),
                Work::Cursor(next) => Some(next.fetch_add(1, Ordering::Relaxed))
                    .filter(|&i| i < shared.log.stmts.len()),
            };
            let Some(i) = i else { return };
            pos += 1;
            self.statement(i);
        }
    }

    fn tally(&self) -> std::sync::MutexGuard<'a, Tally> {
        self.shared.tallies[self.index]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// Replays statement `i` (when due), counting it.
    fn statement(&mut self, i: usize) {
        let s = &self.shared.log.stmts[i];
        let opts = self.shared.opts;
        if let Some(reason) = opts.policy.refusal(&s.verdict) {
            self.tally().skipped(s.class, reason);
            return;
        }
        if opts.database.is_some() && is_use(s.sql.as_ref()) {
            // `--database` maps the log's `use` onto the one database.
            return;
        }
        if let Work::Lanes(_, Some(due)) = &self.shared.work {
            let Some(lag) = self.wait_until(due[i]) else {
                return;
            };
            self.tally().lag(lag);
        }
        if let Err(e) = self.next_connection(s.conn) {
            self.failed(s, &e);
            return;
        }
        if let Err(e) = self.use_database(s) {
            self.failed(s, &e);
            return;
        }
        let t = Instant::now();
        let running = &self.shared.running[self.index];
        running.store(self.conn.connection_id(), Ordering::Release);
        // Rows are counted by the session as they pass, never kept.
        let r = self.conn.query_each(s.sql.as_ref(), &mut |_| {});
        running.store(0, Ordering::Release);
        match r {
            Ok(_) => {
                let us = t.elapsed().as_micros() as u64;
                self.tally().ok(s.class, s.kind, us);
                self.shared.xa.note(s.sql.as_ref());
                if is_use(s.sql.as_ref()) {
                    self.db.clone_from(&s.db);
                }
            }
            Err(e) => match refusal(&e, opts.policy.read_only) {
                Some(why) => self.tally().skipped(s.class, why),
                None => self.failed(s, &e),
            },
        }
    }

    /// In sessions mode, resets the session when it goes on with another logged connection
    /// (which must not see the last one's state), read-only again under `--read-only`.
    fn next_connection(&mut self, logged: u64) -> Result<(), qpslab_wire::Error> {
        let previous = self.logged.replace(logged);
        if !matches!(self.shared.work, Work::Lanes(..)) || previous.is_none_or(|p| p == logged) {
            return Ok(());
        }
        self.conn.reset()?;
        // The reset dropped the session's settings: its limit and read-only mode again.
        limits::limit(&mut self.conn, self.shared.target.timeouts.read)?;
        read_only(&mut self.conn, self.shared.opts)
    }

    /// Sleeps until `due_us` after the start; returns the lag in µs, or none when stopped.
    fn wait_until(&self, due_us: u64) -> Option<u64> {
        let due = Duration::from_micros(due_us);
        loop {
            if self.shared.halted() {
                return None;
            }
            let now = self.shared.t0.elapsed();
            if now >= due {
                return Some((now - due).as_micros() as u64);
            }
            std::thread::sleep((due - now).min(NAP));
        }
    }

    /// Switches to the statement's logged database when it differs (without `--database`).
    fn use_database(&mut self, s: &Stmt) -> Result<(), qpslab_wire::Error> {
        if self.shared.opts.database.is_some() {
            return Ok(());
        }
        switch_database(&mut self.conn, &mut self.db, &s.db)
    }

    /// Counts a failed statement; re-establishes a lost connection, after killing the
    /// statement the session stopped waiting for (the server may still run it).
    fn failed(&mut self, s: &Stmt, e: &qpslab_wire::Error) {
        let lost = e.is_connection_lost() || e.server_code().is_none();
        let code = e.server_code().unwrap_or(LOST_CONNECTION);
        self.tally().failed(s.class, code);
        if limits::left_running(e) {
            let control = ConnectOptions {
                database: None,
                ..self.shared.target.clone()
            };
            // A server that is gone took the statement with it: nothing to report.
            let _ = limits::kill(&control, self.conn.connection_id(), Kill::Connection);
        }
        if lost {
            self.reconnect();
        }
    }

    /// Reconnects with `run`'s backoff, counting each failed attempt, until it works, the
    /// replay stops, or `RECONNECT_FOR` has passed: then the server is taken as gone and every
    /// session stops.
    fn reconnect(&mut self) {
        let target = self.shared.target;
        let since = Instant::now();
        let mut wait = FIRST_BACKOFF;
        while !self.shared.halted() {
            match open(target, self.shared.opts) {
                Ok(c) => {
                    self.conn = c;
                    self.db = None;
                    // A new session holds no state of the last logged connection.
                    self.logged = None;
                    self.tally().reconnects += 1;
                    return;
                }
                Err(e) => {
                    self.tally()
                        .connect_failed(connect_error_code(&target.endpoint, &e));
                    if since.elapsed() >= RECONNECT_FOR {
                        self.shared.give_up(format!(
                            "lost the connection to {} and could not reconnect for {} s: {e}",
                            target.describe(),
                            RECONNECT_FOR.as_secs()
                        ));
                        return;
                    }
                }
            }
            let until = Instant::now() + wait;
            while !self.shared.halted() && Instant::now() < until {
                std::thread::sleep(until.saturating_duration_since(Instant::now()).min(NAP));
            }
            wait = (wait * 2).min(MAX_BACKOFF);
        }
    }
}

/// Whether `sql` is a `USE db` statement.
fn is_use(sql: &[u8]) -> bool {
    sql.trim_ascii_start()
        .get(..4)
        .is_some_and(|w| w.eq_ignore_ascii_case(b"use "))
}

/// Makes `wanted` (a logged statement's database) the connection's current one (`current`),
/// when it names one that differs; replay's and diff's sessions both follow the log this way.
pub(crate) fn switch_database(
    conn: &mut Conn,
    current: &mut Option<String>,
    wanted: &Option<String>,
) -> Result<(), qpslab_wire::Error> {
    let Some(db) = wanted.as_deref().filter(|_| wanted != current) else {
        return Ok(());
    };
    conn.execute(&format!("USE `{}`", db.replace('`', "``")))?;
    current.clone_from(wanted);
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn use_statements_are_recognised() {
        assert!(super::is_use(b"USE shop"));
        assert!(super::is_use(b"  use `a b`"));
        assert!(!super::is_use(b"user_select()"));
        assert!(!super::is_use(b"update users set a = 1"));
    }
}
