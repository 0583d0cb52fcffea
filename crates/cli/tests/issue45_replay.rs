//! Issue 45, replay and diff: the server's barriers do not depend on what the session may undo
//! (`--grant-execute` grants EXECUTE only on SQL SECURITY INVOKER routines, so the server
//! refuses a DEFINER routine whatever the session's transaction mode), nothing is left running
//! on the server after qpslab gives up on a statement (its read timeout, diff's statement
//! timeout, SIGTERM, kill -9 then `restore`), `restore` names the command that left an account,
//! and results of any size are streamed: replay and diff end in bounded memory.

mod common;

use common::replay::{self, output_within, text_entries, Private};
use common::*;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The statement each give-up path abandons.
const SLEEPER: &str = "SELECT SLEEP(600)";

/// A MariaDB 10.11 slow log of `(thread, second, sql)` entries in database `g45`.
fn slow_log(dir: &Path, name: &str, entries: &[(u64, i64, &str)]) -> PathBuf {
    replay::slow_log(dir, name, "g45", &text_entries(entries))
}

/// A private sandbox with table `g45.t` of 3 rows, a DEFINER function that deletes them and
/// an INVOKER function that reads them.
fn server(s: &Scratch, name: &str) -> Private {
    Private::start(
        s,
        name,
        "g45",
        &[
            "CREATE FUNCTION g45.f_del() RETURNS INT MODIFIES SQL DATA SQL SECURITY DEFINER \
             BEGIN DELETE FROM g45.t; RETURN 1; END",
            "CREATE FUNCTION g45.f_read() RETURNS INT READS SQL DATA SQL SECURITY INVOKER \
             BEGIN RETURN (SELECT COUNT(*) FROM g45.t); END",
        ],
    )
}

impl Private {
    /// The sessions running the sleeper (any account).
    fn sleepers(&self) -> usize {
        self.sql(&format!(
            "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO = '{SLEEPER}'"
        ))
        .trim()
        .parse()
        .unwrap()
    }

    /// Waits (60 s at most) until the sleeper runs.
    fn until_sleeping(&self) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while self.sleepers() == 0 {
            assert!(Instant::now() < deadline, "the sleeper never ran");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Asserts that no sleeper runs, polling a few seconds (the kill is asked for before the
    /// command exits; a busy machine may take a moment to show it gone).
    fn assert_nothing_left(&self, path: &str) {
        let deadline = Instant::now() + Duration::from_secs(5);
        while self.sleepers() > 0 {
            assert!(
                Instant::now() < deadline,
                "{path}: still running: {}",
                self.sql("SELECT ID, USER, TIME, INFO FROM information_schema.PROCESSLIST")
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

fn spawn(s: &Scratch, args: &[&str]) -> Child {
    s.cmd(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn signal(child: &Child, sig: i32) {
    // SAFETY: kill(2) takes plain integers; the pid is this test's own child.
    assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
}

#[test]
fn the_server_refuses_definer_routines_under_grant_execute() {
    let s = Scratch::new();
    let server = server(&s, "definer");
    let o = Command::new("mariadb")
        .args(["--socket", &server.socket, "-uroot", "--delimiter=//", "-e"])
        .arg(
            "CREATE FUNCTION g45.f_peek() RETURNS INT READS SQL DATA SQL SECURITY DEFINER \
             BEGIN RETURN (SELECT COUNT(*) FROM g45.t); END",
        )
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    // A DEFINER view runs the DEFINER function with its definer's rights too.
    server.sql(
        "CREATE SQL SECURITY DEFINER VIEW g45.v_del AS SELECT g45.f_del() AS x; \
         CREATE SQL SECURITY INVOKER VIEW g45.v_read AS SELECT id FROM g45.t",
    );
    let hold = "SELECT SLEEP(5)";
    let log = slow_log(
        s.path(),
        "calls.log",
        &[
            (1, 0, "SELECT f_read()"),
            (1, 0, "SELECT f_peek()"),
            // Whether or not the classifier lets the session undo its read-only transaction,
            // the server refuses the DEFINER functions for want of EXECUTE.
            (1, 0, "SET SESSION TRANSACTION READ WRITE"),
            (1, 0, "SELECT f_del()"),
            (1, 0, "SELECT x FROM v_del"),
            (1, 0, "SELECT id FROM v_read"),
            (1, 0, hold),
        ],
    );
    let child = spawn(
        &s,
        &[
            "replay",
            log.to_str().unwrap(),
            "--sandbox",
            "definer",
            "--read-only",
            "--grant-execute",
            "--speed",
            "0",
        ],
    );
    // While the account runs its last statement: EXECUTE on the INVOKER function alone, none
    // on the database.
    let deadline = Instant::now() + Duration::from_secs(60);
    let running = format!(
        "SELECT COUNT(*) FROM information_schema.PROCESSLIST \
         WHERE USER LIKE 'qpslab\\_ro\\_%' AND INFO = '{hold}'"
    );
    while server.sql(&running).trim() != "1" {
        assert!(
            Instant::now() < deadline,
            "the replay never reached its end"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let routines = server.sql(
        "SELECT DISTINCT Db, Routine_name, Routine_type, Proc_priv FROM mysql.procs_priv \
         WHERE User LIKE 'qpslab\\_ro\\_%'",
    );
    assert_eq!(
        routines.trim(),
        "g45\tf_read\tFUNCTION\tExecute",
        "{routines}"
    );
    let db_execute = server.sql(
        "SELECT COUNT(*) FROM mysql.db WHERE User LIKE 'qpslab\\_ro\\_%' AND Execute_priv = 'Y'",
    );
    assert_eq!(db_execute.trim(), "0");
    let tables = server.sql(
        "SELECT GROUP_CONCAT(DISTINCT Table_name ORDER BY Table_name) FROM mysql.tables_priv \
         WHERE User LIKE 'qpslab\\_ro\\_%'",
    );
    assert_eq!(tables.trim(), "t,v_read", "{tables}");
    let o = output_within(child, Duration::from_secs(90));
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("EXECUTE on 1 SQL SECURITY INVOKER routine(s)"),
        "{err}"
    );
    assert!(
        err.contains("2 table(s) and view(s) of `g45` (1 SQL SECURITY DEFINER view(s) left out"),
        "{err}"
    );
    assert_eq!(server.sql("SELECT count(*) FROM g45.t").trim(), "3");
    let class = |sql: &str| {
        out.lines()
            .find(|l| l.ends_with(sql))
            .and_then(|l| l.split_whitespace().next())
            .unwrap_or_else(|| panic!("{sql}: {out}"))
            .to_string()
    };
    let skipped = |c: &str| {
        out.lines()
            .find(|l| l.starts_with(&format!("skipped {c} ")))
            .map(str::to_string)
    };
    // A DEFINER function that only reads is refused for want of EXECUTE, with why; one that
    // writes, by the read-only transaction first (MariaDB checks it before the privilege).
    let peek = skipped(&class("select f_peek()")).unwrap_or_else(|| panic!("{out}"));
    assert!(peek.contains("refused by the server: 1370"), "{peek}");
    assert!(peek.contains("definer's rights"), "{peek}");
    let del = skipped(&class("select f_del()")).unwrap_or_else(|| panic!("{out}"));
    assert!(
        del.contains("refused by the server: 1370") || del.contains("refused by the server: 1792"),
        "{del}"
    );
    // The DEFINER view is refused by the server for want of SELECT on it, whatever the
    // transaction; the INVOKER function and view ran, with the account's read privileges.
    let view = skipped(&class("select x from v_del")).unwrap_or_else(|| panic!("{out}"));
    assert!(view.contains("refused by the server: 1142"), "{view}");
    assert_eq!(skipped(&class("select f_read()")), None, "{out}");
    assert_eq!(skipped(&class("select id from v_read")), None, "{out}");
    assert_eq!(server.replay_accounts(), "0");
}

#[test]
fn a_replay_that_gives_up_leaves_nothing_running() {
    let s = Scratch::new();
    let server = server(&s, "giveup");
    let log = slow_log(s.path(), "sleep.log", &[(1, 0, SLEEPER)]);
    let replay = |extra: &[&str]| {
        let mut args = vec![
            "replay",
            log.to_str().unwrap(),
            "--sandbox",
            "giveup",
            "--speed",
            "0",
        ];
        args.extend_from_slice(extra);
        spawn(&s, &args)
    };

    // The read timeout: the statement is counted as failed, and killed.
    let o = output_within(replay(&["--read-timeout", "2"]), Duration::from_secs(90));
    assert!(o.status.code().is_some(), "{}", stderr(&o));
    server.assert_nothing_left("--read-timeout");

    // SIGTERM while it sleeps.
    let child = replay(&["--read-only"]);
    server.until_sleeping();
    signal(&child, libc::SIGTERM);
    let o = output_within(child, Duration::from_secs(60));
    assert_ne!(o.status.code(), Some(0), "{}", stderr(&o));
    server.assert_nothing_left("SIGTERM");
    assert_eq!(server.replay_accounts(), "0");

    // kill -9, then restore: the account's sessions are killed before it is dropped.
    let mut child = replay(&["--read-only"]);
    server.until_sleeping();
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(server.sleepers(), 1, "the sleeper outlives a kill -9");
    let o = s.run(&["restore", "--sandbox", "giveup"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("left by `replay --read-only`"),
        "{}",
        stdout(&o)
    );
    server.assert_nothing_left("kill -9 and restore");
    assert_eq!(server.replay_accounts(), "0");

    // kill -9 without an account to restore: the server's own limit (the read timeout) ends
    // the statement.
    let mut child = replay(&["--read-timeout", "3"]);
    server.until_sleeping();
    child.kill().unwrap();
    child.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while server.sleepers() > 0 {
        assert!(Instant::now() < deadline, "no server-side limit");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_diff_that_gives_up_leaves_nothing_running_and_restore_names_it() {
    let s = Scratch::new();
    let server = server(&s, "dgive");
    server.sql("CREATE DATABASE g45b; CREATE TABLE g45b.t LIKE g45.t");
    let log = slow_log(s.path(), "sleep.log", &[(1, 0, SLEEPER)]);
    let diff = |extra: &[&str]| {
        let mut args = vec![
            "diff",
            log.to_str().unwrap(),
            "--a",
            "dgive/g45",
            "--b",
            "dgive/g45b",
            "--repeats",
            "2",
        ];
        args.extend_from_slice(extra);
        spawn(&s, &args)
    };

    // The statement timeout: the diff stops (a runtime failure) and the statement is killed.
    let o = output_within(diff(&["--statement-timeout", "2"]), Duration::from_secs(90));
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("--statement-timeout"), "{err}");
    server.assert_nothing_left("diff --statement-timeout");
    assert_eq!(server.replay_accounts(), "0");

    // SIGTERM while it sleeps.
    let child = diff(&[]);
    server.until_sleeping();
    signal(&child, libc::SIGTERM);
    let o = output_within(child, Duration::from_secs(60));
    assert_ne!(o.status.code(), Some(0), "{}", stderr(&o));
    server.assert_nothing_left("diff SIGTERM");
    assert_eq!(server.replay_accounts(), "0");

    // kill -9, then restore: it names the diff, and ends the account's sessions.
    let mut child = diff(&[]);
    server.until_sleeping();
    child.kill().unwrap();
    child.wait().unwrap();
    let o = s.run(&["restore", "--sandbox", "dgive"]);
    let out = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(out.contains("left by `diff`"), "{out}");
    server.assert_nothing_left("diff kill -9 and restore");
    assert_eq!(server.replay_accounts(), "0");
}

/// Runs `qpslab ARGS` under an address-space limit of `limit` bytes (setrlimit RLIMIT_AS).
fn capped(s: &Scratch, args: &[&str], limit: u64) -> Child {
    use std::os::unix::process::CommandExt;
    let mut c = s.cmd(args);
    // SAFETY: setrlimit is async-signal-safe; the closure touches nothing else.
    unsafe {
        c.pre_exec(move || {
            let l = libc::rlimit {
                rlim_cur: limit,
                rlim_max: limit,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &l) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    c.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// A result several times larger than the address space the command may use is replayed and
/// diffed without keeping it: both end with an exit code, never an abort, and leave no account.
#[test]
fn results_larger_than_memory_are_streamed() {
    let s = Scratch::new();
    let server = server(&s, "big");
    server.sql("CREATE DATABASE g45b");
    // 600,000 rows of 1 KiB: about 620 MB on the wire, more than the command may map.
    let big = "SELECT seq, REPEAT('x', 1024) FROM seq_1_to_600000";
    let log = slow_log(s.path(), "big.log", &[(1, 0, big)]);
    let limit = 512 << 20;
    let o = output_within(
        capped(
            &s,
            &[
                "replay",
                log.to_str().unwrap(),
                "--sandbox",
                "big",
                "--read-only",
                "--speed",
                "0",
            ],
            limit,
        ),
        Duration::from_secs(300),
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(stdout(&o).contains("queries performed"), "{}", stdout(&o));
    let o = output_within(
        capped(
            &s,
            &[
                "diff",
                log.to_str().unwrap(),
                "--a",
                "big/g45",
                "--b",
                "big/g45b",
                "--repeats",
                "2",
                "--sample",
                "1",
            ],
            limit,
        ),
        Duration::from_secs(600),
    );
    let (out, err) = (stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("class 1/1"), "{err}");
    assert!(!out.is_empty());
    assert_eq!(server.replay_accounts(), "0");
}
