//! `qpslab replay` end to end on the shared test server: a MariaDB slow log written here, whose
//! statements hit a table the test creates, replayed in both modes (the server's Com_* counters
//! show each statement ran once), read-only, with a missing table; `show`, `show --json` and
//! `compare` of two replays; and the user's mistakes. On private sandboxes: a log of hostile
//! statements (issue 25) changes nothing and each skipped class is named; a server killed
//! mid-replay ends it within the reconnection limit, its errors equal in samples and `show`.

mod common;

use common::*;
use std::path::{Path, PathBuf};

/// A MariaDB 10.11 slow log: `(thread, second, sql)` entries in the server's own format.
fn slow_log(dir: &Path, name: &str, entries: &[(u64, i64, String)]) -> PathBuf {
    let mut text = String::from(
        "/usr/sbin/mariadbd, Version: 10.11.19-MariaDB-0+deb12u1 (Debian 12). started with:\n\
         Tcp port: 3306  Unix socket: /run/mysqld/mysqld.sock\n\
         Time\t\t    Id Command\tArgument\n",
    );
    let base = 1_795_407_949;
    let mut db_of = std::collections::BTreeSet::new();
    for (thread, second, sql) in entries {
        text.push_str(&format!(
            "# Time: 261123  4:25:{:02}\n# User@Host: root[root] @ localhost []\n\
             # Thread_id: {thread}  Schema: replaycli  QC_hit: No\n\
             # Query_time: 0.000100  Lock_time: 0.000000  Rows_sent: 0  Rows_examined: 0\n\
             # Rows_affected: 0  Bytes_sent: 11\n",
            49 + second
        ));
        if db_of.insert(*thread) {
            text.push_str("use `replaycli`;\n");
        }
        text.push_str(&format!("SET timestamp={};\n{sql};\n", base + second));
    }
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// 3 connections each insert 4 rows, read and update them; connection 9 reads a missing table.
fn mix(dir: &Path, with_missing: bool) -> PathBuf {
    let mut e = Vec::new();
    for t in 1..=3u64 {
        for i in 0..4 {
            let id = t * 10 + i;
            e.push((t, i as i64, format!("INSERT INTO t VALUES ({id}, 0)")));
            e.push((t, i as i64, format!("SELECT v FROM t WHERE id = {id}")));
            e.push((
                t,
                i as i64,
                format!("UPDATE t SET v = v + 1 WHERE id = {id}"),
            ));
        }
    }
    if with_missing {
        for i in 0..5 {
            e.push((9, 1, format!("SELECT * FROM nosuch WHERE id = {i}")));
        }
    }
    slow_log(
        dir,
        if with_missing {
            "missing.log"
        } else {
            "mix.log"
        },
        &e,
    )
}

/// The tests share the database and read global counters: one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn fresh_table() {
    sql(
        "DROP DATABASE IF EXISTS replaycli; CREATE DATABASE replaycli; \
         CREATE TABLE replaycli.t (id INT PRIMARY KEY, v INT)",
    );
}

fn com() -> Vec<u64> {
    let out =
        sql("SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_insert', 'Com_select', 'Com_update')");
    out.lines()
        .map(|l| l.split('\t').nth(1).unwrap().parse().unwrap())
        .collect()
}

fn replay(s: &Scratch, log: &Path, extra: &[&str]) -> std::process::Output {
    let sock = socket();
    let mut args = vec!["replay", log.to_str().unwrap(), "--socket", &sock];
    args.extend_from_slice(extra);
    s.run(&args)
}

#[test]
fn replays_are_stored_shown_and_compared() {
    let _g = serial();
    let s = Scratch::new();
    let log = mix(s.path(), false);
    let mut ids = Vec::new();
    for extra in [
        &["--mode", "max", "--threads", "3"][..],
        &["--speed", "0", "--metrics-addr", "127.0.0.1:0"][..],
    ] {
        fresh_table();
        let before = com();
        let o = replay(&s, &log, extra);
        assert!(o.status.success(), "{}", stderr(&o));
        // Progress: the statements done of the log's, with an ETA.
        assert!(stderr(&o).contains(" statement(s), ETA "), "{}", stderr(&o));
        if extra.contains(&"--metrics-addr") {
            assert!(
                stderr(&o).contains("metrics: http://127.0.0.1:"),
                "{}",
                stderr(&o)
            );
        }
        let after = com();
        let delta: Vec<u64> = after.iter().zip(&before).map(|(a, b)| a - b).collect();
        // Com_insert, Com_select, Com_update (SHOW's order). qpslab's control connection reads
        // server facts with a SELECT, so reads are bounded here (the library test counts them
        // exactly); in sessions mode each row inserted and updated exactly once has v = 1.
        assert_eq!((delta[0], delta[2]), (12, 12), "{extra:?}: {}", stdout(&o));
        assert!((12..=14).contains(&delta[1]), "{delta:?}");
        // Max mode keeps no order: an UPDATE may come before its row's INSERT.
        let rows = sql("SELECT count(*), sum(v = 1) = count(*) FROM replaycli.t");
        assert!(rows.starts_with("12\t"), "{rows}");
        if extra[0] != "--mode" {
            assert_eq!(rows.trim(), "12\t1");
        }
        let out = stdout(&o);
        assert!(
            out.contains("Statement classes") && out.contains("stored as run"),
            "{out}"
        );
        ids.push(
            out.split("qpslab show ")
                .nth(1)
                .unwrap()
                .trim_end_matches([')', '\n'])
                .to_string(),
        );
    }
    let shown = s.run(&["show", &ids[1]]);
    let text = stdout(&shown);
    assert!(shown.status.success(), "{}", stderr(&shown));
    assert!(
        text.contains("replay · completed") && text.contains("mode sessions"),
        "{text}"
    );
    let json: serde_json::Value =
        serde_json::from_slice(&s.run(&["show", &ids[1], "--json"]).stdout).unwrap();
    let plan = &json["meta"]["plan"]["replay"];
    assert_eq!(plan["statements"], 36, "{json}");
    // Two replays of one log in one mode compare; of different modes they are different
    // workloads.
    fresh_table();
    let again = replay(&s, &log, &["--speed", "0"]);
    assert!(again.status.success(), "{}", stderr(&again));
    let id3 = stdout(&again)
        .split("qpslab show ")
        .nth(1)
        .unwrap()
        .trim_end_matches([')', '\n'])
        .to_string();
    let cmp = s.run(&["compare", &ids[1], &id3]);
    assert!(cmp.status.success(), "{}", stderr(&cmp));
    let report = s.run(&["report", &ids[1], &id3, "--format", "md"]);
    let md = stdout(&report);
    assert!(report.status.success(), "{}", stderr(&report));
    assert!(md.contains(&format!("# Runs {}, {id3}", ids[1])), "{md}");
    let mixed = s.run(&["compare", &ids[0], &id3]);
    assert!(
        stderr(&mixed).contains("different workloads"),
        "{}",
        stderr(&mixed)
    );
}

#[test]
fn read_only_skips_writes_and_errors_are_counted_per_class() {
    let _g = serial();
    let s = Scratch::new();
    let log = mix(s.path(), true);
    fresh_table();
    let before = com();
    let o = replay(&s, &log, &["--mode", "max", "--read-only"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let after = com();
    assert_eq!((after[0] - before[0], after[2] - before[2]), (0, 0));
    let out = stdout(&o);
    let missing = out.lines().find(|l| l.contains("nosuch")).unwrap();
    assert!(missing.contains("1146: 5"), "{out}");
    let update = out.lines().find(|l| l.contains("update t set")).unwrap();
    assert!(update.contains(" 12 "), "{update}");
}

#[test]
fn mistakes_are_one_line_and_exit_2() {
    let s = Scratch::new();
    let log = mix(s.path(), false);
    let junk = s.path().join("junk.log");
    std::fs::write(&junk, "hello\nthis is no log\n").unwrap();
    let missing = s.path().join("nope.log");
    assert_user_error(&replay(&s, &missing, &[]), "nope.log");
    assert_user_error(&replay(&s, &junk, &[]), "hello");
    assert_user_error(&replay(&s, &log, &["--speed", "-1"]), "--speed");
    assert_user_error(&replay(&s, &log, &["--threads", "0"]), "--threads");
    let o = s.run(&["replay", log.to_str().unwrap()]);
    assert_user_error(&o, "--socket");
    for o in [replay(&s, &junk, &[]), replay(&s, &log, &["--speed", "-1"])] {
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    }
}

#[test]
fn ctrl_c_keeps_the_intervals_replayed_so_far() {
    let _g = serial();
    let s = Scratch::new();
    fresh_table();
    // One connection reading once a second for 20 s.
    let entries: Vec<(u64, i64, String)> = (0..20)
        .map(|i| (1, i, format!("SELECT v FROM t WHERE id = {i}")))
        .collect();
    let log = slow_log(s.path(), "long.log", &entries);
    let sock = socket();
    let child = s
        .cmd(&["replay", log.to_str().unwrap(), "--socket", &sock])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2500));
    // SAFETY: kill(2) takes plain integers; the pid is our child, not yet waited for.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let sent = std::time::Instant::now();
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert!(sent.elapsed().as_secs_f64() < 5.0, "{err}");
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("(interrupted)"), "{err}");
    let json: serde_json::Value =
        serde_json::from_slice(&s.run(&["show", "1", "--json"]).stdout).unwrap();
    assert_eq!(json["status"], "interrupted");
    let samples = json["phases"][0]["result"]["samples"]
        .as_array()
        .unwrap()
        .len();
    assert!(samples >= 2, "{samples} interval(s) kept");
}

/// `child`'s output once it ends, or none when it is still running `limit` after `since` (it is
/// then killed): a replay that hangs fails its test instead of holding it.
fn output_within(
    child: std::process::Child,
    since: std::time::Instant,
    limit: std::time::Duration,
) -> Option<std::process::Output> {
    let pid = child.id() as i32;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output()));
    match rx.recv_timeout(limit.saturating_sub(since.elapsed())) {
        Ok(out) => Some(out.unwrap()),
        Err(_) => {
            // SAFETY: kill(2) takes plain integers; the pid is this test's own child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            None
        }
    }
}

/// A private sandbox of `s`'s lab (these tests change or stop their server): its socket and
/// pid, and a client for it.
struct Private {
    socket: String,
    pid: i32,
}

impl Private {
    fn start(s: &Scratch, name: &str) -> Private {
        let o = s.run(&["server", "start", name, "--json"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let info: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        let p = Private {
            socket: info["socket"].as_str().unwrap().to_string(),
            pid: info["pid"].as_i64().unwrap() as i32,
        };
        p.sql(
            "CREATE DATABASE replaycli; CREATE TABLE replaycli.t (id INT PRIMARY KEY, v INT); \
             INSERT INTO replaycli.t VALUES (1, 0)",
        );
        p
    }

    fn sql(&self, query: &str) -> String {
        let o = std::process::Command::new("mariadb")
            .args(["--socket", &self.socket, "-uroot", "-N", "-B", "-e", query])
            .output()
            .expect("mariadb client");
        assert!(o.status.success(), "{query}: {}", stderr(&o));
        stdout(&o)
    }

    /// What the hostile statements would change: max_connections, root's password hash, the
    /// BLACKHOLE plugin, the `evil` account, the database.
    fn state(&self) -> String {
        self.sql(
            "SELECT @@global.max_connections, \
             (SELECT Password FROM mysql.user WHERE User = 'root' AND Host = 'localhost'), \
             (SELECT count(*) FROM information_schema.plugins WHERE plugin_name = 'BLACKHOLE'), \
             (SELECT count(*) FROM mysql.user WHERE User = 'evil'), \
             (SELECT count(*) FROM information_schema.schemata WHERE schema_name = 'replaycli')",
        )
    }
}

/// Issue 25: a log of statements that change or stop the server, replayed read-only and in the
/// default mode, leaves the server up and unchanged, and says what it skipped and why.
#[test]
fn hostile_statements_never_run_and_each_skipped_class_is_named() {
    let s = Scratch::new();
    let server = Private::start(&s, "hostile");
    let hostile = [
        "SET GLOBAL max_connections=11",
        "SET PASSWORD FOR root@localhost = PASSWORD('pwned')",
        "INSTALL SONAME 'ha_blackhole'",
        "FLUSH TABLES",
        "CREATE USER 'evil'@'%' IDENTIFIED BY 'x'",
        "DROP DATABASE replaycli",
        "/*!50000 SHUTDOWN */",
    ];
    let mut entries = vec![(1, 0, "SELECT v FROM t WHERE id = 1".to_string())];
    entries.extend(hostile.iter().map(|q| (1, 0, q.to_string())));
    entries.push((1, 0, "UPDATE t SET v = v + 1 WHERE id = 1".into()));
    let log = slow_log(s.path(), "hostile.log", &entries);
    let before = server.state();
    for (extra, updated) in [
        (&["--read-only", "--mode", "max"][..], "0"),
        (&["--speed", "0"][..], "1"),
    ] {
        let mut args = vec!["replay", log.to_str().unwrap(), "--sandbox", "hostile"];
        args.extend_from_slice(extra);
        let child = s
            .cmd(&args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let limit = std::time::Duration::from_secs(60);
        let o = output_within(child, std::time::Instant::now(), limit)
            .unwrap_or_else(|| panic!("{extra:?}: the replay still ran after 60 s"));
        let (out, err) = (stdout(&o), stderr(&o));
        assert!(o.status.success(), "{extra:?}: {err}");
        assert_eq!(server.state(), before, "{extra:?}: {out}");
        assert_eq!(server.sql("SELECT v FROM replaycli.t").trim(), updated);
        // Every hostile class is named before the replay and after its summary, with why.
        for word in [
            "set global",
            "set password",
            "install",
            "flush",
            "create user",
        ] {
            let line = |text: &str| {
                text.lines()
                    .find(|l| l.starts_with("skipping ") && l.contains(word))
                    .map(str::to_string)
            };
            let named = line(&err).unwrap_or_else(|| panic!("{word}: {err}"));
            assert!(named.contains("--allow-admin"), "{named}");
        }
        assert!(
            err.lines()
                .any(|l| l.contains("drop database") && l.contains("--allow-destructive")),
            "{err}"
        );
        assert!(err.lines().any(|l| l.contains("shutdown")), "{err}");
        let skipped = out.lines().filter(|l| l.starts_with("skipped c")).count();
        let want = hostile.len() + usize::from(updated == "0");
        assert_eq!(skipped, want, "{out}");
    }
    let json: serde_json::Value =
        serde_json::from_slice(&s.run(&["show", "2", "--json"]).stdout).unwrap();
    let classes = json["phases"][0]["result"]["replay"]["classes"]
        .as_array()
        .unwrap()
        .clone();
    let shutdown = classes
        .iter()
        .find(|c| c["fingerprint"].as_str().unwrap().contains("shutdown"))
        .unwrap();
    assert_eq!(shutdown["skipped"], 1, "{shutdown}");
    assert!(
        shutdown["skip_reason"]
            .as_str()
            .unwrap()
            .contains("stops the server"),
        "{shutdown}"
    );
    let _ = s.run(&["server", "stop", "hostile"]);
}

/// Issue 25: the server killed mid-replay. The replay reconnects with backoff, gives up after
/// the reconnection limit (30 s), exits 1, and the stored run's errors agree with its samples.
#[test]
fn a_server_gone_mid_replay_ends_it_on_time_with_the_errors_stored() {
    let s = Scratch::new();
    let server = Private::start(&s, "gone");
    let entries: Vec<(u64, i64, String)> = (0..10)
        .map(|i| (1, i, format!("SELECT v FROM t WHERE id = {i}")))
        .collect();
    let log = slow_log(s.path(), "long.log", &entries);
    let child = s
        .cmd(&["replay", log.to_str().unwrap(), "--sandbox", "gone"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2500));
    // SAFETY: kill(2) takes plain integers; the pid is this test's own sandbox server.
    assert_eq!(unsafe { libc::kill(server.pid, libc::SIGKILL) }, 0);
    let killed = std::time::Instant::now();
    // Waits at most 60 s; a replay that hangs is killed and fails the test.
    let out = output_within(child, killed, std::time::Duration::from_secs(60))
        .expect("the replay still ran 60 s after its server was killed");
    let took = killed.elapsed().as_secs_f64();
    let (text, err) = (stdout(&out), stderr(&out));
    assert!(took < 36.0, "ended {took:.1} s after the kill: {err}");
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("could not reconnect"), "{err}");
    let json: serde_json::Value =
        serde_json::from_slice(&s.run(&["show", "1", "--json"]).stdout).unwrap();
    assert_eq!(json["status"], "failed", "{json}");
    let result = &json["phases"][0]["result"];
    let in_samples: u64 = result["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["errors"].as_u64().unwrap())
        .sum();
    let in_phase: u64 = result["errors"]
        .as_object()
        .unwrap()
        .values()
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert!(in_phase > 1, "{result}");
    assert_eq!(in_samples, in_phase, "{result}");
    // The live lines said the same.
    let live: u64 = text
        .lines()
        .filter_map(|l| l.split(" err: ").nth(1))
        .map(|r| r.split(' ').next().unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(live, in_phase, "{text}");
    let shown = stdout(&s.run(&["show", "1"]));
    assert!(shown.contains("2013"), "{shown}");
}
