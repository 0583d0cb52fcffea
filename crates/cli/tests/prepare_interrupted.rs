//! Issue 38, item 7: a Ctrl-C during `prepare` on the user's server says which tables it left
//! partly loaded and how to drop them, and does not claim to stop servers it never started.

mod common;
use common::*;
use std::time::{Duration, Instant};

const DB: &str = "issue38_interrupted";

fn tables_in_db() -> u32 {
    sql(&format!(
        "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = '{DB}' \
         AND table_name LIKE 'sbtest%'"
    ))
    .trim()
    .parse()
    .unwrap_or(0)
}

#[test]
fn ctrl_c_during_prepare_on_an_external_server_names_the_partial_tables() {
    let s = Scratch::new();
    sql(&format!("DROP DATABASE IF EXISTS {DB}"));
    let sock = socket();
    let args = [
        "prepare",
        "oltp_read_only",
        "--socket",
        &sock,
        "--database",
        DB,
        "--create-db",
        "--tables",
        "4",
        "--table-size",
        "2000000",
        "--threads",
        "2",
    ];
    let child = s
        .cmd(&args)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Loading has begun once its tables exist; a progress report follows within a second.
    let started = Instant::now();
    while tables_in_db() == 0 {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no table was created"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: kill has no memory-safety preconditions; the pid is our child's.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    // The command the line gives drops what was left.
    let cleanup = s.run(&[
        "cleanup",
        "oltp_read_only",
        "--socket",
        &sock,
        "--database",
        DB,
    ]);
    let left = tables_in_db();
    sql(&format!("DROP DATABASE IF EXISTS {DB}"));
    assert!(cleanup.status.success(), "{}", stderr(&cleanup));
    assert_eq!(left, 0, "cleanup left tables: {}", stdout(&cleanup));
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(!err.contains("stopping the servers it started"), "{err}");
    assert!(
        err.contains("partly loaded") && err.contains("sbtest1, sbtest2, sbtest3, sbtest4"),
        "{err}"
    );
    assert!(err.contains(&format!("`{DB}`")), "{err}");
    assert!(
        err.contains("qpslab cleanup oltp_read_only --socket"),
        "{err}"
    );
    assert_eq!(
        err.lines().filter(|l| l.starts_with("qpslab:")).count(),
        1,
        "{err}"
    );
}
