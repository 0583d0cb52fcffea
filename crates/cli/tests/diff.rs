//! `qpslab diff` end to end on the shared test server: the partitioned-table case of
//! examples/partitioned (one table partitioned by RANGE on its date in one database, by HASH on
//! its id in another, the same rows), a slow log of its lookups and date ranges written here,
//! compared per class; A against itself; and the user's mistakes.

mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Creates databases `diff_range` and `diff_hash` from the example's scripts (idempotent).
fn databases() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/partitioned");
        for (db, script) in [
            ("diff_range", "schema_range.sql"),
            ("diff_hash", "schema_hash.sql"),
        ] {
            let text = std::fs::read_to_string(examples.join(script)).unwrap();
            sql(&format!(
                "CREATE DATABASE IF NOT EXISTS {db}; USE {db}; {text}"
            ));
        }
    });
}

/// A MariaDB slow log of `statements`, all logged in database `diff_range`.
fn slow_log(dir: &Path, name: &str, statements: &[String]) -> PathBuf {
    let mut text = String::from(
        "/usr/sbin/mariadbd, Version: 10.11.19-MariaDB-0+deb12u1 (Debian 12). started with:\n\
         Tcp port: 3306  Unix socket: /run/mysqld/mysqld.sock\n\
         Time\t\t    Id Command\tArgument\n",
    );
    for (i, sql) in statements.iter().enumerate() {
        text.push_str(&format!(
            "# Time: 261123  4:25:{:02}\n# User@Host: root[root] @ localhost []\n\
             # Thread_id: 7  Schema: diff_range  QC_hit: No\n\
             # Query_time: 0.000100  Lock_time: 0.000000  Rows_sent: 1  Rows_examined: 1\n",
            10 + i / 4
        ));
        if i == 0 {
            text.push_str("use `diff_range`;\n");
        }
        text.push_str(&format!(
            "SET timestamp={};\n{sql};\n",
            1_795_407_910 + i / 4
        ));
    }
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// The example's scripts with concrete values: point lookups, one-week date ranges, a write.
fn events_log(dir: &Path) -> PathBuf {
    let mut s = Vec::new();
    for i in 0..8u32 {
        s.push(format!(
            "SELECT id, created, account, amount FROM events WHERE id = {}",
            1 + i * 12_345
        ));
        let day = (i * 41) % 358;
        s.push(format!(
            "SELECT COUNT(*), SUM(amount) FROM events WHERE created >= DATE '2024-01-01' + \
             INTERVAL {day} DAY AND created < DATE '2024-01-01' + INTERVAL {day} + 7 DAY"
        ));
    }
    s.push("UPDATE events SET amount = amount + 1 WHERE id = 5".into());
    slow_log(dir, "events-slow.log", &s)
}

/// Tests that time statements run one at a time: another test's load on the shared server
/// would land on one side more than the other.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

fn side(db: &str) -> String {
    format!("mysql://root@localhost/{db}?socket={}", socket())
}

/// Runs `qpslab diff LOG --a A --b B --format json` quickly and returns its JSON.
fn diff_json(s: &Scratch, log: &Path, a: &str, b: &str, extra: &[&str]) -> Value {
    let mut args = vec![
        "diff",
        log.to_str().unwrap(),
        "--a",
        a,
        "--b",
        b,
        "--format",
        "json",
        "--sample",
        "4",
    ];
    args.extend_from_slice(extra);
    if !extra.contains(&"--max-time-per-class") {
        args.extend_from_slice(&["--max-time-per-class", "1"]);
    }
    let o = s.run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("class 1/"), "{}", stderr(&o));
    assert!(stderr(&o).contains(", ETA "), "{}", stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap()
}

fn class<'a>(report: &'a Value, starts: &str) -> &'a Value {
    report["classes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["fingerprint"].as_str().unwrap().starts_with(starts))
        .unwrap_or_else(|| panic!("no class {starts}: {report}"))
}

#[test]
fn the_date_range_reads_every_hash_partition_and_is_a_regression_with_its_evidence() {
    let _g = serial();
    databases();
    let s = Scratch::new();
    let log = events_log(s.path());
    let md = s.path().join("diff.md");
    let amount = || sql("SELECT amount FROM diff_range.events WHERE id = 5");
    let before = amount();
    let r = diff_json(
        &s,
        &log,
        &side("diff_range"),
        &side("diff_hash"),
        &[
            "--allow-writes",
            "--json",
            s.path().join("d.json").to_str().unwrap(),
        ],
    );
    // The write ran, inside transactions rolled back.
    assert_eq!(amount(), before);
    assert!(r["skipped"].as_array().unwrap().is_empty(), "{r}");
    class(&r, "update events");
    let range = class(&r, "select count(*)");
    assert_eq!(range["verdict"], "regression", "{range}");
    assert_eq!(range["results_match"], true, "{range}");
    assert!(range["ci_low"].as_f64().unwrap() > 1.0, "{range}");
    let explain = range["explain"].to_string();
    assert!(explain.contains("partitions: p2024_"), "{explain}");
    assert!(range["counters"]["Handler_read_next"].is_array(), "{range}");
    let lookup = class(&r, "select id, created");
    assert_ne!(lookup["verdict"], "regression", "{lookup}");
    assert_eq!(lookup["results_match"], true, "{lookup}");
    // Passwords never reach the report; the JSON file holds the same analysis.
    let file: Value =
        serde_json::from_str(&std::fs::read_to_string(s.path().join("d.json")).unwrap()).unwrap();
    assert_eq!(file["classes"].as_array().unwrap().len(), 3);
    let o = s.run(&[
        "diff",
        log.to_str().unwrap(),
        "--a",
        &side("diff_range"),
        "--b",
        &side("diff_hash"),
        "--repeats",
        "20",
        "--sample",
        "4",
        "--format",
        "md",
        "--out",
        md.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&md).unwrap();
    // The verdict is asserted above (with more rounds); here the report's shape.
    assert!(text.starts_with("# qpslab diff: A → B"), "{text}");
    assert!(text.contains("## Regressions ("), "{text}");
    assert!(text.contains("## All classes"), "{text}");
    assert!(!md.with_extension("tmp").exists());
}

#[test]
fn a_side_against_itself_flags_nothing() {
    let _g = serial();
    databases();
    let s = Scratch::new();
    let log = events_log(s.path());
    // More rounds than the other runs: on a busy machine a burst of load over a few rounds can
    // look like a change (5 AB/BA pairs once flagged a class 6.4% faster beside a busy loop).
    let r = diff_json(
        &s,
        &log,
        &side("diff_hash"),
        &side("diff_hash"),
        &["--repeats", "24"],
    );
    for c in r["classes"].as_array().unwrap() {
        assert_eq!(c["verdict"], "same", "{c}");
        assert_eq!(c["results_match"], true, "{c}");
        assert_eq!(c["explain"].as_array().unwrap().len(), 0, "{c}");
    }
}

#[test]
fn the_users_mistakes_are_one_line_and_exit_2() {
    let s = Scratch::new();
    let log = events_log(s.path());
    let log = log.to_str().unwrap();
    let ok = side("diff_range");
    let run = |args: &[&str]| s.run(&[&["diff"], args].concat());
    assert_user_error(
        &run(&["/no/such.log", "--a", &ok, "--b", &ok]),
        "no/such.log",
    );
    assert_user_error(&run(&[log, "--a", "x/y/z", "--b", &ok]), "side 'x/y/z'");
    assert_user_error(&run(&[log, "--a", "nosuch", "--b", &ok]), "nosuch");
    assert_user_error(
        &run(&[log, "--a", &ok, "--b", &ok, "--repeats", "1"]),
        "--repeats",
    );
    assert_user_error(
        &run(&[log, "--a", &ok, "--b", &ok, "--threshold", "-3"]),
        "--threshold",
    );
    let writes = slow_log(
        s.path(),
        "writes.log",
        &["UPDATE events SET amount = 0 WHERE id = 1".into()],
    );
    assert_user_error(
        &run(&[writes.to_str().unwrap(), "--a", &ok, "--b", &ok]),
        "no class to compare",
    );
    let o = run(&[log, "--a", "mysql://u:hunter2@h:0/db", "--b", &ok]);
    assert_user_error(&o, "side mysql://u");
    assert!(!stderr(&o).contains("hunter2"), "{}", stderr(&o));
    let o = run(&[log, "--a", "mysql://root:hunter2@127.0.0.1:1/x", "--b", &ok]);
    let err = stderr(&o);
    assert_ne!(o.status.code(), Some(0), "{err}");
    // The error is one line (after the warning that a URL password is visible in `ps`).
    assert!(!err.contains("hunter2"), "{err}");
    assert_eq!(err.matches("error:").count(), 1, "{err}");
    assert!(
        err.contains("connecting to mysql://root@127.0.0.1:1/x"),
        "{err}"
    );
}

#[test]
fn ctrl_c_stops_without_a_half_written_report() {
    let _g = serial();
    databases();
    let s = Scratch::new();
    let log = events_log(s.path());
    let out = s.path().join("report.html");
    let child = s
        .cmd(&[
            "diff",
            log.to_str().unwrap(),
            "--a",
            &side("diff_range"),
            "--b",
            &side("diff_hash"),
            "--repeats",
            "1000000",
            "--format",
            "html",
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2500));
    // SAFETY: kill(2) takes plain integers; the pid is our child, not yet waited for.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let sent = std::time::Instant::now();
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert!(sent.elapsed().as_secs_f64() < 5.0, "{err}");
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(
        !out.exists() && !out.with_extension("tmp").exists(),
        "{err}"
    );
}

#[test]
fn profiles_of_both_sides_are_flame_graphs_the_report_embeds() {
    let _g = serial();
    databases();
    let s = Scratch::new();
    let log = events_log(s.path());
    let dir = s.path().join("prof");
    let report = s.path().join("out").join("diff.html");
    std::fs::create_dir_all(report.parent().unwrap()).unwrap();
    let json = s.path().join("diff.json");
    let o = s.run(&[
        "diff",
        log.to_str().unwrap(),
        "--a",
        &side("diff_range"),
        "--b",
        &side("diff_hash"),
        "--sample",
        "4",
        "--repeats",
        "4",
        "--profile",
        dir.to_str().unwrap(),
        "--profile-time",
        "2",
        "--format",
        "html",
        "--out",
        report.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let profiles = r["profiles"].as_array().unwrap();
    assert_eq!(profiles.len(), 2, "{r}");
    for p in profiles {
        assert!(p["files"]["samples"].as_u64().unwrap() > 0, "{p}");
        assert!(p["statements"].as_u64().unwrap() > 0, "{p}");
        assert!(!p["cpu"].as_array().unwrap().is_empty(), "{p}");
        let folded = std::fs::read_to_string(p["files"]["folded"].as_str().unwrap()).unwrap();
        assert!(folded.contains("do_command"), "{folded:.500}");
    }
    for name in ["a.svg", "b.svg", "diff.svg"] {
        let svg = std::fs::read_to_string(dir.join(name)).unwrap();
        assert!(svg.contains("<svg") && svg.contains("do_command"), "{name}");
    }
    let html = std::fs::read_to_string(&report).unwrap();
    for name in ["a.svg", "b.svg", "diff.svg"] {
        assert!(
            html.contains(&format!("<img src=\"../prof/{name}\"")),
            "{name} not embedded"
        );
    }
    assert!(html.contains("Server profiles") && html.contains("CPU % of one CPU"));
    // Chromium draws the report's flame graphs: its screenshot is much larger than the same
    // page's with the images taken out.
    let without = report.with_file_name("no-images.html");
    std::fs::write(&without, html.replace("<img ", "<span ")).unwrap();
    let user_dir = tempfile::tempdir().unwrap();
    let shot = |page: &Path, name: &str| {
        let png = artifacts().join(name);
        let _ = std::fs::remove_file(&png);
        let c = chromium(
            &[
                &format!("--screenshot={}", png.display()),
                "--window-size=1200,4000",
                &format!("file://{}", page.display()),
            ],
            user_dir.path(),
        );
        assert!(c.status.success(), "{}", stderr(&c));
        let bytes = std::fs::read(&png).unwrap();
        assert_eq!(&bytes[1..4], b"PNG");
        bytes.len()
    };
    let (drawn, text) = (
        shot(&report, "diff-report.png"),
        shot(&without, "diff-text.png"),
    );
    assert!(
        drawn > text * 3 / 2,
        "{drawn} bytes with the flame graphs, {text} without"
    );

    // A side whose server is not on this machine cannot be profiled: refused before measuring.
    let remote = "mysql://root@db.example.com/x";
    let o = s.run(&[
        "diff",
        log.to_str().unwrap(),
        "--a",
        &side("diff_range"),
        "--b",
        remote,
        "--profile",
        dir.to_str().unwrap(),
    ]);
    assert_user_error(&o, "--profile");
    assert!(!stderr(&o).contains("class 1/"), "{}", stderr(&o));
}

#[test]
fn a_stalled_side_stops_the_diff_with_one_line() {
    let _g = serial();
    databases();
    let s = Scratch::new();
    let log = events_log(s.path());
    // Another session holds the HASH table locked for longer than the statement timeout.
    let mut locker = std::process::Command::new("mariadb")
        .args(["--socket", &socket(), "-uroot", "diff_hash", "-e"])
        .arg("LOCK TABLES events WRITE; SELECT SLEEP(30)")
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("mariadb client");
    std::thread::sleep(std::time::Duration::from_millis(500));
    let started = std::time::Instant::now();
    let o = s.run(&[
        "diff",
        log.to_str().unwrap(),
        "--a",
        &side("diff_range"),
        "--b",
        &side("diff_hash"),
        "--statement-timeout",
        "2",
    ]);
    // The lock ends with its session on the server, not with the client process.
    let ids = sql("SELECT ID FROM information_schema.PROCESSLIST WHERE INFO = 'SELECT SLEEP(30)'");
    for id in ids.split_whitespace() {
        let _ = std::process::Command::new("mariadb")
            .args(["--socket", &socket(), "-uroot", "-e", &format!("KILL {id}")])
            .output();
    }
    let _ = locker.kill();
    let _ = locker.wait();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.matches("error:").count(), 1, "{err}");
    assert!(err.contains("ran longer than 2 s"), "{err}");
    assert!(
        started.elapsed().as_secs() < 25,
        "the diff waited for the lock"
    );
}

/// Issue 34: a diff runs logged SQL read-only, enforced by the server. `SELECT f_del()` reads
/// as a plain SELECT to the classifier (an unqualified call), but the function deletes: the
/// server refuses it (the diff's account lacks EXECUTE, its transactions are read-only), the
/// class is skipped with the server's reason, the rows stay, and the diff's account is gone.
#[test]
fn a_statement_the_classifier_lets_through_is_refused_by_the_server() {
    let _g = serial();
    sql("CREATE DATABASE IF NOT EXISTS diff_ro; \
         CREATE OR REPLACE TABLE diff_ro.t (id INT PRIMARY KEY); \
         INSERT INTO diff_ro.t VALUES (1), (2), (3)");
    let o = std::process::Command::new("mariadb")
        .args(["--socket", &socket(), "-uroot", "--delimiter=//", "-e"])
        .arg(
            "CREATE OR REPLACE FUNCTION diff_ro.f_del() RETURNS INT MODIFIES SQL DATA \
             BEGIN DELETE FROM diff_ro.t; RETURN 1; END",
        )
        .output()
        .expect("mariadb client");
    assert!(o.status.success(), "{}", stderr(&o));
    let s = Scratch::new();
    let statements = [
        "SELECT f_del()".to_string(),
        "SELECT COUNT(*) FROM t".to_string(),
    ];
    let log = slow_log(s.path(), "f-del-slow.log", &statements);
    let (a, b) = (side("diff_ro"), side("diff_ro"));
    let args = [
        "diff",
        log.to_str().unwrap(),
        "--a",
        &a,
        "--b",
        &b,
        "--format",
        "json",
    ];
    let o = s.run(&[&args[..], &["--sample", "1", "--repeats", "2"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let r: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(sql("SELECT COUNT(*) FROM diff_ro.t").trim(), "3", "{r}");
    let skipped = r["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["fingerprint"].as_str().unwrap().contains("f_del"))
        .unwrap_or_else(|| panic!("{r}"));
    let why = skipped["reason"].as_str().unwrap();
    // 1370 (no EXECUTE) or 1792 (read-only transaction): the first check the server makes.
    assert!(
        why.contains("refused by the server: 1370") || why.contains("refused by the server: 1792"),
        "{why}"
    );
    class(&r, "select count");
    assert_eq!(
        sql("SELECT COUNT(*) FROM mysql.user WHERE User LIKE 'qpslab\\_ro\\_%'").trim(),
        "0"
    );
    sql("DROP DATABASE diff_ro");
}
