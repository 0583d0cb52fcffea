//! The server dies mid-phase and never comes back: sessions keep reconnecting with backoff
//! (no spin), the phase ends on time with a sample for every interval, and the failed
//! reconnections are counted. One test in its own process: it kills this process's server.

#[path = "run_common.rs"]
mod common;

use common::*;
use qpslab_core::workload::WorkloadKind;
use std::time::{Duration, Instant};

/// CR_CONNECTION_ERROR: a Unix socket nobody listens on.
const CANNOT_CONNECT: u16 = 2002;

#[test]
fn a_server_that_stays_down_ends_the_phase_on_time_with_empty_intervals() {
    let opts = database("run_down", 1, 1000);
    let p = plan(WorkloadKind::OltpPointSelect, 1, 1000, 5.0);
    let pid = qpslab_sandbox::testing::shared_server().pid();
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(1500));
        // SAFETY: kill only sends a signal, to the server this process started.
        let r = unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
        assert_eq!(r, 0, "kill -9 {pid}");
    });
    let started = Instant::now();
    let (r, samples) = run(&opts, &p, 4);
    killer.join().unwrap();
    let took = started.elapsed();
    let r = r.expect("the phase ends normally");
    assert!(took < Duration::from_secs(8), "took {took:?}");
    assert_eq!(samples.len(), 5, "{samples:#?}");
    assert!(samples[0].events > 0, "{:?}", samples[0]);
    // Whole intervals after the kill: nothing done, reconnection attempts counted, the client
    // asleep between attempts.
    for s in &samples[2..] {
        assert_eq!(s.events, 0, "{s:?}");
        assert!(s.errors > 0, "{s:?}");
        let cpu = s.client_cpu.user_s + s.client_cpu.sys_s;
        assert!(
            cpu < 0.1 * s.interval_s,
            "{cpu:.3} s of CPU while down: {s:?}"
        );
    }
    let failures = r.errors.get(&CANNOT_CONNECT).copied().unwrap_or(0);
    // 4 sessions, backoff doubling to 1 s: at least a few attempts each over > 3 s.
    assert!(failures >= 8, "{:?}", r.errors);
    assert_eq!(r.reconnects, 0);
    assert!((r.duration_s - 5.0).abs() < 0.5, "{}", r.duration_s);
}
