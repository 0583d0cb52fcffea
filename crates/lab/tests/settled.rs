//! Measuring a settled server, on the real shared test server: settling drains a fresh load,
//! auto warm-up ends, and the stability verdict finds a real stall (LOCK TABLES) and a real
//! trend (updates that a trigger slows down over the phase).

use qpslab_core::plan::StopCondition;
use qpslab_core::{
    ConnectOptions, Instability, PhaseResult, RunPlan, WorkloadKind, WorkloadOptions,
};
use qpslab_engine::run_phase;
use qpslab_engine::workload::Workload;
use qpslab_lab::dataset::check::{ensure_dataset, DatasetPolicy};
use qpslab_lab::run::exec::{judge_phase, Quiet};
use qpslab_lab::run::settle::{settle, ServerKind};
use qpslab_wire::Conn;
use std::sync::atomic::AtomicBool;
use std::sync::Mutex;
use std::time::Duration;

/// The tests measure the same server: one at a time, so one's load is not another's trend.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Database `db` on the shared server with `tables` × `rows` prepared by qpslab.
fn dataset(
    db: &str,
    kind: WorkloadKind,
    tables: u32,
    rows: u64,
) -> (ConnectOptions, WorkloadOptions) {
    let mut opts = qpslab_sandbox::testing::shared_server().connect_options();
    opts.database = Some(db.into());
    let mut w = WorkloadOptions::new(kind);
    w.tables = tables;
    w.table_size = rows;
    let ours = DatasetPolicy::Prepare { space: None };
    ensure_dataset(&opts, &w, 2, &ours, &mut Quiet).expect("dataset");
    (opts, w)
}

/// The plan of `w` (seed `seed`) with phases of `secs` seconds after `warmup_s`.
fn plan(w: &WorkloadOptions, seed: u64, warmup_s: f64, secs: f64) -> RunPlan {
    let mut plan = RunPlan::new(w.clone());
    plan.workload.rand.seed = seed;
    plan.warmup_s = warmup_s;
    plan.stop = StopCondition {
        time_s: Some(secs),
        events: None,
    };
    plan
}

fn phase(opts: &ConnectOptions, w: &WorkloadOptions, threads: u32, secs: f64) -> PhaseResult {
    let plan = plan(w, 7, 1.0, secs);
    let workload = Workload::new(&plan.workload).unwrap();
    let stop = AtomicBool::new(false);
    let mut p = run_phase(opts, &plan, &workload, threads, &mut |_| {}, &stop).unwrap();
    p.stability = Some(judge_phase(&p, &plan, None));
    p
}

#[test]
fn a_table_locked_for_2_s_mid_phase_is_a_stall_of_about_2_s() {
    let _serial = serial();
    let (opts, w) = dataset("settle_stall", WorkloadKind::OltpPointSelect, 1, 10_000);
    let locker = {
        let opts = opts.clone();
        std::thread::spawn(move || {
            let mut c = Conn::connect(&opts).unwrap();
            std::thread::sleep(Duration::from_millis(3000));
            c.execute("LOCK TABLES sbtest1 WRITE").unwrap();
            std::thread::sleep(Duration::from_secs(2));
            c.execute("UNLOCK TABLES").unwrap();
        })
    };
    let p = phase(&opts, &w, 2, 7.0);
    locker.join().unwrap();
    let v = p.stability.clone().unwrap();
    let stall = v.reasons.iter().find_map(|r| match r {
        Instability::Stall { at_s, duration_s } => Some((*at_s, *duration_s)),
        _ => None,
    });
    let Some((at_s, duration_s)) = stall else {
        panic!(
            "no stall found: {v}; samples {:?}",
            p.samples.iter().map(|s| s.events).collect::<Vec<_>>()
        );
    };
    assert!((1.6..=2.8).contains(&duration_s), "{v}");
    assert!((0.5..=3.0).contains(&at_s), "{v}");
}

#[test]
fn updates_that_slow_down_over_the_phase_are_a_trend() {
    let _serial = serial();
    let (opts, w) = dataset("settle_trend", WorkloadKind::OltpUpdateNonIndex, 1, 10_000);
    // Each update sleeps in a trigger for as many microseconds as a harmless global variable
    // says (read without locks), and another connection raises it so the throughput of 2
    // sessions falls from ~200 to ~40 per second. Sleeping is wall time, so the decline holds on
    // a busy machine.
    let mut c = Conn::connect(&opts).unwrap();
    let saved = c
        .query("SELECT @@GLOBAL.group_concat_max_len")
        .unwrap()
        .first_value()
        .unwrap()
        .to_string();
    c.execute("SET GLOBAL group_concat_max_len = 10000")
        .unwrap();
    c.execute("DROP TRIGGER IF EXISTS slow_down").unwrap();
    c.execute(
        "CREATE TRIGGER slow_down BEFORE UPDATE ON sbtest1 FOR EACH ROW \
         DO SLEEP(@@GLOBAL.group_concat_max_len / 1e6)",
    )
    .unwrap();
    let ramp = {
        let opts = opts.clone();
        std::thread::spawn(move || {
            let mut c = Conn::connect(&opts).unwrap();
            let start = std::time::Instant::now();
            while start.elapsed() < Duration::from_secs(10) {
                let rate = 200.0 - 16.0 * start.elapsed().as_secs_f64();
                let us = (2.0 * 1e6 / rate) as u64;
                c.execute(&format!("SET GLOBAL group_concat_max_len = {us}"))
                    .unwrap();
                std::thread::sleep(Duration::from_millis(100));
            }
        })
    };
    let p = phase(&opts, &w, 2, 10.0);
    ramp.join().unwrap();
    c.execute("DROP TRIGGER slow_down").unwrap();
    c.execute(&format!("SET GLOBAL group_concat_max_len = {saved}"))
        .unwrap();
    let v = p.stability.unwrap();
    assert!(
        v.reasons
            .iter()
            .any(|r| matches!(r, Instability::Trend { change_pct } if *change_pct < -30.0)),
        "{v}; samples {:?}",
        p.samples.iter().map(|s| s.events).collect::<Vec<_>>()
    );
}

/// The settings settle raises while it drains, as one string.
const FLUSHING: &str = "SELECT CONCAT_WS(' ', @@GLOBAL.innodb_max_dirty_pages_pct, \
                        @@GLOBAL.innodb_max_dirty_pages_pct_lwm, @@GLOBAL.innodb_io_capacity)";

#[test]
fn settling_a_fresh_load_drains_dirty_pages_and_restores_flushing() {
    let _serial = serial();
    let mut opts = qpslab_sandbox::testing::shared_server().connect_options();
    let mut c = Conn::connect(&opts).unwrap();
    c.execute("DROP DATABASE IF EXISTS settle_fresh").unwrap();
    let before = c
        .query(FLUSHING)
        .unwrap()
        .first_value()
        .unwrap()
        .to_string();
    let (o, w) = dataset("settle_fresh", WorkloadKind::OltpReadOnly, 2, 20_000);
    opts = o;
    let r = settle(
        &opts,
        &w,
        120.0,
        ServerKind::Sandbox,
        &AtomicBool::new(false),
    )
    .unwrap();
    assert!(r.drained, "{r:?}");
    assert_eq!(r.dirty_pages.1, 0, "{r:?}");
    assert_eq!(r.tables_warmed, 2, "{r:?}");
    let after = c
        .query(FLUSHING)
        .unwrap()
        .first_value()
        .unwrap()
        .to_string();
    assert_eq!(before, after);
    // The user's server is checked once and never waited for.
    let r = settle(
        &opts,
        &w,
        120.0,
        ServerKind::External,
        &AtomicBool::new(false),
    )
    .unwrap();
    assert!(r.seconds < 10.0, "{r:?}");
    assert_eq!(r.tables_warmed, 0);
}

#[test]
fn auto_warmup_ends_once_throughput_is_flat() {
    let _serial = serial();
    let (opts, w) = dataset("settle_warm", WorkloadKind::OltpPointSelect, 1, 10_000);
    let mut plan = plan(&w, 1, 0.0, 1.0);
    plan.report_interval_s = 0.5;
    plan.percentiles = vec![99.0];
    let workload = Workload::new(&plan.workload).unwrap();
    let stop = AtomicBool::new(false);
    let took =
        qpslab_lab::run::warmup::auto_warmup(&opts, &plan, &workload, 2, 30.0, &stop).unwrap();
    assert!(took >= 2.5 - 1e-9, "at least a window of intervals: {took}");
    assert!(took <= 30.5, "bounded: {took}");
}
