//! Settings left changed by a process killed with `kill -9` (issue 25, item 8): `run --at` and
//! `tune` record the original values before their first change and print the statement that
//! restores them; the next `run` or `tune` against the server refuses with that statement,
//! `advise` warns, and `qpslab restore` puts the values back and clears the record.

mod common;
use common::*;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

const DATASET: &[&str] = &[
    "oltp_point_select",
    "--tables",
    "1",
    "--table-size",
    "1000",
    "--settle",
    "off",
];

/// Starts sandbox `name` with its small dataset loaded.
fn sandbox(s: &Scratch, name: &str) {
    let o = s.run(&["server", "start", name]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut args = vec!["prepare"];
    args.extend_from_slice(&DATASET[..5]);
    args.extend_from_slice(&["--sandbox", name]);
    let o = s.run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// `qpslab ARGS` started in the background, its stderr kept.
fn spawn(s: &Scratch, args: &[&str]) -> Child {
    s.cmd(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start qpslab")
}

/// Waits (at most 120 s) until `sql` on sandbox `name` gives something other than `was`,
/// then kills `child` with SIGKILL; returns its stderr.
fn kill_once_changed(s: &Scratch, name: &str, sql: &str, was: &str, mut child: Child) -> String {
    let started = Instant::now();
    while sandbox_sql(s, name, sql) == was {
        if started.elapsed() > Duration::from_secs(120) || child.try_wait().unwrap().is_some() {
            let _ = child.kill();
            let o = child.wait_with_output().unwrap();
            panic!("{sql} never changed: {}", stderr(&o));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    child.kill().unwrap();
    stderr(&child.wait_with_output().unwrap())
}

fn short_run(s: &Scratch, name: &str) -> std::process::Output {
    let mut args = vec!["run"];
    args.extend_from_slice(DATASET);
    args.extend_from_slice(&["--sandbox", name, "--time", "1", "--warmup", "0"]);
    s.run(&args)
}

/// What every command says of the killed process's leftovers, then `restore` puts them back.
fn leftovers_are_refused_then_restored(s: &Scratch, name: &str, sql: &str, was: &str) {
    let line = format!("SET GLOBAL {}={was}", &sql[9..]);
    let o = short_run(s, name);
    assert_user_error(&o, &line);
    assert!(
        stderr(&o).contains(&format!("qpslab restore --sandbox {name}")),
        "{}",
        stderr(&o)
    );
    assert_ne!(sandbox_sql(s, name, sql), was, "refusing changes nothing");
    let o = s.run(&["advise", "--sandbox", name]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("warning:") && stderr(&o).contains(&line),
        "{}",
        stderr(&o)
    );
    let o = s.run(&["restore", "--sandbox", name]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("restored"), "{}", stdout(&o));
    assert_eq!(sandbox_sql(s, name, sql), was);
    // A run that changes a setting and ends normally puts it back and leaves no record.
    let mut args = vec!["run"];
    args.extend_from_slice(DATASET);
    args.extend_from_slice(&["--sandbox", name, "--time", "2", "--warmup", "0"]);
    args.extend_from_slice(&["--at", "0s:set table_open_cache=77"]);
    let o = s.run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("restore the server with"),
        "{}",
        stderr(&o)
    );
    assert_eq!(sandbox_sql(s, name, sql), was);
    let records = std::fs::read_dir(s.lab().join("restore")).unwrap();
    assert!(
        !records
            .flatten()
            .any(|e| e.path().extension().is_some_and(|x| x == "json")),
        "a finished run leaves no record"
    );
    let o = s.run(&["restore", "--sandbox", name]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("nothing to restore"), "{}", stdout(&o));
}

#[test]
fn a_run_at_killed_mid_change_is_refused_until_restored() {
    let s = Scratch::new();
    sandbox(&s, "killed");
    let sql = "SELECT @@table_open_cache";
    let was = sandbox_sql(&s, "killed", sql);
    let mut args = vec!["run"];
    args.extend_from_slice(DATASET);
    args.extend_from_slice(&[
        "--sandbox",
        "killed",
        "--time",
        "60",
        "--warmup",
        "0",
        "--at",
        "1s:set table_open_cache=123",
    ]);
    let err = kill_once_changed(&s, "killed", sql, &was, spawn(&s, &args));
    assert!(
        err.contains(&format!(
            "restore the server with:\n  SET GLOBAL table_open_cache={was};"
        )),
        "{err}"
    );
    leftovers_are_refused_then_restored(&s, "killed", sql, &was);
    // Ctrl-C still restores and clears the record.
    let child = spawn(&s, &args);
    let pid = child.id() as i32;
    let started = Instant::now();
    while sandbox_sql(&s, "killed", sql) == was {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "never changed"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // SAFETY: a signal to the child this test started.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let o = child.wait_with_output().unwrap();
    assert!(
        stderr(&o).contains("restored table_open_cache"),
        "{}",
        stderr(&o)
    );
    assert_eq!(sandbox_sql(&s, "killed", sql), was);
    let o = short_run(&s, "killed");
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn a_tune_killed_mid_change_is_refused_by_the_next_tune_until_restored() {
    let s = Scratch::new();
    sandbox(&s, "tuned");
    let sql = "SELECT @@table_open_cache";
    let was = sandbox_sql(&s, "tuned", sql);
    let mut argv = vec!["tune"];
    argv.extend_from_slice(DATASET);
    argv.extend_from_slice(&[
        "--sandbox",
        "tuned",
        "--threads",
        "1",
        "--budget",
        "5m",
        "--trial-time",
        "2",
        "--knobs",
        "table_open_cache",
    ]);
    let err = kill_once_changed(&s, "tuned", sql, &was, spawn(&s, &argv));
    assert!(
        err.contains(&format!("SET GLOBAL table_open_cache={was};")),
        "{err}"
    );
    // The next tune would take the leftovers as its baseline: it refuses before measuring.
    let o = s.run(&argv);
    assert_user_error(&o, &format!("SET GLOBAL table_open_cache={was}"));
    assert!(!stderr(&o).contains("trial"), "{}", stderr(&o));
    leftovers_are_refused_then_restored(&s, "tuned", sql, &was);
}

#[test]
fn restore_with_nothing_to_restore_or_a_bad_target() {
    let s = Scratch::new();
    let o = s.run(&["restore"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("nothing to restore"), "{}", stdout(&o));
    let o = s.run(&["restore", "--sandbox", "nosuch"]);
    assert_user_error(&o, "nosuch");
    let o = s.run(&["restore", "--socket", "/nonexistent/mysql.sock"]);
    assert_user_error(&o, "/nonexistent/mysql.sock");
}

#[test]
fn a_study_cell_with_a_set_action_records_it_and_clears_the_record_at_its_end() {
    let s = Scratch::new();
    let spec = s.path().join("live.toml");
    std::fs::write(
        &spec,
        "name = \"livecell\"\n[defaults]\nworkload = \"oltp_point_select\"\ntables = 1\n\
         table_size = 500\ntime = 3\nwarmup = 0\nretries = 0\nsettle = \"off\"\n\
         at = [\"1s:set table_open_cache=321\"]\n[sweep]\nthreads = [1]\n",
    )
    .unwrap();
    let o = s.run(&["lab", "run", spec.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("restore the server with:\n  SET GLOBAL table_open_cache="),
        "{err}"
    );
    assert!(err.contains("restored table_open_cache="), "{err}");
    let records = std::fs::read_dir(s.lab().join("restore")).unwrap();
    assert!(
        !records
            .flatten()
            .any(|e| e.path().extension().is_some_and(|x| x == "json")),
        "a finished cell leaves no record"
    );
}

/// The restore trail of a command whose results store is a server's lives in that store
/// (issue 50): a `run --at` killed with -9 on "another host" (its record's holder given
/// another boot id by SQL) is seen by the next run on this one, as busy while that host's
/// lease lives and as a leftover once it has run out, and `qpslab restore --db` puts it back.
#[test]
fn issue_50_a_change_left_by_another_host_is_found_and_restored_through_a_server_store() {
    let s = Scratch::new();
    sandbox(&s, "shared");
    let url = format!(
        "mysql://root@localhost/trail_{}?socket={}",
        std::process::id(),
        socket()
    );
    let dsn: qpslab_core::Dsn = url.parse().unwrap();
    let sql = "SELECT @@table_open_cache";
    let was = sandbox_sql(&s, "shared", sql);
    let mut args = vec!["run"];
    args.extend_from_slice(DATASET);
    args.extend_from_slice(&["--sandbox", "shared", "--time", "60", "--warmup", "0"]);
    args.extend_from_slice(&["--at", "1s:set table_open_cache=123", "--db", &url]);
    let child = spawn(&s, &args);
    let pid = child.id();
    let err = kill_once_changed(&s, "shared", sql, &was, child);
    assert!(err.contains("restore the server with"), "{err}");
    // Nothing in the lab directory: the record is a row of the store.
    let files = std::fs::read_dir(s.lab().join("restore"))
        .map(|d| {
            d.flatten()
                .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
                .count()
        })
        .unwrap_or(0);
    assert_eq!(files, 0, "no record file");
    let mut c = qpslab_wire::Conn::connect(dsn.options()).unwrap();
    let mut value = |q: &str| {
        c.query(q)
            .unwrap()
            .first_value()
            .unwrap_or("NULL")
            .to_string()
    };
    assert_eq!(
        value("SELECT count(*) FROM restore_trail WHERE record_json IS NOT NULL"),
        "1"
    );
    // Its holder on another host (where its pid may well live), alive 10 s ago: a run here
    // waits for it.
    value(
        "UPDATE restore_trail SET owner_boot_id = 'another-host',
                heartbeat_at = UNIX_TIMESTAMP(NOW(6)) - 10",
    );
    let run = |extra: &[&str]| {
        let mut args = vec!["run"];
        args.extend_from_slice(DATASET);
        args.extend_from_slice(&["--sandbox", "shared", "--time", "1", "--warmup", "0"]);
        args.extend_from_slice(extra);
        s.run(&args)
    };
    let o = run(&["--db", &url]);
    assert_user_error(&o, &format!("(pid {pid}) is changing the settings"));
    // Its lease run out: the change is a leftover, refused with the statement and the command.
    value("UPDATE restore_trail SET heartbeat_at = UNIX_TIMESTAMP(NOW(6)) - 31");
    let o = run(&["--db", &url]);
    assert_user_error(&o, &format!("SET GLOBAL table_open_cache={was}"));
    assert!(
        stderr(&o).contains("qpslab restore --sandbox shared"),
        "{}",
        stderr(&o)
    );
    assert_ne!(
        sandbox_sql(&s, "shared", sql),
        was,
        "refusing changes nothing"
    );
    // Listed from the store without a server, then restored through it.
    let o = s.run(&["restore", "--db", &url]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("`run --at` (pid {pid})")),
        "{}",
        stderr(&o)
    );
    let o = s.run(&["restore", "--sandbox", "shared", "--db", &url]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("restored"), "{}", stdout(&o));
    assert_eq!(sandbox_sql(&s, "shared", sql), was);
    assert_eq!(value("SELECT count(*) FROM restore_trail"), "0");
    // A run changing a setting and ending normally leaves no row either.
    let o = run(&["--at", "0s:set table_open_cache=77", "--db", &url]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(sandbox_sql(&s, "shared", sql), was);
    assert_eq!(value("SELECT count(*) FROM restore_trail"), "0");
    // What this host recorded in its files (a run given a file store, killed) is still seen by
    // a run given the server store, and restored through it.
    let file_store = &args[..args.len() - 2];
    kill_once_changed(&s, "shared", sql, &was, spawn(&s, file_store));
    let o = run(&["--db", &url]);
    assert_user_error(&o, &format!("SET GLOBAL table_open_cache={was}"));
    let o = s.run(&["restore", "--sandbox", "shared", "--db", &url]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(sandbox_sql(&s, "shared", sql), was);
}
