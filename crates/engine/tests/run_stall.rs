//! A stalled server (every statement blocked behind `LOCK TABLES ... WRITE`): the event loops
//! sleep instead of spinning, and the stalled intervals are still reported on time, with no
//! events.

#[path = "run_common.rs"]
mod common;

use common::*;
use qpslab_core::plan::{Arrival, RateSpec};
use qpslab_core::result::Sample;
use qpslab_core::workload::WorkloadKind;
use std::time::Duration;

/// Runs a 6 s phase of `threads` sessions (at `rate` events/s if given) with 0.5 s reports
/// while another connection holds a write lock on the only table from about 1.5 s to 4 s.
fn stalled_phase(threads: u32, rate: Option<f64>) -> Vec<Sample> {
    let opts = database("run_stall", 1, 1000);
    let holder = {
        let opts = opts.clone();
        std::thread::spawn(move || {
            let mut c = control(&opts);
            std::thread::sleep(Duration::from_millis(1500));
            c.execute("LOCK TABLES sbtest1 WRITE").unwrap();
            std::thread::sleep(Duration::from_millis(2500));
            c.execute("UNLOCK TABLES").unwrap();
        })
    };
    let mut s = plan(WorkloadKind::OltpPointSelect, 1, 1000, 6.0);
    s.report_interval_s = 0.5;
    s.rate = rate.map(|per_second| RateSpec {
        per_second,
        arrival: Arrival::Uniform,
    });
    let (r, samples) = run(&opts, &s, threads);
    holder.join().unwrap();
    let r = r.unwrap();
    assert!(r.events > 100, "{}", r.events);
    samples
}

fn assert_stall_sleeps(threads: u32, samples: &[Sample]) {
    // Every interval is cut on time, stalled or not.
    assert_eq!(samples.len(), 12, "{threads} sessions: {samples:#?}");
    for (i, s) in samples.iter().enumerate() {
        assert!(
            (s.elapsed_s - 0.5 * (i + 1) as f64).abs() < 0.05,
            "{threads} sessions, sample {i}: {s:?}"
        );
    }
    let stalled: Vec<&Sample> = samples.iter().filter(|s| s.events == 0).collect();
    // The lock covers at least four whole intervals; allow for a slow start of the holder.
    assert!(
        stalled.len() >= 3,
        "{threads} sessions: only {} stalled intervals: {samples:#?}",
        stalled.len()
    );
    for s in stalled {
        let cpu = s.client_cpu.user_s + s.client_cpu.sys_s;
        // A sleeping client spends ~nothing; a spinning one a whole core per loop. 10% of a
        // core leaves room for a loaded machine.
        assert!(
            cpu < 0.1 * s.interval_s,
            "{threads} sessions: {cpu:.3} s of client CPU in a stalled interval: {s:?}"
        );
        assert_eq!(s.queries.read, 0, "{s:?}");
    }
    // The phase ran before and after the stall.
    assert!(
        samples[0].events > 0 && samples[11].events > 0,
        "{samples:#?}"
    );
}

#[test]
fn a_stalled_server_costs_the_client_no_cpu_and_intervals_stay_on_time() {
    // One loop per session at 4 sessions; at 64 sessions one loop with the linger nap armed;
    // under a fixed rate the arrivals that fall due during the stall wait without spinning.
    for (threads, rate) in [(4, None), (64, None), (8, Some(2000.0))] {
        let samples = stalled_phase(threads, rate);
        assert_stall_sleeps(threads, &samples);
    }
}
