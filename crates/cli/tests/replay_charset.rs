//! Issue 45: the charset trick against `qpslab replay` on a private sandbox. After `SET NAMES
//! gbk` (or big5, sjis, cp932) a logged string ending in a two-byte character whose trail byte
//! is `\` closes at the next quote for the server, which then runs what follows. Replay sends
//! the logged bytes unchanged and reads them as the server does: a plain replay refuses the
//! hidden `SET GLOBAL` and `INTO DUMPFILE`, and `--read-only --grant-execute` neither makes its
//! transaction writable nor lets a DEFINER function delete rows.

mod common;

use common::*;
use std::path::{Path, PathBuf};

/// A MariaDB 10.11 slow log of `(thread, sql)` entries in database `safety`, each statement's
/// bytes as they are.
fn slow_log(dir: &Path, name: &str, entries: &[(u64, Vec<u8>)]) -> PathBuf {
    let mut out = b"/usr/sbin/mariadbd, Version: 10.11.19-MariaDB-0+deb12u1 (Debian 12). \
        started with:\nTcp port: 3306  Unix socket: /run/mysqld/mysqld.sock\n\
        Time\t\t    Id Command\tArgument\n"
        .to_vec();
    for (i, (thread, sql)) in entries.iter().enumerate() {
        out.extend_from_slice(
            format!(
                "# Time: 261123  4:25:{:02}\n# User@Host: root[root] @ localhost []\n\
                 # Thread_id: {thread}  Schema: safety  QC_hit: No\n\
                 # Query_time: 0.000100  Lock_time: 0.000000  Rows_sent: 0  Rows_examined: 0\n\
                 SET timestamp={};\n",
                10 + i,
                1_795_407_959 + i
            )
            .as_bytes(),
        );
        out.extend_from_slice(sql);
        out.extend_from_slice(b";\n");
    }
    let path = dir.join(name);
    std::fs::write(&path, out).unwrap();
    path
}

/// `a` then `b`, as one statement's bytes.
fn cat(a: &[u8], b: &[u8]) -> Vec<u8> {
    [a, b].concat()
}

fn mariadb(socket: &str, query: &str) -> String {
    let o = std::process::Command::new("mariadb")
        .args(["--socket", socket, "-uroot", "-N", "-B", "-e", query])
        .output()
        .expect("mariadb client");
    assert!(o.status.success(), "{query}: {}", stderr(&o));
    stdout(&o).trim().to_string()
}

#[test]
fn issue_45_a_two_byte_character_ending_in_a_backslash_hides_nothing_from_replay() {
    let s = Scratch::new();
    let o = s.run(&["server", "start", "charset", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let info: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let socket = info["socket"].as_str().unwrap().to_string();
    mariadb(
        &socket,
        "CREATE DATABASE safety; CREATE TABLE safety.t (id INT PRIMARY KEY, v INT); \
         INSERT INTO safety.t VALUES (1, 0), (2, 0), (3, 0)",
    );
    // A DEFINER function that deletes (a compound body needs the client's delimiter).
    let o = std::process::Command::new("mariadb")
        .args(["--socket", &socket, "-uroot", "--delimiter=//", "-e"])
        .arg(
            "CREATE FUNCTION safety.f_del() RETURNS INT MODIFIES SQL DATA SQL SECURITY DEFINER \
             BEGIN DELETE FROM safety.t; RETURN 1; END",
        )
        .output()
        .expect("mariadb client");
    assert!(o.status.success(), "{}", stderr(&o));
    let connections = mariadb(&socket, "SELECT @@max_connections");
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
                cat(
                    &[b"SET @a='" as &[u8], &[lead, b'\\']].concat(),
                    b"', @@GLOBAL.max_connections=77 -- '",
                ),
            ),
            (
                1,
                cat(
                    &[b"SELECT '" as &[u8], &[lead, b'\\']].concat(),
                    format!("' INTO DUMPFILE '{}' -- '", file.display()).as_bytes(),
                ),
            ),
        ];
        let log = slow_log(s.path(), &format!("{cs}.log"), &entries);
        let o = s.run(&[
            "replay",
            log.to_str().unwrap(),
            "--sandbox",
            "charset",
            "--speed",
            "0",
        ]);
        let (out, err) = (stdout(&o), stderr(&o));
        assert!(o.status.success(), "{cs}: {err}");
        assert_eq!(
            mariadb(&socket, "SELECT @@max_connections"),
            connections,
            "{cs}: {out}"
        );
        assert!(!file.exists(), "{cs}: the server wrote {}", file.display());
        let skipped = out.lines().filter(|l| l.starts_with("skipped ")).count();
        assert!(skipped >= 2, "{cs}: {out}");
        assert!(out.contains("--allow-admin runs it"), "{cs}: {out}");

        // Read-only with EXECUTE: the transaction stays read-only, the rows stay.
        let entries = [
            (2, names.clone()),
            (
                2,
                cat(
                    &[b"SET @a='" as &[u8], &[lead, b'\\']].concat(),
                    b"', SESSION tx_read_only=0 -- '",
                ),
            ),
            (2, b"SELECT safety.f_del()".to_vec()),
            (2, b"SELECT f_del()".to_vec()),
        ];
        let log = slow_log(s.path(), &format!("{cs}-ro.log"), &entries);
        let o = s.run(&[
            "replay",
            log.to_str().unwrap(),
            "--sandbox",
            "charset",
            "--speed",
            "0",
            "--read-only",
            "--grant-execute",
        ]);
        let (out, err) = (stdout(&o), stderr(&o));
        assert!(o.status.success(), "{cs}: {err}");
        assert_eq!(
            mariadb(&socket, "SELECT count(*) FROM safety.t"),
            "3",
            "{cs}: {out}"
        );
        assert!(out.contains("not run by --read-only"), "{cs}: {out}");
    }
    let o = s.run(&["server", "stop", "charset"]);
    assert!(o.status.success(), "{}", stderr(&o));
}
