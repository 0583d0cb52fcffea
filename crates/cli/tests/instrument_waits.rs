//! `--instrument-waits`: a sandbox started with it has performance_schema on and its wait/synch
//! instruments (off by default in MariaDB) enabled and timed, so a phase's waits come from
//! performance_schema with latches counted; combined with `--set performance_schema=OFF` it is
//! the user's mistake, said in one line.

mod common;
use common::*;

/// `(instruments, enabled and timed)` among the wait/synch instruments of the server at `socket`.
fn synch_instruments(s: &Scratch, name: &str, socket: &str) -> (u64, u64) {
    let o = std::process::Command::new("mariadb")
        .args(["-uroot", "-S", socket, "-N", "-B", "-e"])
        .arg(
            "SELECT COUNT(*), SUM(ENABLED = 'YES' AND TIMED = 'YES') \
             FROM performance_schema.setup_instruments WHERE NAME LIKE 'wait/synch/%'",
        )
        .env(
            "MYSQL_PWD",
            std::fs::read_to_string(s.lab().join(format!("sandboxes/{name}/password")))
                .unwrap()
                .trim(),
        )
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let mut f = out
        .split_whitespace()
        .map(|v| v.parse::<u64>().unwrap_or(0));
    (f.next().unwrap_or(0), f.next().unwrap_or(0))
}

#[test]
fn server_start_times_the_wait_synch_instruments() {
    let s = Scratch::new();
    let o = s.run(&["server", "start", "w", "--instrument-waits", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let info: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let socket = info["socket"].as_str().unwrap().to_string();
    let (all, timed) = synch_instruments(&s, "w", &socket);
    assert!(all > 0, "no wait/synch instruments");
    assert_eq!(timed, all, "wait/synch instruments enabled and timed");
}

#[test]
fn a_run_with_instrumented_waits_reads_them_from_performance_schema() {
    let s = Scratch::new();
    let o = s.run(&[
        "run",
        "oltp_point_select",
        "--instrument-waits",
        "--tables",
        "1",
        "--table-size",
        "1000",
        "--threads",
        "2",
        "--time",
        "2",
        "--warmup",
        "0",
    ]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}\n{}", stderr(&o));
    let id = stored_run_id(&out);
    let o = s.run(&["show", &id, "--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let waits = &doc["phases"][0]["result"]["limits"]["evidence"]["waits"];
    assert_eq!(waits["source"], "performance_schema", "{waits}");
    let reason = waits["reason"].as_str().unwrap_or("");
    assert!(
        !reason.contains("wait/synch") && !reason.contains("disabled"),
        "{reason}"
    );
}

#[test]
fn instrumented_waits_with_performance_schema_off_is_refused() {
    let s = Scratch::new();
    for args in [
        &[
            "server",
            "start",
            "off",
            "--instrument-waits",
            "--set",
            "performance_schema=OFF",
        ][..],
        &[
            "run",
            "oltp_point_select",
            "--instrument-waits",
            "--set",
            "performance_schema=OFF",
            "--time",
            "1",
        ][..],
    ] {
        let o = s.run(args);
        assert_user_error(&o, "performance_schema");
        assert_eq!(stderr(&o).trim().lines().count(), 1, "{}", stderr(&o));
    }
    let o = s.run(&["server", "list", "--json"]);
    assert!(!stdout(&o).contains("\"off\""), "{}", stdout(&o));
}
