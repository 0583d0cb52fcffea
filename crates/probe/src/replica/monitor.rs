//! The background measurement of a replica's lag: three threads with their own connections
//! (heartbeat writer on the primary, reader of the heartbeat and of `SHOW SLAVE STATUS` on the
//! replica, GTID waiter), never the run's sessions, and never on the report tick: a tick only
//! takes what they gathered ([`LagMonitor::take`]).

use super::lag::{heartbeat_lag_us, parse_unix_us, unix_text};
use super::replica_status;
use crate::error::Error;
use crate::process::process_cpu;
use qpslab_core::env::ProcessCpu;
use qpslab_core::telemetry::{MaxLast, ProcUsage, ReplicaLag};
use qpslab_core::ConnectOptions;
use qpslab_wire::Conn;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

/// How often the heartbeat row is written on the primary.
pub const HEARTBEAT_EVERY: Duration = Duration::from_millis(200);
/// How often the replica's heartbeat row is read: the heartbeat lag's resolution.
pub const READ_EVERY: Duration = Duration::from_millis(25);
/// `SHOW SLAVE STATUS` every this many heartbeat reads (every 500 ms).
const STATUS_EVERY_READS: u32 = 20;
/// GTID waits start at most this often.
const GTID_SPACING: Duration = Duration::from_millis(50);
/// One `MASTER_GTID_WAIT` call's timeout; a longer wait is several calls on the same position.
const GTID_WAIT_S: f64 = 0.5;
/// Every connection and query of the monitor is bounded by this.
const IO_TIMEOUT: Duration = Duration::from_secs(2);
/// The heartbeat writes kept to find the oldest one not yet arrived.
const MAX_WRITES: usize = 100_000;

/// Measures a replica's lag in the background until dropped; dropping it stops the threads and
/// drops the heartbeat table (and the `qpslab` schema when it created it) on the primary.
pub struct LagMonitor {
    shared: Arc<Shared>,
    /// The replica's server process, when it runs here, and its CPU when the phase began.
    pid: Option<u32>,
    cpu_at_begin: Mutex<Option<ProcessCpu>>,
    threads: Vec<JoinHandle<()>>,
    primary: ConnectOptions,
    created_schema: bool,
}

struct Shared {
    stop: AtomicBool,
    /// Between [`LagMonitor::begin`] and [`LagMonitor::end`]: heartbeats are written and lag
    /// is measured only then, so that a server settling between phases is left alone.
    active: AtomicBool,
    primary: ConnectOptions,
    replica: ConnectOptions,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    interval: ReplicaLag,
    /// Heartbeat write times (µs since the epoch), oldest first, not yet seen on the replica.
    writes: VecDeque<i64>,
    /// The newest heartbeat the last read found.
    seen: Option<i64>,
    /// When the GTID wait in progress started.
    gtid_since: Option<Instant>,
    /// The replica stopped; whether that was reported yet.
    stopped: Option<(String, bool)>,
}

impl LagMonitor {
    /// Checks that `replica` is reachable and is a replica, creates the heartbeat table on
    /// `primary` and starts measuring.
    pub fn start(primary: &ConnectOptions, replica: &ConnectOptions) -> Result<LagMonitor, Error> {
        let mut r = connect(replica)?;
        if replica_status(&mut r)?.is_none() {
            return Err(Error::NotReplica(format!(
                "{} is not a replica (SHOW SLAVE STATUS is empty)",
                replica.describe()
            )));
        }
        let mut p = connect(primary)?;
        let created_schema = create_heartbeat(&mut p)?;
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            active: AtomicBool::new(false),
            primary: primary.clone(),
            replica: replica.clone(),
            state: Mutex::default(),
        });
        let loops: [fn(&Shared); 3] = [write_heartbeats, read_replica, wait_gtids];
        let threads = loops
            .into_iter()
            .map(|f| {
                let s = Arc::clone(&shared);
                std::thread::spawn(move || f(&s))
            })
            .collect();
        Ok(LagMonitor {
            shared,
            pid: None,
            cpu_at_begin: Mutex::new(None),
            threads,
            primary: primary.clone(),
            created_schema,
        })
    }

    /// The replica's server process runs here as `pid`: its CPU is reported at each
    /// [`LagMonitor::end`].
    pub fn with_pid(mut self, pid: u32) -> LagMonitor {
        self.pid = Some(pid);
        self
    }

    /// A phase begins: waits (at most `catch_up`) for the replica to catch up, forgets what
    /// was gathered before, and measures from now on.
    pub fn begin(&self, catch_up: Duration) {
        self.catch_up(catch_up);
        self.shared.lock().interval = ReplicaLag::default();
        *lock(&self.cpu_at_begin) = self.pid.and_then(|p| process_cpu(p).ok());
        self.shared.active.store(true, Ordering::Relaxed);
    }

    /// The phase ended: measuring pauses; returns the replica process's usage over the phase,
    /// when it runs here.
    pub fn end(&self) -> Option<ProcUsage> {
        self.shared.active.store(false, Ordering::Relaxed);
        let before = lock(&self.cpu_at_begin).take()?;
        let now = process_cpu(self.pid?).ok()?;
        Some(ProcUsage::between(&before, &now, true))
    }

    /// Waits, at most `timeout`, until the replica applied everything the primary logged so
    /// far, so that a phase starts from a replica that is not behind (a load, an earlier
    /// phase); returns how long that took, `None` when it did not catch up or could not tell.
    pub fn catch_up(&self, timeout: Duration) -> Option<Duration> {
        let mut p = connect(&self.shared.primary).ok()?;
        let mut r = connect(&self.shared.replica).ok()?;
        r.set_timeout(Some(timeout + IO_TIMEOUT)).ok()?;
        let (pos_sql, wait_fn) = gtid_sql(p.is_mariadb());
        let pos = position(&mut p, pos_sql).ok()?;
        let t0 = Instant::now();
        let sql = format!("SELECT {wait_fn}('{pos}', {})", timeout.as_secs_f64());
        let done = r.query(&sql).ok()?.first_value() == Some("0");
        done.then(|| t0.elapsed())
    }

    /// The lag gathered since the last call; a GTID wait still running counts with its age.
    pub fn take(&self) -> ReplicaLag {
        let mut st = self.shared.lock();
        if let Some(since) = st.gtid_since {
            MaxLast::push(&mut st.interval.gtid_lag_ms, ms(since.elapsed()));
        }
        if let Some((why, reported)) = &mut st.stopped {
            if !*reported {
                *reported = true;
                st.interval.error = Some(why.clone());
            }
        }
        std::mem::take(&mut st.interval)
    }
}

impl Drop for LagMonitor {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        // Best effort: a primary that is gone keeps the table, which the next run reuses.
        if let Ok(mut c) = connect(&self.primary) {
            let _ = c.execute("DROP TABLE IF EXISTS qpslab.heartbeat");
            if self.created_schema {
                let _ = c.execute("DROP DATABASE IF EXISTS qpslab");
            }
        }
    }
}

/// A panicking monitor thread leaves plain numbers behind: still usable.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    fn active(&self) -> bool {
        self.active.load(Ordering::Relaxed)
    }

    /// Sleeps `d` unless asked to stop; false when asked.
    fn nap(&self, d: Duration) -> bool {
        let end = Instant::now() + d;
        while !self.stop.load(Ordering::Relaxed) {
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return true;
            }
            std::thread::sleep(left.min(Duration::from_millis(50)));
        }
        false
    }
}

/// A monitoring connection: no default schema, UTC (the heartbeat's text is UTC both ways),
/// bounded waits.
fn connect(opts: &ConnectOptions) -> Result<Conn, Error> {
    let opts = ConnectOptions {
        database: None,
        ..opts.clone()
    };
    let mut c = Conn::connect_timeout(&opts, IO_TIMEOUT)?;
    c.set_timeout(Some(IO_TIMEOUT))?;
    c.execute("SET time_zone = '+00:00'")?;
    Ok(c)
}

/// Creates `qpslab.heartbeat`; true when the `qpslab` schema was created too.
fn create_heartbeat(c: &mut Conn) -> Result<bool, Error> {
    let existed = c
        .query("SELECT 1 FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'qpslab'")?
        .first_value()
        .is_some();
    c.execute("CREATE DATABASE IF NOT EXISTS qpslab")?;
    c.execute(
        "CREATE TABLE IF NOT EXISTS qpslab.heartbeat \
         (id INT PRIMARY KEY, ts DATETIME(6) NOT NULL) ENGINE=InnoDB",
    )?;
    Ok(!existed)
}

fn now_us() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64)
}

/// Milliseconds, to the microsecond.
fn ms(d: Duration) -> f64 {
    d.as_micros() as f64 / 1000.0
}

/// Runs `step` on a connection to `opts` every `every` until stopped, reconnecting after a
/// failure (a restarting server costs readings, never the run).
fn each(
    s: &Shared,
    opts: &ConnectOptions,
    every: Duration,
    mut step: impl FnMut(&mut Conn) -> bool,
) {
    let mut conn: Option<Conn> = None;
    loop {
        let c = match conn.as_mut() {
            Some(c) => c,
            None => match connect(opts) {
                Ok(c) => conn.insert(c),
                Err(_) => {
                    if !s.nap(Duration::from_millis(500)) {
                        return;
                    }
                    continue;
                }
            },
        };
        if !step(c) {
            conn = None;
        }
        if !s.nap(every) {
            return;
        }
    }
}

fn write_heartbeats(s: &Shared) {
    each(s, &s.primary, HEARTBEAT_EVERY, |c| {
        if !s.active() {
            return true;
        }
        let ts = now_us();
        let sql = format!(
            "REPLACE INTO qpslab.heartbeat (id, ts) VALUES (1, FROM_UNIXTIME({}))",
            unix_text(ts)
        );
        let ok = c.execute(&sql).is_ok();
        if ok {
            let mut st = s.lock();
            st.writes.push_back(ts);
            if st.writes.len() > MAX_WRITES {
                st.writes.pop_front();
            }
        }
        ok
    });
}

fn read_replica(s: &Shared) {
    let mut reads = 0u32;
    each(s, &s.replica, READ_EVERY, |c| {
        if !s.active() {
            return true;
        }
        reads = reads.wrapping_add(1);
        if reads % STATUS_EVERY_READS == 1 && !read_status(s, c) {
            return false;
        }
        read_heartbeat(s, c)
    });
}

fn read_heartbeat(s: &Shared, c: &mut Conn) -> bool {
    let arrived = match c.query("SELECT UNIX_TIMESTAMP(ts) FROM qpslab.heartbeat WHERE id = 1") {
        Ok(r) => r.first_value().and_then(parse_unix_us),
        // The table has not reached the replica yet.
        Err(e) if e.server_code() == Some(1146) => None,
        Err(_) => return false,
    };
    let now = now_us();
    let mut st = s.lock();
    if let Some(a) = arrived {
        while st.writes.front().is_some_and(|&w| w <= a) {
            st.writes.pop_front();
        }
    }
    let seen = st.seen;
    if let Some(lag) = heartbeat_lag_us(now, arrived, seen, st.writes.make_contiguous()) {
        MaxLast::push(&mut st.interval.heartbeat_lag_ms, lag as f64 / 1000.0);
    }
    st.seen = arrived;
    true
}

fn read_status(s: &Shared, c: &mut Conn) -> bool {
    let status = match replica_status(c) {
        Ok(s) => s,
        Err(_) => return false,
    };
    let mut st = s.lock();
    let stopped = match status {
        None => Some("replica stopped: replication was reset (RESET SLAVE ALL)".to_string()),
        Some(r) => {
            if let Some(sbm) = r.sbm_s {
                MaxLast::push(&mut st.interval.sbm_s, sbm as f64);
            }
            r.stopped()
        }
    };
    match (stopped, &st.stopped) {
        (Some(why), None) => st.stopped = Some((why, false)),
        // Running again (START SLAVE): a later stop is reported again.
        (None, Some(_)) => st.stopped = None,
        _ => {}
    }
    true
}

fn wait_gtids(s: &Shared) {
    let mut primary: Option<Conn> = None;
    each(s, &s.replica, Duration::ZERO, |replica| {
        let started = Instant::now();
        if !s.active() {
            return s.nap(GTID_SPACING);
        }
        let p = match primary.as_mut() {
            Some(p) => p,
            None => match connect(&s.primary) {
                Ok(p) => primary.insert(p),
                Err(_) => return s.nap(Duration::from_millis(500)),
            },
        };
        let ok = match wait_one(s, p, replica) {
            Ok(()) => true,
            Err(Failed::Primary) => {
                primary = None;
                true
            }
            Err(Failed::Replica) => false,
        };
        s.lock().gtid_since = None;
        s.nap(GTID_SPACING.saturating_sub(started.elapsed()));
        ok
    });
}

enum Failed {
    Primary,
    Replica,
}

/// One GTID sample: the primary's position now, then the wait until the replica applied it.
fn wait_one(s: &Shared, p: &mut Conn, replica: &mut Conn) -> Result<(), Failed> {
    let (pos_sql, wait_fn) = gtid_sql(p.is_mariadb());
    let pos = position(p, pos_sql).map_err(|_| Failed::Primary)?;
    let t0 = Instant::now();
    s.lock().gtid_since = Some(t0);
    let sql = format!("SELECT {wait_fn}('{pos}', {GTID_WAIT_S})");
    while !s.stop.load(Ordering::Relaxed) {
        let r = replica.query(&sql).map_err(|_| Failed::Replica)?;
        if r.first_value() == Some("0") {
            let mut st = s.lock();
            MaxLast::push(&mut st.interval.gtid_lag_ms, ms(t0.elapsed()));
            return Ok(());
        }
    }
    Ok(())
}

/// The query of the primary's GTID position and the function that waits for one on the
/// replica (both return 0 once reached). MySQL's (the executed set and its own wait) is
/// untested.
fn gtid_sql(mariadb: bool) -> (&'static str, &'static str) {
    if mariadb {
        ("SELECT @@gtid_binlog_pos", "MASTER_GTID_WAIT")
    } else {
        (
            "SELECT @@GLOBAL.gtid_executed",
            "WAIT_FOR_EXECUTED_GTID_SET",
        )
    }
}

/// The primary's position now, safe inside a quoted literal.
fn position(p: &mut Conn, pos_sql: &str) -> Result<String, qpslab_wire::Error> {
    Ok(p.query(pos_sql)?
        .first_value()
        .unwrap_or("")
        .replace(['\'', '\\'], ""))
}
