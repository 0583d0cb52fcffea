//! Nothing measured is lost: `kill -9` and SIGTERM of `qpslab run` mid-phase keep the intervals
//! measured so far as an interrupted run; SIGTERM also stops the embedded server and lets the next
//! run start; `lab resume` finishes a study whose process was killed mid-cell.

mod common;

use common::{processes_mentioning, socket, stderr, stdout, wait_for_running_run, Scratch};
use qpslab_store::{CellStatus, RunStatus, Store};
use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// Starts `qpslab ARGS` and returns once it has printed the live line of its third second of
/// measuring; the rest of its output is still read (a closed pipe would change how it ends).
fn spawn_until_third_second(s: &Scratch, args: &[&str]) -> Child {
    let mut child = s
        .cmd(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut seen = Vec::new();
    let mut line = String::new();
    while out.read_line(&mut line).unwrap() > 0 {
        if line.starts_with("[ 3s ]") {
            std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
            return child;
        }
        seen.push(std::mem::take(&mut line));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("the run ended before its third second: {}", seen.concat());
}

/// The only run of the store, read back through `show --json`, with its phases' sample counts.
fn only_run(s: &Scratch) -> (serde_json::Value, Vec<usize>) {
    let o = s.run(&["show", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let list: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 1, "{list}");
    let id = list[0]["id"].to_string();
    let o = s.run(&["show", &id, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let run: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let samples = run["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["result"]["samples"].as_array().unwrap().len())
        .collect();
    (run, samples)
}

/// Pids of the scratch lab's running sandbox servers, from `server list --json`.
fn lab_servers(s: &Scratch) -> Vec<u32> {
    let o = s.run(&["server", "list", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let list: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    list.as_array()
        .unwrap()
        .iter()
        .filter(|i| i["alive"] == true)
        .map(|i| i["pid"].as_u64().unwrap() as u32)
        .collect()
}

/// True while `pid` runs (a zombie left to a PID 1 that does not reap counts as gone).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|st| st.rsplit(") ").next().map(|r| !r.starts_with('Z')))
        .unwrap_or(false)
}

#[test]
fn kill_9_mid_phase_keeps_the_measured_intervals_as_an_interrupted_run() {
    let s = Scratch::new();
    let sock = socket();
    common::prepare_shared(
        &s,
        "oltp_point_select",
        "durable_k9",
        &["--table-size", "500"],
    );
    let mut child = spawn_until_third_second(
        &s,
        &[
            "run",
            "oltp_point_select",
            "--socket",
            &sock,
            "--database",
            "durable_k9",
            "--table-size",
            "500",
            "--threads",
            "2",
            "--time",
            "6",
        ],
    );
    child.kill().unwrap(); // SIGKILL: no handler runs
    child.wait().unwrap();

    let (run, samples) = only_run(&s);
    assert_eq!(run["status"], "interrupted", "{run}");
    assert_eq!(run["phases"][0]["status"], "interrupted");
    assert!(samples[0] >= 2, "{samples:?}");
    let result = &run["phases"][0]["result"];
    assert!(result["events"].as_u64().unwrap() > 0, "{result}");
    assert!(result["duration_s"].as_f64().unwrap() >= 1.5, "{result}");

    let o = s.run(&["show", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("interrupted after"), "{}", stdout(&o));
}

#[test]
fn sigterm_mid_phase_stores_what_was_measured_stops_the_server_and_the_next_run_starts() {
    let s = Scratch::new();
    let lab = s.lab().display().to_string();
    let args = [
        "run",
        "oltp_point_select",
        "--table-size",
        "500",
        "--threads",
        "2",
        "--time",
        "6",
    ];
    let child = spawn_until_third_second(&s, &args);
    let servers = lab_servers(&s);
    assert_eq!(servers.len(), 1, "the embedded server should be running");
    // SAFETY: kill(2) takes plain integers; the pid is our child, not yet waited for.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let sent = Instant::now();
    let out = child.wait_with_output().unwrap();
    // Stopping takes a tick of the phase and a server shutdown, far less than the 3 s left.
    assert!(sent.elapsed() < Duration::from_secs(60));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(143), "{err}");
    assert!(err.contains("SIGTERM"), "{err}");
    assert!(err.contains("stored as run 1 (interrupted)"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(
        processes_mentioning(&lab),
        Vec::<u32>::new(),
        "a process of the lab outlived SIGTERM"
    );
    assert!(
        !running(servers[0]),
        "the embedded server {} outlived SIGTERM",
        servers[0]
    );

    let (run, samples) = only_run(&s);
    assert_eq!(run["status"], "interrupted", "{run}");
    assert!(samples[0] >= 2, "{samples:?}");

    let mut next = args;
    next[7] = "1";
    let o = s.run(&next);
    assert!(o.status.success(), "{}", stderr(&o));
    let store = Store::open(&s.db()).unwrap();
    let latest = store.latest_run_id().unwrap().unwrap();
    assert_eq!(store.load_run(latest).unwrap().status, RunStatus::Completed);
}

#[test]
fn sighup_stops_a_run_like_ctrl_c_with_exit_129() {
    let s = Scratch::new();
    let sock = socket();
    common::prepare_shared(
        &s,
        "oltp_point_select",
        "durable_hup",
        &["--table-size", "500"],
    );
    let child = spawn_until_third_second(
        &s,
        &[
            "run",
            "oltp_point_select",
            "--socket",
            &sock,
            "--database",
            "durable_hup",
            "--table-size",
            "500",
            "--time",
            "6",
        ],
    );
    // SAFETY: kill(2) takes plain integers; the pid is our child, not yet waited for.
    unsafe { libc::kill(child.id() as i32, libc::SIGHUP) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(129), "{}", stderr_of(&out));
    let (run, samples) = only_run(&s);
    assert_eq!(run["status"], "interrupted", "{run}");
    assert!(samples[0] >= 2, "{samples:?}");
}

fn stderr_of(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn lab_resume_after_kill_9_mid_cell_keeps_its_run_reruns_it_and_keeps_finished_cells() {
    let s = Scratch::new();
    let p = s.path().join("d.toml");
    std::fs::write(
        &p,
        "name = \"d\"\n[defaults]\nworkload = \"oltp_point_select\"\ntables = 1\n\
         table_size = 500\nduration = \"4s\"\nprepare_threads = 1\nretries = 0\n\
         [sweep]\nthreads = [1, 2]\n",
    )
    .unwrap();
    let p = p.display().to_string();
    let mut child = s
        .cmd(&["lab", "run", &p])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill it once the second cell has stored two intervals.
    let killed_run = wait_for_running_run(&s, &mut child, 2, Duration::from_secs(120), |store| {
        let cells = store
            .study_by_name("d")
            .and_then(|st| store.study_cells(st.id));
        cells.is_ok_and(|cells| cells.iter().any(|c| c.status == CellStatus::Done))
    });
    child.kill().unwrap();
    child.wait().unwrap();

    // The killed cell's run reads as interrupted, with what it measured.
    let store = Store::open(&s.db()).unwrap();
    let run = store.load_run(killed_run).unwrap();
    let killed_uuid = run.meta.uuid.clone();
    assert_eq!(run.status, RunStatus::Interrupted);
    assert!(run.phases[0].result.samples.len() >= 2);
    let st = store.study_by_name("d").unwrap();
    let before = store.study_cells(st.id).unwrap();
    let done_before = before[0].run_id;
    drop(store);

    let o = s.run(&["lab", "resume", &p]);
    assert!(o.status.success(), "{}", stderr(&o));
    let store = Store::open(&s.db()).unwrap();
    let cells = store.study_cells(st.id).unwrap();
    assert!(
        cells.iter().all(|c| c.status == CellStatus::Done),
        "{cells:?}"
    );
    assert_eq!(cells[0].run_id, done_before, "a finished cell was rerun");
    // The killed cell ran again under a new id; nothing measured was deleted: its partial run
    // is kept as the cell's first, interrupted, attempt (issue 25, item 4).
    assert_eq!(
        store.run_id_by_uuid(&killed_uuid).unwrap(),
        Some(killed_run)
    );
    assert!(cells[1].run_id.unwrap() > killed_run, "{cells:?}");
    let o = s.run(&["lab", "show", "d", "--json"]);
    let study: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let tries = study["cells"][1]["attempts"].as_array().unwrap();
    assert_eq!(tries[0]["run_id"], killed_run.0, "{tries:?}");
    assert_eq!(tries[0]["status"], "interrupted");
    assert_eq!(tries[0]["used"], false);
    // Measured again, under a new id.
    assert_eq!(tries.len(), 2, "{tries:?}");
    assert_eq!(tries[1]["used"], true);
    assert!(
        tries[1]["run_id"].as_i64() > Some(killed_run.0),
        "{tries:?}"
    );
    assert_eq!(store.list_runs(10).unwrap().len(), 3);
    let o = s.run(&["show", &killed_run.0.to_string(), "--json"]);
    let shown: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(shown["status"], "interrupted", "{shown}");
    for c in &cells {
        let run = store.load_run(c.run_id.unwrap()).unwrap();
        assert_eq!(run.status, RunStatus::Completed);
    }
    assert_eq!(
        processes_mentioning(&s.lab().display().to_string()),
        Vec::<u32>::new()
    );
    assert_eq!(lab_servers(&s), Vec::<u32>::new());
}

#[test]
fn sigterm_during_prepare_stops_at_once_and_leaves_no_server() {
    let s = Scratch::new();
    let lab = s.lab().display().to_string();
    let mut child = s
        .cmd(&[
            "prepare",
            "oltp_point_select",
            "--tables",
            "4",
            "--table-size",
            "500000",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = child.stderr.take().unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 256];
    while !String::from_utf8_lossy(&seen).contains("loading") {
        let n = std::io::Read::read(&mut err, &mut buf).unwrap();
        if n == 0 {
            let _ = child.kill();
            let _ = child.wait();
            panic!("prepare ended early: {}", String::from_utf8_lossy(&seen));
        }
        seen.extend_from_slice(&buf[..n]);
    }
    // SAFETY: kill(2) takes plain integers; the pid is our child, not yet waited for.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let mut rest = Vec::new();
    std::io::Read::read_to_end(&mut err, &mut rest).unwrap();
    let out = child.wait_with_output().unwrap();
    let rest = String::from_utf8_lossy(&rest);
    assert_eq!(out.status.code(), Some(143), "{rest}");
    assert!(rest.contains("SIGTERM"), "{rest}");
    assert!(!rest.contains("error"), "{rest}");
    // It stopped loading rather than finishing first.
    assert!(!stdout(&out).contains("prepared"), "{}", stdout(&out));
    assert_eq!(processes_mentioning(&lab), Vec::<u32>::new());
    assert_eq!(lab_servers(&s), Vec::<u32>::new());
}

#[test]
fn the_embedded_server_of_a_killed_run_is_stopped_by_the_next_run() {
    let s = Scratch::new();
    let args = [
        "run",
        "oltp_point_select",
        "--table-size",
        "500",
        "--threads",
        "2",
        "--time",
        "6",
    ];
    let mut child = spawn_until_third_second(&s, &args);
    let orphan = lab_servers(&s);
    assert_eq!(orphan.len(), 1, "the embedded server should be running");
    child.kill().unwrap(); // SIGKILL: the server outlives its owner
    child.wait().unwrap();
    assert!(running(orphan[0]), "the server should outlive a kill -9");

    let mut next = args;
    next[7] = "1";
    let o = s.run(&next);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("left running by a qpslab that was killed"),
        "{}",
        stderr(&o)
    );
    assert!(!running(orphan[0]), "the orphaned server was not stopped");
    assert_eq!(lab_servers(&s), Vec::<u32>::new());
}
