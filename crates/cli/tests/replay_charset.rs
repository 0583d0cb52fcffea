//! Issue 45: the charset trick against `qpslab replay` on a private sandbox. After `SET NAMES
//! gbk` (or big5, sjis, cp932) a logged string ending in a two-byte character whose trail byte
//! is `\` closes at the next quote for the server, which then runs what follows. Replay sends
//! the logged bytes unchanged and reads them as the server does: a plain replay refuses the
//! hidden `SET GLOBAL` and `INTO DUMPFILE`, and `--read-only --grant-execute` neither makes its
//! transaction writable nor lets a DEFINER function delete rows.

mod common;

use common::replay::{self, Private};
use common::*;
use std::path::{Path, PathBuf};

/// `head`, a string ending in the two-byte character `lead 0x5c`, then `tail`: one statement.
fn hiding(head: &str, lead: u8, tail: &str) -> Vec<u8> {
    [head.as_bytes(), &[b'\'', lead, b'\\'], tail.as_bytes()].concat()
}

/// `qpslab replay LOG --sandbox charset --speed 0 EXTRA...` of `s`.
fn replay(s: &Scratch, log: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "replay",
        log.to_str().unwrap(),
        "--sandbox",
        "charset",
        "--speed",
        "0",
    ];
    args.extend_from_slice(extra);
    s.run(&args)
}

/// A slow log of `(thread, sql)` entries in database `safety`, one second apart.
fn slow_log(dir: &Path, name: &str, entries: &[(u64, Vec<u8>)]) -> PathBuf {
    let entries: Vec<(u64, i64, &[u8])> = entries
        .iter()
        .enumerate()
        .map(|(i, (t, sql))| (*t, i as i64, sql.as_slice()))
        .collect();
    replay::slow_log(dir, name, "safety", &entries)
}

#[test]
fn issue_45_a_two_byte_character_ending_in_a_backslash_hides_nothing_from_replay() {
    let s = Scratch::new();
    // A DEFINER function that deletes.
    let server = Private::start(
        &s,
        "charset",
        "safety",
        &[
            "CREATE FUNCTION safety.f_del() RETURNS INT MODIFIES SQL DATA SQL SECURITY DEFINER \
           BEGIN DELETE FROM safety.t; RETURN 1; END",
        ],
    );
    let sql = |q: &str| server.sql(q).trim().to_string();
    let connections = sql("SELECT @@max_connections");
    let file = s.path().join("dumped");

    for (cs, lead) in [
        ("gbk", 0xbfu8),
        ("big5", 0xa1),
        ("sjis", 0x81),
        ("cp932", 0xe0),
    ] {
        let names = format!("SET NAMES {cs}").into_bytes();
        // Plain replay: what the server reads as a second clause is server-level.
        let entries = [
            (1, names.clone()),
            (
                1,
                hiding("SET @a=", lead, "', @@GLOBAL.max_connections=77 -- '"),
            ),
            (
                1,
                hiding(
                    "SELECT ",
                    lead,
                    &format!("' INTO DUMPFILE '{}' -- '", file.display()),
                ),
            ),
        ];
        let log = slow_log(s.path(), &format!("{cs}.log"), &entries);
        let o = replay(&s, &log, &[]);
        let (out, err) = (stdout(&o), stderr(&o));
        assert!(o.status.success(), "{cs}: {err}");
        assert_eq!(sql("SELECT @@max_connections"), connections, "{cs}: {out}");
        assert!(!file.exists(), "{cs}: the server wrote {}", file.display());
        let skipped = out.lines().filter(|l| l.starts_with("skipped ")).count();
        assert!(skipped >= 2, "{cs}: {out}");
        assert!(out.contains("--allow-admin runs it"), "{cs}: {out}");

        // Read-only with EXECUTE: the transaction stays read-only, the rows stay.
        let entries = [
            (2, names.clone()),
            (2, hiding("SET @a=", lead, "', SESSION tx_read_only=0 -- '")),
            (2, b"SELECT safety.f_del()".to_vec()),
            (2, b"SELECT f_del()".to_vec()),
        ];
        let log = slow_log(s.path(), &format!("{cs}-ro.log"), &entries);
        let o = replay(&s, &log, &["--read-only", "--grant-execute"]);
        let (out, err) = (stdout(&o), stderr(&o));
        assert!(o.status.success(), "{cs}: {err}");
        assert_eq!(sql("SELECT count(*) FROM safety.t"), "3", "{cs}: {out}");
        assert!(out.contains("not run by --read-only"), "{cs}: {out}");
    }
    let o = s.run(&["server", "stop", "charset"]);
    assert!(o.status.success(), "{}", stderr(&o));
}
