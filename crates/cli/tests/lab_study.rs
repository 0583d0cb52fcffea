//! `qpslab lab`: plans, bad specs, a real study with a failing variant, telemetry that agrees
//! with the client, Ctrl-C mid-study, resume after `kill -9`, and one process driving a study at
//! a time.

mod common;

use common::{assert_user_error, stdout, Scratch};
use qpslab_core::telemetry::Reading;
use qpslab_store::{AttemptStatus, CellStatus, Store};
use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

fn spec(s: &Scratch, name: &str, text: &str) -> String {
    let p = s.path().join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

const SMALL: &str = "[defaults]\nworkload = \"oltp_point_select\"\ntables = 1\ntable_size = 500\nduration = \"1s\"\nprepare_threads = 1\nwarmup = 0\nretries = 0\n";

#[test]
fn plan_expands_a_full_factorial_in_interleaved_order() {
    let s = Scratch::new();
    let p = spec(
        &s,
        "f.toml",
        "name = \"f\"\n[defaults]\nrepeats = 2\n[factors.config]\nstock = {}\ntuned = { set = { innodb_flush_log_at_trx_commit = 2 } }\n[factors.malloc]\nsystem = {}\njemalloc = { malloc = \"jemalloc\" }\n[factors.thp]\nmadvise = { os = { thp = \"madvise\" } }\nnever = { os = { thp = \"never\" } }\n[sweep]\nthreads = [1, 4]\n",
    );
    let o = s.run(&["lab", "plan", &p, "--json"]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let cells = v["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 8 * 2 * 2);
    let variants: std::collections::BTreeSet<_> = cells
        .iter()
        .map(|c| c["variant"].as_str().unwrap())
        .collect();
    assert_eq!(variants.len(), 8);
    assert!(variants.contains("tuned+jemalloc+never"));
    // Each point's setups back to back, forward then backward: the last setup of a point
    // opens the next one; at each point the order turns from round to round.
    assert_eq!(cells[0]["label"], "stock+system+madvise/threads=1/r1");
    assert_eq!(cells[7]["label"], "tuned+jemalloc+never/threads=1/r1");
    assert_eq!(cells[8]["label"], "tuned+jemalloc+never/threads=4/r1");
    assert_eq!(cells[15]["label"], "stock+system+madvise/threads=4/r1");
    assert_eq!(cells[16]["label"], "tuned+jemalloc+never/threads=1/r2");
    assert_eq!(cells[31]["label"], "tuned+jemalloc+never/threads=4/r2");
    assert_eq!(cells[31]["levels"]["thp"], "never");
    let o = s.run(&["lab", "plan", &p]);
    assert!(stdout(&o).contains("30 server start(s)"), "{}", stdout(&o));
    // In blocks of setups, a server starts once per setup and round (less at the turns).
    let blocks = spec(
        &s,
        "g.toml",
        &std::fs::read_to_string(&p)
            .unwrap()
            .replace("name = \"f\"\n", "name = \"g\"\norder = \"setups\"\n"),
    );
    let o = s.run(&["lab", "plan", &blocks, "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let cells = v["cells"].as_array().unwrap();
    assert_eq!(cells[15]["label"], "tuned+jemalloc+never/threads=4/r1");
    assert_eq!(cells[16]["label"], "tuned+jemalloc+never/threads=1/r2");
    let o = s.run(&["lab", "plan", &blocks]);
    assert!(stdout(&o).contains("15 server start(s)"), "{}", stdout(&o));
}

#[test]
fn bad_specs_are_user_errors_with_lines() {
    let s = Scratch::new();
    let p = spec(&s, "a.toml", "name = \"a\"\n[sweep]\ntreads = [1]\n");
    let o = s.run(&["lab", "plan", &p]);
    assert_user_error(
        &o,
        "line 3: unknown key `treads` in [sweep]; did you mean `threads`?",
    );
    let p = spec(
        &s,
        "b.toml",
        "name = \"b\"\n[defaults]\nthreads = \"many\"\n",
    );
    assert_user_error(&s.run(&["lab", "plan", &p]), "line 3");
    let p = spec(&s, "c.toml", "name = \"c\"\n[sweep]\nthreads = []\n");
    assert_user_error(&s.run(&["lab", "run", &p]), "no cells");
    assert_user_error(&s.run(&["lab", "plan", "/nonexistent.toml"]), "cannot read");
    assert!(!s.db().exists(), "a rejected spec writes nothing");
}

fn study_json(s: &Scratch, name: &str) -> serde_json::Value {
    let o = s.run(&["lab", "show", name, "--json"]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap()
}

#[test]
fn a_failing_variant_is_recorded_and_the_study_goes_on() {
    let s = Scratch::new();
    let p = spec(
        &s,
        "v.toml",
        &format!("name = \"v\"\n{SMALL}[[variant]]\nname = \"stock\"\n[[variant]]\nname = \"broken\"\nset = {{ no_such_variable_qpslab = 1 }}\n[sweep]\nthreads = [1]\n"),
    );
    let o = s.run(&["lab", "run", &p]);
    // The study goes on to its end, and says that not every cell measured: exit 1.
    assert_eq!(o.status.code(), Some(1), "{}", common::stderr(&o));
    assert!(
        common::stderr(&o).contains("1 of 2 cell(s) failed"),
        "{}",
        common::stderr(&o)
    );
    let v = study_json(&s, "v");
    assert_eq!(v["status"], "done");
    let cells = v["cells"].as_array().unwrap();
    assert_eq!(cells[0]["status"], "done");
    assert!(cells[0]["run"]["phases"][0]["tps"].as_f64().unwrap() > 0.0);
    assert!(cells[1]["run"].is_null());
    assert_eq!(cells[1]["status"], "failed");
    assert!(
        cells[1]["error"]
            .as_str()
            .unwrap()
            .contains("no_such_variable_qpslab"),
        "{}",
        cells[1]
    );
    assert!(
        cells[1]["log_tail"]
            .as_str()
            .unwrap()
            .contains("no_such_variable_qpslab"),
        "{}",
        cells[1]
    );
    assert!(v["env"]["servers"]["stock"]["version"]
        .as_str()
        .unwrap()
        .contains("MariaDB"));
    assert!(v["env"]["host"]["thp"].is_string());
    let csv = stdout(&s.run(&["lab", "show", "v", "--csv"]));
    assert_eq!(csv.lines().count(), 3, "{csv}");
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "seq,label,variant,repeat,status,params,run_id,attempts,tps,qps,lat_avg_ms,p50_ms,p95_ms,p99_ms,lat_max_ms,error"
    );
    // The done cell was measured once; its fields after `params` hold no comma.
    assert_eq!(lines[1].rsplit(',').nth(8), Some("1"), "{csv}");
    assert!(stdout(&s.run(&["lab", "show"])).contains("1/2"));
    // The name is taken now.
    assert_user_error(&s.run(&["lab", "run", &p]), "already exists");
}

#[test]
fn telemetry_agrees_with_the_client() {
    let s = Scratch::new();
    let p = spec(
        &s,
        "t.toml",
        "name = \"t\"\n[defaults]\nworkload = \"oltp_point_select\"\ntables = 1\ntable_size = 500\nevents = 3000\nreport_interval = 0.2\nwarmup = 0\nretries = 0\n[sweep]\nthreads = [2]\n",
    );
    let o = s.run(&["lab", "run", &p, "--metrics-addr", "127.0.0.1:0"]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    // The cell's progress line with the plan's ETA, and the live endpoint served meanwhile.
    let err = common::stderr(&o);
    assert!(
        err.contains("progress: cell 1/1, 0s elapsed, ETA "),
        "{err}"
    );
    assert!(err.contains("metrics: http://127.0.0.1:"), "{err}");
    let store = Store::open(&s.db()).unwrap();
    let study = store.study_by_name("t").unwrap();
    let cells = store.study_cells(study.id).unwrap();
    assert_eq!(cells[0].status, CellStatus::Done);
    let run = store.load_run(cells[0].run_id.unwrap()).unwrap();
    assert_eq!(run.meta.study_id.as_deref(), Some("t"));
    assert_eq!(run.meta.cell_label.as_deref(), Some("default/threads=2/r1"));
    let ph = &run.phases[0];
    let reads = ph.result.queries.read;
    assert!(reads >= 3000, "{reads}");
    let total = ph
        .telemetry
        .iter()
        .find_map(|t| match &t.reading {
            Reading::ServerStatusDelta(d) => Some(d),
            _ => None,
        })
        .unwrap();
    let com_select = total.counter("Com_select") as u64;
    assert_eq!(com_select, reads, "server Com_select vs client reads");
    // Per tick: the deltas add up to the whole, give or take what ran between begin and the
    // first tick; each tick carries server and client CPU.
    let ticks: Vec<_> = ph
        .telemetry
        .iter()
        .filter_map(|t| t.tick_change())
        .collect();
    assert!(!ticks.is_empty());
    let sum: i64 = ticks
        .iter()
        .map(|t| t.status.counters.get("Com_select").copied().unwrap_or(0))
        .sum();
    assert!(sum as u64 <= com_select && sum > 0, "{sum} vs {com_select}");
    assert!(ticks[0].server.unwrap().rss_kib > 0);
    assert!(ticks[0].client.is_some());
    let perf = ph
        .telemetry
        .iter()
        .find_map(|t| match &t.reading {
            Reading::Perf(p) => Some(p),
            _ => None,
        })
        .unwrap();
    if !perf.supported {
        let reason = perf.reason.as_deref().unwrap();
        assert!(reason.contains("not supported") || reason.contains("perf"));
    }
}

#[test]
fn resume_after_kill_9_keeps_done_cells_and_refuses_a_changed_spec() {
    let s = Scratch::new();
    let body = format!("name = \"k\"\n{SMALL}[sweep]\nthreads = [1, 2, 3, 4]\n");
    let p = spec(&s, "k.toml", &body);
    let mut child = s
        .cmd(&["lab", "run", &p])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let done_before = loop {
        std::thread::sleep(Duration::from_millis(200));
        if let Ok(store) = Store::open(&s.db()) {
            if let Ok(st) = store.study_by_name("k") {
                let cells = store.study_cells(st.id).unwrap();
                let done: Vec<_> = cells
                    .iter()
                    .filter(|c| c.status == CellStatus::Done)
                    .map(|c| (c.cell.label.clone(), c.run_id))
                    .collect();
                if !done.is_empty() && cells.iter().any(|c| c.status == CellStatus::Running) {
                    break done;
                }
            }
        }
        assert!(Instant::now() < deadline, "the study never got going");
    };
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let changed = spec(&s, "k2.toml", &body.replace("[1, 2, 3, 4]", "[1, 2, 3, 8]"));
    assert_user_error(&s.run(&["lab", "resume", &changed]), "sweep.threads");
    let o = s.run(&["lab", "resume", &p]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert!(stdout(&o).contains("already done"));
    let store = Store::open(&s.db()).unwrap();
    let st = store.study_by_name("k").unwrap();
    let cells = store.study_cells(st.id).unwrap();
    assert!(
        cells.iter().all(|c| c.status == CellStatus::Done),
        "{cells:?}"
    );
    for (label, run) in &done_before {
        let c = cells.iter().find(|c| &c.cell.label == label).unwrap();
        assert_eq!(&c.run_id, run, "{label} was rerun");
    }
    // One run per cell, and the killed cell's run (when it measured anything) kept as an
    // interrupted attempt: nothing measured is deleted.
    let runs = store.list_runs(100).unwrap();
    let attempts = store.cell_attempts(st.id).unwrap();
    let interrupted = attempts
        .iter()
        .filter(|a| a.status == AttemptStatus::Interrupted)
        .count();
    assert_eq!(runs.len(), 4 + interrupted, "{runs:?} {attempts:?}");
}

/// The run of the first cell of study `name` while it is being measured, once it has stored
/// `samples` intervals.
fn measuring(s: &Scratch, name: &str, samples: usize) -> Option<qpslab_store::RunId> {
    let store = Store::open(&s.db()).ok()?;
    store.study_by_name(name).ok()?;
    let run = store
        .list_runs(10)
        .ok()?
        .into_iter()
        .find(|r| r.status == qpslab_store::RunStatus::Running)?;
    let stored = store.load_run(run.id).ok()?;
    (stored.phases.first()?.result.samples.len() >= samples).then_some(run.id)
}

fn wait_for<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Issue 25, item 5: `lab resume` while `lab run` lived restarted the first's sandbox, and both
/// measured.
#[test]
fn a_study_is_driven_by_one_process_at_a_time() {
    let s = Scratch::new();
    let body = format!("name = \"one\"\n{SMALL}[sweep]\nthreads = [1, 2]\n")
        .replace("duration = \"1s\"", "duration = \"3s\"");
    let p = spec(&s, "one.toml", &body);
    let child = s
        .cmd(&["lab", "run", &p])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id().to_string();
    wait_for("the study never got going", || measuring(&s, "one", 1));
    for verb in ["resume", "run"] {
        let o = s.run(&["lab", verb, &p]);
        assert_user_error(&o, &format!("pid {pid}"));
        assert!(common::stderr(&o).trim().lines().count() == 1, "{o:?}");
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the first study was disturbed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = study_json(&s, "one");
    for c in v["cells"].as_array().unwrap() {
        assert_eq!(c["status"], "done", "{c}");
        assert_eq!(c["attempts"].as_array().unwrap().len(), 1, "{c}");
    }
    // Once it has ended, the advice holds: resume continues it (nothing left to do).
    let o = s.run(&["lab", "resume", &p]);
    assert!(o.status.success(), "{}", common::stderr(&o));
}

#[test]
fn ctrl_c_keeps_finished_cells_and_the_cut_attempt_and_stops_the_server() {
    let s = Scratch::new();
    let body = format!("name = \"c\"\n{SMALL}[sweep]\nthreads = [1, 2, 3, 4]\n");
    let p = spec(&s, "c.toml", &body);
    let child = s
        .cmd(&["lab", "run", &p])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        std::thread::sleep(Duration::from_millis(200));
        let going = Store::open(&s.db()).ok().and_then(|store| {
            let st = store.study_by_name("c").ok()?;
            let cells = store.study_cells(st.id).ok()?;
            Some(
                cells.iter().any(|c| c.status == CellStatus::Done)
                    && cells.iter().any(|c| c.status == CellStatus::Running),
            )
        });
        if going == Some(true) {
            break;
        }
        assert!(Instant::now() < deadline, "the study never got going");
    }
    // SAFETY: kill(2) takes plain integers; the pid is our child, not yet waited for.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert!(
        !out.status.success(),
        "an interrupted study must not exit 0"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");

    let store = Store::open(&s.db()).unwrap();
    let st = store.study_by_name("c").unwrap();
    let cells = store.study_cells(st.id).unwrap();
    assert!(
        cells.iter().all(|c| c.status != CellStatus::Running),
        "no cell may stay running: {cells:?}"
    );
    let done = cells
        .iter()
        .filter(|c| c.status == CellStatus::Done)
        .count();
    assert!((1..4).contains(&done), "{cells:?}");
    // Finished cells have their runs; the interrupted one is kept as an interrupted attempt
    // when it measured anything.
    let runs = store.list_runs(100).unwrap();
    let kept: Vec<_> = runs
        .iter()
        .filter(|r| !cells.iter().any(|c| c.run_id == Some(r.id)))
        .collect();
    assert_eq!(runs.len(), done + kept.len());
    assert!(kept.len() <= 1, "{kept:?}");
    for r in kept {
        assert_eq!(r.status, qpslab_store::RunStatus::Interrupted, "{r:?}");
    }
    // The sandbox the study started is gone.
    let o = s.run(&["server", "list", "--json"]);
    let list: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(
        list.as_array().unwrap().iter().all(|i| i["alive"] == false),
        "{list}"
    );
    // And the study can be finished.
    let o = s.run(&["lab", "resume", &p]);
    assert!(o.status.success(), "{}", common::stderr(&o));
}

#[test]
fn an_injected_stall_makes_a_cell_unstable_and_it_is_measured_again() {
    let s = Scratch::new();
    let sock = common::socket();
    common::sql("DROP DATABASE IF EXISTS stall_study");
    // The shared server is an external target: the study checks its dataset, `prepare` builds it.
    common::prepare_shared(
        &s,
        "oltp_point_select",
        "stall_study",
        &["--tables", "1", "--table-size", "2000"],
    );
    let p = spec(
        &s,
        "stall.toml",
        &format!(
            "name = \"stall\"\n[defaults]\nworkload = \"oltp_point_select\"\ntables = 1\n\
             table_size = 2000\nduration = \"6s\"\nwarmup = 0\nthreads = 2\nretries = 2\n\
             prepare_threads = 1\n[[variant]]\nname = \"ext\"\n\
             target = \"mysql://root@localhost/stall_study?socket={sock}\"\n"
        ),
    );
    let mut child = s
        .cmd(&["lab", "run", &p])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = BufReader::new(child.stdout.take().unwrap());
    let mut lines = Vec::new();
    let mut injected = false;
    for line in out.lines() {
        let line = line.unwrap();
        // The first live line of the first attempt: hold the table for 2 s.
        if !injected && line.starts_with('[') && line.contains("tps:") {
            injected = true;
            common::sql("LOCK TABLES stall_study.sbtest1 WRITE; DO SLEEP(2); UNLOCK TABLES");
        }
        lines.push(line);
    }
    let status = child.wait().unwrap();
    assert!(status.success(), "{}", lines.join("\n"));
    assert!(injected, "{}", lines.join("\n"));
    let v = study_json(&s, "stall");
    let cell = &v["cells"][0];
    assert_eq!(cell["status"], "done", "{cell}");
    let attempts = cell["attempts"].as_array().unwrap();
    assert!(attempts.len() >= 2, "{cell}");
    assert_eq!(attempts[0]["status"], "unstable", "{cell}");
    assert!(
        attempts[0]["reason"].as_str().unwrap().contains("stall of"),
        "{cell}"
    );
    // One attempt is used (a stable one ends the retries); every other one was unstable.
    let (used, others): (Vec<_>, Vec<_>) = attempts.iter().partition(|a| a["used"] == true);
    assert_eq!(used.len(), 1, "{cell}");
    let used = used[0];
    assert_eq!(used["run_id"], cell["run_id"], "{cell}");
    if used["status"] == "done" {
        assert_eq!(used, attempts.last().unwrap(), "{cell}");
    }
    for a in others {
        assert_eq!(a["status"], "unstable", "{cell}");
        assert!(a["reason"].is_string(), "{cell}");
        assert_ne!(a["run_id"], used["run_id"], "{cell}");
    }
    if used["status"] == "done" {
        assert_eq!(cell["run"]["phases"][0]["stability"], "stable", "{cell}");
    }
    // Each attempt ran with its own clock seed, stored in its plan.
    let store = Store::open(&s.db()).unwrap();
    let seed = |a: &serde_json::Value| {
        let run = store
            .load_run(qpslab_store::RunId(a["run_id"].as_i64().unwrap()))
            .unwrap();
        run.meta.plan.workload.rand.seed
    };
    assert_ne!(seed(&attempts[0]), 0);
    let text = stdout(&s.run(&["lab", "show", "stall"]));
    assert!(text.contains("tries"), "{text}");
    assert!(
        lines.iter().any(|l| l.contains("measuring again")) || text.contains("stall"),
        "{}",
        lines.join("\n")
    );
    common::sql("DROP DATABASE IF EXISTS stall_study");
}

#[test]
fn new_measuring_options_are_checked() {
    let s = Scratch::new();
    let p = spec(
        &s,
        "w.toml",
        "name = \"w\"\n[defaults]\nwarmup = \"sometimes\"\n",
    );
    assert_user_error(&s.run(&["lab", "plan", &p]), "warmup");
    let p = spec(&s, "r.toml", "name = \"r\"\n[defaults]\nretries = -1\n");
    assert_user_error(&s.run(&["lab", "plan", &p]), "line 3");
    let p = spec(
        &s,
        "t.toml",
        "name = \"t\"\n[defaults]\nsettle = \"maybe\"\n",
    );
    assert_user_error(&s.run(&["lab", "plan", &p]), "settle");
}
