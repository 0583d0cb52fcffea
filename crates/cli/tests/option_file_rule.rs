//! Issue 38, item 6: the option-file rule told, not guessed. `-u` alone names a server (the
//! option files' one), as for the mysql client; a server the option files name that a command
//! does not use is named in one line, with the file and the reason.

mod common;
use common::*;

/// A home directory whose `~/.my.cnf` holds `client` in its `[client]` group.
fn home_with(s: &Scratch, client: &str) -> std::path::PathBuf {
    let home = s.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join(".my.cnf"), format!("[client]\n{client}\n")).unwrap();
    home
}

#[test]
fn u_alone_reads_the_option_files_server() {
    let s = Scratch::new();
    let home = home_with(&s, "socket = /nonexistent-issue38/mysqld.sock");
    // Before: `-u` alone left the command to the lab (`restore`: "nothing to restore").
    let o = s
        .cmd(&["restore", "-u", "root"])
        .env("HOME", &home)
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(!o.status.success(), "{}{err}", stdout(&o));
    assert!(err.contains("/nonexistent-issue38/mysqld.sock"), "{err}");
}

#[test]
fn a_server_named_by_my_cnf_and_not_used_is_noted_with_the_file_and_why() {
    let s = Scratch::new();
    let home = home_with(&s, "host = db1.invalid\nuser = bench");
    let o = s
        .cmd(&["run", "oltp_point_select", "--sandbox", "nosuch38"])
        .env("HOME", &home)
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    let file = home.join(".my.cnf").display().to_string();
    let note: Vec<&str> = err.lines().filter(|l| l.starts_with("note:")).collect();
    assert_eq!(note.len(), 1, "{err}");
    assert!(
        note[0].contains(&file)
            && note[0].contains("host=db1.invalid")
            && note[0].contains("--sandbox"),
        "{err}"
    );
}
