//! `qpslab run` with a measured session stuck for the whole phase (issue 34): the live lines,
//! the summary and the stored run show it, the verdict is not stable, and a phase in which no
//! event completed makes `run` fail (its results still printed and stored).

mod common;

use common::*;

/// Runs a 2 s phase of `threads` sessions of a script whose statement takes user lock `lock`
/// when it is free and then sleeps 8 s: the first session to run it is stuck for the whole
/// phase, the others go on at once. Returns the output and the stored run's JSON.
fn run_stuck(s: &Scratch, lock: &str, threads: &str) -> (std::process::Output, serde_json::Value) {
    sql("CREATE DATABASE IF NOT EXISTS stuck_run");
    // Unique per test process: a server thread left sleeping by an earlier run holds its lock.
    let lock = format!("qpslab_{lock}_{}", std::process::id());
    let script = s.path().join("stuck.sql");
    std::fs::write(
        &script,
        format!("SELECT IF(GET_LOCK('{lock}', 0), SLEEP(8), 0);\n"),
    )
    .unwrap();
    let json = s.path().join("run.json");
    let o = s.run(&[
        "run",
        "--script",
        script.to_str().unwrap(),
        "--socket",
        &socket(),
        "--database",
        "stuck_run",
        "--threads",
        threads,
        "--time",
        "2",
        "--report-interval",
        "0.5",
        "--json",
        json.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(&json)
        .unwrap_or_else(|e| panic!("no JSON ({e}): {}\n{}", stdout(&o), stderr(&o)));
    (o, serde_json::from_str(&text).unwrap())
}

/// The phase's samples counted one stuck session from 1.5 s on, and its max latency is at
/// least the phase's 2 s.
fn assert_stored_stuck(v: &serde_json::Value) {
    let phase = &v["phases"][0]["result"];
    let samples = phase["samples"].as_array().unwrap();
    let stuck: Vec<(f64, u64)> = samples
        .iter()
        .map(|s| {
            let at = s["elapsed_s"].as_f64().unwrap();
            (at, s["stuck_sessions"].as_u64().unwrap_or(0))
        })
        .collect();
    assert!(
        stuck.iter().all(|&(at, n)| n == 1 || at <= 1.2),
        "{stuck:?}"
    );
    let last = samples.last().unwrap();
    assert!(
        last["longest_in_flight_s"].as_f64().unwrap() >= 2.0,
        "{last}"
    );
    let max = phase["latency"]["max_ms"].as_f64().unwrap();
    assert!(max >= 2000.0, "max {max} ms: {}", phase["latency"]);
}

#[test]
fn one_of_two_sessions_stuck_is_seen_and_the_phase_is_stalled() {
    let s = Scratch::new();
    let (o, v) = run_stuck(&s, "one_of_two", "2");
    let out = stdout(&o);
    assert!(o.status.success(), "{out}\n{}", stderr(&o));
    assert!(out.contains(" stuck: 1 (longest "), "{out}");
    assert!(
        out.contains("unstable: stalled (1 of 2 sessions stuck for "),
        "{out}"
    );
    assert_stored_stuck(&v);
    let events = v["phases"][0]["result"]["events"].as_u64().unwrap();
    assert!(events > 0, "{v}");
}

#[test]
fn the_only_session_stuck_fails_the_run_with_its_results_stored() {
    let s = Scratch::new();
    let (o, v) = run_stuck(&s, "only", "1");
    let (out, err) = (stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(1), "{out}\n{err}");
    assert!(
        out.contains("unstable: stalled (1 of 1 session stuck for "),
        "{out}"
    );
    stored_run_id(&out);
    // One line says why, after the run's own notes (server, settling).
    let errors: Vec<&str> = err.lines().filter(|l| l.contains("error")).collect();
    assert_eq!(errors.len(), 1, "{err}");
    assert!(
        errors[0].starts_with(
            "qpslab: error: no event completed in the measured phase at 1 thread(s), \
             stalled (1 of 1 session stuck for "
        ),
        "{err}"
    );
    assert_eq!(v["phases"][0]["result"]["events"], 0, "{v}");
    assert_stored_stuck(&v);
}
