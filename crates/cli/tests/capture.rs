//! `qpslab capture` on a private sandbox (the slow log is a global setting: the shared server's
//! other tests must not see it change): the log holds exactly the statements of connections
//! opened during the window, a connection opened before is warned about, every variable is
//! restored, on SIGTERM and SIGINT too, and bad arguments are refused before the server is
//! touched.

mod common;
use common::*;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A sandbox of this scratch's lab: its socket and datadir.
struct Sandbox {
    socket: String,
    datadir: String,
}

fn start(s: &Scratch, name: &str) -> Sandbox {
    let o = s.run(&["server", "start", name, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let info: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    Sandbox {
        socket: info["socket"].as_str().unwrap().to_string(),
        datadir: info["datadir"].as_str().unwrap().to_string(),
    }
}

impl Sandbox {
    fn client(&self) -> Command {
        let mut c = Command::new("mariadb");
        c.args(["--socket", &self.socket, "-uroot", "-N", "-B"]);
        c
    }

    /// One statement from a new connection.
    fn sql(&self, query: &str) -> String {
        let o = self.client().args(["-e", query]).output().unwrap();
        assert!(o.status.success(), "{query}: {}", stderr(&o));
        stdout(&o)
    }

    fn globals(&self) -> String {
        self.sql("SHOW GLOBAL VARIABLES")
    }

    /// Capture files the server's datadir still holds.
    fn leftovers(&self) -> Vec<String> {
        std::fs::read_dir(&self.datadir)
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("qpslab-capture-"))
            .collect()
    }
}

/// Starts `qpslab capture` and returns once the log is on, with the stderr read so far and a
/// thread reading the rest.
fn spawn_capture(s: &Scratch, args: &[&str]) -> (Child, String, std::thread::JoinHandle<String>) {
    let mut child = s.cmd(args).stderr(Stdio::piped()).spawn().unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = String::new();
    let started = Instant::now();
    for line in lines.by_ref() {
        let line = line.unwrap();
        seen += &line;
        seen.push('\n');
        if line.starts_with("slow log on") {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "{seen}");
    }
    assert!(seen.contains("slow log on"), "capture ended early: {seen}");
    let rest =
        std::thread::spawn(move || lines.map_while(Result::ok).collect::<Vec<_>>().join("\n"));
    (child, seen, rest)
}

fn count(text: &str, needle: &str) -> usize {
    text.lines().filter(|l| l.starts_with(needle)).count()
}

#[test]
fn the_log_holds_exactly_the_new_connections_statements_and_every_variable_is_restored() {
    let s = Scratch::new();
    let server = start(&s, "cap");
    let before = server.globals();
    let out = s.path().join("captured.log");
    let json = s.path().join("capture.json");
    // A pooled connection, opened before the capture: it keeps its long_query_time.
    let mut pooled = server
        .client()
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let (args_out, args_json) = (out.display().to_string(), json.display().to_string());
    let args = [
        "capture",
        "--sandbox",
        "cap",
        "--time",
        "5s",
        "--out",
        &args_out,
        "--json",
        &args_json,
    ];
    let (child, head, rest) = spawn_capture(&s, &args);
    assert!(head.contains("SET GLOBAL slow_query_log='OFF'"), "{head}");
    for i in 0..25 {
        server.sql(&format!("SELECT 'probe-{i}'"));
    }
    let mut stdin = pooled.stdin.take().unwrap();
    for _ in 0..10 {
        writeln!(stdin, "SELECT 'pooled';").unwrap();
    }
    drop(stdin);
    assert!(pooled.wait().unwrap().success());
    let status = child.wait_with_output().unwrap().status;
    let err = format!("{head}{}", rest.join().unwrap());
    assert_eq!(status.code(), Some(0), "{err}");

    let log = std::fs::read_to_string(&out).unwrap();
    assert_eq!(count(&log, "SELECT 'probe-"), 25, "{log}");
    assert_eq!(count(&log, "# User@Host:"), 25, "{log}");
    assert_eq!(count(&log, "SET timestamp="), 25, "{log}");
    assert!(
        !log.contains("pooled") && !log.contains("SHOW GLOBAL"),
        "{log}"
    );
    assert!(
        log.contains("# Rows_affected:"),
        "verbosity extras missing: {log}"
    );
    assert!(
        err.contains("log nothing"),
        "the pooled session was not warned about: {err}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["entries"], 25, "{doc}");
    assert_eq!(doc["missed"], 10, "{doc}");
    assert_eq!(server.globals(), before);
    assert_eq!(server.leftovers(), Vec::<String>::new());
    pt_query_digest_agrees(&out, 25);
}

/// pt-query-digest reads the file as a slow log with the same number of queries.
fn pt_query_digest_agrees(log: &Path, queries: u64) {
    let o = Command::new("pt-query-digest")
        .args(["--output", "json", "--limit", "100%"])
        .arg(log)
        .output()
        .expect("pt-query-digest (percona-toolkit)");
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let total: u64 = doc["classes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["query_count"].as_u64().unwrap())
        .sum();
    assert_eq!(total, queries, "{doc}");
}

#[test]
fn a_signal_mid_capture_restores_every_variable_and_keeps_what_was_captured() {
    let s = Scratch::new();
    let server = start(&s, "sig");
    let before = server.globals();
    for (sig, code) in [(libc::SIGTERM, 143), (libc::SIGINT, 130)] {
        let out = s.path().join(format!("sig{sig}.log"));
        let path = out.display().to_string();
        let args = [
            "capture",
            "--sandbox",
            "sig",
            "--time",
            "60s",
            "--out",
            &path,
        ];
        let (child, head, rest) = spawn_capture(&s, &args);
        server.sql("SELECT 'before the signal'");
        // SAFETY: kill(2) takes plain integers; the pid is our child, not yet waited for.
        unsafe { libc::kill(child.id() as i32, sig) };
        let started = Instant::now();
        let status = child.wait_with_output().unwrap().status;
        let err = format!("{head}{}", rest.join().unwrap());
        assert!(started.elapsed() < Duration::from_secs(30), "{err}");
        assert_eq!(status.code(), Some(code), "{err}");
        assert!(err.contains("settings restored"), "{err}");
        assert_eq!(server.globals(), before, "after signal {sig}");
        let log = std::fs::read_to_string(&out).unwrap();
        assert_eq!(count(&log, "SELECT 'before the signal'"), 1, "{log}");
        assert_eq!(server.leftovers(), Vec::<String>::new());
    }
    killed_capture_is_restored_by_its_printed_line(&s, &server, &before);
}

/// `kill -9` leaves the server changed: the next capture refuses it (its "old" values would be
/// the killed one's) with the restore statement, and the statement printed at the start puts
/// everything back.
fn killed_capture_is_restored_by_its_printed_line(s: &Scratch, server: &Sandbox, before: &str) {
    let out = s.path().join("killed.log").display().to_string();
    let args = [
        "capture",
        "--sandbox",
        "sig",
        "--time",
        "60s",
        "--out",
        &out,
    ];
    let (mut child, head, _rest) = spawn_capture(s, &args);
    child.kill().unwrap();
    child.wait().unwrap();
    assert_ne!(server.globals(), before);
    let again = s.run(&args);
    // The record written before the first change names the killed capture and its restore.
    assert_user_error(&again, "still holds settings changed by `capture`");
    assert!(stderr(&again).contains("SET GLOBAL slow_query_log='OFF'"));
    let restore = head
        .lines()
        .find(|l| l.trim_start().starts_with("SET GLOBAL"))
        .unwrap_or_else(|| panic!("no restore line: {head}"));
    server.sql(restore.trim());
    assert_eq!(server.globals(), before);
    assert!(!Path::new(&out).exists());
    for f in server.leftovers() {
        std::fs::remove_file(Path::new(&server.datadir).join(f)).unwrap();
    }
}

#[test]
fn bad_arguments_are_refused_before_the_server_is_touched() {
    let s = Scratch::new();
    let existing = s.path().join("exists.log");
    std::fs::write(&existing, "keep me").unwrap();
    let existing = existing.display().to_string();
    let fresh = s.path().join("new.log").display().to_string();
    let sock = "/nonexistent/mysqld.sock";
    let base =
        |time: &str, out: &str| s.run(&["capture", "--socket", sock, "--time", time, "--out", out]);
    assert_user_error(&base("3x", &fresh), "--time");
    assert_user_error(&base("0", &fresh), "--time");
    assert_user_error(&base("3s", "/nonexistent-dir/x.log"), "does not exist");
    assert_user_error(&base("3s", &existing), "--force");
    assert_eq!(std::fs::read_to_string(&existing).unwrap(), "keep me");
    let o = s.run(&["capture", "--time", "3s", "--out", &fresh]);
    assert_user_error(&o, "--sandbox");
    let o = s.run(&[
        "capture",
        "--target",
        "mysql://root@db.example.com/",
        "--out",
        &fresh,
    ]);
    assert_user_error(&o, "on this host");
    assert!(!Path::new(&fresh).exists());
}

/// Issue 38, item 5: a capture changes only the logging, so a `run` on the sandbox being
/// captured proceeds (it was refused as "changing the settings now") and is in the log.
#[test]
fn a_run_on_a_sandbox_being_captured_proceeds_and_is_in_the_log() {
    let s = Scratch::new();
    let server = start(&s, "capshare");
    let data = ["--tables", "1", "--table-size", "200"];
    let o = s.run(
        &[
            &["prepare", "oltp_point_select", "--sandbox", "capshare"],
            &data[..],
        ]
        .concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = s.path().join("shared.log").display().to_string();
    let args = [
        "capture",
        "--sandbox",
        "capshare",
        "--time",
        "8s",
        "--out",
        &out,
    ];
    let (child, head, rest) = spawn_capture(&s, &args);
    let run = s.run(
        &[
            &[
                "run",
                "oltp_point_select",
                "--sandbox",
                "capshare",
                "--threads",
                "1",
                "--time",
                "1",
                "--warmup",
                "0",
            ],
            &data[..],
        ]
        .concat(),
    );
    let status = child.wait_with_output().unwrap().status;
    let err = format!("{head}{}", rest.join().unwrap());
    assert!(run.status.success(), "run refused: {}", stderr(&run));
    assert!(
        stderr(&run).contains("is logging every statement"),
        "{}",
        stderr(&run)
    );
    assert_eq!(status.code(), Some(0), "{err}");
    let log = std::fs::read_to_string(&out).unwrap();
    let selects = log
        .lines()
        .filter(|l| l.contains("FROM sbtest1 WHERE id"))
        .count();
    assert!(
        selects > 0,
        "the run's statements are not in the log: {err}"
    );
    assert_eq!(server.leftovers(), Vec::<String>::new());
}
