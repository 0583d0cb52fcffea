//! A server killed (-9) in the middle of `qpslab run`: restarted, the run recovers and is
//! stored with its reconnections and the telemetry gap; never restarted, the run still ends on
//! time and stores what it measured. Each test runs its own sandbox in its own lab.

mod common;
use common::*;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

const TIME_S: u64 = 8;

/// Starts sandbox `name` (kept running, as `server start` does) and returns its pid.
fn server_start(s: &Scratch, name: &str) -> u32 {
    let o = s.run(&["server", "start", name, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let info: Value = serde_json::from_str(&stdout(&o)).unwrap();
    info["pid"].as_u64().unwrap() as u32
}

/// The pid `server list --json` reports for `name`.
fn listed_pid(s: &Scratch, name: &str) -> u32 {
    let o = s.run(&["server", "list", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let list: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let entry = list
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == name)
        .unwrap_or_else(|| panic!("{name} not listed: {list}"));
    entry["pid"].as_u64().unwrap() as u32
}

/// `qpslab run` on the sandbox, started in the background; returns once it reported its
/// second interval (the phase is under way), with the rest of its output still to read.
fn start_run(s: &Scratch, name: &str) -> (Child, std::thread::JoinHandle<String>) {
    let time = TIME_S.to_string();
    let mut child = s
        .cmd(&[
            "run",
            "oltp_point_select",
            "--sandbox",
            name,
            "--tables",
            "1",
            "--table-size",
            "1000",
            "--threads",
            "4",
            "--time",
            &time,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run qpslab");
    let (tx, rx) = std::sync::mpsc::channel();
    let out = BufReader::new(child.stdout.take().unwrap());
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in out.lines().map_while(Result::ok) {
            if line.starts_with("[ 2s ]") {
                let _ = tx.send(());
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    if rx.recv_timeout(Duration::from_secs(120)).is_err() {
        let _ = child.kill();
        let _ = child.wait();
        panic!("the run never reached its second interval");
    }
    (child, reader)
}

fn kill_9(pid: u32) {
    // SAFETY: kill only sends a signal, to the server this test started.
    assert_eq!(unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) }, 0);
    // Gone (or a zombie, which no longer serves) before the test goes on.
    for _ in 0..200 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if stat.is_empty() || stat.rsplit(") ").next().is_some_and(|r| r.starts_with('Z')) {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The scratch store's only run, as `show 1 --json` prints it.
fn shown(s: &Scratch) -> Value {
    let o = s.run(&["show", "1", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap()
}

fn telemetry<'a>(phase: &'a Value, source: &str) -> Vec<&'a Value> {
    phase["telemetry"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["source"] == source)
        .collect()
}

#[test]
fn a_server_killed_and_restarted_mid_run_is_survived_and_the_phase_stored() {
    let s = Scratch::new();
    let first = server_start(&s, "f1");
    let (child, reader) = start_run(&s, "f1");
    assert_eq!(listed_pid(&s, "f1"), first);
    kill_9(first);
    // `server start` on the existing sandbox starts it again on the same datadir and socket.
    let second = server_start(&s, "f1");
    assert_ne!(first, second);
    let o = child.wait_with_output().unwrap();
    let out = reader.join().unwrap();
    let err = stderr(&o);
    let _ = s.run(&["server", "stop", "f1"]);
    assert_eq!(o.status.code(), Some(0), "stdout: {out}\nstderr: {err}");
    assert!(out.contains("stored as run"), "{out}");

    let run = shown(&s);
    assert_eq!(run["status"], "completed", "{}", run["status"]);
    let phase = &run["phases"][0];
    let result = &phase["result"];
    assert!(result["reconnects"].as_u64() > Some(0), "{result}");
    assert!(result["events"].as_u64() > Some(1000), "{result}");
    // The interval of the kill has (almost) nothing; the phase goes on after the restart.
    let samples = result["samples"].as_array().unwrap();
    assert_eq!(samples.len() as u64, TIME_S, "{samples:?}");
    assert!(samples.last().unwrap()["events"].as_u64() > Some(0));
    // Telemetry reconnected and says where it has no readings.
    let account = telemetry(phase, "telemetry");
    assert_eq!(account.len(), 1, "{}", phase["telemetry"]);
    assert!(account[0]["values"]["reconnects"].as_u64() >= Some(1));
    let gaps = telemetry(phase, "gap");
    assert_eq!(gaps.len(), 1, "{gaps:?}");
    assert_eq!(gaps[0]["values"]["readings_resumed"], true);
    for tick in telemetry(phase, "tick") {
        if let Some(c) = tick["values"]["status"]["counters"].as_object() {
            assert!(c.values().all(|v| v.as_i64() >= Some(0)), "{tick}");
        }
    }
}

#[test]
fn a_server_killed_for_good_mid_run_still_ends_on_time_and_stores_the_phase() {
    let s = Scratch::new();
    server_start(&s, "f2");
    let started = Instant::now();
    let (child, reader) = start_run(&s, "f2");
    kill_9(listed_pid(&s, "f2"));
    let o = child.wait_with_output().unwrap();
    let took = started.elapsed();
    let out = reader.join().unwrap();
    let err = stderr(&o);
    let _ = s.run(&["server", "stop", "f2"]);
    assert_eq!(o.status.code(), Some(0), "stdout: {out}\nstderr: {err}");
    assert!(
        took < Duration::from_secs(TIME_S + 40),
        "the run took {took:?}"
    );
    assert!(!err.contains("panicked"), "{err}");

    let run = shown(&s);
    let phase = &run["phases"][0];
    let result = &phase["result"];
    let samples = result["samples"].as_array().unwrap();
    assert_eq!(samples.len() as u64, TIME_S, "{samples:?}");
    assert!(samples[0]["events"].as_u64() > Some(0), "{:?}", samples[0]);
    // Whole intervals after the kill: no events, failed reconnection attempts counted.
    let last = samples.last().unwrap();
    assert_eq!(last["events"], 0, "{last}");
    assert!(last["errors"].as_u64() > Some(0), "{last}");
    assert_eq!(result["reconnects"], 0);
    let gaps = telemetry(phase, "gap");
    assert_eq!(gaps.len(), 1, "{gaps:?}");
    assert_eq!(gaps[0]["values"]["readings_resumed"], false);
}

fn signal(pid: u32, sig: libc::c_int) {
    // SAFETY: kill only sends a signal, to the server this test started.
    assert_eq!(unsafe { libc::kill(pid as libc::pid_t, sig) }, 0);
}

#[test]
fn a_server_that_stops_answering_mid_run_does_not_hold_the_phase_past_its_end() {
    let s = Scratch::new();
    let pid = server_start(&s, "f3");
    let started = Instant::now();
    let (child, reader) = start_run(&s, "f3");
    // SIGSTOP: the sockets stay open and nothing answers, neither the sessions nor telemetry.
    signal(pid, libc::SIGSTOP);
    // Should the run hang, the server is woken after 90 s so the test fails instead of hanging.
    let (woken_tx, woken_rx) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if woken_rx.recv_timeout(Duration::from_secs(90)).is_err() {
            signal(pid, libc::SIGCONT);
        }
    });
    let o = child.wait_with_output().unwrap();
    let took = started.elapsed();
    let _ = woken_tx.send(());
    watchdog.join().unwrap();
    signal(pid, libc::SIGCONT);
    let out = reader.join().unwrap();
    let err = stderr(&o);
    let _ = s.run(&["server", "stop", "f3"]);
    assert_eq!(o.status.code(), Some(0), "stdout: {out}\nstderr: {err}");
    // The phase's time, the grace for outstanding replies (1 s), a bounded telemetry reading:
    // not the stall's length.
    assert!(
        took < Duration::from_secs(TIME_S + 20),
        "the run took {took:?}"
    );
    let run = shown(&s);
    let result = &run["phases"][0]["result"];
    assert!(
        result["duration_s"].as_f64() < Some(TIME_S as f64 + 2.0),
        "{result}"
    );
    let verdict = result["stability"].to_string();
    assert!(verdict.contains("stall"), "{verdict}");
}
