//! Thousands of sessions on a few event-loop threads.

#[path = "run_common.rs"]
mod common;

use common::*;
use qpslab_core::workload::WorkloadKind;

fn os_threads() -> usize {
    std::fs::read_dir("/proc/self/task").unwrap().count()
}

#[test]
fn four_thousand_sessions_open_and_run_on_a_few_threads() {
    let opts = database("run_many", 1, 10_000);
    let mut p = plan(WorkloadKind::OltpPointSelect, 1, 10_000, 3.0);
    p.event_loops = Some(2);
    let mut ctl = control(&opts);
    let connected = status(&mut ctl, "Threads_connected");
    let before = status(&mut ctl, "Com_stmt_execute");
    let threads_before = os_threads();
    let peak = std::sync::atomic::AtomicUsize::new(0);
    let mut samples = Vec::new();
    let stop = std::sync::atomic::AtomicBool::new(false);
    let t = std::time::Instant::now();
    let r = qpslab_engine::run_phase(
        &opts,
        &p,
        &workload(&p),
        4096,
        &mut |x| {
            peak.fetch_max(os_threads(), std::sync::atomic::Ordering::Relaxed);
            samples.push(x.clone());
        },
        &stop,
    );
    let after = status_after(&mut ctl, "Com_stmt_execute", connected);
    let r = r.unwrap();
    eprintln!(
        "4096 sessions: {:.0} qps, {:.1} us CPU/query, rss {} MiB, {:?} total",
        r.qps(),
        r.client_cpu_us_per_query().unwrap(),
        r.client_cpu.max_rss_kib / 1024,
        t.elapsed()
    );
    assert_eq!(r.threads, 4096);
    assert_eq!(r.events, after - before);
    assert!(r.events > 4096, "every session ran: {}", r.events);
    assert_eq!(samples.len(), 3);
    // The test harness thread, the coordinator and two loops; nothing per session.
    let peak = peak.into_inner();
    assert!(
        peak <= threads_before + 2,
        "{peak} threads (before: {threads_before})"
    );
    let max_used = status(&mut ctl, "Max_used_connections");
    assert!(max_used >= 4096, "{max_used}");
}
