//! Replaying logs on the real shared test server: every statement runs exactly once (the
//! server's Com_* counters say so) in both modes, `--read-only` runs no write, failing
//! statements are counted per class and code, sessions mode keeps each connection's order and
//! the log's timing scaled by the speed.

use qpslab_core::fault::Blame;
use qpslab_core::replay::ReplayMode;
use qpslab_core::{ConnectOptions, PhaseResult};
use qpslab_sqllog::Policy;
use qpslab_traffic::replay::exec::replay;
use qpslab_traffic::replay::{check_databases, Logged, ReplayLog, ReplayOptions};
use qpslab_wire::Conn;
use std::sync::atomic::AtomicBool;
use std::sync::Mutex;
use std::time::Instant;

/// The tests read global counters of one server: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// The shared server, with database `db` holding an empty table `t (id, v)`.
fn fresh(db: &str) -> ConnectOptions {
    let mut opts = qpslab_sandbox::testing::shared_server().connect_options();
    let mut c = Conn::connect(&opts).expect("connect");
    c.execute(&format!("DROP DATABASE IF EXISTS {db}")).unwrap();
    c.execute(&format!("CREATE DATABASE {db}")).unwrap();
    c.execute(&format!("CREATE TABLE {db}.t (id INT PRIMARY KEY, v INT)"))
        .unwrap();
    opts.database = Some(db.into());
    opts
}

fn com(opts: &ConnectOptions, name: &str) -> u64 {
    let mut c = Conn::connect(opts).expect("connect");
    let r = c
        .query(&format!("SHOW GLOBAL STATUS LIKE 'Com_{name}'"))
        .unwrap();
    r.rows[0][1].as_deref().unwrap().parse().unwrap()
}

fn options(mode: ReplayMode, speed: f64) -> ReplayOptions {
    ReplayOptions {
        mode,
        speed,
        threads: None,
        database: None,
        policy: Policy::default(),
        report_interval_s: 1.0,
        percentiles: vec![99.0],
    }
}

fn stmt(log: &mut ReplayLog, conn: u64, at_s: i64, sql: &str, db: &str) {
    // Numbers become `?` (a run of digits, one `?`).
    let mut fingerprint = String::new();
    for c in sql.chars() {
        match (c.is_ascii_digit(), fingerprint.ends_with('?')) {
            (true, true) => {}
            (true, false) => fingerprint.push('?'),
            _ => fingerprint.push(c),
        }
    }
    log.add_statement(Logged {
        conn,
        start_us: Some(at_s * 1_000_000),
        query_s: 0.0,
        sql: sql.as_bytes().to_vec(),
        fingerprint,
        verdict: qpslab_sqllog::classify(sql),
        db: Some(db.to_string()),
    });
}

/// 4 connections, each inserting 5 rows, reading them and updating them.
fn mix(db: &str) -> ReplayLog {
    let mut log = ReplayLog::default();
    for conn in 1..=4u64 {
        for i in 0..5 {
            let id = conn * 100 + i;
            let at = i as i64;
            stmt(
                &mut log,
                conn,
                at,
                &format!("INSERT INTO t VALUES ({id}, 0)"),
                db,
            );
            stmt(
                &mut log,
                conn,
                at,
                &format!("SELECT v FROM t WHERE id = {id}"),
                db,
            );
            stmt(
                &mut log,
                conn,
                at,
                &format!("UPDATE t SET v = 1 WHERE id = {id}"),
                db,
            );
        }
    }
    log
}

fn run(opts: &ConnectOptions, log: &ReplayLog, o: &ReplayOptions) -> PhaseResult {
    let mut c = Conn::connect(opts).unwrap();
    check_databases(&mut c, log, o).expect("databases");
    replay(
        opts,
        log,
        o,
        &mut |_| {},
        &AtomicBool::new(false),
        &Default::default(),
    )
    .expect("replay")
}

#[test]
fn every_statement_runs_once_in_both_modes() {
    let _g = serial();
    for (mode, speed) in [(ReplayMode::Max, 1.0), (ReplayMode::Sessions, 0.0)] {
        let opts = fresh("replay_once");
        let log = mix("replay_once");
        let before = ["insert", "select", "update"].map(|n| com(&opts, n));
        let o = ReplayOptions {
            threads: (mode == ReplayMode::Max).then_some(3),
            ..options(mode, speed)
        };
        let p = run(&opts, &log, &o);
        let after = ["insert", "select", "update"].map(|n| com(&opts, n));
        let delta: Vec<u64> = after.iter().zip(&before).map(|(a, b)| a - b).collect();
        assert_eq!(delta, [20, 20, 20], "{mode}");
        assert_eq!((p.events, p.queries.write, p.error_total()), (60, 40, 0));
        assert_eq!(p.statements.len(), 3, "{:?}", p.statements);
        // Max: the threads asked for; sessions: the log's 4 overlapping connections.
        let sessions = if mode == ReplayMode::Max { 3 } else { 4 };
        assert_eq!(p.threads, sessions);
        assert!(p.replay.as_ref().unwrap().complete);
        // The client measures itself as a run does: its CPU is in the phase and its intervals.
        let cpu = |c: &qpslab_core::result::CpuUsage| c.user_s + c.sys_s;
        assert!(
            cpu(&p.client_cpu) > 0.0 && p.client_cpu.max_rss_kib > 0,
            "{mode}"
        );
        let per_interval: f64 = p.samples.iter().map(|s| cpu(&s.client_cpu)).sum();
        assert!((per_interval - cpu(&p.client_cpu)).abs() < 1e-6, "{mode}");
    }
}

#[test]
fn read_only_runs_no_write_and_counts_the_skipped() {
    let _g = serial();
    let opts = fresh("replay_ro");
    let log = mix("replay_ro");
    let before = ["insert", "update", "select"].map(|n| com(&opts, n));
    let o = ReplayOptions {
        policy: Policy {
            read_only: true,
            ..Policy::default()
        },
        ..options(ReplayMode::Max, 1.0)
    };
    let p = run(&opts, &log, &o);
    let after = ["insert", "update", "select"].map(|n| com(&opts, n));
    assert_eq!(after[0] - before[0], 0);
    assert_eq!(after[1] - before[1], 0);
    assert_eq!(after[2] - before[2], 20);
    let outcome = p.replay.unwrap();
    assert_eq!(outcome.skipped(), 40);
}

#[test]
fn failing_statements_are_counted_per_class_and_the_replay_goes_on() {
    let _g = serial();
    let opts = fresh("replay_err");
    let mut log = mix("replay_err");
    for i in 0..12 {
        stmt(
            &mut log,
            9,
            i % 3,
            &format!("SELECT * FROM nosuch WHERE id = {i}"),
            "replay_err",
        );
    }
    let p = run(&opts, &log, &options(ReplayMode::Sessions, 0.0));
    assert_eq!(p.events, 60);
    assert_eq!(p.errors.get(&1146), Some(&12));
    let outcome = p.replay.unwrap();
    let bad = outcome
        .classes
        .iter()
        .find(|c| c.fingerprint.contains("nosuch"))
        .unwrap();
    assert_eq!((bad.executed, bad.errors.get(&1146)), (12, Some(&12)));
}

#[test]
fn a_missing_database_is_refused_before_anything_runs() {
    let _g = serial();
    let opts = fresh("replay_db");
    let log = mix("replay_no_such_db");
    let mut c = Conn::connect(&opts).unwrap();
    let e = check_databases(&mut c, &log, &options(ReplayMode::Max, 1.0)).unwrap_err();
    assert!(
        e.is_user_error() && e.to_string().contains("replay_no_such_db"),
        "{e}"
    );
    let o = ReplayOptions {
        database: Some("replay_db".into()),
        ..options(ReplayMode::Max, 1.0)
    };
    check_databases(&mut c, &log, &o).expect("mapped onto an existing database");
}

#[test]
fn sessions_mode_keeps_each_connections_order() {
    let _g = serial();
    let opts = fresh("replay_order");
    let mut log = ReplayLog::default();
    // Connection 1 inserts, then sets, then multiplies, in one second; a busy neighbour runs
    // alongside. Only this order gives 20.
    stmt(
        &mut log,
        1,
        1,
        "INSERT INTO t VALUES (1, 1)",
        "replay_order",
    );
    for i in 0..50 {
        stmt(&mut log, 2, 1, &format!("SELECT {i}"), "replay_order");
    }
    stmt(
        &mut log,
        1,
        1,
        "UPDATE t SET v = 2 WHERE id = 1",
        "replay_order",
    );
    stmt(
        &mut log,
        1,
        1,
        "UPDATE t SET v = v * 10 WHERE id = 1",
        "replay_order",
    );
    run(&opts, &log, &options(ReplayMode::Sessions, 0.0));
    let mut c = Conn::connect(&opts).unwrap();
    let v = c.query("SELECT v FROM t WHERE id = 1").unwrap();
    assert_eq!(v.rows[0][0].as_deref(), Some("20"));
}

#[test]
fn sessions_mode_keeps_the_logs_timing_scaled_by_the_speed() {
    let _g = serial();
    let opts = fresh("replay_time");
    let mut log = ReplayLog::default();
    for s in 0..=3 {
        stmt(&mut log, 1, 100 + s, &format!("SELECT {s}"), "replay_time");
    }
    for (speed, low, high) in [(1.0, 2.5, 6.0), (3.0, 0.8, 2.5)] {
        let t = Instant::now();
        let p = run(&opts, &log, &options(ReplayMode::Sessions, speed));
        let took = t.elapsed().as_secs_f64();
        assert!(took >= low && took < high, "speed {speed}: {took:.2} s");
        let rate = p.rate.unwrap();
        assert!(rate.max_lag_ms < 500.0, "{rate:?}");
    }
}

#[test]
fn a_killed_session_reconnects_counts_the_error_and_goes_on() {
    let _g = serial();
    let opts = fresh("replay_kill");
    let mut log = ReplayLog::default();
    stmt(&mut log, 1, 1, "SELECT 1", "replay_kill");
    stmt(
        &mut log,
        1,
        1,
        "KILL CONNECTION CONNECTION_ID()",
        "replay_kill",
    );
    stmt(&mut log, 1, 1, "INSERT INTO t VALUES (1, 1)", "replay_kill");
    // KILL is server-level: it runs only with --allow-admin.
    let o = ReplayOptions {
        policy: Policy {
            allow_admin: true,
            ..Policy::default()
        },
        ..options(ReplayMode::Sessions, 0.0)
    };
    let p = run(&opts, &log, &o);
    assert_eq!(
        (p.reconnects, p.events, p.error_total()),
        (1, 2, 1),
        "{:?}",
        p.errors
    );
    // The session came back in the logged database: the INSERT found its table.
    let mut c = Conn::connect(&opts).unwrap();
    let n = c.query("SELECT count(*) FROM t").unwrap();
    assert_eq!(n.rows[0][0].as_deref(), Some("1"));
}

#[test]
fn database_maps_every_statement_onto_one_database() {
    let _g = serial();
    let opts = fresh("replay_map");
    let mut log = ReplayLog::default();
    stmt(&mut log, 1, 1, "INSERT INTO t VALUES (1, 1)", "prod_db");
    stmt(&mut log, 1, 1, "USE other_db", "prod_db");
    stmt(&mut log, 1, 1, "INSERT INTO t VALUES (2, 1)", "other_db");
    let o = ReplayOptions {
        database: Some("replay_map".into()),
        ..options(ReplayMode::Sessions, 0.0)
    };
    let p = run(&opts, &log, &o);
    assert_eq!((p.events, p.error_total()), (2, 0), "{:?}", p.errors);
    let mut c = Conn::connect(&opts).unwrap();
    let n = c.query("SELECT count(*) FROM replay_map.t").unwrap();
    assert_eq!(n.rows[0][0].as_deref(), Some("2"));
}
