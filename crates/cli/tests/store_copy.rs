//! `qpslab import` into a server's store and `qpslab export` back to a new file: runs measured
//! on the shared server and a small study, kept in an SQLite file, read the same from the
//! file, from its copy on a server schema and from that copy exported again. Each copy is made
//! into an empty store, so the ids come out as they were: every command's output is compared
//! byte for byte. Then the user errors: an export onto an existing file, an import of a file
//! that is no store, and a server that refuses the login (its password never shown).

mod common;
use common::*;
use std::path::Path;

/// The database of the shared server these tests measure, and its dataset.
const DB: &str = "store_copy";
const DATASET: [&str; 4] = ["--tables", "1", "--table-size", "500"];

/// A store URL on the shared server: schema `schema`, or the login `user:password`.
fn url(login: &str, schema: &str) -> String {
    format!("mysql://{login}@localhost/{schema}?socket={}", socket())
}

/// A 1 s run of `threads` on the shared server stored in `db`; its id.
fn measure(s: &Scratch, db: &Path, threads: &str) -> String {
    let sock = socket();
    let mut args = vec![
        "run",
        "oltp_point_select",
        "--socket",
        &sock,
        "--database",
        DB,
    ];
    args.extend_from_slice(&DATASET);
    args.extend([
        "--threads",
        threads,
        "--time",
        "1",
        "--warmup",
        "0",
        "--report-interval",
        "0.5",
        "--db",
        db.to_str().unwrap(),
    ]);
    let o = s.run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    stored_run_id(&stdout(&o))
}

/// A study of two cells on the shared server stored in `db`.
fn study(s: &Scratch, db: &Path) {
    let spec = s.path().join("copied.toml");
    std::fs::write(
        &spec,
        format!(
            "name = \"copied\"\n[defaults]\nworkload = \"oltp_point_select\"\ntables = 1\n\
             table_size = 500\nduration = \"1s\"\nwarmup = 0\nretries = 0\n\
             [[variant]]\nname = \"ext\"\ntarget = \"{}\"\n[sweep]\nthreads = [1, 2]\n",
            url("root", DB)
        ),
    )
    .unwrap();
    let o = s.run(&[
        "lab",
        "run",
        spec.to_str().unwrap(),
        "--db",
        db.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// What each reading command prints of `db`: the runs, a run as text and JSON, a comparison,
/// a report and the study.
fn readings(s: &Scratch, db: &str) -> Vec<(String, String)> {
    let commands: [&[&str]; 7] = [
        &["show"],
        &["show", "1"],
        &["show", "1", "--format", "json"],
        &["compare", "1", "2"],
        &["report", "1", "--format", "md"],
        &["lab", "show", "copied"],
        &["lab", "show", "copied", "--format", "json"],
    ];
    commands
        .iter()
        .map(|args| {
            let mut all = args.to_vec();
            all.extend(["--db", db]);
            let o = s.run(&all);
            assert!(o.status.success(), "{all:?}: {}", stderr(&o));
            (args.join(" "), stdout(&o))
        })
        .collect()
}

/// `a` and `b` print the same, command by command.
fn same(a: &[(String, String)], b: &[(String, String)], what: &str) {
    for ((cmd, x), (_, y)) in a.iter().zip(b) {
        assert!(!x.is_empty(), "{cmd} printed nothing");
        assert_eq!(x, y, "`{cmd}` differs {what}");
    }
}

#[test]
fn a_file_copied_to_a_server_and_exported_back_reads_byte_for_byte_the_same() {
    let s = Scratch::new();
    prepare_shared(&s, "oltp_point_select", DB, &DATASET);
    let file = s.path().join("measured.db");
    assert_eq!(measure(&s, &file, "1"), "1");
    assert_eq!(measure(&s, &file, "1"), "2");
    study(&s, &file);
    let kept = rusqlite::Connection::open(&file).unwrap();
    for table in [
        "telemetry",
        "histograms",
        "samples",
        "cells",
        "cell_attempts",
    ] {
        let n: i64 = kept
            .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
            .unwrap();
        assert!(n > 0, "the measured store has {table}");
    }
    drop(kept);
    let file = file.to_str().unwrap();
    let before = readings(&s, file);

    let server = url("root", &format!("store_copy_{}", std::process::id()));
    let o = s.run(&["import", file, "--db", &server]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains(": imported as run 1\n") && out.contains("study copied: imported"),
        "{out}"
    );
    same(
        &before,
        &readings(&s, &server),
        "between the file and the server",
    );

    let back = s.path().join("back.db");
    let back = back.to_str().unwrap();
    let o = s.run(&["export", "--db", &server, "--out", back]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains(": exported as run 1\n") && out.contains("runs exported to"),
        "{out}"
    );
    same(
        &before,
        &readings(&s, back),
        "after the export back to a file",
    );

    // An export of one study picks its runs; the store read names where each came from.
    let one = s.path().join("one.db");
    let o = s.run(&[
        "export",
        "copied",
        "--db",
        &server,
        "--out",
        one.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(doc["studies"][0]["name"], "copied");
    assert_eq!(doc["runs"].as_array().unwrap().len(), 2, "{doc}");
    let origin: String = rusqlite::Connection::open(&one)
        .unwrap()
        .query_row("SELECT imported_from FROM runs LIMIT 1", [], |r| r.get(0))
        .unwrap();
    assert_eq!(
        origin, file,
        "where it was measured, not where it passed through"
    );
}

#[test]
fn export_onto_a_file_a_non_store_and_a_refused_login_are_errors() {
    let s = Scratch::new();
    let there = s.path().join("there.db");
    stored::run_in(&there, None);
    let there = there.to_str().unwrap();
    let taken = s.path().join("taken.db");
    std::fs::write(&taken, "mine").unwrap();
    assert_user_error(
        &s.run(&["export", "--db", there, "--out", taken.to_str().unwrap()]),
        "taken.db exists",
    );
    assert_eq!(std::fs::read(&taken).unwrap(), b"mine", "left as it was");
    let fresh = s.path().join("fresh.db");
    assert_user_error(
        &s.run(&[
            "export",
            "9",
            "--db",
            there,
            "--out",
            fresh.to_str().unwrap(),
        ]),
        "has no run 9",
    );
    assert!(!fresh.exists(), "a refused export leaves no file");

    let notes = s.path().join("notes.txt");
    std::fs::write(&notes, "some words, not a store").unwrap();
    let server = url("root", &format!("store_copy_err_{}", std::process::id()));
    assert_user_error(
        &s.run(&["import", notes.to_str().unwrap(), "--db", &server]),
        "is not a qpslab results store",
    );

    let refused = url("nobody:hunter2", "store_copy_refused");
    for args in [
        vec!["import", there, "--db", &refused],
        vec!["export", "--db", &refused, "--out", fresh.to_str().unwrap()],
        vec!["import", &refused, "--db", fresh.to_str().unwrap()],
    ] {
        let o = s.run(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        assert!(err.contains("denied"), "{err}");
        assert!(
            !err.contains("hunter2"),
            "the password is never shown: {err}"
        );
        assert!(!fresh.exists(), "{args:?} left {}", fresh.display());
    }
}
