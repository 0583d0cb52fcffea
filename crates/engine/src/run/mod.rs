//! The load loop: [`run_phase`] drives a workload against a server for one measured phase.
//!
//! A few event-loop threads (as many as [`placement`] derives from the client's CPUs, the
//! sessions and the server's CPUs; or one per `--client-cpus` entry, pinned there; each
//! measures its own CPU time, so a saturated loop is seen) each open their share of
//! the sessions with the blocking client, then drive them as state machines over non-blocking
//! sockets. The calling thread coordinates: it fixes the
//! timeline once every session is open, snapshots the process CPU at each report boundary, and
//! merges the loops' interval statistics into one [`Sample`] per interval and the
//! [`PhaseResult`].
//!
//! Warm-up runs on the same sessions and is discarded. With `--events N` exactly N events are
//! measured (tickets from one shared counter). Under a fixed rate, latency counts from each
//! event's intended start, so a stalled server shows in the percentiles instead of hiding in a
//! slower request stream. Retryable server errors (1213, 1205, 1020, or those
//! `--mysql-ignore-errors` names) roll back and retry the event; a lost connection reconnects
//! with backoff; any other error stops the phase.

mod collect;
mod cpu;
mod error;
mod event_loop;
mod new_orders;
mod placement;
mod schedule;
mod session;
mod stats;
mod uring;

pub use cpu::CpuSnapshot;
pub use error::RunError;
pub use event_loop::recovery::{connect_error_code, FIRST_BACKOFF, MAX_BACKOFF, RECONNECT_FOR};
pub use placement::{place, Placement};
pub use stats::{blob, new_histogram, record_us, summarize};
/// The latency histograms every phase uses (µs, 3 significant digits), for other loops that
/// store phases (`qpslab replay`).
pub use uring::available as io_uring_available;

use crate::workload::Workload;
use collect::Collector;
use event_loop::{keep_first_cause, open_sessions, Clock, EventLoop, LoopMsg, Shared};
use new_orders::NewOrderCounter;
use qpslab_core::plan::{RunPlan, StopCondition};
use qpslab_core::result::{PhaseResult, Sample};
use qpslab_core::tpcc::TpccFigures;
use qpslab_core::ConnectOptions;
use schedule::Boundaries;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// sysbench's default when neither `--time` nor `--events` is given.
const DEFAULT_TIME_S: f64 = 10.0;
/// Slack between "all sessions open" and the first event, so every loop starts on time.
const START_DELAY: Duration = Duration::from_millis(5);

/// Checks what the engine needs of `plan` for a phase of `threads` sessions of `workload`.
fn validate(plan: &RunPlan, workload: &Workload, threads: u32) -> Result<(), RunError> {
    let bad = |m: &str| Err(RunError::Config(m.to_string()));
    if workload.options() != &plan.workload {
        return bad("the workload was not built from the plan's workload options");
    }
    if threads == 0 {
        return bad("threads must be at least 1");
    }
    if !(plan.report_interval_s.is_finite() && plan.report_interval_s >= 0.001) {
        return bad("report interval must be at least 1 ms");
    }
    if !(plan.warmup_s.is_finite() && plan.warmup_s >= 0.0) {
        return bad("warm-up must be 0 or more seconds");
    }
    if plan
        .stop
        .time_s
        .is_some_and(|t| !(t.is_finite() && t >= 0.0))
    {
        return bad("time must be 0 or more seconds");
    }
    if plan.percentiles.iter().any(|p| !(0.0..=100.0).contains(p)) {
        return bad("percentiles must be between 0 and 100");
    }
    if let Some(r) = &plan.rate {
        if !(r.per_second.is_finite() && r.per_second > 0.0) {
            return bad("rate must be a positive number of events per second");
        }
    }
    if plan.client_cpus.as_ref().is_some_and(Vec::is_empty) {
        return bad("the client CPU list is empty");
    }
    if plan.event_loops == Some(0) {
        return bad("event loops must be at least 1");
    }
    Ok(())
}

/// Runs one phase of `threads` sessions of `plan` against `target`: warm-up, then measurement
/// until `plan.stop`, calling `on_sample` once per report interval. Raising `stop` ends the
/// phase promptly with [`RunError::Interrupted`].
///
/// `workload` must be built from `plan.workload` ([`Workload::new`]). The caller builds it once
/// per run and hands it to each phase, because it carries state that outlives a phase:
/// sysbench's unique-id counter (`oltp_insert` without `auto_inc`) continues across a sweep
/// and from an auto warm-up into the measured phase, so no phase inserts an id again.
pub fn run_phase(
    target: &ConnectOptions,
    plan: &RunPlan,
    workload: &Workload,
    threads: u32,
    on_sample: &mut dyn FnMut(&Sample),
    stop: &AtomicBool,
) -> Result<PhaseResult, RunError> {
    run_phase_gated(
        target,
        plan,
        workload,
        threads,
        on_sample,
        stop,
        &mut || Ok(None),
    )
}

/// Called once every session of a phase is open, before its clock starts: returns the wall-
/// clock instant its warm-up starts at (none: at once). The shards of one run meet here, so
/// that all of them are connected before any starts, and all start together.
pub type Gate<'a> = dyn FnMut() -> Result<Option<SystemTime>, RunError> + 'a;

/// [`run_phase`], its start fixed by `gate` once every session is open. When the gate gives a
/// start, each sample keeps its interval's event histogram and the result records when its
/// measurement started and ended (`PhaseResult::shard`), for an exact merge of shards.
pub fn run_phase_gated(
    target: &ConnectOptions,
    plan: &RunPlan,
    workload: &Workload,
    threads: u32,
    on_sample: &mut dyn FnMut(&Sample),
    stop: &AtomicBool,
    gate: &mut Gate<'_>,
) -> Result<PhaseResult, RunError> {
    validate(plan, workload, threads)?;
    let placement = place(plan, threads);
    let loops = placement.loops;
    let workload = workload.clone().with_sessions(threads);
    let mut kinds: Vec<Arc<str>> = Vec::new();
    let mut kind_of = Vec::new();
    let mut class_of = Vec::new();
    let mut commit_of = Vec::new();
    for def in workload.statements() {
        let k = kinds
            .iter()
            .position(|k| *k == def.kind)
            .unwrap_or_else(|| {
                kinds.push(Arc::clone(&def.kind));
                kinds.len() - 1
            });
        kind_of.push(k);
        class_of.push(def.class);
        commit_of.push(def.sql.trim().eq_ignore_ascii_case("COMMIT"));
    }
    // Events of several types (TPC-C's transactions) also get a latency per type, kept as a
    // kind named after the type and recorded when the statement that ends such an event
    // completes.
    let event_kind_of: Vec<Option<usize>> = (0..workload.statements().len())
        .map(|i| {
            let name = workload.event_type(i)?;
            Some(kinds.iter().position(|k| **k == *name).unwrap_or_else(|| {
                kinds.push(Arc::from(name));
                kinds.len() - 1
            }))
        })
        .collect();
    let shared = Shared {
        target,
        plan,
        workload: &workload,
        sessions: threads,
        kind_of,
        event_kind_of,
        kinds: kinds.len(),
        class_of,
        commit_of,
        tickets: AtomicU64::new(0),
        loops,
        stop,
        abort: AtomicBool::new(false),
    };
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|scope| {
        let mut starts = Vec::with_capacity(loops);
        for index in 0..loops {
            let (start_tx, start_rx) = mpsc::channel();
            starts.push(start_tx);
            let ids: Vec<u32> = (0..threads)
                .filter(|s| *s as usize % loops == index)
                .collect();
            let cpu = placement.cpu_of(index);
            let (tx, shared) = (tx.clone(), &shared);
            let spawned = std::thread::Builder::new()
                .name(format!("qpslab-loop-{index}"))
                .spawn_scoped(scope, move || {
                    loop_thread(shared, index, &ids, cpu, &start_rx, &tx)
                });
            if let Err(e) = spawned {
                shared.abort.store(true, Ordering::Relaxed);
                for s in starts.iter() {
                    let _ = s.send(None);
                }
                return Err(RunError::Io(e));
            }
        }
        drop(tx);
        coordinate(&shared, &placement, kinds, &rx, &starts, on_sample, gate)
    })
}

/// One loop thread: pin, open the sessions, wait for the start, run.
fn loop_thread(
    shared: &Shared<'_>,
    index: usize,
    ids: &[u32],
    cpu: Option<usize>,
    start: &Receiver<Option<Clock>>,
    tx: &Sender<LoopMsg>,
) {
    let opened = cpu
        .map_or(Ok(()), cpu::pin_current_thread)
        .map_err(RunError::Io)
        .and_then(|()| open_sessions(shared, ids));
    let (sessions, ready) = match opened {
        Ok(s) => (s, Ok(())),
        Err(e) => (Vec::new(), Err(e)),
    };
    let _ = tx.send(LoopMsg::Ready { result: ready });
    let Ok(Some(clock)) = start.recv() else {
        return;
    };
    // A panic here would otherwise leave the coordinator waiting for this loop's report.
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        EventLoop::new(shared, index, sessions, clock).map(|l| l.run(tx))
    }));
    let failed = match run {
        Ok(Ok(())) => return,
        Ok(Err(e)) => e,
        Err(_) => RunError::Internal(format!("event loop {index} panicked")),
    };
    let _ = tx.send(LoopMsg::Finished {
        index,
        k: 0,
        at: Instant::now(),
        stats: Box::new(stats::IntervalStats::new(shared.kinds)),
        result: Err(failed),
    });
}

/// Takes the process CPU snapshot of every report boundary that has passed.
fn snapshot_passed(col: &mut Collector, bounds: &Boundaries, on_sample: &mut dyn FnMut(&Sample)) {
    while let Some(b) = bounds.get(col.next_cpu_boundary()) {
        if Instant::now() < b {
            break;
        }
        col.cpu_at_boundary(col.next_cpu_boundary(), CpuSnapshot::now(), on_sample);
    }
}

/// The coordinator: waits for every session, starts the clock, merges intervals until every
/// loop has ended.
fn coordinate(
    shared: &Shared<'_>,
    placement: &Placement,
    kinds: Vec<Arc<str>>,
    rx: &Receiver<LoopMsg>,
    starts: &[Sender<Option<Clock>>],
    on_sample: &mut dyn FnMut(&Sample),
    gate: &mut Gate<'_>,
) -> Result<PhaseResult, RunError> {
    let loops = starts.len();
    if let Some(e) = await_ready(shared, rx, loops) {
        for s in starts.iter() {
            let _ = s.send(None);
        }
        return Err(e);
    }
    let plan = shared.plan;
    // TPC-C's New-Orders as the server counts them, read when measurement begins (here when
    // there is no warm-up) and after the last event.
    let mut counter = match new_order_counter(shared) {
        Ok(c) => c,
        Err(e) => {
            for s in starts.iter() {
                let _ = s.send(None);
            }
            return Err(e);
        }
    };
    let start_at = match gate() {
        Ok(at) => at,
        Err(e) => {
            for s in starts.iter() {
                let _ = s.send(None);
            }
            return Err(e);
        }
    };
    let clock = timeline(plan, start_at);
    for s in starts {
        let _ = s.send(Some(clock));
    }
    let mut col = Collector::new(clock.bounds, loops, kinds, plan.percentiles.clone())
        .keep_histograms(start_at.is_some());
    let mut failure = merge_until_done(
        shared,
        rx,
        &mut col,
        &clock.bounds,
        loops,
        on_sample,
        &mut counter,
    );
    if shared.stop.load(Ordering::Relaxed) && failure.is_none() {
        failure = Some(RunError::Interrupted);
    }
    if let Some(e) = failure {
        return Err(e);
    }
    let tpcc = match counter.as_mut() {
        Some(c) => Some(tpcc_figures(shared, c.since_begin()?, &col)),
        None => None,
    };
    let mut result = col.result(
        shared.sessions,
        plan.rate.as_ref().map(|r| r.per_second),
        placement,
    );
    result.tpcc = tpcc;
    if start_at.is_some() {
        let start = wall_clock(clock.bounds.measure_start);
        result.shard = Some(qpslab_core::shard::ShardPhase {
            start_unix_s: start,
            end_unix_s: start + result.duration_s,
            members: Vec::new(),
        });
    }
    Ok(result)
}

/// Unix seconds of `at`, an instant of this process's monotonic clock.
fn wall_clock(at: Instant) -> f64 {
    let now = Instant::now();
    let unix = |t: SystemTime| {
        t.duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64())
    };
    let wall = SystemTime::now();
    match at.checked_duration_since(now) {
        Some(ahead) => unix(wall) + ahead.as_secs_f64(),
        None => unix(wall) - now.duration_since(at).as_secs_f64(),
    }
}

/// The counter of a TPC-C phase, its first reading taken when the phase has no warm-up.
fn new_order_counter(shared: &Shared<'_>) -> Result<Option<NewOrderCounter>, RunError> {
    if !shared.workload.is_tpcc() {
        return Ok(None);
    }
    let mut c = NewOrderCounter::open(shared.target)?;
    if shared.plan.warmup_s == 0.0 {
        c.begin()?;
    }
    Ok(Some(c))
}

/// What a TPC-C phase measured besides its events.
fn tpcc_figures(shared: &Shared<'_>, server_new_orders: u64, col: &Collector) -> TpccFigures {
    let o = shared.workload.options();
    TpccFigures {
        mode: o.tpcc.mode,
        think_scale: o.tpcc.think_scale,
        warehouses: o.warehouses.last,
        server_new_orders,
        retries: col.type_retries(),
        check: None,
    }
}

/// Waits until each of `loops` loops has opened its sessions. Returns why the phase cannot
/// start: the first loop's failure, or an interrupt.
fn await_ready(shared: &Shared<'_>, rx: &Receiver<LoopMsg>, loops: usize) -> Option<RunError> {
    let mut failure: Option<RunError> = None;
    for _ in 0..loops {
        match rx.recv() {
            Ok(LoopMsg::Ready { result: Err(e) }) => {
                keep_first_cause(&mut failure, e);
                shared.abort.store(true, Ordering::Relaxed);
            }
            Ok(_) => {}
            Err(_) => {
                failure.get_or_insert(RunError::Internal("an event loop exited early".into()));
                break;
            }
        }
    }
    if shared.stop.load(Ordering::Relaxed) {
        failure = Some(RunError::Interrupted);
    }
    failure
}

/// The phase's timeline from now: warm-up from a moment ahead, then measurement until the
/// time limit (sysbench's 10 s when neither a time nor an event count is given).
fn timeline(plan: &RunPlan, start_at: Option<SystemTime>) -> Clock {
    let now = Instant::now();
    // A start agreed with other shards, in wall-clock time, onto this process's clock (one
    // already past starts at once).
    let t0 = match start_at.map(|at| at.duration_since(SystemTime::now())) {
        Some(Ok(ahead)) => now + ahead,
        Some(Err(_)) => now,
        None => now + START_DELAY,
    };
    let measure_start = t0 + Duration::from_secs_f64(plan.warmup_s);
    let time_s = match plan.stop {
        StopCondition {
            time_s: None,
            events: None,
        } => Some(DEFAULT_TIME_S),
        StopCondition { time_s, .. } => time_s,
    };
    let interval = Duration::from_secs_f64(plan.report_interval_s);
    let bounds = Boundaries {
        measure_start,
        interval,
        end: time_s.map(|t| measure_start + Duration::from_secs_f64(t)),
        warm: Boundaries::warm_intervals(measure_start - t0, interval),
    };
    Clock { t0, bounds }
}

/// Merges the loops' reports into `col`, snapshotting the process CPU at each boundary (and
/// taking `counter`'s first reading at the first), until all `loops` have finished. Returns the
/// first failure.
fn merge_until_done(
    shared: &Shared<'_>,
    rx: &Receiver<LoopMsg>,
    col: &mut Collector,
    bounds: &Boundaries,
    loops: usize,
    on_sample: &mut dyn FnMut(&Sample),
    counter: &mut Option<NewOrderCounter>,
) -> Option<RunError> {
    let mut failure: Option<RunError> = None;
    let mut running = loops;
    while running > 0 {
        snapshot_passed(col, bounds, on_sample);
        if let Some(c) = counter.as_mut().filter(|c| !c.begun()) {
            if Instant::now() >= bounds.measure_start {
                if let Err(e) = c.begin() {
                    shared.abort.store(true, Ordering::Relaxed);
                    keep_first_cause(&mut failure, e);
                }
            }
        }
        let next = bounds.get(col.next_cpu_boundary());
        let wait = next.map_or(Duration::from_millis(100), |b| {
            b.saturating_duration_since(Instant::now())
        });
        let msg = rx.recv_timeout(wait);
        // A boundary may have passed while waiting: its snapshot must come before a loop's
        // last report, or the interval would lose its CPU figure.
        snapshot_passed(col, bounds, on_sample);
        match msg {
            Ok(LoopMsg::Interval { index, k, stats }) => col.interval(index, k, &stats, on_sample),
            Ok(LoopMsg::Finished {
                index,
                k,
                at,
                stats,
                result,
            }) => {
                running -= 1;
                if let Err(e) = result {
                    shared.abort.store(true, Ordering::Relaxed);
                    keep_first_cause(&mut failure, e);
                }
                col.finished(index, k, at, &stats, CpuSnapshot::now(), on_sample);
            }
            Ok(LoopMsg::Ready { .. }) | Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                failure.get_or_insert(RunError::Internal("an event loop exited early".into()));
                break;
            }
        }
    }
    failure
}

#[cfg(test)]
mod tests {
    use super::*;
    use qpslab_core::{WorkloadKind, WorkloadOptions};

    #[test]
    fn an_agreed_start_is_kept_in_this_process_clock() {
        let mut plan = RunPlan::new(WorkloadOptions::new(WorkloadKind::OltpPointSelect));
        plan.warmup_s = 1.0;
        let now = Instant::now();
        let at = SystemTime::now() + Duration::from_millis(300);
        let c = timeline(&plan, Some(at));
        let ahead = c.t0.duration_since(now).as_secs_f64();
        assert!((0.25..0.35).contains(&ahead), "{ahead}");
        assert_eq!(c.bounds.measure_start - c.t0, Duration::from_secs(1));
        // A start already past begins at once.
        let past = SystemTime::now() - Duration::from_secs(5);
        let c = timeline(&plan, Some(past));
        assert!(c.t0.duration_since(now) < Duration::from_millis(100));
        // Unix seconds of an instant, both ways of now.
        let unix = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs_f64();
        let later = wall_clock(Instant::now() + Duration::from_secs(2));
        assert!((later - unix - 2.0).abs() < 0.05, "{later} {unix}");
        let earlier = wall_clock(Instant::now() - Duration::from_secs(2));
        assert!((unix - earlier - 2.0).abs() < 0.05, "{earlier} {unix}");
    }
}
