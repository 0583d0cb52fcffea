//! `qpslab run`, `prepare`, `cleanup` and `show` end to end against a real MariaDB.

mod common;
use common::*;
use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

#[test]
fn run_sweeps_threads_stores_and_shows() {
    let s = Scratch::new();
    let sock = socket();
    let json = s.path().join("run.json");
    // An external server is never changed by `run`: the dataset is prepared first.
    common::prepare_shared(
        &s,
        "oltp_read_write",
        "runtest",
        &["--tables", "2", "--table-size", "2000"],
    );
    let o = s.run(&[
        "run",
        "oltp_read_write",
        "--socket",
        &sock,
        "--database",
        "runtest",
        "--tables",
        "2",
        "--table-size",
        "2000",
        "--threads",
        "1,3",
        "--time",
        "2",
        "--warmup",
        "1",
        "--percentiles",
        "50,95,99.9",
        "--json",
        json.to_str().unwrap(),
    ]);
    let out = stdout(&o);
    assert!(o.status.success(), "{}\n{}", out, stderr(&o));
    // Live lines and the sysbench-style summary.
    assert!(out.contains("thds: 3 tps:"), "{out}");
    assert!(
        out.contains("transactions:") && out.contains("99.9th percentile:"),
        "{out}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let phases = v["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 2);
    for (p, threads) in phases.iter().zip([1, 3]) {
        assert_eq!(p["threads"], threads);
        assert!(p["tps"].as_f64().unwrap() > 0.0, "{p}");
        // oltp_read_write: 14 reads, 4 writes, 2 others per transaction (sysbench defaults).
        let q = &p["queries"];
        // Deadlocks are rolled back and the transaction retried, as sysbench does; the retried
        // attempts' queries count too, so allow one extra transaction's worth per error.
        let ev = p["events"].as_f64().unwrap();
        let retried: f64 = p["errors"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_f64().unwrap())
            .sum();
        for (class, per_event) in [("read", 14.0), ("write", 4.0)] {
            let n = q[class].as_f64().unwrap();
            assert!(
                n >= per_event * ev && n <= per_event * (ev + retried),
                "{class}: {p}"
            );
        }
        assert!(
            p["latency_ms"]["p99.9"].as_f64().unwrap() >= p["latency_ms"]["p50"].as_f64().unwrap()
        );
        assert!(p["result"]["client_cpu"]["user_s"].as_f64().is_some());
    }
    let run_id = v["id"].as_i64().unwrap();

    let o = s.run(&["show"]);
    assert!(stdout(&o).contains("oltp_read_write"), "{}", stdout(&o));
    let o = s.run(&["show", &run_id.to_string(), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let stored: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        stored, v,
        "run --json and show --json print the same document"
    );
    assert!(
        stored.to_string().contains("innodb_buffer_pool_size"),
        "server variables stored"
    );
    assert_user_error(&s.run(&["show", "999"]), "no run 999");

    // The dataset is reused by the next run: no second prepare.
    let o = s.run(&[
        "run",
        "oltp_point_select",
        "--socket",
        &sock,
        "--database",
        "runtest",
        "--tables",
        "2",
        "--table-size",
        "2000",
        "--events",
        "500",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("preparing"), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("total number of events:              500"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn a_stored_run_holds_no_password() {
    let s = Scratch::new();
    let sock = socket();
    sql("CREATE USER IF NOT EXISTS 'bench'@'localhost' IDENTIFIED BY 'Pa55-w0rd-XYZ'");
    sql("GRANT ALL ON *.* TO 'bench'@'localhost'");
    let url = format!("mysql://bench:Pa55-w0rd-XYZ@localhost/pwdb?socket={sock}");
    let json = s.path().join("r.json");
    let prep = ["prepare", "oltp_point_select", "--target", &url];
    let o = s.run(&[&prep[..], &["--table-size", "300", "--create-db"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let o = s.run(&[
        "run",
        "oltp_point_select",
        "--target",
        &url,
        "--table-size",
        "300",
        "--time",
        "1",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut everything = std::fs::read(s.db()).unwrap();
    for ext in ["db-wal", "db-journal"] {
        everything.extend(std::fs::read(s.db().with_extension(ext)).unwrap_or_default());
    }
    everything.extend(std::fs::read(&json).unwrap());
    everything.extend(o.stdout.iter().chain(o.stderr.iter()));
    let o = s.run(&["show", "1", "--json"]);
    everything.extend(o.stdout);
    assert!(
        !everything.windows(13).any(|w| w == b"Pa55-w0rd-XYZ"),
        "password found in store or output"
    );

    // MYSQL_PWD is honoured too.
    let url = format!("mysql://bench@localhost/pwdb?socket={sock}");
    let o = s
        .cmd(&[
            "run",
            "oltp_point_select",
            "--target",
            &url,
            "--table-size",
            "300",
            "--time",
            "1",
        ])
        .env("MYSQL_PWD", "Pa55-w0rd-XYZ")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn cleanup_drops_only_what_qpslab_created() {
    let s = Scratch::new();
    let sock = socket();
    sql("CREATE DATABASE IF NOT EXISTS foreign_db");
    sql("CREATE TABLE IF NOT EXISTS foreign_db.sbtest1 (id INT PRIMARY KEY, k INT, c CHAR(120), pad CHAR(60))");
    sql("CREATE TABLE IF NOT EXISTS foreign_db.customers (id INT PRIMARY KEY)");
    let o = s.run(&["cleanup", "--socket", &sock, "--database", "foreign_db"]);
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    let tables = sql("SELECT table_name FROM information_schema.tables WHERE table_schema='foreign_db' ORDER BY 1");
    assert_eq!(tables, "customers\nsbtest1\n");

    // What qpslab prepared is dropped, and only that.
    let prep = [
        "prepare",
        "oltp_read_only",
        "--socket",
        &sock,
        "--database",
        "ours_db",
        "--tables",
        "2",
        "--table-size",
        "100",
        "--create-db",
    ];
    let o = s.run(&prep);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("prepared 2 table(s) × 100 rows") && stdout(&o).contains("bulk INSERT"),
        "{}",
        stdout(&o)
    );
    // Again: the same dataset is there, nothing is loaded.
    let o = s.run(&prep);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "2 table(s) × 100 rows already prepared in ours_db by qpslab: nothing to do\n"
    );
    sql("CREATE TABLE ours_db.keep_me (id INT)");
    let o = s.run(&["cleanup", "--socket", &sock, "--database", "ours_db"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let tables = sql("SELECT table_name FROM information_schema.tables WHERE table_schema='ours_db' AND table_name NOT LIKE 'qpslab%' ORDER BY 1");
    assert_eq!(tables, "keep_me\n");
}

#[test]
fn embedded_sandbox_runs_and_ctrl_c_leaves_no_server() {
    let s = Scratch::new();
    // A full run on the embedded default: started, prepared, measured, stopped.
    let o = s.run(&[
        "run",
        "oltp_point_select",
        "--table-size",
        "500",
        "--threads",
        "2",
        "--time",
        "1",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("starting embedded sandbox"),
        "{}",
        stderr(&o)
    );
    assert!(no_live_sandbox(&s), "embedded sandbox left running");

    // Interrupted mid-run: the server it started must be gone.
    let mut child = s
        .cmd(&[
            "run",
            "oltp_point_select",
            "--table-size",
            "500",
            "--threads",
            "2",
            "--time",
            "60",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = BufReader::new(child.stdout.take().unwrap());
    let started = Instant::now();
    for line in out.lines() {
        let line = line.unwrap();
        if line.contains("tps:") || started.elapsed() > Duration::from_secs(60) {
            break;
        }
    }
    assert!(!no_live_sandbox(&s), "sandbox should be running mid-run");
    // SAFETY: kill(2) takes plain integers; the pid is our child, not yet waited for.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert!(!status.success());
    assert!(no_live_sandbox(&s), "Ctrl-C left the sandbox running");
}

fn no_live_sandbox(s: &Scratch) -> bool {
    let o = s.run(&["server", "list", "--json"]);
    let list: serde_json::Value =
        serde_json::from_str(&stdout(&o)).unwrap_or(serde_json::json!([]));
    list.as_array().unwrap().iter().all(|i| i["alive"] == false)
}

#[test]
fn defaults_file_supplies_socket_user_and_password() {
    let s = Scratch::new();
    sql("CREATE USER IF NOT EXISTS 'optfile'@'localhost' IDENTIFIED BY 'From-Option-File-9'");
    sql("GRANT ALL ON *.* TO 'optfile'@'localhost'");
    let cnf = s.path().join("my.cnf");
    std::fs::write(
        &cnf,
        format!("[client]\nuser=optfile\npassword=\"From-Option-File-9\"\nsocket={}\n[mysqld]\nport=1\n", socket()),
    )
    .unwrap();
    let o = s.run(&[
        "prepare",
        "oltp_point_select",
        "--defaults-file",
        cnf.to_str().unwrap(),
        "--database",
        "optdb",
        "--table-size",
        "200",
        "--create-db",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = s.run(&[
        "run",
        "oltp_point_select",
        "--defaults-file",
        cnf.to_str().unwrap(),
        "--database",
        "optdb",
        "--table-size",
        "200",
        "--events",
        "100",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("optfile@"), "{}", stdout(&o));
    assert!(!format!("{}{}", stdout(&o), stderr(&o)).contains("From-Option-File-9"));

    std::fs::write(&cnf, "user=nobody-without-group\n").unwrap();
    let o = s.run(&[
        "run",
        "oltp_point_select",
        "--defaults-file",
        cnf.to_str().unwrap(),
    ]);
    assert_user_error(&o, "--defaults-file");
}

#[test]
fn warmup_auto_settles_judges_and_stores_what_it_did() {
    let s = Scratch::new();
    let sock = socket();
    let args = |warmup: &str| {
        [
            "run",
            "oltp_point_select",
            "--socket",
            &sock,
            "--database",
            "autowarm",
            "--table-size",
            "2000",
            "--time",
            "2",
            "--warmup",
            warmup,
        ]
        .map(String::from)
    };
    // An external target: `run` checks its dataset, `prepare` builds it.
    common::prepare_shared(
        &s,
        "oltp_point_select",
        "autowarm",
        &["--table-size", "2000"],
    );
    let mut a = args("auto").to_vec();
    a.extend(["--warmup-max".to_string(), "8".to_string()]);
    let o = s.run(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(o.status.success(), "{out}\n{err}");
    assert!(err.contains("until throughput was flat"), "{err}");
    // The shared server is not ours here: it is checked once, not waited for or warmed.
    assert!(
        err.contains("settled in") && err.contains("warmed 0"),
        "{err}"
    );
    assert!(out.contains("    stability:  "), "{out}");
    let shown = stdout(&s.run(&["show", "1", "--json"]));
    let v: serde_json::Value = serde_json::from_str(&shown).unwrap();
    let plan = &v["meta"]["plan"];
    let took = plan["warmup_auto"]["took_s"].as_f64().unwrap();
    assert!((2.0..=8.5).contains(&took), "{plan}");
    assert!(plan["settle"]["report"]["dirty_pages"].is_array(), "{plan}");
    assert!(v.to_string().contains("\"stability\""), "{shown}");
    let a = args("soon");
    assert_user_error(
        &s.run(&a.iter().map(String::as_str).collect::<Vec<_>>()),
        "--warmup: must be zero or a positive number of seconds",
    );
    let run_with = |warmup: &str, extra: &[&str]| {
        let mut a: Vec<String> = args(warmup).to_vec();
        a.extend(extra.iter().map(|x| x.to_string()));
        s.run(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    assert_user_error(
        &run_with("auto", &["--warmup-max=-1"]),
        "--warmup-max: must be zero or a positive",
    );
    assert_user_error(
        &run_with("0", &["--settle-max=-1"]),
        "--settle-max: must be zero or a positive",
    );
    assert_user_error(&run_with("0", &["--settle", "maybe"]), "--settle");
    let o = run_with("0", &["--settle", "off"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("settled"), "{}", stderr(&o));
}
