//! `qpslab server start|list|logs|stop` against the real server binaries, and a sandbox that
//! fails to start.

mod common;
use common::*;

/// Running, as opposed to gone or a zombie waiting for a parent that may never reap it (PID 1
/// in a container often does not).
fn pid_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit(") ")
            .next()
            .is_some_and(|rest| !rest.starts_with('Z')),
        Err(_) => false,
    }
}

#[test]
fn start_list_logs_stop() {
    let s = Scratch::new();
    let o = s.run(&[
        "server",
        "start",
        "t1",
        "--set",
        "max_connections=77",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let info: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let pid = info["pid"].as_u64().unwrap() as u32;
    assert!(pid_alive(pid));

    let o = s.run(&["server", "list"]);
    assert!(
        stdout(&o).contains("t1") && stdout(&o).contains("running"),
        "{}",
        stdout(&o)
    );
    let o = s.run(&["server", "logs", "t1", "-n", "5"]);
    assert!(
        o.status.success() && !stdout(&o).is_empty(),
        "{}",
        stderr(&o)
    );

    // The running sandbox is a target: prepare, run, cleanup through --sandbox.
    let o = s.run(&[
        "prepare",
        "oltp_point_select",
        "--sandbox",
        "t1",
        "--table-size",
        "500",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = s.run(&[
        "run",
        "oltp_point_select",
        "--sandbox",
        "t1",
        "--table-size",
        "500",
        "--time",
        "1",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = s.run(&["cleanup", "--sandbox", "t1"]);
    assert!(stdout(&o).contains("sbtest1"), "{}", stdout(&o));

    let o = s.run(&["server", "stop", "t1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!pid_alive(pid), "server still running after stop");
    let o = s.run(&["server", "list", "--json"]);
    let list: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(
        list.as_array().unwrap().iter().all(|i| i["alive"] == false),
        "{list}"
    );
}

#[test]
fn a_server_that_fails_to_start_reports_its_log_and_leaves_nothing() {
    let s = Scratch::new();
    let o = s.run(&[
        "server",
        "start",
        "broken",
        "--set",
        "no_such_variable_xyz=1",
    ]);
    assert_ne!(o.status.code(), Some(0));
    let err = stderr(&o);
    assert!(
        err.contains("no_such_variable_xyz") || err.contains("unknown variable"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    let o = s.run(&["server", "list", "--json"]);
    let list: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(
        list.as_array().unwrap().iter().all(|i| i["alive"] == false),
        "{list}"
    );
}

#[test]
fn more_threads_than_the_server_accepts_is_a_user_error() {
    let s = Scratch::new();
    let o = s.run(&["server", "start", "tight", "--set", "max_connections=5"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = s.run(&[
        "run",
        "oltp_point_select",
        "--sandbox",
        "tight",
        "--table-size",
        "100",
        "--threads",
        "20",
        "--time",
        "1",
    ]);
    // Refused before any session opens: the server's max_connections is checked first.
    assert_user_error(&o, "max_connections");
    assert_eq!(
        stderr(&o).matches("qpslab: error").count(),
        1,
        "{}",
        stderr(&o)
    );
    let o = s.run(&["server", "stop", "tight", "--rm"]);
    assert!(o.status.success(), "{}", stderr(&o));
}
