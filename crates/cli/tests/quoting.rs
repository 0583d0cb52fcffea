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
