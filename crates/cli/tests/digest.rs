//! `qpslab digest`: golden renderings of real logs, user errors, and a slow log captured from a
//! known statement mix on a real server, digested into exactly those classes and counts and
//! checked against pt-query-digest's counts on the same log.

mod common;
use common::*;

use qpslab_sqllog::fingerprint;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../sqllog/tests/data")
}

/// `qpslab digest ARGS` run in the fixtures' directory (so the header names them relatively).
fn digest(s: &Scratch, args: &[&str]) -> std::process::Output {
    let mut all = vec!["digest"];
    all.extend_from_slice(args);
    s.cmd(&all).current_dir(data()).output().unwrap()
}

fn ok(o: &std::process::Output) -> String {
    assert!(o.status.success(), "{}", stderr(o));
    stdout(o)
}

#[test]
fn renderings_match_golden_files() {
    let s = Scratch::new();
    let slow = "mariadb-10.11-slow.log";
    check_golden("digest_slow.txt", &ok(&digest(&s, &[slow, "--limit", "5"])));
    check_golden(
        "digest_slow.md",
        &ok(&digest(&s, &[slow, "--format", "md", "--limit", "3"])),
    );
    check_golden(
        "digest_slow.json",
        // The bound given: the default follows the machine's memory.
        &ok(&digest(
            &s,
            &[slow, "--format", "json", "--max-classes", "1000"],
        )),
    );
    let general = [
        "mariadb-10.11-general.log",
        "--log-type",
        "general",
        "--limit",
        "6",
    ];
    check_golden("digest_general.txt", &ok(&digest(&s, &general)));
}

#[test]
fn standard_input_and_the_json_file() {
    let s = Scratch::new();
    let file = s.path().join("digest.json");
    let log = std::fs::File::open(data().join("mysql-8.0-slow.log")).unwrap();
    let args = [
        "digest",
        "-",
        "--limit",
        "1",
        "--json",
        file.to_str().unwrap(),
    ];
    let o = s.cmd(&args).stdin(log).output().unwrap();
    let table = ok(&o);
    assert!(
        table.contains("log      - ·") && table.contains("MySQL"),
        "{table}"
    );
    let json: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        (json["entries"].as_u64(), json["classes"].as_u64()),
        (Some(3), Some(3))
    );
    assert_eq!(json["top"].as_array().unwrap().len(), 1);
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let s = Scratch::new();
    let general = digest(&s, &["mariadb-10.11-general.log"]);
    assert_user_error(&general, "not a slow log");
    assert_user_error(&general, "use --log-type general");
    assert_user_error(&digest(&s, &["no-such.log"]), "cannot open no-such.log");
    assert_user_error(&digest(&s, &["."]), "is a directory");
    let garbage = s.path().join("garbage.bin");
    let bytes: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&garbage, bytes).unwrap();
    assert_user_error(
        &digest(&s, &[garbage.to_str().unwrap()]),
        "it starts with binary data",
    );
    assert_user_error(&digest(&s, &["x.log", "--log-type", "audit"]), "audit");
    let out = s.path().join("out.json");
    let out_arg = out.to_str().unwrap();
    let wrong = digest(&s, &["mariadb-10.11-general.log", "--json", out_arg]);
    assert_user_error(&wrong, "use --log-type general");
    assert!(
        !out.exists(),
        "a JSON file was written for a log that is not one"
    );
    let nowhere = digest(
        &s,
        &["mariadb-10.11-slow.log", "--json", "/no/such/dir/x.json"],
    );
    assert_user_error(
        &nowhere,
        "--json /no/such/dir/x.json: directory /no/such/dir does not exist",
    );
    for o in [&general, &digest(&s, &["no-such.log"])] {
        assert_eq!(stderr(o).trim_end().lines().count(), 1, "{}", stderr(o));
    }
}

/// The statement mix: (statement, how many), each statement with other literals each time.
fn mix() -> Vec<String> {
    let mut out = Vec::new();
    out.extend((1..=7).map(|i| format!("SELECT c FROM dg.sbtest1 WHERE id={i}")));
    out.extend((1..=5).map(|i| format!("SELECT c FROM dg.sbtest12 WHERE id={}", i * 3)));
    for n in [1, 2, 3, 5, 8, 10] {
        let list: Vec<String> = (1..=n).map(|i| i.to_string()).collect();
        out.push(format!(
            "SELECT c FROM dg.sbtest1 WHERE id IN ({})",
            list.join(",")
        ));
    }
    out.extend((1..=4).map(|i| format!("UPDATE dg.sbtest1 SET k=k+1 WHERE id={i}")));
    for (first, rows) in [(100, 1), (200, 2), (300, 4)] {
        let values: Vec<String> = (0..rows)
            .map(|r| format!("({}, {r}, 'row {r}')", first + r))
            .collect();
        out.push(format!(
            "INSERT INTO dg.sbtest2 (id, k, c) VALUES {}",
            values.join(", ")
        ));
    }
    out.push("SELECT COUNT(*) FROM dg.sbtest1 WHERE c = 'a' /* audit */".into());
    out.push("select count(*) from dg.sbtest1 where c = \"it's\"".into());
    out
}

fn expected() -> BTreeMap<String, u64> {
    [
        ("select c from dg.sbtest1 where id=?", 7),
        ("select c from dg.sbtest12 where id=?", 5),
        ("select c from dg.sbtest1 where id in(?+)", 6),
        ("update dg.sbtest1 set k=k+? where id=?", 4),
        ("insert into dg.sbtest2 (id, k, c) values(?+)", 3),
        ("select count(*) from dg.sbtest1 where c = ?", 2),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// Runs the mix from fresh connections (each `sql` call is one client session) with the
/// slow log on at long_query_time=0; returns the log's path.
fn capture() -> PathBuf {
    let log = qpslab_sandbox::testing::shared_server()
        .datadir()
        .join("digest-test-slow.log");
    let _ = std::fs::remove_file(&log);
    sql("CREATE DATABASE IF NOT EXISTS dg; \
         CREATE TABLE IF NOT EXISTS dg.sbtest1 (id INT PRIMARY KEY, k INT, c VARCHAR(20)); \
         CREATE TABLE IF NOT EXISTS dg.sbtest12 LIKE dg.sbtest1; \
         CREATE TABLE IF NOT EXISTS dg.sbtest2 LIKE dg.sbtest1; \
         REPLACE INTO dg.sbtest1 SELECT seq, seq, 'a' FROM dg.seq_1_to_20; \
         REPLACE INTO dg.sbtest12 SELECT seq, seq, 'b' FROM dg.seq_1_to_20; DELETE FROM dg.sbtest2;");
    sql(&format!(
        "SET GLOBAL slow_query_log_file='{}', long_query_time=0, \
         log_slow_verbosity='query_plan,innodb', slow_query_log=1",
        log.display()
    ));
    let statements = mix();
    let sessions = 6;
    for s in 0..sessions {
        let mine: Vec<&str> = statements
            .iter()
            .skip(s)
            .step_by(sessions)
            .map(String::as_str)
            .collect();
        sql(&mine.join(";\n"));
    }
    sql("SET GLOBAL slow_query_log=0, long_query_time=10");
    log
}

/// Folds a fingerprint as pt-fingerprint does with digits in names (`sbtest12` → `sbtest?`).
fn pt_folded(fp: &str) -> String {
    let mut out = String::new();
    for c in fp.chars() {
        if !c.is_ascii_digit() {
            out.push(c);
        } else if !out.ends_with('?') {
            out.push('?');
        }
    }
    out
}

#[test]
fn a_captured_mix_is_digested_into_its_classes_as_pt_query_digest_counts_them() {
    let log = capture();
    let s = Scratch::new();
    let o = s.run(&["digest", log.to_str().unwrap(), "--format", "json"]);
    let report: Value = serde_json::from_str(&ok(&o)).unwrap();
    let ours: BTreeMap<String, u64> = report["top"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["fingerprint"].as_str().unwrap().to_string(),
                c["count"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(ours, expected());
    assert_eq!(
        (report["entries"].as_u64(), report["skipped"].as_u64()),
        (Some(27), Some(0))
    );

    let (pt_classes, theirs) = pt_counts(&log, &[]);
    let ours_folded = folded(&ours);
    assert_eq!(
        theirs, ours_folded,
        "per-class counts differ from pt-query-digest's"
    );
    // pt merges sbtest1's and sbtest12's point selects (7 + 5), which we keep apart
    assert_eq!(pt_classes, 5);
    assert_eq!(theirs.get("select c from dg.sbtest? where id=?"), Some(&12));
}

/// Our digest's classes (`--format json`) of `log` with `extra` arguments: fingerprint → count.
fn our_counts(log: &Path, extra: &[&str]) -> BTreeMap<String, u64> {
    let s = Scratch::new();
    let mut args = vec!["digest", log.to_str().unwrap(), "--format", "json"];
    args.extend_from_slice(extra);
    let report: Value = serde_json::from_str(&ok(&s.run(&args))).unwrap();
    report["top"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let fp = c["fingerprint"].as_str().unwrap().to_string();
            (fp, c["count"].as_u64().unwrap())
        })
        .collect()
}

/// Counts keyed by the pt-folded fingerprint (lowercased: our admin classes keep the command's
/// name as the log writes it, `administrator command: Quit`).
fn folded(counts: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    let mut out: BTreeMap<String, u64> = BTreeMap::new();
    for (fp, n) in counts {
        *out.entry(pt_folded(&fp.to_lowercase())).or_default() += n;
    }
    out
}

/// pt-query-digest's classes of `log` (with `extra` arguments): how many, and their counts keyed
/// by our fingerprint of each class's example, pt-folded (so the two normalizers' small
/// differences, such as pt's `k=k?` for `k=k+1`, do not matter).
fn pt_counts(log: &Path, extra: &[&str]) -> (usize, BTreeMap<String, u64>) {
    let pt = Command::new("pt-query-digest")
        .args([
            "--output",
            "json",
            "--limit",
            "100%:10000",
            "--no-version-check",
        ])
        .args(extra)
        .arg(log)
        .output()
        .expect("pt-query-digest (percona-toolkit) is installed");
    let pt: Value = serde_json::from_str(&ok(&pt)).unwrap();
    let classes = pt["classes"].as_array().unwrap();
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    for class in classes {
        let example = class["example"]["query"].as_str().unwrap();
        *counts.entry(pt_folded(&fingerprint(example))).or_default() +=
            class["query_count"].as_u64().unwrap();
    }
    (classes.len(), counts)
}

#[test]
fn a_general_log_is_digested_as_pt_query_digest_counts_it_but_for_its_known_slips() {
    let log = data().join("mariadb-10.11-general.log");
    let ours = folded(&our_counts(&log, &["--log-type", "general"]));
    let (_, theirs) = pt_counts(&log, &["--type", "genlog"]);
    // The one difference on this real MariaDB general log: pt-query-digest counts a
    // binary-protocol `Execute` as an admin command; we digest the statement it ran.
    let mut want = theirs.clone();
    let admin = want.remove("administrator command: execute");
    assert_eq!(admin, Some(1), "{theirs:#?}");
    *want
        .entry("select c from shop.sbtest? where id=?".into())
        .or_default() += 1;
    assert_eq!(
        ours, want,
        "per-class counts against pt-query-digest --type genlog"
    );
}
