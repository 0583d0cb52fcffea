//! Issue 38, item 7's small ones on stored runs of the shared server: `show RUN`'s stability
//! column, `report` refusing lone runs of different workloads in one line, and `--quiet`
//! labelling each phase's summary when several thread counts run.

mod common;
use common::*;

const DB: &str = "issue38_small";
const SHAPE: [&str; 4] = ["--tables", "1", "--table-size", "100"];

/// `qpslab run WORKLOAD` on the shared server, 50 events per phase at each of `threads`.
fn run(s: &Scratch, workload: &str, threads: &str, extra: &[&str]) -> std::process::Output {
    static PREPARED: std::sync::Once = std::sync::Once::new();
    PREPARED.call_once(|| prepare_shared(s, "oltp_read_only", DB, &SHAPE));
    let sock = socket();
    let mut args = vec![
        "run",
        workload,
        "--socket",
        &sock,
        "--database",
        DB,
        "--threads",
        threads,
        "--events",
        "50",
        "--warmup",
        "0",
    ];
    args.extend_from_slice(&SHAPE);
    args.extend_from_slice(extra);
    let o = s.run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    o
}

#[test]
fn show_run_has_a_stability_column() {
    let s = Scratch::new();
    run(&s, "oltp_point_select", "1", &[]);
    let o = s.run(&["show", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let header = out
        .lines()
        .find(|l| l.trim_start().starts_with("threads"))
        .unwrap_or_else(|| panic!("no table in:\n{out}"));
    assert!(header.trim_end().ends_with("stability"), "{out}");
    let row = out
        .lines()
        .find(|l| l.trim_start().starts_with("1 "))
        .unwrap_or_else(|| panic!("no phase row in:\n{out}"));
    assert!(row.contains("stable"), "{out}");
}

#[test]
fn report_of_lone_runs_of_different_workloads_is_refused_in_one_line() {
    let s = Scratch::new();
    run(&s, "oltp_point_select", "1", &[]);
    run(&s, "oltp_read_only", "2", &[]);
    let out = s.path().join("r.html");
    let o = s.run(&["report", "1", "2", "--out", out.to_str().unwrap()]);
    assert_user_error(&o, "different workloads");
    let err = stderr(&o);
    assert!(
        err.contains("oltp_point_select") && err.contains("oltp_read_only"),
        "{err}"
    );
    assert!(!out.exists());
    // Runs of one workload are still reported side by side.
    run(&s, "oltp_point_select", "2", &[]);
    let o = s.run(&["report", "1", "3", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn quiet_labels_the_summary_of_each_thread_count() {
    let s = Scratch::new();
    let o = run(&s, "oltp_point_select", "1,2", &["--quiet"]);
    let out = stdout(&o);
    let one = out.find("phase of 1 thread(s):");
    let two = out.find("phase of 2 thread(s):");
    assert!(one.is_some() && two.is_some() && one < two, "{out}");
    assert_eq!(out.matches("transactions:").count(), 2, "{out}");
}
