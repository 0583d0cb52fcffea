//! sysbench compatibility: every workload's statement mix, read from the server's Com_* counters,
//! matches sysbench 1.0.20's own run on the same tables; and each tool runs on tables the other
//! prepared. Runs sequentially in one test: the counters are server-wide.

mod common;
use common::*;
use std::collections::BTreeMap;
use std::process::Command;

const COUNTERS: [&str; 7] = [
    "Com_select",
    "Com_insert",
    "Com_update",
    "Com_delete",
    "Com_begin",
    "Com_commit",
    "Com_rollback",
];

/// The counters are server-wide: the tests of this file take turns.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn counters() -> BTreeMap<String, i64> {
    sql("SHOW GLOBAL STATUS WHERE Variable_name LIKE 'Com\\_%'")
        .lines()
        .filter_map(|l| {
            let (k, v) = l.split_once('\t')?;
            Some((k.to_string(), v.trim().parse().ok()?))
        })
        .collect()
}

fn delta(f: impl FnOnce()) -> BTreeMap<&'static str, i64> {
    let before = counters();
    f();
    let after = counters();
    COUNTERS
        .iter()
        .map(|k| {
            (
                *k,
                after.get(*k).unwrap_or(&0) - before.get(*k).unwrap_or(&0),
            )
        })
        .collect()
}

fn sysbench(workload: &str, db: &str, extra: &[&str], cmd: &str) {
    let sock = socket();
    let o = Command::new("sysbench")
        .arg(workload)
        .args([
            &format!("--mysql-socket={sock}"),
            "--mysql-user=root",
            &format!("--mysql-db={db}"),
            "--db-driver=mysql",
        ])
        .args(extra)
        .arg(cmd)
        .output()
        .expect("sysbench is installed");
    assert!(
        o.status.success(),
        "sysbench {workload} {cmd}: {}{}",
        stdout(&o),
        stderr(&o)
    );
}

#[test]
fn statement_mix_matches_sysbench_for_every_workload() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let s = Scratch::new();
    let sock = socket();
    sql("CREATE DATABASE IF NOT EXISTS mixdb");
    let shape = ["--tables", "2", "--table-size", "2000"];
    let o = s.run(
        &[
            &[
                "prepare",
                "oltp_read_write",
                "--socket",
                &sock,
                "--database",
                "mixdb",
            ][..],
            &shape[..],
        ]
        .concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let events = 300;
    for w in [
        "oltp_point_select",
        "oltp_read_only",
        "oltp_read_write",
        "oltp_write_only",
        "oltp_update_index",
        "oltp_update_non_index",
        "oltp_insert",
        "oltp_delete",
        "select_random_points",
        "select_random_ranges",
    ] {
        let theirs = delta(|| {
            sysbench(
                w,
                "mixdb",
                &[
                    "--tables=2",
                    "--table-size=2000",
                    &format!("--events={events}"),
                    "--time=0",
                ],
                "run",
            )
        });
        let ours = delta(|| {
            let o = s.run(
                &[
                    &[
                        "run",
                        w,
                        "--socket",
                        &sock,
                        "--database",
                        "mixdb",
                        "--events",
                        &events.to_string(),
                    ][..],
                    &shape[..],
                ]
                .concat(),
            );
            assert!(o.status.success(), "{w}: {}", stderr(&o));
        });
        for k in COUNTERS {
            // Our control connection issues a handful of SELECTs (version, variables) per run.
            let slack = if k == "Com_select" { 12 } else { 0 };
            assert!(
                (ours[k] - theirs[k]).abs() <= slack,
                "{w}: {k} qpslab {} vs sysbench {} (all: ours {ours:?} theirs {theirs:?})",
                ours[k],
                theirs[k]
            );
        }
        assert!(
            theirs.values().sum::<i64>() >= events,
            "{w}: sysbench ran nothing? {theirs:?}"
        );
    }
}

#[test]
fn each_tool_runs_on_tables_the_other_prepared() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let s = Scratch::new();
    let sock = socket();
    // qpslab prepares, sysbench runs.
    let o = s.run(&[
        "prepare",
        "oltp_read_write",
        "--socket",
        &sock,
        "--database",
        "byqpslab",
        "--tables",
        "2",
        "--table-size",
        "1000",
        "--create-db",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    sysbench(
        "oltp_read_write",
        "byqpslab",
        &["--tables=2", "--table-size=1000", "--time=2"],
        "run",
    );
    // sysbench prepares, qpslab runs (and does not rebuild or drop the foreign tables).
    sql("CREATE DATABASE IF NOT EXISTS bysysbench");
    sysbench(
        "oltp_read_write",
        "bysysbench",
        &["--tables=2", "--table-size=1000"],
        "prepare",
    );
    let o = s.run(&[
        "run",
        "oltp_read_write",
        "--socket",
        &sock,
        "--database",
        "bysysbench",
        "--tables",
        "2",
        "--table-size",
        "1000",
        "--time",
        "2",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("preparing"), "{}", stderr(&o));
    // Same CREATE TABLE on both sides.
    // AUTO_INCREMENT's next value differs after the runs' inserts; everything else must not.
    let show = |db: &str| {
        let text = sql(&format!("SHOW CREATE TABLE {db}.sbtest1")).replace(db, "DB");
        text.split(' ')
            .filter(|w| !w.starts_with("AUTO_INCREMENT="))
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(show("byqpslab"), show("bysysbench"));
}
