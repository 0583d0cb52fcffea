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
    // The server of a named sandbox is measured too (its CPU comes from its pid).
    let store = qpslab_store::Store::open(&s.db()).unwrap();
    let run = store
        .load_run(store.latest_run_id().unwrap().unwrap())
        .unwrap();
    let server = run.phases[0]
        .telemetry
        .iter()
        .find_map(|t| t.server_proc())
        .expect("server CPU of the sandbox");
    assert!(server.user_s > 0.0, "{server:?}");
    drop(store);
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
    let o = s.run(&["server", "rm", "t1"]);
    assert!(o.status.success(), "{}", stderr(&o));
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

fn is_root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// The value of `field` in `/proc/PID/status`, e.g. the real uid of `Uid`.
fn status_first(pid: u32, field: &str) -> String {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with(&format!("{field}:")))
        .unwrap();
    line.split_whitespace().nth(1).unwrap().to_string()
}

#[test]
fn a_started_sandbox_is_closed_to_other_local_users() {
    let s = Scratch::new();
    let o = s.run(&["server", "start", "sec"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let client = s.lab().join("sandboxes/sec/client.cnf");
    assert!(
        out.contains(&format!("mariadb --defaults-file={}", client.display())),
        "{out}"
    );
    let password = std::fs::read_to_string(s.lab().join("sandboxes/sec/password")).unwrap();
    assert!(!out.contains(password.trim()), "start printed the password");
    let o = s.run(&["server", "list", "--json"]);
    assert!(!stdout(&o).contains(password.trim()));
    let info: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let (pid, port) = (
        info[0]["pid"].as_u64().unwrap() as u32,
        info[0]["port"].as_u64().unwrap(),
    );
    let socket = info[0]["socket"].as_str().unwrap().to_string();

    // The user's own client logs in with the option file start printed.
    let o = std::process::Command::new("mariadb")
        .arg(format!("--defaults-file={}", client.display()))
        .args(["-N", "-B", "-e", "SELECT CURRENT_USER()"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), "root@localhost");

    let sock_dir = std::path::Path::new(&socket)
        .parent()
        .unwrap()
        .to_path_buf();
    let ls = std::process::Command::new("ls")
        .arg("-ld")
        .arg(&sock_dir)
        .arg(&socket)
        .output()
        .unwrap();
    eprintln!("{}", stdout(&ls));
    use std::os::unix::fs::MetadataExt;
    assert_eq!(std::fs::metadata(&sock_dir).unwrap().mode() & 0o777, 0o700);

    if is_root() {
        assert_ne!(status_first(pid, "Uid"), "0", "the server runs as root");
        let outfile = format!("/tmp/qpslab-owned-{}", std::process::id());
        let tcp = format!(
            "mariadb -h127.0.0.1 -P{port} -uroot -e \"select 'x' into outfile '{outfile}'\""
        );
        let sock = format!("mariadb -S{socket} -uroot -e 'select 1'");
        for cmd in [tcp, sock] {
            let o = std::process::Command::new("su")
                .args(["nobody", "-s", "/bin/sh", "-c", &cmd])
                .current_dir("/")
                .output()
                .unwrap();
            assert!(!o.status.success(), "{cmd}: {}", stdout(&o));
            let err = stderr(&o);
            assert!(
                err.contains("Access denied") || err.contains("(13"),
                "{cmd}: {err}"
            );
        }
        assert!(!std::path::Path::new(&outfile).exists());
    }

    // qpslab itself still connects by name, over the socket and with --user root over TCP.
    let o = s.run(&[
        "prepare",
        "oltp_point_select",
        "--sandbox",
        "sec",
        "--table-size",
        "100",
        "--tables",
        "1",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains(password.trim()));
    let o = s.run(&["server", "stop", "sec", "--rm"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!pid_alive(pid));
}

#[test]
fn stopped_sandboxes_are_listed_with_their_size_and_removed_by_rm() {
    let s = Scratch::new();
    let o = s.run(&["server", "start", "old"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = s.run(&["server", "rm", "old"]);
    assert_user_error(&o, "is running");
    let o = s.run(&["server", "stop", "old"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = s.run(&["server", "stop", "old"]);
    assert_user_error(&o, "not running");

    let o = s.run(&["server", "list"]);
    let out = stdout(&o);
    let row = out.lines().find(|l| l.starts_with("old ")).unwrap_or("");
    assert!(row.contains("stopped") && row.contains("MiB"), "{out}");
    assert!(out.contains("qpslab server rm NAME"), "{out}");
    let o = s.run(&["server", "list", "--json"]);
    let list: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let bytes = list[0]["disk_bytes"].as_u64().unwrap();
    assert!(bytes > 10 << 20, "{list}");
    let run_dir = std::path::Path::new(list[0]["datadir"].as_str().unwrap())
        .parent()
        .unwrap()
        .to_path_buf();

    let o = s.run(&["server", "rm", "old"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!run_dir.exists() && !s.lab().join("sandboxes/old").exists());
    let o = s.run(&["server", "list"]);
    assert!(stdout(&o).contains("no sandboxes"), "{}", stdout(&o));
    let o = s.run(&["server", "rm", "old"]);
    assert_user_error(&o, "no sandbox named 'old'");
}

#[test]
fn a_failed_start_leads_with_the_servers_own_error() {
    let s = Scratch::new();
    let o = s.run(&[
        "server",
        "start",
        "badcs",
        "--set",
        "character_set_server=no_such_charset",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    // The server's complaint comes before the log's tail, not only inside it.
    let head = err.split("---").next().unwrap_or("");
    assert!(
        head.contains("failed to start: ") && head.contains("no_such_charset"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    let o = s.run(&["server", "rm", "badcs"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn root_without_an_unprivileged_server_account_is_told_so_in_one_line() {
    if !is_root() {
        eprintln!("skipped: only root needs another account for the server");
        return;
    }
    let s = Scratch::new();
    let o = s
        .cmd(&["server", "start", "nouser"])
        .env("QPSLAB_SERVER_USER", "qpslab_no_such_user")
        .output()
        .unwrap();
    assert_user_error(&o, "'qpslab_no_such_user'");
    assert_eq!(stderr(&o).trim().lines().count(), 1, "{}", stderr(&o));
    // Root itself is not an acceptable server account.
    let o = s
        .cmd(&["server", "start", "nouser"])
        .env("QPSLAB_SERVER_USER", "root")
        .output()
        .unwrap();
    assert_user_error(&o, "'root'");
    let o = s.run(&["server", "list"]);
    assert!(stdout(&o).contains("no sandboxes"), "{}", stdout(&o));
}

/// Starts sandbox `name` with a my.cnf fragment given through `flag`, checks that the server
/// took its setting, and removes the sandbox.
fn start_with_fragment(flag: &str, name: &str, max_connections: &str) {
    let s = Scratch::new();
    let cnf = s.path().join("fragment.cnf");
    std::fs::write(
        &cnf,
        format!("[mysqld]\nmax_connections = {max_connections}\n"),
    )
    .unwrap();
    let o = s.run(&["server", "start", name, flag, cnf.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let got = sandbox_sql(&s, name, "SELECT @@max_connections");
    let o = s.run(&["server", "stop", name, "--rm"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(got.trim(), max_connections);
}

/// Issue 27: the sandbox's my.cnf fragment is `--my-cnf`, so that "profile" means perf only;
/// the help shows the new name and not the old one.
#[test]
fn my_cnf_applies_a_fragment_to_the_sandbox() {
    let help = stdout(&Scratch::new().run(&["server", "start", "--help"]));
    assert!(
        help.contains("--my-cnf <FILE>") && !help.contains("--profile"),
        "{help}"
    );
    start_with_fragment("--my-cnf", "mycnf", "66");
}

/// Issue 27: `server start --profile FILE`, the flag's old spelling, is still accepted.
#[test]
fn the_old_profile_spelling_still_applies_a_fragment() {
    start_with_fragment("--profile", "oldcnf", "67");
}
