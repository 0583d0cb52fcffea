//! A session stuck for the whole phase (its statement sleeps past the phase's end, issue 34):
//! every report tick counts it, its unfinished event sets the phase's max latency, and the
//! phase is judged stalled, not stable; with no other session, no event completes.

#[path = "run_common.rs"]
mod common;

use common::*;
use qpslab_core::result::{PhaseResult, Sample};
use qpslab_core::stability::{judge, Facts};
use qpslab_core::workload::{ScriptSource, WorkloadKind};

/// The phase's measured seconds; the stuck statement sleeps well past it and its grace.
const PHASE_S: f64 = 3.0;

/// Runs a `PHASE_S` phase of `threads` sessions whose one statement takes user lock `lock`
/// if it is free and then sleeps 8 s: the first session to run it is stuck for the whole
/// phase, the others find the lock taken and go on at once.
fn stuck_phase(lock: &str, threads: u32) -> (PhaseResult, Vec<Sample>) {
    let opts = database("run_stuck", 0, 0);
    // Unique per test process: a server thread left sleeping by an earlier run holds its lock.
    let lock = format!("qpslab_{lock}_{}", std::process::id());
    let mut p = plan(WorkloadKind::OltpPointSelect, 1, 100, PHASE_S);
    p.report_interval_s = 0.5;
    p.workload.scripts = vec![ScriptSource {
        name: "stuck.sql".into(),
        path: "stuck.sql".into(),
        weight: 1,
        text: format!("SELECT IF(GET_LOCK('{lock}', 0), SLEEP(8), 0);\n"),
    }];
    let (r, samples) = run(&opts, &p, threads);
    (r.unwrap(), samples)
}

fn verdict(r: &PhaseResult) -> String {
    let facts = Facts {
        client_cpus: 2.0,
        others_cpu_share: None,
        paced_by_input: false,
    };
    judge(r, &facts).to_string()
}

/// Every tick from 1.5 s on counts one stuck session, the last one waiting past the phase.
fn assert_one_stuck(samples: &[Sample]) {
    let ticks: Vec<(f64, u32, f64)> = samples
        .iter()
        .map(|s| (s.elapsed_s, s.stuck_sessions, s.longest_in_flight_s))
        .collect();
    for &(at, stuck, longest) in &ticks {
        // A request waits from about 0 s; the bound is 1 s (the other session's p99 is far
        // below 10 ms): ticks after 1.2 s see it stuck, none sees two.
        if at > 1.2 {
            assert_eq!(stuck, 1, "{ticks:?}");
            assert!(longest >= at - 0.3, "{ticks:?}");
        }
        assert!(stuck <= 1, "{ticks:?}");
    }
    let last = ticks.last().copied().unwrap_or_default();
    assert!(last.2 >= PHASE_S, "{ticks:?}");
}

#[test]
fn one_of_two_sessions_stuck_is_counted_in_the_max_and_stalls_the_phase() {
    let (r, samples) = stuck_phase("one_of_two", 2);
    assert!(r.events > 100, "the other session ran: {}", r.events);
    assert_one_stuck(&samples);
    assert!(r.latency.max_ms >= PHASE_S * 1e3, "{:?}", r.latency);
    let v = verdict(&r);
    assert!(
        v.starts_with("unstable: stalled (1 of 2 sessions stuck for "),
        "{v}"
    );
}

#[test]
fn the_only_session_stuck_completes_nothing_and_stalls_the_phase() {
    let (r, samples) = stuck_phase("only", 1);
    assert_eq!(r.events, 0);
    assert_one_stuck(&samples);
    assert!(r.latency.max_ms >= PHASE_S * 1e3, "{:?}", r.latency);
    let v = verdict(&r);
    assert!(
        v.starts_with("unstable: stalled (1 of 1 session stuck for "),
        "{v}"
    );
}
