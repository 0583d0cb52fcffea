//! Every file a user names is read bounded (issue 34, item 5): `/dev/zero` as a script, an
//! option file that includes it, a FIFO as `~/.my.cnf`, a 100 MB one-line script, a `\set`
//! with 100,000 nested parentheses and `/dev/zero` as a log each end at once in one short
//! error line with exit 2, and the process stays small.
//!
//! Each command is watched: killed and failed should it pass a memory or time bound, so a
//! regression fails here instead of filling the machine's memory.

mod common;

use common::Scratch;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A run of the binary under watch.
struct Watched {
    code: Option<i32>,
    stderr: String,
    /// Peak resident memory, KiB.
    max_rss_kb: i64,
    elapsed: Duration,
}

/// Far above what these commands need (about 20 MB, 90 MB for a log read to the 64 MiB
/// bound), far below what an unbounded read reaches in the time allowed.
const MAX_RSS_KB: i64 = 200 << 10;
/// Generous: other builds and tests share the machine.
const TIME_LIMIT: Duration = Duration::from_secs(60);

/// Runs `cmd`, killing it past [`MAX_RSS_KB`] of memory or [`TIME_LIMIT`].
// The child is reaped by wait4, which gives its peak memory too; clippy sees no wait().
#[allow(clippy::zombie_processes)]
fn watch(mut cmd: Command) -> Watched {
    let started = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let mut pipe = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = pipe.read_to_string(&mut s);
        s
    });
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid value for wait4 to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `pid` is our child, not yet waited for; the pointers are to live locals.
        let got = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        assert!(got >= 0, "wait4: {}", std::io::Error::last_os_error());
        if got == pid {
            break;
        }
        let rss = rss_kb(pid);
        if rss > MAX_RSS_KB || started.elapsed() > TIME_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "killed after {:?} at {rss} KiB resident: the read is not bounded",
                started.elapsed()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    Watched {
        code,
        stderr: reader.join().unwrap(),
        max_rss_kb: usage.ru_maxrss,
        elapsed: started.elapsed(),
    }
}

/// The resident memory of a running process, KiB (0 once it is gone).
fn rss_kb(pid: libc::pid_t) -> i64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Asserts one short error line mentioning `needle`, exit 2, a small process.
fn assert_one_short_line(w: &Watched, needle: &str) {
    let e = &w.stderr;
    assert_eq!(w.code, Some(2), "exit status (134 is an abort): {e}");
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.len() < 300, "{} bytes: {}", e.len(), excerpt(e));
    assert!(e.contains(needle), "'{needle}' not in: {e}");
    assert!(w.max_rss_kb < MAX_RSS_KB, "{} KiB", w.max_rss_kb);
    assert!(w.elapsed < Duration::from_secs(30), "{:?}", w.elapsed);
}

fn excerpt(s: &str) -> String {
    s.chars().take(300).collect()
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// A `run` that never reaches a server: its options fail first. `HOME` is the scratch, so no
/// `~/.my.cnf` of the machine is read.
fn run(s: &Scratch, args: &[&str]) -> Command {
    let mut c = s.cmd(&["run"]);
    c.args(args)
        .args(["--time", "1", "--socket", "/nonexistent/mysqld.sock"])
        .env("HOME", s.path());
    c
}

#[test]
fn a_device_as_a_script_is_refused_at_once() {
    let s = Scratch::new();
    let w = watch(run(&s, &["--script", "/dev/zero"]));
    assert_one_short_line(
        &w,
        "--script: /dev/zero is a character device, not a regular file",
    );
}

#[test]
fn an_option_file_including_a_device_is_refused_at_once() {
    let s = Scratch::new();
    let cnf = write(
        s.path(),
        "inc.cnf",
        "[client]\nuser=a\n!include /dev/zero\n",
    );
    let w = watch(run(&s, &["oltp_point_select", "--defaults-file", &cnf]));
    assert_one_short_line(
        &w,
        "inc.cnf:3: /dev/zero is a character device, not a regular file",
    );
}

#[test]
fn a_fifo_as_my_cnf_is_refused_without_waiting() {
    let s = Scratch::new();
    let fifo = s.path().join(".my.cnf");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let w = watch(run(&s, &["oltp_point_select"]));
    assert_one_short_line(&w, ".my.cnf: is a FIFO (named pipe), not a regular file");
}

#[test]
fn long_one_line_scripts_give_short_errors() {
    let s = Scratch::new();
    // Over the size limit: refused before it is parsed.
    let big = write(
        s.path(),
        "big.sql",
        &format!("\\set a {}\nSELECT :a;\n", "x".repeat(100_000_000)),
    );
    let w = watch(run(&s, &["--script", &big]));
    assert_one_short_line(&w, "big.sql is larger than 64 MiB, the limit for a script");
    // Within it: the error quotes the start of the line.
    let long = write(
        s.path(),
        "long.sql",
        &format!("\\set a {}\nSELECT :a;\n", "x".repeat(10_000_000)),
    );
    let w = watch(run(&s, &["--script", &long]));
    assert_one_short_line(&w, "long.sql:1: unknown function 'xxx");
    assert!(w.stderr.contains("x…'"), "{}", w.stderr);
}

#[test]
fn deep_nesting_is_an_error_not_an_abort() {
    let s = Scratch::new();
    let text = format!(
        "SELECT 1;\n\\set a {}1{}\nSELECT :a;\n",
        "(".repeat(100_000),
        ")".repeat(100_000)
    );
    let deep = write(s.path(), "deep.sql", &text);
    let w = watch(run(&s, &["--script", &deep]));
    assert_one_short_line(&w, "--script: deep.sql:2: nesting deeper than 64");
}

#[test]
fn a_device_as_a_log_ends_with_the_line_limit() {
    let s = Scratch::new();
    let w = watch(s.cmd(&["digest", "/dev/zero"]));
    assert_one_short_line(
        &w,
        "/dev/zero:1: a line longer than 64 MiB, the limit of the log reader",
    );
}
