//! Issue 25, item 3 (and the exit code of item 10): a server that accepts connections but never
//! completes a handshake (silent, a truncated packet header, bytes that are not MySQL) ends every
//! command that connects within `--connect-timeout` plus a little, with one line and exit 2 (an
//! unreachable server, as the README says); a first SIGTERM ends a `run` waiting on it at once.
//! The listeners are fakes written here: no MySQL server is involved.

mod common;
use common::*;
use std::io::Write;
use std::net::TcpListener;
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

/// What a fake server does with each connection it accepts.
#[derive(Clone, Copy, Debug)]
enum Fake {
    /// Sends nothing, ever.
    Silent,
    /// Sends two bytes of a packet header, then nothing.
    Truncated,
    /// Answers like an SSH server (a wrong port).
    Garbage,
}

/// Starts a fake server on a free loopback port; it keeps every connection open for the rest of
/// the test process. Returns the port.
fn listen(fake: Fake) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut open = Vec::new();
        for c in l.incoming() {
            let Ok(mut c) = c else { continue };
            let _ = match fake {
                Fake::Silent => Ok(()),
                Fake::Truncated => c.write_all(&[0x4a, 0x00]),
                Fake::Garbage => c.write_all(b"SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n"),
            };
            open.push(c);
        }
    });
    port
}

/// Waits for `child` at most `limit`; kills it and fails the test when it is still running.
fn finish_within(mut child: Child, limit: Duration, what: &str) -> (Output, Duration) {
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return (child.wait_with_output().unwrap(), start.elapsed());
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let o = child.wait_with_output().unwrap();
            panic!(
                "{what}: still running after {limit:?}; stderr: {}",
                stderr(&o)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn spawn(s: &Scratch, args: &[&str]) -> Child {
    s.cmd(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn servers_that_never_answer_a_handshake_are_unreachable_for_every_command() {
    let s = Scratch::new();
    let log = s.path().join("slow.log");
    std::fs::write(
        &log,
        "# Time: 2024-01-01T00:00:00\n# Query_time: 0.1  Lock_time: 0  Rows_sent: 1  Rows_examined: 1\nSELECT 1;\n",
    )
    .unwrap();
    let log = log.to_str().unwrap();
    let out = s.path().join("captured.log");
    let out = out.to_str().unwrap();
    for fake in [Fake::Silent, Fake::Truncated, Fake::Garbage] {
        let port = listen(fake);
        let target = format!("mysql://root@127.0.0.1:{port}/sbtest");
        let t = target.as_str();
        let commands: [&[&str]; 5] = [
            &["run", "oltp_point_select", "--target", t, "--time", "1"],
            &["advise", "--target", t],
            &["diff", log, "--a", t, "--b", t, "--statement-timeout", "5"],
            &["prepare", "oltp_point_select", "--target", t],
            // Its own control session waits 30 s for replies: not for a handshake.
            &["capture", "--target", t, "--time", "5", "--out", out],
        ];
        for args in commands {
            let mut args = args.to_vec();
            args.extend(["--connect-timeout", "1"]);
            let what = format!("{fake:?}: qpslab {}", args.join(" "));
            let (o, took) = finish_within(spawn(&s, &args), Duration::from_secs(6), &what);
            let err = stderr(&o);
            assert_user_error(&o, &format!("127.0.0.1:{port}"));
            let said = match fake {
                Fake::Garbage => "does not speak the MySQL protocol",
                _ => "sent no MySQL greeting within 1 s (--connect-timeout)",
            };
            assert!(err.contains(said), "{what}: {err}");
            let errors = err.lines().filter(|l| l.contains("error")).count();
            assert_eq!(errors, 1, "{what}: one error line: {err}");
            assert!(took < Duration::from_secs(5), "{what}: took {took:?}");
        }
    }
}

#[test]
fn sigterm_stops_a_run_waiting_for_a_handshake_at_once() {
    let s = Scratch::new();
    let port = listen(Fake::Silent);
    let target = format!("mysql://root@127.0.0.1:{port}/sbtest");
    // The default connect timeout (10 s): the signal, not the timeout, must end the wait.
    let child = spawn(
        &s,
        &[
            "run",
            "oltp_point_select",
            "--target",
            &target,
            "--time",
            "5",
        ],
    );
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: kill(2) on our own child's pid.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    let (o, took) = finish_within(child, Duration::from_secs(5), "run after SIGTERM");
    let err = stderr(&o);
    assert!(took < Duration::from_secs(2), "took {took:?}: {err}");
    assert_eq!(o.status.code(), Some(143), "{err}");
    assert!(err.contains("interrupted while waiting"), "{err}");
}

#[test]
fn a_connect_timeout_must_be_a_positive_number_of_seconds() {
    let s = Scratch::new();
    for bad in ["0", "-1", "nan"] {
        let o = s.run(&[
            "advise",
            "--target",
            "mysql://root@127.0.0.1:1/x",
            "--connect-timeout",
            bad,
        ]);
        assert_user_error(&o, "--connect-timeout");
    }
    let o = s.run(&[
        "advise",
        "--target",
        "mysql://root@127.0.0.1:1/x",
        "--read-timeout",
        "-5",
    ]);
    assert_user_error(&o, "--read-timeout");
}
