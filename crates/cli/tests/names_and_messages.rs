//! Issue 25, item 10: a sandbox name no command could name is refused, and a failed load says
//! what failed instead of "checking the dataset".

mod common;
use common::*;

#[test]
fn a_sandbox_name_starting_with_a_dash_is_refused() {
    let s = Scratch::new();
    for name in ["-x", "--rm"] {
        let o = s.run(&["server", "start", "--", name]);
        assert_user_error(&o, "starts with '-'");
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    }
    let o = s.run(&["server", "list"]);
    assert!(stdout(&o).contains("no sandboxes"), "{}", stdout(&o));
}

#[test]
fn a_load_that_fails_is_not_called_a_dataset_check() {
    let s = Scratch::new();
    // An account that may read the database but create nothing in it.
    sql("CREATE DATABASE IF NOT EXISTS issue25_readonly");
    sql("CREATE USER IF NOT EXISTS 'issue25_reader'@'localhost'");
    sql("GRANT SELECT ON issue25_readonly.* TO 'issue25_reader'@'localhost'");
    let sock = socket();
    let o = s.run(&[
        "prepare",
        "oltp_point_select",
        "--socket",
        &sock,
        "--user",
        "issue25_reader",
        "--database",
        "issue25_readonly",
        "--tables",
        "1",
        "--table-size",
        "10",
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("1142"), "the server's refusal: {err}");
    assert!(!err.contains("checking the dataset"), "{err}");
}
