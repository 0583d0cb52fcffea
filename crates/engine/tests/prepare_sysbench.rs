//! prepare / dataset_status / cleanup against a real MariaDB, cross-checked with real sysbench
//! 1.0.20: each tool's tables must serve the other.

use qpslab_core::workload::{WorkloadKind, WorkloadOptions};
use qpslab_core::ConnectOptions;
use qpslab_engine::prepare::{
    cleanup, dataset_status, prepare, prepare_with, DatasetStatus, LoadMethod, PrepareConfig,
    PrepareError,
};
use qpslab_wire::Conn;
use std::process::Command;

fn server_opts(db: &str) -> ConnectOptions {
    let mut o = qpslab_sandbox::testing::shared_server().connect_options();
    o.database = Some(db.to_string());
    o
}

fn socket() -> String {
    qpslab_sandbox::testing::shared_server()
        .socket()
        .display()
        .to_string()
}

fn workload(kind: WorkloadKind, tables: u32, size: u64) -> WorkloadOptions {
    let mut w = WorkloadOptions::new(kind);
    w.tables = tables;
    w.table_size = size;
    w.rand.seed = 11;
    w
}

fn sql(db: &str, q: &str) -> Vec<Vec<Option<String>>> {
    let mut c = Conn::connect(&server_opts(db)).unwrap();
    c.query(q).unwrap_or_else(|e| panic!("{q}: {e}")).rows
}

fn scalar(db: &str, q: &str) -> String {
    sql(db, q)[0][0].clone().unwrap_or_default()
}

fn fresh_db(db: &str) {
    let mut c = Conn::connect(&server_opts("mysql")).unwrap();
    c.execute(&format!("DROP DATABASE IF EXISTS {db}")).unwrap();
}

/// Runs sysbench with `args` against the shared server; returns its stdout, asserting exit 0.
fn sysbench(db: &str, args: &[&str]) -> String {
    let sock = socket();
    let out = Command::new("sysbench")
        .args(args)
        .arg(format!("--mysql-socket={sock}"))
        .args(["--mysql-user=root", &format!("--mysql-db={db}")])
        .output()
        .expect("sysbench runs");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "sysbench {args:?} failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn show_create(db: &str, table: &str) -> String {
    sql(db, &format!("SHOW CREATE TABLE {table}"))[0][1]
        .clone()
        .unwrap()
}

fn no_progress() -> impl FnMut(qpslab_engine::prepare::PrepareProgress) {
    |_| {}
}

#[test]
fn qpslab_tables_run_under_sysbench_read_write() {
    let db = "qp_rw";
    fresh_db(db);
    let w = workload(WorkloadKind::OltpReadWrite, 2, 1000);
    let r = prepare(&server_opts(db), &w, 2, &mut no_progress()).unwrap();
    assert_eq!((r.tables, r.rows, r.already_present), (2, 2000, false));
    let out = sysbench(
        db,
        &[
            "oltp_read_write",
            "--tables=2",
            "--table-size=1000",
            "--time=2",
            "run",
        ],
    );
    assert!(out.contains("transactions:"), "{out}");
    assert!(
        out.contains("ignored errors:                      0"),
        "{out}"
    );
    // Other scripts use the same tables.
    for script in ["oltp_point_select", "oltp_write_only", "oltp_delete"] {
        let out = sysbench(
            db,
            &[
                script,
                "--tables=2",
                "--table-size=1000",
                "--events=200",
                "--time=0",
                "run",
            ],
        );
        assert!(
            out.contains("ignored errors:                      0"),
            "{script}: {out}"
        );
    }
}

#[test]
fn sysbench_tables_are_foreign_usable_and_never_dropped() {
    let db = "sb_ref";
    fresh_db(db);
    let mut c = Conn::connect(&server_opts("mysql")).unwrap();
    c.execute(&format!("CREATE DATABASE {db}")).unwrap();
    sysbench(
        db,
        &[
            "oltp_read_write",
            "--tables=2",
            "--table-size=500",
            "prepare",
        ],
    );
    let w = workload(WorkloadKind::OltpReadWrite, 2, 500);
    let mut conn = Conn::connect(&server_opts(db)).unwrap();
    assert_eq!(
        dataset_status(&mut conn, &w).unwrap(),
        DatasetStatus::Foreign
    );
    let other = workload(WorkloadKind::OltpReadWrite, 2, 600);
    let DatasetStatus::Different(why) = dataset_status(&mut conn, &other).unwrap() else {
        panic!("a different size must not match")
    };
    assert!(
        why.contains("500 rows") && why.contains("not created by qpslab"),
        "{why}"
    );
    // Neither prepare nor cleanup touches them.
    let e = prepare(&server_opts(db), &w, 1, &mut no_progress()).unwrap_err();
    assert!(matches!(e, PrepareError::Conflict(_)), "{e}");
    let e = cleanup(&server_opts(db), Some(2)).unwrap_err();
    assert!(
        e.to_string().contains("refusing to drop sbtest1, sbtest2"),
        "{e}"
    );
    assert_eq!(
        cleanup(&server_opts(db), None).unwrap().dropped,
        Vec::<String>::new()
    );
    assert_eq!(scalar(db, "SELECT COUNT(*) FROM sbtest2"), "500");
}

#[test]
fn show_create_table_and_values_match_sysbench() {
    let (qp, sb) = ("qp_shape", "sb_shape");
    fresh_db(qp);
    fresh_db(sb);
    let mut c = Conn::connect(&server_opts("mysql")).unwrap();
    c.execute(&format!("CREATE DATABASE {sb}")).unwrap();
    sysbench(
        sb,
        &[
            "oltp_read_only",
            "--tables=1",
            "--table-size=2000",
            "prepare",
        ],
    );
    // Several small chunks over three connections: one table loaded in parallel.
    let w = workload(WorkloadKind::OltpReadOnly, 1, 2000);
    let cfg = PrepareConfig {
        threads: 3,
        method: LoadMethod::Auto,
        chunk_rows: 300,
        create_database: true,
    };
    prepare_with(&server_opts(qp), &w, &cfg, &mut no_progress()).unwrap();
    assert_eq!(show_create(qp, "sbtest1"), show_create(sb, "sbtest1"));
    for db in [qp, sb] {
        assert_eq!(
            scalar(
                db,
                "SELECT CONCAT(COUNT(*), ' ', MIN(id), ' ', MAX(id)) FROM sbtest1"
            ),
            "2000 1 2000"
        );
        let bad = scalar(
            db,
            "SELECT COUNT(*) FROM sbtest1 WHERE c NOT REGEXP '^([0-9]{11}-){9}[0-9]{11}$' \
             OR pad NOT REGEXP '^([0-9]{11}-){4}[0-9]{11}$'",
        );
        assert_eq!(bad, "0", "{db}: c/pad format");
        // k follows the special distribution: ~75% in the 1% window around the middle.
        let hot: f64 = scalar(db, "SELECT AVG(k BETWEEN 990 AND 1011) FROM sbtest1")
            .parse()
            .unwrap();
        assert!(hot > 0.70 && hot < 0.85, "{db}: hot share {hot}");
    }
}

#[test]
fn status_and_cleanup_follow_the_record() {
    let db = "qp_status";
    fresh_db(db);
    let w = workload(WorkloadKind::OltpPointSelect, 3, 300);
    // No database yet: prepare creates it.
    prepare(&server_opts(db), &w, 2, &mut no_progress()).unwrap();
    let mut conn = Conn::connect(&server_opts(db)).unwrap();
    assert_eq!(
        dataset_status(&mut conn, &w).unwrap(),
        DatasetStatus::Matches
    );
    let fewer = workload(WorkloadKind::OltpReadWrite, 2, 300);
    assert_eq!(
        dataset_status(&mut conn, &fewer).unwrap(),
        DatasetStatus::Matches
    );
    let more = workload(WorkloadKind::OltpPointSelect, 4, 300);
    assert!(matches!(
        dataset_status(&mut conn, &more).unwrap(),
        DatasetStatus::Different(_)
    ));
    let mut secondary = w.clone();
    secondary.secondary = true;
    let DatasetStatus::Different(why) = dataset_status(&mut conn, &secondary).unwrap() else {
        panic!("secondary differs")
    };
    assert!(why.contains("--secondary"), "{why}");
    // A matching dataset is left alone.
    let again = prepare(&server_opts(db), &w, 2, &mut no_progress()).unwrap();
    assert!(again.already_present);
    // A foreign table among ours blocks a targeted cleanup before anything is dropped.
    conn.execute("CREATE TABLE sbtest9 (id INT)").unwrap();
    let e = cleanup(&server_opts(db), Some(9)).unwrap_err();
    assert!(e.to_string().contains("sbtest9"), "{e}");
    assert_eq!(scalar(db, "SELECT COUNT(*) FROM sbtest1"), "300");
    let r = cleanup(&server_opts(db), None).unwrap();
    assert_eq!(r.dropped, ["sbtest1", "sbtest2", "sbtest3"]);
    assert_eq!(
        dataset_status(&mut conn, &w).unwrap(),
        DatasetStatus::Missing
    );
    let left = sql(
        db,
        "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() ORDER BY 1",
    );
    assert_eq!(left, vec![vec![Some("sbtest9".to_string())]]);
}

#[test]
fn every_method_loads_the_same_rows() {
    let w = workload(WorkloadKind::OltpReadWrite, 1, 5000);
    let mut sums = Vec::new();
    for (db, method) in [
        ("qp_bulk", LoadMethod::Bulk),
        ("qp_load", LoadMethod::LoadData),
        ("qp_ins", LoadMethod::Insert),
    ] {
        fresh_db(db);
        let cfg = PrepareConfig {
            threads: 2,
            method,
            chunk_rows: 1000,
            create_database: true,
        };
        let r = prepare_with(&server_opts(db), &w, &cfg, &mut no_progress()).unwrap();
        assert_eq!(r.method, method);
        sums.push(sql(db, "CHECKSUM TABLE sbtest1")[0][1].clone());
    }
    assert_eq!(sums[0], sums[1]);
    assert_eq!(sums[1], sums[2]);
    // On MariaDB the automatic choice is the bulk path.
    fresh_db("qp_auto");
    let cfg = PrepareConfig {
        threads: 2,
        method: LoadMethod::Auto,
        chunk_rows: 1000,
        create_database: true,
    };
    let r = prepare_with(&server_opts("qp_auto"), &w, &cfg, &mut no_progress()).unwrap();
    assert_eq!(r.method, LoadMethod::Bulk);
    assert_eq!(sql("qp_auto", "CHECKSUM TABLE sbtest1")[0][1], sums[0]);
}

#[test]
fn progress_reaches_the_total() {
    let db = "qp_progress";
    fresh_db(db);
    let w = workload(WorkloadKind::OltpReadWrite, 2, 20_000);
    let mut last = None;
    prepare(&server_opts(db), &w, 2, &mut |p| last = Some(p)).unwrap();
    let p = last.unwrap();
    assert_eq!((p.rows_done, p.rows_total), (40_000, 40_000));
    assert_eq!((p.tables_done, p.tables_total), (2, 2));
}

#[test]
fn select_random_refuses_several_tables_like_sysbench() {
    let w = workload(WorkloadKind::SelectRandomPoints, 2, 100);
    let e = prepare(&server_opts("qp_never"), &w, 1, &mut no_progress()).unwrap_err();
    assert!(e.to_string().contains("--tables > 1"), "{e}");
}
