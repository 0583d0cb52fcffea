//! A study's budget holds (issue 47: "a 2x2 factorial with `budget = \"5m\"` took 318 s"): a
//! real 2x2 factorial on sandboxes, with a precision it cannot reach, ends within its budget
//! and at most one cell's length past it, and says that the budget ended it.

mod common;

use common::{stderr, stdout, Scratch};
use serde_json::Value;
use std::time::Instant;

/// Four setups (two factors of two levels), three-second cells without warm-up or retries, a
/// precision of ±1% that a 40-second budget cannot buy.
const FACTORIAL: &str = "name = \"budget-2x2\"\nprecision = \"1%\"\nbudget = \"40s\"\n\
    max_repeats = 20\n[defaults]\nworkload = \"oltp_point_select\"\ntables = 1\n\
    table_size = 500\nprepare_threads = 1\nthreads = 1\ntime = \"3s\"\nwarmup = 0\n\
    retries = 0\n[factors.flush]\nsync = {}\nlazy = { set = { innodb_flush_log_at_trx_commit = 2 } }\n\
    [factors.cache]\nsmall = {}\nlarge = { set = { table_open_cache = 400 } }\n";

/// Seconds between stopping the last server and the process's exit (the sandbox's shutdown,
/// the store closed) that no cell's time includes.
const STOP_MARGIN_S: f64 = 8.0;

#[test]
fn issue_47_a_factorial_study_ends_within_its_budget_and_one_cell() {
    let s = Scratch::new();
    let spec = s.path().join("budget.toml");
    std::fs::write(&spec, FACTORIAL).unwrap();
    let started = Instant::now();
    let o = s.run(&["lab", "run", &spec.display().to_string()]);
    let wall_s = started.elapsed().as_secs_f64();
    assert!(o.status.success(), "{}", stderr(&o));
    let (out, err) = (stdout(&o), stderr(&o));
    // The budget ended it, and it says so.
    assert!(
        err.contains("the budget ended the study: ")
            || out.contains("the budget ended the study: "),
        "{out}\n{err}"
    );

    let o = s.run(&["lab", "show", "budget-2x2", "--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let budget = &doc["env"]["budget"];
    assert_eq!(budget["ended_study"], true, "{budget}");
    assert_eq!(budget["budget_s"], 40.0, "{budget}");
    let cells = doc["cells"].as_array().unwrap();
    // Every cell that stayed was measured: the rounds the budget could not pay for are gone.
    assert!(cells.iter().all(|c| c["status"] == "done"), "{doc}");
    assert!(cells.len() >= 4 && cells.len() < 4 * 20, "{}", cells.len());
    let longest_s = cells
        .iter()
        .filter_map(|c| Some(c["finished_at"].as_f64()? - c["started_at"].as_f64()?))
        .fold(0.0, f64::max);
    assert!(longest_s > 3.0, "{longest_s}");
    let allowed = 40.0 + longest_s + STOP_MARGIN_S;
    eprintln!(
        "budget 40 s: wall {wall_s:.1} s, {} cells, longest cell {longest_s:.1} s, allowed {allowed:.1} s",
        cells.len()
    );
    assert!(
        wall_s <= allowed,
        "{wall_s:.1} s > 40 s + one cell ({longest_s:.1} s) + {STOP_MARGIN_S} s\n{out}\n{err}"
    );

    // `lab show` says it too.
    let o = s.run(&["lab", "show", "budget-2x2"]);
    assert!(
        stdout(&o).contains("the budget ended the study: "),
        "{}",
        stdout(&o)
    );
}
