//! Helpers shared by the `run_*` integration tests (included with `#[path]`); as a test target
//! of its own it holds no tests.
#![allow(dead_code)]

use qpslab_core::plan::{RunPlan, StopCondition};
use qpslab_core::result::{PhaseResult, Sample};
use qpslab_core::workload::{WorkloadKind, WorkloadOptions};
use qpslab_core::ConnectOptions;
use qpslab_engine::workload::Workload;
use qpslab_engine::{run_phase, RunError};
use qpslab_wire::Conn;
use std::sync::atomic::AtomicBool;

/// Options for database `db` on the shared test server (created with `tables` sysbench tables
/// of `rows` rows each, unless they exist).
pub fn database(db: &str, tables: u32, rows: u64) -> ConnectOptions {
    let server = qpslab_sandbox::testing::shared_server();
    let mut opts = server.connect_options();
    let mut conn = Conn::connect(&opts).expect("control connection");
    conn.execute(&format!("CREATE DATABASE IF NOT EXISTS {db}"))
        .unwrap();
    conn.execute(&format!("USE {db}")).unwrap();
    for t in 1..=tables {
        let exists = conn
            .query(&format!("SHOW TABLES LIKE 'sbtest{t}'"))
            .unwrap()
            .rows
            .len()
            == 1;
        if exists {
            continue;
        }
        // sysbench 1.0.20's schema; values need not match its generator for these tests.
        conn.execute(&format!(
            "CREATE TABLE sbtest{t} (id INTEGER NOT NULL AUTO_INCREMENT, \
             k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, \
             pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id)) ENGINE=InnoDB"
        ))
        .unwrap();
        conn.execute(&format!(
            "INSERT INTO sbtest{t} (k, c, pad) SELECT FLOOR(1 + RAND() * {rows}), \
             REPEAT('1', 119), REPEAT('2', 59) FROM seq_1_to_{rows}"
        ))
        .unwrap();
        conn.execute(&format!("CREATE INDEX k_{t} ON sbtest{t}(k)"))
            .unwrap();
    }
    opts.database = Some(db.to_string());
    opts
}

/// A control connection to `opts`.
pub fn control(opts: &ConnectOptions) -> Conn {
    Conn::connect(opts).expect("control connection")
}

/// A global status counter.
pub fn status(conn: &mut Conn, name: &str) -> u64 {
    let r = conn
        .query(&format!("SHOW GLOBAL STATUS LIKE '{name}'"))
        .unwrap();
    r.rows[0][1].as_deref().unwrap().parse().unwrap()
}

/// A global status counter once the phase's sessions are gone: a session's counters reach the
/// global ones only as it disconnects, so read after the server has closed them all.
pub fn status_after(conn: &mut Conn, name: &str, connected_before: u64) -> u64 {
    for _ in 0..500 {
        if status(conn, "Threads_connected") <= connected_before {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    status(conn, name)
}

/// A plan of `kind` over `tables` x `rows`: phases of `time_s` seconds, no warm-up, 1 s
/// reports, p50/p95/p99, seed 7.
pub fn plan(kind: WorkloadKind, tables: u32, rows: u64, time_s: f64) -> RunPlan {
    let mut o = WorkloadOptions::new(kind);
    o.tables = tables;
    o.table_size = rows;
    o.rand.seed = 7;
    let mut p = RunPlan::new(o);
    p.stop = StopCondition {
        time_s: Some(time_s),
        events: None,
    };
    p.percentiles = vec![50.0, 95.0, 99.0];
    p
}

/// The workload of `plan`.
pub fn workload(plan: &RunPlan) -> Workload {
    Workload::new(&plan.workload).unwrap()
}

/// Runs a phase of `threads` sessions of `plan`, returning the result and the samples it
/// reported.
pub fn run(
    opts: &ConnectOptions,
    plan: &RunPlan,
    threads: u32,
) -> (Result<PhaseResult, RunError>, Vec<Sample>) {
    let mut samples = Vec::new();
    let stop = AtomicBool::new(false);
    let w = workload(plan);
    let r = run_phase(
        opts,
        plan,
        &w,
        threads,
        &mut |s| samples.push(s.clone()),
        &stop,
    );
    (r, samples)
}

/// The percentile `p` of a latency summary, in ms.
pub fn pct(l: &qpslab_core::result::LatencySummary, p: f64) -> f64 {
    l.percentiles.iter().find(|x| x.p == p).unwrap().ms
}

/// Every sample carries the client's CPU of its interval, and the samples add up to the
/// phase's (the boundaries' snapshots telescope); the phase's peak RSS is the samples' peak.
pub fn assert_cpu_adds_up(r: &PhaseResult, samples: &[Sample]) {
    let total = r.client_cpu.user_s + r.client_cpu.sys_s;
    let mut sum = 0.0;
    for s in samples {
        let c = s.client_cpu.user_s + s.client_cpu.sys_s;
        assert!(c > 0.0 || s.events == 0, "sample without CPU: {s:?}");
        assert!(s.client_cpu.max_rss_kib > 0, "{s:?}");
        assert!(s.client_cpu.max_rss_kib <= r.client_cpu.max_rss_kib);
        sum += c;
    }
    assert!(
        (sum - total).abs() < 1e-6,
        "samples {sum} s, phase {total} s"
    );
    let peak = samples.iter().map(|s| s.client_cpu.max_rss_kib).max();
    assert_eq!(peak, Some(r.client_cpu.max_rss_kib));
}
