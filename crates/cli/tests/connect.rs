//! The mysql client's connection habits: `--host`, `-P`, `-u`, `-p` (a prompt on a terminal),
//! `-D`, the option files it reads by default (~/.my.cnf, `--defaults-extra-file`,
//! `--no-defaults`) and the rule that keeps them from redirecting a command given no server.
//! The shared test server plays the user's server, over TCP on 127.0.0.1; each command runs
//! with HOME set to its scratch directory, so the tester's own ~/.my.cnf plays no part.

mod common;
use common::*;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The database of these tests on the shared server, with a one-table, 100-row dataset.
const DB: &str = "conn_db";
const SHAPE: [&str; 4] = ["--tables", "1", "--table-size", "100"];
/// A password given to an account made for these tests.
const CNF_PASSWORD: &str = "From-My-Cnf-7";

/// The shared server's TCP port and root password; prepares [`DB`] once per process.
fn server(s: &Scratch) -> (String, String) {
    static PREPARED: std::sync::Once = std::sync::Once::new();
    PREPARED.call_once(|| {
        sql(&format!("DROP DATABASE IF EXISTS {DB}"));
        prepare_shared(s, "oltp_point_select", DB, &SHAPE);
        sql(&format!(
            "CREATE USER IF NOT EXISTS 'cnfuser'@'127.0.0.1' IDENTIFIED BY '{CNF_PASSWORD}'"
        ));
        sql("GRANT ALL ON *.* TO 'cnfuser'@'127.0.0.1'");
    });
    let shared = qpslab_sandbox::testing::shared_server();
    let root = shared.connect_options().password.expose().to_string();
    (shared.port().to_string(), root)
}

/// `qpslab ARGS` with HOME in the scratch directory.
fn cmd(s: &Scratch, args: &[&str]) -> Command {
    let mut c = s.cmd(args);
    c.env("HOME", s.path()).stdin(Stdio::null());
    c
}

/// `run oltp_point_select` on [`DB`] for 50 events, with `extra` saying where.
fn run_args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["run", "oltp_point_select", "-D", DB, "--events", "50"];
    args.extend_from_slice(&SHAPE);
    args.extend_from_slice(extra);
    args
}

/// Asserts that neither `texts` nor the results store hold `secret`.
fn assert_hidden(s: &Scratch, secret: &str, texts: &[&str]) {
    for t in texts {
        assert!(!t.contains(secret), "the password was shown: {t}");
    }
    for suffix in ["", "-wal"] {
        let path = format!("{}{suffix}", s.db().display());
        if let Ok(bytes) = std::fs::read(&path) {
            let found = bytes.windows(secret.len()).any(|w| w == secret.as_bytes());
            assert!(!found, "the password is in the store ({path})");
        }
    }
}

/// What a command run with a terminal on its standard input did: its exit status, standard
/// output and error, what the terminal showed (its echo), and whether the terminal echoes
/// again afterwards.
struct OnTerminal {
    status: std::process::ExitStatus,
    stdout: String,
    stderr: String,
    echoed: String,
    echo_after: bool,
}

/// Runs `c` with a pseudo-terminal as its standard input and controlling terminal, types
/// `typed` once its standard error shows `prompt`, and waits (at most a minute) for it to end.
fn on_terminal(mut c: Command, prompt: &str, typed: &str) -> OnTerminal {
    let (mut master, mut slave) = (0, 0);
    // SAFETY: both out-pointers are valid; the name, settings and size may be null.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: openpty returned two open descriptors that nothing else owns.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    c.stdin(Stdio::from(slave))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut c, || {
            // A session of its own with the terminal as its controlling one: Ctrl-C typed
            // there sends it SIGINT, as in a shell.
            if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    };
    let mut child = c.spawn().expect("start qpslab");
    drop(c); // the parent's copy of the terminal's end
    let reader = |mut r: Box<dyn Read + Send>, tx: mpsc::Sender<Vec<u8>>| {
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = r.read(&mut buf) {
                let _ = tx.send(buf[..n].to_vec());
            }
        })
    };
    let (err_tx, err_rx) = mpsc::channel();
    let (out_tx, out_rx) = mpsc::channel();
    reader(Box::new(child.stderr.take().unwrap()), err_tx);
    reader(Box::new(child.stdout.take().unwrap()), out_tx);
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut stderr = Vec::new();
    while !String::from_utf8_lossy(&stderr).contains(prompt) {
        let left = deadline.saturating_duration_since(Instant::now());
        match err_rx.recv_timeout(left) {
            Ok(chunk) => stderr.extend(chunk),
            Err(_) => {
                let _ = child.kill();
                panic!("no prompt: {}", String::from_utf8_lossy(&stderr));
            }
        }
    }
    let mut terminal = std::fs::File::from(master.try_clone().unwrap());
    terminal.write_all(typed.as_bytes()).unwrap();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("still running after a minute");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    stderr.extend(err_rx.iter().flatten());
    let stdout: Vec<u8> = out_rx.iter().flatten().collect();
    // What the terminal shows: everything the other end wrote to it, read without waiting.
    // SAFETY: fcntl on a descriptor this function owns.
    unsafe { libc::fcntl(master.as_raw_fd(), libc::F_SETFL, libc::O_NONBLOCK) };
    let mut echoed = Vec::new();
    let _ = terminal.read_to_end(&mut echoed);
    // SAFETY: a zeroed termios is a valid buffer for tcgetattr to fill.
    let mut term: libc::termios = unsafe { std::mem::zeroed() };
    // SAFETY: the descriptor is open and `term` is a valid termios.
    assert_eq!(unsafe { libc::tcgetattr(master.as_raw_fd(), &mut term) }, 0);
    OnTerminal {
        status,
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        echoed: String::from_utf8_lossy(&echoed).into_owned(),
        echo_after: term.c_lflag & libc::ECHO != 0,
    }
}

#[test]
fn mysql_style_options_connect_with_the_password_typed_at_a_prompt() {
    let s = Scratch::new();
    let (port, root) = server(&s);
    let args = run_args(&["--host", "127.0.0.1", "-P", &port, "-u", "root", "-p"]);
    let t = on_terminal(cmd(&s, &args), "Enter password: ", &format!("{root}\n"));
    assert!(t.status.success(), "{}", t.stderr);
    assert!(
        t.stdout.contains(&format!("root@127.0.0.1:{port}/{DB}")),
        "{}",
        t.stdout
    );
    // The terminal did not echo it, and nothing printed or stored holds it.
    assert!(!t.echoed.contains(&root), "echoed: {:?}", t.echoed);
    assert!(!t.stderr.contains("visible to other"), "{}", t.stderr);
    assert_hidden(&s, &root, &[&t.stdout, &t.stderr, &t.echoed]);

    // A wrong password typed: refused by the server, in one line.
    let t = on_terminal(cmd(&s, &args), "Enter password: ", "not-it\n");
    assert!(!t.status.success(), "{}", t.stdout);
    assert!(t.stderr.contains("Access denied"), "{}", t.stderr);
    assert!(t.echo_after);

    // Ctrl-C at the prompt ends the command as a signal does, and the terminal echoes again.
    let tcp = ["-D", DB, "--host", "127.0.0.1", "-P", &port, "-p"];
    for command in ["run", "prepare"] {
        let args = [&[command, "oltp_point_select"][..], &tcp].concat();
        let t = on_terminal(cmd(&s, &args), "Enter password: ", "\x03");
        assert_eq!(t.status.code(), Some(130), "{command}: {}", t.stderr);
        assert!(t.echo_after, "{command} left the terminal without echo");
    }
}

#[test]
fn a_prompt_without_a_terminal_is_one_line_and_exit_2() {
    let s = Scratch::new();
    for p in ["-p", "--password"] {
        let o = cmd(&s, &run_args(&["--host", "127.0.0.1", "-P", "1", p]))
            .output()
            .unwrap();
        assert_user_error(&o, "not one");
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    }
}

#[test]
fn flags_win_over_the_dsn_and_a_password_on_the_command_line_is_hidden() {
    let s = Scratch::new();
    let (port, root) = server(&s);
    let pw = format!("-p{root}");
    let dsn = "mysql://nobody@db.invalid:1/elsewhere";
    let args = [
        "--target",
        dsn,
        "--host",
        "127.0.0.1",
        "-P",
        &port,
        "-u",
        "root",
        &pw,
    ];
    let o = cmd(&s, &run_args(&args)).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains(&format!("root@127.0.0.1:{port}/{DB}")));
    assert!(stderr(&o).contains("visible to other local users"));
    assert_hidden(&s, &root, &[&stdout(&o), &stderr(&o)]);

    // Issue 38, item 7: -S with -P takes the socket, as the mysql client does, with a note.
    let sock = socket();
    let o = cmd(
        &s,
        &run_args(&["-S", &sock, "-P", &port, "-u", "root", &pw]),
    )
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains(&format!("socket={sock}")),
        "{}",
        stdout(&o)
    );
    assert!(
        stderr(&o).contains(&format!("-P {port} is ignored")),
        "{}",
        stderr(&o)
    );
    // A host other than localhost with a socket still names two ways: refused in one line.
    let o = cmd(&s, &run_args(&["-S", &sock, "--host", "127.0.0.1", "-p"]))
        .output()
        .unwrap();
    assert_user_error(&o, "two ways");
}

#[test]
fn the_users_option_files_supply_the_account_unless_no_defaults() {
    let s = Scratch::new();
    let (port, _) = server(&s);
    std::fs::write(
        s.path().join(".my.cnf"),
        format!("[client]\nuser=cnfuser\npassword={CNF_PASSWORD}\n"),
    )
    .unwrap();
    let tcp = ["--host", "127.0.0.1", "-P", &port];
    let o = cmd(&s, &run_args(&tcp)).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("cnfuser@127.0.0.1"), "{}", stdout(&o));
    assert_hidden(&s, CNF_PASSWORD, &[&stdout(&o), &stderr(&o)]);

    // --no-defaults: root without a password, which the server refuses over TCP.
    let o = cmd(&s, &run_args(&[&tcp[..], &["--no-defaults"]].concat()))
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(stderr(&o).contains("root@127.0.0.1"), "{}", stderr(&o));
    assert!(stderr(&o).contains("Access denied"), "{}", stderr(&o));

    // A world-writable ~/.my.cnf is ignored, as the mysql client ignores it.
    use std::os::unix::fs::PermissionsExt;
    let cnf = s.path().join(".my.cnf");
    std::fs::set_permissions(&cnf, std::fs::Permissions::from_mode(0o666)).unwrap();
    let o = cmd(&s, &run_args(&tcp)).output().unwrap();
    assert!(!o.status.success());
    assert!(stderr(&o).contains("world-writable"), "{}", stderr(&o));
    assert!(stderr(&o).contains("Access denied"), "{}", stderr(&o));
    std::fs::set_permissions(&cnf, std::fs::Permissions::from_mode(0o600)).unwrap();

    // --defaults-extra-file is read before ~/.my.cnf: it names the server, ~/.my.cnf the account.
    let extra = s.path().join("extra.cnf");
    let text = format!("[client]\nhost=127.0.0.1\nport={port}\nuser=overridden\n");
    std::fs::write(&extra, text).unwrap();
    let o = cmd(
        &s,
        &run_args(&["--defaults-extra-file", extra.to_str().unwrap()]),
    )
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("cnfuser@127.0.0.1"), "{}", stdout(&o));
    let missing = s.path().join("absent.cnf");
    let o = cmd(
        &s,
        &run_args(&["--defaults-extra-file", missing.to_str().unwrap()]),
    )
    .output()
    .unwrap();
    assert_user_error(&o, "absent.cnf");
}

#[test]
fn option_files_never_redirect_a_command_given_no_server() {
    let s = Scratch::new();
    // A ~/.my.cnf naming a server that does not exist: with no server on the command line, the
    // command still uses its embedded sandbox.
    std::fs::write(
        s.path().join(".my.cnf"),
        "[client]\nhost=db.invalid\nport=1\nsocket=/nonexistent.sock\nuser=nobody\n",
    )
    .unwrap();
    let o = cmd(&s, &["run", "oltp_point_select", "--table_size", "100"])
        .args(["--tables", "1", "--events", "20", "--report_interval", "1"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("starting embedded sandbox"),
        "{}",
        stderr(&o)
    );
    assert!(stdout(&o).contains("root@localhost"), "{}", stdout(&o));
}
