//! Replication between sandboxes (`server start --primary / --replica-of`, `server status`)
//! and replica lag measured during a run (`run --replica`), against the real server.

mod common;
use common::*;

/// Runs SQL on sandbox `name` of `s` through the mariadb client.
fn sandbox_sql(s: &Scratch, name: &str, query: &str) -> String {
    let cnf = s.lab().join("sandboxes").join(name).join("client.cnf");
    let o = std::process::Command::new("mariadb")
        .arg(format!("--defaults-file={}", cnf.display()))
        .args(["-N", "-B", "-e", query])
        .output()
        .expect("mariadb client");
    assert!(o.status.success(), "{query}: {}", stderr(&o));
    stdout(&o).trim().to_string()
}

/// The `replica_lag` readings of the first phase of a run's JSON.
fn lag_readings(json: &std::path::Path) -> Vec<serde_json::Value> {
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    doc["phases"][0]["telemetry"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["source"] == "replica_lag")
        .map(|t| t["values"].clone())
        .collect()
}

/// Whether some reading has `key` with a maximum below a second that is no whole number of
/// seconds: sub-second resolution.
fn sub_second(readings: &[serde_json::Value], key: &str) -> bool {
    readings.iter().any(|v| {
        v[key]["max"]
            .as_f64()
            .is_some_and(|ms| ms > 0.0 && ms < 1000.0)
    })
}

#[test]
fn primary_and_replica_data_lag_errors_and_stop() {
    let s = Scratch::new();
    let o = s.run(&["server", "start", "p", "--primary"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("role     primary"), "{}", stdout(&o));
    let o = s.run(&[
        "server",
        "start",
        "r",
        "--replica-of",
        "p",
        "--set",
        "slave_parallel_threads=4",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("IO Yes, SQL Yes"), "{}", stdout(&o));

    // A dataset prepared on the primary arrives on the replica.
    let o = s.run(&[
        "prepare",
        "oltp_write_only",
        "--sandbox",
        "p",
        "--tables",
        "2",
        "--table-size",
        "2000",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = s.run(&["server", "status", "r"]);
    assert!(
        stdout(&o).contains("role     replica of p"),
        "{}",
        stdout(&o)
    );
    let count = "SELECT MASTER_GTID_WAIT(@@gtid_slave_pos, 0) >= 0; \
                 SELECT COUNT(*) FROM sbtest.sbtest2";
    let mut got = String::new();
    for _ in 0..50 {
        got = sandbox_sql(&s, "r", count);
        if got.ends_with("2000") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(got.ends_with("2000"), "{got}");
    assert_eq!(sandbox_sql(&s, "r", "SELECT @@slave_parallel_threads"), "4");

    // Lag during a write run: heartbeat and GTID lag below a second, and SBM.
    let json = s.path().join("run.json");
    let o = s.run(&[
        "run",
        "oltp_write_only",
        "--sandbox",
        "p",
        "--replica",
        "r",
        "--tables",
        "2",
        "--table-size",
        "2000",
        "--threads",
        "4",
        "--time",
        "4",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains(" lag "), "{}", stdout(&o));
    let lag = lag_readings(&json);
    assert!(lag.len() >= 4, "{lag:?}");
    assert!(sub_second(&lag, "heartbeat_lag_ms"), "{lag:?}");
    assert!(sub_second(&lag, "gtid_lag_ms"), "{lag:?}");
    assert!(
        lag.iter().any(|v| v["sbm_s"]["last"].is_number()),
        "{lag:?}"
    );
    // The heartbeat table is gone with its schema.
    assert_eq!(
        sandbox_sql(
            &s,
            "p",
            "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'qpslab'"
        ),
        "0"
    );

    // The highest rate the replica keeps up with: fixed-rate phases, then one verdict line.
    let o = s.run(&[
        "run",
        "oltp_write_only",
        "--sandbox",
        "p",
        "--replica",
        "r",
        "--tables",
        "2",
        "--table-size",
        "2000",
        "--threads",
        "4",
        "--time",
        "2",
        "--rate",
        "200",
        "--rate-search",
        "--max-lag",
        "5000",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("rate/s") && out.contains("\n   200 "), "{out}");
    assert!(
        out.contains("at least") || out.contains("highest rate"),
        "{out}"
    );

    // The user's mistakes.
    let o = s.run(&["server", "start", "x", "--replica-of", "nosuch"]);
    assert_user_error(&o, "no sandbox named 'nosuch'");
    let o = s.run(&["server", "start", "x", "--replica-of", "x"]);
    assert_user_error(&o, "cannot replicate from itself");
    let o = s.run(&[
        "run",
        "oltp_write_only",
        "--sandbox",
        "r",
        "--replica",
        "p",
        "--tables",
        "2",
        "--table-size",
        "2000",
        "--time",
        "1",
    ]);
    assert_user_error(&o, "is not a replica");
    let o = s.run(&[
        "run",
        "oltp_write_only",
        "--sandbox",
        "p",
        "--replica",
        "r",
        "--threads",
        "1,2",
        "--rate-search",
    ]);
    assert_user_error(&o, "one --threads value");
    let o = s.run(&[
        "run",
        "oltp_write_only",
        "--sandbox",
        "p",
        "--max-lag",
        "100",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(
        stderr(&o).lines().filter(|l| l.contains("error")).count(),
        1
    );

    // Stopping the primary says what it leaves running; stopping both stops both.
    let o = s.run(&["server", "stop", "p"]);
    assert!(stdout(&o).contains("is the primary of r"), "{}", stdout(&o));
    let o = s.run(&["server", "stop", "r"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = s.run(&["server", "list"]);
    assert_eq!(
        stdout(&o).matches("stopped").count(),
        2 + 1,
        "{}",
        stdout(&o)
    );
}

/// A study whose variants differ only in their replica's settings runs end to end, each cell
/// records the replica's lag, and `compare` and `report` show it (which variant lags less is
/// not asserted: that is the measurement). Half-second intervals give each 3 s phase the
/// intervals a chart over time needs.
#[test]
fn study_compares_replica_settings_by_lag() {
    let s = Scratch::new();
    let spec = s.path().join("lag.toml");
    std::fs::write(
        &spec,
        "name = \"lag\"\n\
         [defaults]\nworkload = \"oltp_write_only\"\ntables = 2\ntable_size = 2000\n\
         duration = \"3s\"\nreport_interval = \"0.5s\"\nthreads = 4\nwarmup = 0\nretries = 0\n\
         [[variant]]\nname = \"serial\"\nreplica = { set = { slave_parallel_threads = 0 } }\n\
         [[variant]]\nname = \"parallel\"\n\
         replica = { set = { slave_parallel_threads = 4, slave_parallel_mode = \"optimistic\" } }\n",
    )
    .unwrap();
    let o = s.run(&["lab", "run", spec.to_str().unwrap()]);
    assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
    let o = s.run(&["compare", "lag/serial", "lag/parallel", "--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let cmp: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let lag = cmp["points"][0]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"] == "replica_lag")
        .cloned();
    let lag = lag.unwrap_or_else(|| panic!("no replica_lag in {cmp}"));
    assert!(lag["a"].as_f64().unwrap() >= 0.0, "{lag}");
    let o = s.run(&["compare", "lag/serial", "lag/parallel"]);
    assert!(stdout(&o).contains("replica_lag"), "{}", stdout(&o));
    let html = s.path().join("r.html");
    let o = s.run(&["report", "lag", "-o", html.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("Replica lag per interval"), "no lag chart");
    // The study's sandboxes, replicas included, are stopped at its end.
    let o = s.run(&["server", "list", "--json"]);
    let list: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let all = list.as_array().unwrap();
    assert_eq!(all.len(), 4, "{list}");
    assert!(all.iter().all(|i| i["alive"] == false), "{list}");
}
