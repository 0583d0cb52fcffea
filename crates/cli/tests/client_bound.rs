//! A client that sets the ceiling is called so: one event loop pinned to one CPU drives many
//! sessions whose replies cost the client far more than the server (a 20,000-row result served
//! from the query cache, which the server copies out and the client walks packet by packet),
//! with the server on the other CPU. The loop runs its CPU flat out, the phase says where the
//! loop ran, the verdict stored with it is `client-bound`, and the run warns.
//!
//! Alone in its test binary, and the client runs at a raised priority where allowed: a neighbour
//! sharing the two CPUs would take the loop's CPU.

mod common;
use common::*;

#[test]
fn a_saturated_event_loop_makes_the_phase_client_bound() {
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        eprintln!("skipped: needs two CPUs (the server on one, the client on the other)");
        return;
    }
    let s = Scratch::new();
    let o = s.run(&[
        "server",
        "start",
        "qc",
        "--cpus",
        "0",
        "--set",
        "query_cache_type=1",
        "--set",
        "query_cache_size=64M",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let info: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let socket = info["socket"].as_str().unwrap().to_string();
    let sql = std::process::Command::new("mariadb")
        .args(["--socket", &socket, "-uroot", "-e"])
        .arg(
            "CREATE DATABASE sbtest; CREATE TABLE sbtest.t (a INT PRIMARY KEY); \
             INSERT INTO sbtest.t SELECT seq FROM sbtest.seq_1_to_20000",
        )
        .env(
            "MYSQL_PWD",
            std::fs::read_to_string(s.lab().join("sandboxes/qc/password"))
                .unwrap()
                .trim(),
        )
        .output()
        .unwrap();
    assert!(sql.status.success(), "{}", stderr(&sql));
    let script = s.path().join("big.sql");
    std::fs::write(&script, "SELECT a FROM t;\n").unwrap();
    // The loop's CPU must be the loop's: raised priority keeps this test's own neighbours (the
    // test runner, a build) from taking CPU 1 where the system allows it (root in CI).
    let args = [
        "run",
        "--script",
        script.to_str().unwrap(),
        "--sandbox",
        "qc",
        "--threads",
        "16",
        "--time",
        "4",
        "--warmup",
        "1",
        "--event-loops",
        "1",
        "--client-cpus",
        "1",
        "--ps",
        "off",
    ];
    let niced = std::process::Command::new("nice")
        .args(["-n", "-15", "true"])
        .status()
        .is_ok_and(|st| st.success());
    let o = if niced {
        let c = s.cmd(&[]);
        let mut n = std::process::Command::new("nice");
        n.args(["-n", "-15"]).arg(c.get_program()).args(args);
        for (k, v) in c.get_envs() {
            match v {
                Some(v) => n.env(k, v),
                None => n.env_remove(k),
            };
        }
        n.output().unwrap()
    } else {
        s.run(&args)
    };
    let out = stdout(&o);
    assert!(o.status.success(), "{out}{}", stderr(&o));
    assert!(
        out.contains("client: 1 event loop on CPU 1 (pinned, not the server's)"),
        "{out}"
    );
    assert!(
        out.contains("warning: 1 of 1 event loop(s) were busy at least 90%"),
        "{out}"
    );

    let o = s.run(&["show", "1", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let phase = &doc["phases"][0];
    let client = &phase["result"]["client"];
    assert_eq!(client["cpus"], serde_json::json!([1]), "{phase}");
    assert_eq!(client["pinned"], true);
    assert_eq!(client["shares_server"], false);
    let busy = client["busy"][0].as_f64().unwrap();
    assert!(busy >= 0.9, "the loop ran {busy:.2} of the phase");
    let reasons = phase["result"]["stability"]["reasons"].as_array().unwrap();
    assert!(
        reasons.iter().any(|r| r["kind"] == "client_bound"),
        "{reasons:?}"
    );
    // The limiter verdict names the client first, with the loop's figures.
    let limits = &phase["result"]["limits"];
    assert_eq!(limits["limiters"][0]["kind"], "client", "{limits:#}");
    let why = limits["limiters"][0]["evidence"][0].as_str().unwrap();
    assert!(
        why.starts_with("1 of 1 event loop(s) busy at least 90%"),
        "{why}"
    );
    let verdict = phase["stability"].as_str().unwrap();
    assert!(
        verdict.contains("client-bound (1 of 1 event loop(s) saturated"),
        "{verdict}"
    );
}
