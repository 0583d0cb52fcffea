//! Script workloads against a real server: exact statement counts with and without prepared
//! statements, weights, sleeps that cost no CPU, and run-time script errors.

#[path = "run_common.rs"]
mod common;

use common::*;
use qpslab_core::plan::RunPlan;
use qpslab_core::workload::{ScriptSource, WorkloadKind};
use qpslab_core::ConnectOptions;
use qpslab_engine::RunError;
use std::sync::Mutex;

/// The tests compare the server's global counters: run them one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

const TWO: &str = "\\set id random(1, 100)\n\\set d random(1, 3)\nSELECT v FROM script_t\n  WHERE id = :id;\nUPDATE script_t SET v = v + :d WHERE id = :id;\n";

fn db() -> ConnectOptions {
    let opts = database("run_script", 0, 0);
    let mut c = control(&opts);
    c.execute("CREATE TABLE IF NOT EXISTS script_t (id INT PRIMARY KEY, v INT NOT NULL)")
        .unwrap();
    c.execute("INSERT IGNORE INTO script_t SELECT seq, 0 FROM seq_1_to_100")
        .unwrap();
    opts
}

fn src(name: &str, weight: u32, text: &str) -> ScriptSource {
    ScriptSource {
        name: name.into(),
        path: name.into(),
        weight,
        text: text.into(),
    }
}

fn script_plan(scripts: Vec<ScriptSource>, events: Option<u64>, time_s: Option<f64>) -> RunPlan {
    let mut p = plan(WorkloadKind::OltpPointSelect, 1, 100, 0.0);
    p.workload.scripts = scripts;
    p.stop.events = events;
    p.stop.time_s = time_s;
    p
}

/// Runs `p` with `threads` sessions and returns the result with the deltas of `counters`.
fn run_counted(
    opts: &ConnectOptions,
    p: &RunPlan,
    threads: u32,
    counters: &[&str],
) -> (qpslab_core::result::PhaseResult, Vec<u64>) {
    let mut ctl = control(opts);
    let connected = status(&mut ctl, "Threads_connected");
    let before: Vec<u64> = counters.iter().map(|c| status(&mut ctl, c)).collect();
    let (r, _) = run(opts, p, threads);
    let r = r.unwrap();
    let after: Vec<u64> = counters
        .iter()
        .map(|c| status_after(&mut ctl, c, connected))
        .collect();
    (r, after.iter().zip(&before).map(|(a, b)| a - b).collect())
}

#[test]
fn a_two_statement_script_runs_exactly_its_mix_per_event() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let opts = db();
    for ps in [true, false] {
        let mut p = script_plan(vec![src("w.sql", 1, TWO)], Some(300), None);
        p.prepared_statements = ps;
        let counters = ["Com_select", "Com_update", "Com_stmt_execute"];
        let (r, d) = run_counted(&opts, &p, 2, &counters);
        assert_eq!(r.events, 300);
        let executes = if ps { 600 } else { 0 };
        assert_eq!(d, vec![300, 300, executes], "ps {ps}: {counters:?}");
        assert_eq!(
            (r.queries.read, r.queries.write, r.queries.other),
            (300, 300, 0)
        );
        let names: Vec<&str> = r.statements.iter().map(|s| s.kind.as_str()).collect();
        assert_eq!(names, ["w.sql:3", "w.sql:5"]);
    }
}

#[test]
fn weights_pick_scripts_in_proportion() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let opts = db();
    let scripts = vec![src("a.sql", 3, "SELECT 1;"), src("b.sql", 1, "DO 1;")];
    let p = script_plan(scripts, Some(2000), None);
    let (r, d) = run_counted(&opts, &p, 2, &["Com_select", "Com_do"]);
    assert_eq!(r.events, 2000);
    assert_eq!(d[0] + d[1], 2000);
    let ratio = d[0] as f64 / d[1] as f64;
    assert!((2.5..3.6).contains(&ratio), "{d:?}");
}

#[test]
fn a_sleep_is_part_of_the_latency_and_costs_no_cpu() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let opts = db();
    let p = script_plan(
        vec![src("s.sql", 1, "\\sleep 10ms\nSELECT 1;\n")],
        None,
        Some(1.0),
    );
    let (r, _) = run(&opts, &p, 4);
    let r = r.unwrap();
    assert!(r.events > 100 && r.events <= 4 * 100, "{}", r.events);
    assert!(r.latency.min_ms >= 10.0, "{:?}", r.latency);
    let cpu = r.client_cpu.user_s + r.client_cpu.sys_s;
    assert!(cpu < 0.2, "sleeping sessions must not spin: {cpu} s of CPU");
}

#[test]
fn a_timed_phase_ends_on_time_while_sessions_sleep() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let opts = db();
    let p = script_plan(
        vec![src("s.sql", 1, "SELECT 1;\n\\sleep 5 s\n")],
        None,
        Some(0.5),
    );
    let t = std::time::Instant::now();
    let (r, _) = run(&opts, &p, 2);
    r.unwrap();
    assert!(t.elapsed().as_secs_f64() < 2.0, "{:?}", t.elapsed());
}

#[test]
fn a_division_by_zero_stops_the_phase_naming_the_line() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let opts = db();
    let text = "\\set z random(0, 0)\n\\set q 1 / :z\nSELECT :q;\n";
    let p = script_plan(vec![src("d.sql", 1, text)], Some(10), None);
    match run(&opts, &p, 1).0 {
        Err(RunError::Script(m)) => assert_eq!(m, "d.sql:2: division by zero"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_statement_the_server_cannot_prepare_runs_as_text() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let opts = db();
    // SQL-level PREPARE and EXECUTE cannot themselves be prepared (ER_UNSUPPORTED_PS).
    let text = "PREPARE s1 FROM 'SELECT 1';\nEXECUTE s1;\nSELECT 2;\n";
    let p = script_plan(vec![src("p.sql", 1, text)], Some(20), None);
    let counters = ["Com_prepare_sql", "Com_execute_sql"];
    let (r, d) = run_counted(&opts, &p, 1, &counters);
    assert_eq!(r.events, 20);
    assert_eq!(d, [20, 20], "{counters:?}");
}
