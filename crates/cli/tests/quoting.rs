//! What qpslab quotes of what it reads (issue 45): an option-file error never shows the
//! value of a variable named like a password, and cuts the line it quotes short.

mod common;
use common::*;

/// `qpslab run --defaults-file /proc/self/environ` with only `env` in its environment.
fn environ_error(s: &Scratch, env: &[(&str, &str)]) -> String {
    let mut c = s.cmd(&[
        "run",
        "oltp_point_select",
        "--defaults-file",
        "/proc/self/environ",
    ]);
    c.env_clear().envs(env.iter().copied());
    let o = c.output().unwrap();
    assert_user_error(&o, "--defaults-file: /proc/self/environ:1: option '");
    stderr(&o)
}

#[test]
fn issue_45_defaults_file_proc_self_environ_does_not_echo_the_environment() {
    let s = Scratch::new();
    let err = environ_error(&s, &[("DB_PASSWORD", "hunter2"), ("HOME", "/root")]);
    assert!(!err.contains("hunter2"), "{err}");
    assert!(
        err.contains("option 'DB_PASSWORD=***\\u{0}HOME=/root"),
        "{err}"
    );
    let long = "x".repeat(500);
    let err = environ_error(&s, &[("A_LONG_VARIABLE", &long), ("Z", "1")]);
    assert!(!err.contains(&"x".repeat(100)), "{err}");
    assert!(!err.contains('\0'), "{err}");
    assert!(err.len() < 300, "{err}");
}

/// `qpslab ARGS...` run on a terminal (a pty from util-linux's `script`), with `env`; what the
/// terminal received.
fn on_terminal(s: &Scratch, command: &str, env: &[(&str, &str)]) -> Vec<u8> {
    let o = std::process::Command::new("script")
        .args(["-qec", command, "/dev/null"])
        .env("QPSLAB", env!("CARGO_BIN_EXE_qpslab"))
        .env("QPSLAB_LAB", s.lab())
        .env("QPSLAB_DB", s.db())
        .envs(env.iter().copied())
        .output()
        .expect("util-linux script");
    o.stdout
}

#[test]
fn issue_45_logged_sql_and_names_reach_a_terminal_escaped() {
    let s = Scratch::new();
    let log = s.path().join("esc.log");
    std::fs::write(
        &log,
        "/usr/sbin/mariadbd, Version: 10.11.19-MariaDB. started with:\n\
         Tcp port: 3306  Unix socket: /tmp/x.sock\nTime\t\t    Id Command\tArgument\n\
         # Time: 261123  4:25:49\n# User@Host: root[root] @ localhost []\n\
         # Thread_id: 6  Schema: shop  QC_hit: No\n\
         # Query_time: 0.1  Lock_time: 0.0  Rows_sent: 1  Rows_examined: 1\n\
         SET timestamp=1795407949;\n\
         SELECT \x1b]0;pwned\x07 1 FROM t WHERE a = '\x1b[2J\u{9b}31m\r';\n",
    )
    .unwrap();
    let log = log.display().to_string();
    let out = on_terminal(&s, r#"exec "$QPSLAB" digest "$LOG""#, &[("LOG", &log)]);
    let text = String::from_utf8_lossy(&out);
    assert!(
        // (The table folds the carriage return, a white space, into a space.)
        text.contains(r"SELECT \x1b]0;pwned\x07 1 FROM t WHERE a = '\x1b[2J\u{9b}31m '"),
        "{text}"
    );
    assert!(!out.contains(&0x1b) && !out.contains(&0x07), "{text}");
    assert!(!text.contains('\u{9b}'), "{text}");
    // Piped, the text is the log's.
    let o = s.run(&["digest", &log]);
    assert!(
        stdout(&o).contains("SELECT \x1b]0;pwned\x07 1"),
        "{}",
        stdout(&o)
    );
    // A name in an error line, on standard error.
    let name = "x\x1b[2Jy";
    let out = on_terminal(&s, r#"exec "$QPSLAB" digest "$NAME""#, &[("NAME", name)]);
    let text = String::from_utf8_lossy(&out);
    assert!(
        text.contains(r"qpslab: error: cannot open x\x1b[2Jy: No such file"),
        "{text}"
    );
    assert!(!out.contains(&0x1b), "{text}");
}
