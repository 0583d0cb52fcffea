//! Issue 34: a replay's safety enforced by the server, on private sandboxes. Under
//! `--read-only` the log runs as an account that only reads, created for the replay and dropped
//! after it (by `qpslab restore` after a kill -9), in read-only transactions: hostile statements
//! leave the rows and the server as they were, and a statement the classifier lets through is
//! refused by the server and counted as skipped. Logged connections sharing one of our sessions
//! see none of each other's state, no prepared XA transaction outlives the replay, and a replay
//! whose server went away (its own SHUTDOWN) exits 1.

mod common;

use common::replay::{self, output_within, text_entries, Private};
use common::*;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A MariaDB 10.11 slow log of `(thread, second, sql)` entries in database `safety`.
fn slow_log(dir: &Path, name: &str, entries: &[(u64, i64, &str)]) -> PathBuf {
    replay::slow_log(dir, name, "safety", &text_entries(entries))
}

/// A private sandbox of `s`'s lab with table `safety.t` of 3 rows and a function that deletes
/// (a compound body: the client must not split it at its `;`).
fn private(s: &Scratch, name: &str) -> Private {
    Private::start(
        s,
        name,
        "safety",
        &[
            "CREATE FUNCTION safety.f_del() RETURNS INT MODIFIES SQL DATA \
           BEGIN DELETE FROM safety.t; RETURN 1; END",
        ],
    )
}

impl Private {
    /// A client session kept open (its statements written to the stdin returned), holding the
    /// user lock `gate` once this returns: a replay statement waiting for `gate` keeps the
    /// replay running until the test writes `DO RELEASE_LOCK(...)`.
    fn hold_gate(&self, gate: &str) -> (std::process::Child, std::process::ChildStdin) {
        use std::io::Write;
        let mut client = std::process::Command::new("mariadb")
            .args(["--socket", &self.socket, "-uroot", "-N", "-B"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("mariadb client");
        let mut input = client.stdin.take().unwrap();
        writeln!(input, "DO GET_LOCK('{gate}', 0);").unwrap();
        input.flush().unwrap();
        self.until(
            "the gate",
            &format!("SELECT IS_USED_LOCK('{gate}') IS NOT NULL"),
            &|r| r.trim() == "1",
        );
        (client, input)
    }

    /// Waits (60 s at most) until `query`'s output satisfies `done`.
    fn until(&self, what: &str, query: &str, done: &dyn Fn(&str) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !done(&self.sql(query)) {
            assert!(Instant::now() < deadline, "waited 60 s for {what}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

fn replay(s: &Scratch, sandbox: &str, log: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["replay", log.to_str().unwrap(), "--sandbox", sandbox];
    args.extend_from_slice(extra);
    let child = s
        .cmd(&args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    output_within(child, Duration::from_secs(90))
}

#[test]
fn read_only_is_enforced_by_the_server_and_no_state_outlives_a_replay() {
    let s = Scratch::new();
    let server = private(&s, "safety");
    // Issue 34 items 1 and 2, and a call the classifier reads as a plain SELECT.
    let hostile = [
        "/*!999999 EXPLAIN */ DELETE FROM t",
        "/*M!999999 EXPLAIN */ UPDATE t SET v=0",
        "/*!50700 EXPLAIN */\nDELETE\nFROM t",
        "PREPARE s FROM REPLACE('SELECT 1 FROM t', 'SELECT 1', 'DELETE')",
        "EXECUTE s",
        "SET @@global.`max_connections`=13",
        "SELECT f_del()",
        "XA START 'ro1'",
        "XA END 'ro1'",
        "XA PREPARE 'ro1'",
        "/*!999999 EXPLAIN */ SHUTDOWN",
    ];
    let mut entries = vec![(1, 0, "SELECT v FROM t WHERE id = 1")];
    entries.extend(hostile.iter().map(|q| (1, 0, *q)));
    let log = slow_log(s.path(), "hostile.log", &entries);
    let connections = server.sql("SELECT @@max_connections");
    let o = replay(&s, "safety", &log, &["--read-only", "--speed", "0"]);
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(o.status.success(), "{err}");
    assert!(err.contains("read-only: replaying as qpslab_ro_"), "{err}");
    assert_eq!(server.sql("SELECT count(*) FROM safety.t").trim(), "3");
    assert_eq!(server.sql("SELECT @@max_connections"), connections);
    assert_eq!(server.sql("XA RECOVER").trim(), "", "{err}");
    assert_eq!(server.replay_accounts(), "0");
    // The function call ran as far as the server, which refused it: skipped, with why.
    let class = out
        .lines()
        .find(|l| l.ends_with("select f_del()"))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("{out}"));
    let call = out
        .lines()
        .find(|l| l.starts_with(&format!("skipped {class} ")))
        .unwrap_or_else(|| panic!("{out}"));
    // 1792 (read-only transaction) or 1370 (no EXECUTE): the first check the server makes.
    assert!(
        call.contains("refused by the server: 1792")
            || call.contains("refused by the server: 1370"),
        "{call}"
    );

    // Logged connections 1 and 2 never overlap: one session, reset between them. Connection
    // 2 sees no user variable, prepared statement or temporary table of connection 1, and
    // connection 2's prepared XA transaction is rolled back at the end.
    let state = [
        (1, 0, "SET @secret = 42"),
        (1, 0, "PREPARE ps FROM 'SELECT 1'"),
        (1, 0, "CREATE TEMPORARY TABLE tmp (a INT)"),
        (2, 1, "INSERT INTO t VALUES (100, @secret)"),
        (2, 1, "EXECUTE ps"),
        (2, 1, "SELECT * FROM tmp"),
        (2, 1, "XA START 'left1'"),
        (2, 1, "UPDATE t SET v = 5 WHERE id = 3"),
        (2, 1, "XA END 'left1'"),
        (2, 1, "XA PREPARE 'left1'"),
    ];
    let log = slow_log(s.path(), "state.log", &state);
    let o = replay(&s, "safety", &log, &["--allow-admin", "--speed", "0"]);
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(o.status.success(), "{err}");
    assert_eq!(
        server
            .sql("SELECT v IS NULL FROM safety.t WHERE id = 100")
            .trim(),
        "1",
        "{out}"
    );
    for (class, code) in [("execute ps", "1243"), ("from tmp", "1146")] {
        let line = out
            .lines()
            .find(|l| l.contains(class))
            .unwrap_or_else(|| panic!("{class}: {out}"));
        assert!(line.contains(&format!("{code}: 1")), "{line}");
    }
    assert_eq!(server.sql("XA RECOVER").trim(), "", "{err}");
    assert!(err.contains("rolled back XA transaction 'left1'"), "{err}");
    assert_eq!(
        server.sql("SELECT v FROM safety.t WHERE id = 3").trim(),
        "0"
    );
}

/// Issue 34 item 4 on a shared server: the replay rolls back the XA transactions it started,
/// never another client's prepared while it ran.
#[test]
fn another_clients_prepared_xa_outlives_the_replay() {
    use std::io::Write;
    let s = Scratch::new();
    let server = private(&s, "xa");
    // Another client holds a lock that the replay's connection 4 waits for, so the replay is
    // still running when that client prepares its own XA transaction.
    let (mut other, mut input) = server.hold_gate("xa_gate");
    // Connections 3 and 4 overlap: two sessions.
    let entries = [
        (3, 0, "XA START 'mine1'"),
        (4, 1, "SELECT GET_LOCK('xa_gate', 60)"),
        (3, 2, "XA END 'mine1'"),
        (3, 2, "XA PREPARE 'mine1'"),
    ];
    let log = slow_log(s.path(), "xa.log", &entries);
    let child = s
        .cmd(&[
            "replay",
            log.to_str().unwrap(),
            "--sandbox",
            "xa",
            "--speed",
            "0",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    server.until("the replay's XA PREPARE", "XA RECOVER", &|r| {
        r.contains("mine1")
    });
    input
        .write_all(
            b"XA START 'other1'; UPDATE safety.t SET v = 7 WHERE id = 2; XA END 'other1'; XA PREPARE 'other1'; \
              DO RELEASE_LOCK('xa_gate');\n",
        )
        .unwrap();
    drop(input);
    assert!(other.wait().unwrap().success());
    let o = output_within(child, Duration::from_secs(90));
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("rolled back XA transaction 'mine1'"), "{err}");
    assert!(!err.contains("other1"), "{err}");
    let left = server.sql("XA RECOVER");
    assert!(left.contains("other1") && !left.contains("mine1"), "{left}");
    server.sql("XA ROLLBACK 'other1'");
}

#[test]
fn a_replay_killed_leaves_its_account_to_restore() {
    let s = Scratch::new();
    let server = private(&s, "killed");
    let entries: Vec<(u64, i64, String)> = (0..30)
        .map(|i| (1, i, format!("SELECT v FROM t WHERE id = {i}")))
        .collect();
    let entries: Vec<(u64, i64, &str)> = entries
        .iter()
        .map(|(c, t, q)| (*c, *t, q.as_str()))
        .collect();
    let log = slow_log(s.path(), "long.log", &entries);
    let mut child = s
        .cmd(&[
            "replay",
            log.to_str().unwrap(),
            "--sandbox",
            "killed",
            "--read-only",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let since = Instant::now();
    while server.replay_accounts() == "0" {
        assert!(
            since.elapsed() < Duration::from_secs(30),
            "no replay account"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_ne!(server.replay_accounts(), "0");
    let o = s.run(&["restore", "--sandbox", "killed"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("DROP USER IF EXISTS 'qpslab_ro_"),
        "{}",
        stdout(&o)
    );
    assert_eq!(server.replay_accounts(), "0");

    // An account that may not create users but can write is refused (exit 2), its writing
    // grant named, unless the user trusts it.
    server.sql(
        "CREATE USER 'w'@'localhost' IDENTIFIED BY 'pw'; \
         GRANT SELECT, INSERT ON safety.* TO 'w'@'localhost'",
    );
    let short = slow_log(s.path(), "short.log", &entries[..1]);
    for (extra, code) in [(None, 2), (Some("--trust-account"), 0)] {
        let mut args = vec![
            "replay",
            short.to_str().unwrap(),
            "--socket",
            &server.socket,
            "-u",
            "w",
            "--read-only",
        ];
        args.extend(extra);
        let o = s.cmd(&args).env("MYSQL_PWD", "pw").output().unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(code), "{extra:?}: {err}");
        if code == 2 {
            assert_user_error(&o, "GRANT SELECT, INSERT ON `safety`.*");
            assert!(err.contains("--trust-account"), "{err}");
        }
    }
}

#[test]
fn a_replay_that_shuts_its_server_down_exits_1() {
    let s = Scratch::new();
    let _server = private(&s, "down");
    let entries = [(1, 0, "SELECT v FROM t WHERE id = 1"), (1, 0, "SHUTDOWN")];
    let log = slow_log(s.path(), "down.log", &entries);
    let o = replay(&s, "down", &log, &["--allow-admin", "--speed", "0"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("went away"), "{err}");
    assert_eq!(
        err.lines().filter(|l| l.contains("error")).count(),
        1,
        "{err}"
    );
    let json: serde_json::Value =
        serde_json::from_slice(&s.run(&["show", "1", "--json"]).stdout).unwrap();
    assert_eq!(json["status"], "failed", "{json}");
}

/// A read-only replay's account has a record of its own in the restore trail: while one replay
/// runs, a second read-only replay and a `capture` (which changes logging settings) on the same
/// server go on, and neither waits for the other.
#[test]
fn a_read_only_replay_blocks_neither_another_nor_a_capture() {
    use std::io::Write;
    let s = Scratch::new();
    let server = private(&s, "side");
    // The test holds a lock that the first replay waits for, so it is running meanwhile.
    let (mut gate, mut input) = server.hold_gate("ro_gate");
    let held = slow_log(
        s.path(),
        "held.log",
        &[(5, 0, "SELECT GET_LOCK('ro_gate', 60)")],
    );
    let first = s
        .cmd(&[
            "replay",
            held.to_str().unwrap(),
            "--sandbox",
            "side",
            "--read-only",
            "--speed",
            "0",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    server.until(
        "the first replay to wait at the gate",
        "SELECT COUNT(*) FROM information_schema.PROCESSLIST \
         WHERE USER LIKE 'qpslab\\_ro\\_%' AND INFO LIKE '%ro_gate%'",
        &|r| r.trim() == "1",
    );
    let plain = slow_log(s.path(), "plain.log", &[(6, 0, "SELECT COUNT(*) FROM t")]);
    let second = replay(&s, "side", &plain, &["--read-only", "--speed", "0"]);
    assert!(second.status.success(), "{}", stderr(&second));
    let out = s.path().join("side.log");
    let capture = s.run(&[
        "capture",
        "--sandbox",
        "side",
        "--time",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(capture.status.success(), "{}", stderr(&capture));
    input.write_all(b"DO RELEASE_LOCK('ro_gate');\n").unwrap();
    drop(input);
    assert!(gate.wait().unwrap().success());
    let first = output_within(first, Duration::from_secs(90));
    assert!(first.status.success(), "{}", stderr(&first));
    let left = server.sql("SELECT COUNT(*) FROM mysql.user WHERE User LIKE 'qpslab\\_ro\\_%'");
    assert_eq!(left.trim(), "0");
}
