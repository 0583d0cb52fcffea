//! `qpslab run --at TIME:ACTION` end to end: a live buffer-pool resize on a real sandbox,
//! judged, stored, shown and restored; `sql` actions; and the user's mistakes.

mod common;
use common::*;
use std::process::Stdio;
use std::time::{Duration, Instant};

const DATASET: &[&str] = &[
    "oltp_point_select",
    "--tables",
    "4",
    "--table-size",
    "100000",
    "--rand-type",
    "uniform",
    "--settle",
    "off",
];

#[test]
fn a_live_buffer_pool_resize_is_a_significant_gain_and_is_restored() {
    let s = Scratch::new();
    // O_DIRECT: a page missing from the 8 MB pool is read from the disk, not the page cache.
    let o = s.run(&[
        "server",
        "start",
        "bp",
        "--set",
        "innodb_buffer_pool_size=8M",
        "--set",
        "innodb_flush_method=O_DIRECT",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let json = s.path().join("live.json");
    let mut args = vec!["run"];
    args.extend_from_slice(DATASET);
    args.extend_from_slice(&[
        "--sandbox",
        "bp",
        "--threads",
        "4",
        "--time",
        "30",
        "--at",
        "8s:set innodb_buffer_pool_size=512M",
        // Reading the dataset into the grown pool takes a few seconds on a busy machine.
        "--settle-after",
        "8",
        "--json",
        json.to_str().unwrap(),
    ]);
    let o = s.run(&args);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}\n{}", stderr(&o));
    assert!(
        out.contains("] at 8.0s: set innodb_buffer_pool_size=512M — ok ("),
        "{out}"
    );
    assert!(out.contains("live actions (before → after"), "{out}");
    assert!(
        stderr(&o).contains("restored innodb_buffer_pool_size=8388608 ok"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        sandbox_sql(&s, "bp", "SELECT @@innodb_buffer_pool_size"),
        "8388608"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let a = &v["phases"][0]["actions"][0];
    assert_eq!(a["action"], "set innodb_buffer_pool_size=512M", "{a}");
    assert_eq!(a["at_s"], 8.0);
    assert_eq!(a["significant"], true, "{a}");
    assert_eq!(a["judgment"], "gain", "{a}");
    let ci_low = a["ci_low"].as_f64().unwrap();
    assert!(
        a["after"].as_f64() > a["before"].as_f64()
            && ci_low > 0.0
            && a["change_pct"].as_f64() >= Some(ci_low),
        "{a}"
    );
    let live = &v["meta"]["plan"]["live"];
    assert_eq!(live["actions"][0]["at_s"], 8.0, "{live}");
    // The report lists the action with its verdict and marks it on the per-interval charts.
    let o = s.run(&["report", "1", "--format", "md"]);
    let md = stdout(&o);
    assert!(
        md.contains("## Live actions") && md.contains("| set innodb_buffer_pool_size=512M | ok |"),
        "{md}\n{}",
        stderr(&o)
    );
    let html = stdout(&s.run(&["report", "1", "--format", "html"]));
    assert!(
        html.contains(r#"<line class="marker""#),
        "no action marker in the charts"
    );

    // `sql` actions run as written, a failing one recorded without stopping the run; `show`
    // lists them from the store.
    let mut args = vec!["run"];
    args.extend_from_slice(DATASET);
    args.extend_from_slice(&[
        "--sandbox",
        "bp",
        "--time",
        "4",
        "--at",
        "1s:sql SELECT no_such_column",
        "--at",
        "2s:sql SET GLOBAL max_connections = 321",
    ]);
    let o = s.run(&args);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}\n{}", stderr(&o));
    assert!(
        out.contains("at 1.0s: sql SELECT no_such_column — server error 1054"),
        "{out}"
    );
    assert_eq!(sandbox_sql(&s, "bp", "SELECT @@max_connections"), "321");
    let o = s.run(&["show", "2"]);
    let shown = stdout(&o);
    assert!(
        shown.contains("verdict: not judged: the action failed")
            && shown.contains("sql SET GLOBAL max_connections = 321")
            && shown.contains("verdict: too short to judge"),
        "{shown}"
    );

    // SIGTERM mid-phase: the phase stops and the setting is put back before the exit.
    let mut args = vec!["run"];
    args.extend_from_slice(DATASET);
    args.extend_from_slice(&[
        "--sandbox",
        "bp",
        "--time",
        "30",
        "--at",
        "1s:set max_connections=77",
    ]);
    let child = s
        .cmd(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while sandbox_sql(&s, "bp", "SELECT @@max_connections") != "77" {
        assert!(Instant::now() < deadline, "the action never ran");
        std::thread::sleep(Duration::from_millis(200));
    }
    // SAFETY: kill has no memory preconditions; the pid is our child's.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(143), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("restored max_connections=321 ok"),
        "{}",
        stderr(&o)
    );
    assert_eq!(sandbox_sql(&s, "bp", "SELECT @@max_connections"), "321");
}

#[test]
fn bad_actions_are_user_errors_before_anything_connects() {
    let s = Scratch::new();
    let run = |at: &str, time: &str| {
        s.run(&[
            "run",
            "oltp_point_select",
            "--socket",
            "/nonexistent/mysqld.sock",
            "--time",
            time,
            "--at",
            at,
        ])
    };
    assert_user_error(&run("soon:set x=1", "10"), "'soon' is not a time");
    assert_user_error(&run("5:pin x=1", "10"), "`pin`: ");
    assert_user_error(&run("5:nap 3", "10"), "unknown action 'nap'");
    assert_user_error(&run("5:set innodb_buffer_pool_size", "10"), "NAME=VALUE");
    assert_user_error(&run("set x=1", "10"), "TIME:ACTION");
    assert_user_error(
        &run("30s:sql SELECT 1", "20"),
        "not inside the 20 s measured phase",
    );
    assert!(!s.db().exists(), "a rejected run writes nothing");
}
