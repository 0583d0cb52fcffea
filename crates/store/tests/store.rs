//! The store against real SQLite files in temporary directories.

use qpslab_core::env::{HostFacts, ServerInfo};
use qpslab_core::plan::RunPlan;
use qpslab_core::result::{
    CpuUsage, HistogramBlob, LatencySummary, Percentile, PhaseResult, QueryCounts, RateStats,
    Sample, StatementLatency,
};
use qpslab_core::telemetry::{ProcUsage, Reading, StatusDelta, Tick};
use qpslab_core::workload::{WorkloadKind, WorkloadOptions};
use qpslab_core::Dsn;
use qpslab_store::{
    new_run_uuid, Error, RunMeta, RunStatus, Store, TelemetrySample, SCHEMA_VERSION,
};
use std::path::Path;

mod common;

fn meta(target: &str, started_at: f64) -> RunMeta {
    let mut server = ServerInfo {
        version: "10.11.6-MariaDB-0+deb12u1".into(),
        version_comment: "Debian 12".into(),
        flavor: "mariadb".into(),
        ..Default::default()
    };
    server
        .variables
        .insert("innodb_buffer_pool_size".into(), "134217728".into());
    RunMeta {
        uuid: new_run_uuid(),
        started_at,
        command: "qpslab run oltp_read_only --threads 1,4".into(),
        plan: RunPlan::new(WorkloadOptions::new(WorkloadKind::OltpReadOnly)),
        target: target.into(),
        server,
        host: HostFacts {
            hostname: "bench1".into(),
            cores: 2,
            memory_bytes: 24 << 30,
            ..Default::default()
        },
        tool_version: "0.1.0".into(),
        study_id: None,
        cell_label: None,
    }
}

fn latency(scale: f64) -> LatencySummary {
    LatencySummary {
        count: 100,
        min_ms: 0.125 * scale,
        avg_ms: 0.5 * scale,
        max_ms: 7.25 * scale,
        percentiles: vec![
            Percentile {
                p: 95.0,
                ms: 1.5 * scale,
            },
            Percentile {
                p: 99.0,
                ms: 3.0 * scale,
            },
        ],
    }
}

fn phase(threads: u32, events: u64) -> PhaseResult {
    let queries = QueryCounts {
        read: events * 14,
        write: 0,
        other: events * 2,
    };
    let samples = (1..=3)
        .map(|i| Sample {
            elapsed_s: i as f64,
            interval_s: 1.0,
            events: events / 3,
            queries,
            errors: i,
            reconnects: 0,
            latency: latency(i as f64),
            client_cpu: CpuUsage {
                user_s: 0.01 * i as f64,
                sys_s: 0.02,
                max_rss_kib: 4096,
            },
            late_events: i,
            max_lag_ms: 2.0 * i as f64,
            client_late_events: i - 1,
            client_max_late_ms: 0.5 * i as f64,
            stuck_sessions: (i - 1) as u32,
            longest_in_flight_s: 1.5 * (i - 1) as f64,
            // A sharded run's intervals keep their histograms (round-trip checked below).
            histogram: (i == 2).then(|| HistogramBlob {
                name: "event".into(),
                v2: vec![0x1c, 0x84, 0x93, 0x14, i as u8],
            }),
        })
        .collect();
    PhaseResult {
        threads,
        duration_s: 3.0,
        events,
        queries,
        errors: [(1213u16, 3u64), (1205, 1)].into_iter().collect(),
        reconnects: 1,
        latency: latency(1.0),
        statements: vec![StatementLatency {
            kind: "point_selects".into(),
            latency: latency(0.5),
        }],
        samples,
        client_cpu: CpuUsage {
            user_s: 0.25,
            sys_s: 0.75,
            max_rss_kib: 8192,
        },
        rate: Some(RateStats {
            target_per_s: 100.0,
            achieved_per_s: 99.5,
            ..Default::default()
        }),
        histograms: vec![
            HistogramBlob {
                name: "event".into(),
                v2: vec![0x1c, 0x84, 0x93, 0x14, 0, 1, 2],
            },
            HistogramBlob {
                name: "point_selects".into(),
                v2: vec![0xff; 40],
            },
        ],
        stability: None,
        // The limiter verdict travels with the phase (round-trip checked below).
        limits: Some(qpslab_core::limits::decide(qpslab_core::limits::Evidence {
            duration_s: 3.0,
            events,
            sessions: threads,
            row_lock_s: Some(2.5),
            ..Default::default()
        })),
        replay: None,
        actions: Vec::new(),
        io: None,
        // The warm-up's intervals travel with the phase (round-trip checked below).
        warmup: vec![Sample {
            elapsed_s: -1.0,
            interval_s: 1.0,
            events: 7,
            ..Default::default()
        }],
        // sysbench's threads fairness travels with the phase (round-trip checked below).
        fairness: Some(qpslab_core::result::Fairness {
            events_avg: 12.5,
            events_stddev: 0.5,
            time_avg_s: 2.9,
            time_stddev_s: 0.01,
        }),
        // A TPC-C phase's own figures travel with the phase (round-trip checked below).
        tpcc: Some(qpslab_core::tpcc::TpccFigures {
            warehouses: 2,
            think_scale: 1.0,
            server_new_orders: 1234,
            retries: [(
                "payment".to_string(),
                [(1213u16, 2u64)].into_iter().collect(),
            )]
            .into_iter()
            .collect(),
            ..Default::default()
        }),
        client: Some(qpslab_core::client::ClientLoops {
            cpus: vec![1],
            pinned: true,
            shares_server: Some(false),
            chosen_by: "one per --client-cpus entry".into(),
            busy: vec![0.97],
            waited: vec![0.02],
        }),
        // A shard's measured window travels with the phase too.
        shard: Some(qpslab_core::shard::ShardPhase {
            start_unix_s: 1_700_000_000.25,
            end_unix_s: 1_700_000_003.25,
            members: Vec::new(),
        }),
    }
}

fn telemetry() -> Vec<TelemetrySample> {
    vec![
        TelemetrySample {
            elapsed_s: 1.0,
            reading: Reading::ServerStatusDelta(StatusDelta {
                elapsed_s: 1.0,
                counters: [("Com_select".to_string(), 1400)].into(),
                gauges: [("Threads_running".to_string(), 4)].into(),
            }),
        },
        TelemetrySample {
            elapsed_s: 1.0,
            reading: Reading::ClientProc(ProcUsage {
                user_s: 0.1,
                sys_s: 0.2,
                rss_kib: 5000,
                io: None,
            }),
        },
    ]
}

/// Telemetry rows as the untyped telemetry of earlier versions wrote them read back typed.
#[test]
fn telemetry_rows_of_earlier_versions_load() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("qpslab.db");
    let m = meta("root@127.0.0.1:3306/sbtest", 1_700_000_000.0);
    let id = Store::open(&path)
        .unwrap()
        .record_phase(&m, &phase(1, 300), &[])
        .unwrap();
    let db = rusqlite::Connection::open(&path).unwrap();
    db.execute_batch(
        r#"INSERT INTO telemetry (phase_id, seq, elapsed_s, source, json)
           SELECT id, 0, 1.0, 'tick', '{"interval_s":1.0,"status":{"counters":{"Questions":9},"gauges":{}},"client":{"user_s":0.5,"sys_s":0.25,"rss_kib":7}}' FROM phases;
           INSERT INTO telemetry (phase_id, seq, elapsed_s, source, json)
           SELECT id, 1, 2.0, 'tick', '{"error":"server gone"}' FROM phases;
           INSERT INTO telemetry (phase_id, seq, elapsed_s, source, json)
           SELECT id, 2, 3.0, 'from_a_later_version', '{"x":1}' FROM phases;
           INSERT INTO telemetry (phase_id, seq, elapsed_s, source, json)
           SELECT id, 3, 3.0, 'tick', 'not json' FROM phases;"#,
    )
    .unwrap();
    drop(db);
    let run = Store::open(&path).unwrap().load_run(id).unwrap();
    let t = &run.phases[0].telemetry;
    let Reading::Tick(Tick::Change(c)) = &t[0].reading else {
        panic!("{t:?}");
    };
    assert_eq!(c.status.counters["Questions"], 9);
    assert_eq!(c.client.unwrap().cpu_s(), 0.75);
    assert!(
        matches!(&t[1].reading, Reading::Tick(Tick::Failed { error }) if error == "server gone")
    );
    assert_eq!(
        t.len(),
        2,
        "readings it cannot read are left out, the run loads"
    );
}

#[test]
fn round_trip_of_a_two_phase_run() {
    for place in common::both("round_trip_of_a_two_") {
        let path = place.db.clone();
        let m = meta("root@127.0.0.1:3306/sbtest", 1_700_000_000.123456);
        let (p1, p2) = (phase(1, 300), phase(4, 1200));
        let id = {
            let mut store = Store::open(&path).unwrap();
            let id = store.record_phase(&m, &p1, &telemetry()).unwrap();
            assert_eq!(store.record_phase(&m, &p2, &[]).unwrap(), id);
            store.finish_run(&m.uuid, RunStatus::Completed).unwrap();
            id
        };
        // Reopened: everything comes back as it went in.
        let store = Store::open(&path).unwrap();
        assert_eq!(store.is_server(), place.kind == "server");
        let run = store.load_run(id).unwrap();
        assert_eq!(run.meta, m);
        assert_eq!(run.status, RunStatus::Completed);
        assert!(run.finished_at.is_some());
        assert_eq!(run.phases.len(), 2);
        assert_eq!(run.phases[0].seq, 1);
        assert_eq!(run.phases[0].result, p1);
        assert_eq!(run.phases[0].telemetry, telemetry());
        assert_eq!(run.phases[1].seq, 2);
        assert_eq!(run.phases[1].result, p2);
        assert!(run.phases[1].telemetry.is_empty());

        let list = store.list_runs(10).unwrap();
        assert_eq!(list.len(), 1);
        assert_eq!(list[0].id, id);
        assert_eq!(list[0].phases, 2);
        assert_eq!(list[0].best_tps, p2.tps());
        assert_eq!(list[0].best_qps, p2.qps());
        assert_eq!(list[0].workload, "oltp_read_only");
        assert_eq!(list[0].server_version, "10.11.6-MariaDB-0+deb12u1");
        assert_eq!(store.latest_run_id().unwrap(), Some(id));
    }
}

#[test]
fn runs_list_newest_first_and_finish_without_row_is_a_no_op() {
    for place in common::both("runs_list_newest_fir") {
        let mut store = Store::open(&place.db).unwrap();
        assert_eq!(store.latest_run_id().unwrap(), None);
        store
            .finish_run("never-recorded", RunStatus::Failed)
            .unwrap();
        assert!(store.list_runs(10).unwrap().is_empty());
        let old = meta("a@h:1/db", 1_000.0);
        let new = meta("b@h:1/db", 2_000.0);
        let new_id = store.record_phase(&new, &phase(1, 30), &[]).unwrap();
        let old_id = store.record_phase(&old, &phase(1, 30), &[]).unwrap();
        let list = store.list_runs(10).unwrap();
        assert_eq!(
            list.iter().map(|r| r.id).collect::<Vec<_>>(),
            vec![new_id, old_id]
        );
        assert_eq!(list[0].status, RunStatus::Running);
        assert_eq!(store.list_runs(1).unwrap().len(), 1);
        assert_eq!(store.latest_run_id().unwrap(), Some(new_id));
        assert_eq!(store.run_id_by_uuid(&old.uuid).unwrap(), Some(old_id));
    }
}

#[test]
fn migration_from_an_empty_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.db");
    std::fs::write(&path, b"").unwrap();
    drop(Store::open(&path).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    let v: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, SCHEMA_VERSION);
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        tables,
        [
            "cell_attempts",
            "cells",
            "histograms",
            "phase_actions",
            "phases",
            "restore_trail",
            "runs",
            "samples",
            "sqlite_sequence",
            "studies",
            "telemetry",
            "tune_trials"
        ]
    );
    drop(conn);
    // A second open of a current store migrates nothing and keeps working.
    drop(Store::open(&path).unwrap());
}

#[test]
fn newer_schema_foreign_sqlite_and_non_sqlite_are_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();

    let newer = dir.path().join("newer.db");
    drop(Store::open(&newer).unwrap());
    rusqlite::Connection::open(&newer)
        .unwrap()
        .pragma_update(None, "user_version", SCHEMA_VERSION + 1)
        .unwrap();
    let err = Store::open(&newer).err().unwrap();
    assert!(matches!(err, Error::NewerSchema { found, .. } if found == SCHEMA_VERSION + 1));
    assert!(err.to_string().contains("upgrade qpslab"), "{err}");

    let foreign = dir.path().join("foreign.db");
    rusqlite::Connection::open(&foreign)
        .unwrap()
        .execute_batch("CREATE TABLE t (x INTEGER)")
        .unwrap();
    let err = Store::open(&foreign).err().unwrap();
    assert!(matches!(err, Error::NotQpslab { .. }), "{err}");
    assert!(
        err.to_string().contains("not a qpslab results store"),
        "{err}"
    );

    let text = dir.path().join("notes.txt");
    let junk = "this is a text file, not a database\n".repeat(200);
    std::fs::write(&text, &junk).unwrap();
    let err = Store::open(&text).err().unwrap();
    assert!(matches!(err, Error::NotADatabase { .. }), "{err}");
    assert!(err.to_string().contains("notes.txt"), "{err}");
    assert!(err.to_string().contains("not an SQLite database"), "{err}");
    // Refusing must not have touched the file.
    assert_eq!(std::fs::read_to_string(&text).unwrap(), junk);

    let nowhere = dir.path().join("no-such-dir").join("qpslab.db");
    let err = Store::open(&nowhere).err().unwrap();
    assert!(matches!(err, Error::BadPath { .. }), "{err}");
    assert!(err.to_string().contains("no-such-dir"), "{err}");
}

#[test]
fn a_failed_phase_leaves_earlier_phases_intact_and_a_failed_first_phase_leaves_nothing() {
    for place in common::both("a_failed_phase_leave") {
        let mut store = Store::open(&place.db).unwrap();
        // A counter beyond SQLite's i64 makes the write fail after the phase row was inserted.
        let mut bad = phase(8, 100);
        bad.samples[2].events = u64::MAX;

        let first_fails = meta("u@h:1/db", 10.0);
        let err = store
            .record_phase(&first_fails, &bad, &telemetry())
            .unwrap_err();
        assert!(matches!(err, Error::OutOfRange { .. }), "{err}");
        assert!(store.list_runs(10).unwrap().is_empty());

        let m = meta("u@h:1/db", 20.0);
        let good = phase(1, 300);
        let id = store.record_phase(&m, &good, &telemetry()).unwrap();
        assert!(store.record_phase(&m, &bad, &telemetry()).is_err());
        store.finish_run(&m.uuid, RunStatus::Failed).unwrap();
        let run = store.load_run(id).unwrap();
        assert_eq!(run.status, RunStatus::Failed);
        assert_eq!(run.phases.len(), 1);
        assert_eq!(run.phases[0].result, good);
        assert_eq!(run.phases[0].telemetry.len(), 2);
        // The next phase still gets the next number: nothing of the failed one remains.
        let id2 = store.record_phase(&m, &phase(16, 900), &[]).unwrap();
        assert_eq!(id2, id);
        let seqs: Vec<u32> = store
            .load_run(id)
            .unwrap()
            .phases
            .iter()
            .map(|p| p.seq)
            .collect();
        assert_eq!(seqs, [1, 2]);
    }
}

fn bytes_of_dir(dir: &Path) -> Vec<u8> {
    let mut all = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        all.extend(std::fs::read(e.unwrap().path()).unwrap());
    }
    all
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[test]
fn a_stored_run_holds_no_password() {
    const PW: &str = "Sup3rS3cretPw";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("qpslab.db");
    let url = format!("mysql://bench:{PW}@127.0.0.1:3306/sbtest");
    let dsn: Dsn = url.parse().unwrap();
    let mut m = meta(&dsn.to_string(), 1.0);
    // A careless caller passing the raw argv: the store strips URL passwords itself.
    m.command = format!("qpslab run oltp_read_only --target {url}");
    m.server
        .variables
        .insert("wsrep_sst_auth_password".into(), PW.into());
    let id = {
        let mut store = Store::open(&path).unwrap();
        let id = store.record_phase(&m, &phase(2, 60), &telemetry()).unwrap();
        store.finish_run(&m.uuid, RunStatus::Completed).unwrap();
        let json = serde_json::to_string(&store.run_doc(id).unwrap()).unwrap();
        assert!(!json.contains(PW), "{json}");
        // Read while open: the WAL file holds the data too.
        assert!(!contains(&bytes_of_dir(dir.path()), PW));
        id
    };
    assert!(!contains(&bytes_of_dir(dir.path()), PW));
    let run = Store::open(&path).unwrap().load_run(id).unwrap();
    assert_eq!(run.meta.target, "mysql://bench@127.0.0.1:3306/sbtest");
    assert_eq!(
        run.meta.command,
        "qpslab run oltp_read_only --target mysql://bench@127.0.0.1:3306/sbtest"
    );
    // The check above would be vacuous if the file did not hold the rest of the target.
    assert!(contains(&bytes_of_dir(dir.path()), "bench@127.0.0.1:3306"));
}

#[test]
fn the_json_form_of_a_run() {
    for place in common::both("the_json_form_of_a_r") {
        let mut store = Store::open(&place.db).unwrap();
        let m = meta("root@localhost/sb,test", 1_700_000_000.0);
        let mut p2 = phase(4, 1200);
        p2.latency.percentiles.push(Percentile { p: 99.9, ms: 9.0 });
        let id = store
            .record_phase(&m, &phase(1, 300), &telemetry())
            .unwrap();
        store.record_phase(&m, &p2, &[]).unwrap();

        let v = serde_json::to_value(store.run_doc(id).unwrap()).unwrap();
        assert_eq!(v["format"], "qpslab-run");
        assert_eq!(v["schema_version"], SCHEMA_VERSION);
        assert_eq!(v["started_utc"], "2023-11-14T22:13:20Z");
        // Issue 38, item 7: one time convention, ISO 8601 UTC, at the top of the document.
        let finished = v["finished_utc"].as_str().unwrap_or("2000-01-01T00:00:00Z");
        assert!(
            finished.len() == 20 && finished.ends_with('Z') && finished.as_bytes()[10] == b'T',
            "{finished}"
        );
        assert_eq!(v["meta"]["uuid"], m.uuid.as_str());
        assert_eq!(v["phases"].as_array().unwrap().len(), 2);
        assert_eq!(v["phases"][1]["result"]["threads"], 4);
        assert_eq!(
            v["phases"][0]["result"]["histograms"][0]["v2"],
            "1c849314000102"
        );
        assert_eq!(
            v["phases"][0]["telemetry"][0]["values"]["counters"]["Com_select"],
            1400
        );

        // The schema: these keys and no others, at the top and in each phase.
        let keys = |v: &serde_json::Value| -> Vec<String> {
            let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
            k.sort();
            k
        };
        assert_eq!(
            keys(&v),
            [
                "finished_utc",
                "format",
                "id",
                "meta",
                "phases",
                "schema_version",
                "started_utc",
                "status"
            ]
        );
        assert_eq!(
            keys(&v["phases"][1]),
            [
                "duration_s",
                "errors",
                "events",
                "latency_ms",
                "qps",
                "queries",
                "reconnects",
                "result",
                "seq",
                "stability",
                "status",
                "telemetry",
                "threads",
                "tps"
            ]
        );
        let p = &v["phases"][1];
        assert_eq!(
            (p["seq"].as_u64(), p["threads"].as_u64()),
            (Some(2), Some(4))
        );
        assert_eq!(p["tps"], 400.0);
        assert_eq!(p["latency_ms"]["p99.9"], 9.0);
        assert!(p["latency_ms"]["min"].is_number() && p["latency_ms"]["p95"].is_number());
        assert!(v["phases"][0]["latency_ms"].get("p99.9").is_none());
        assert_eq!(v["phases"][0]["status"], "done");
        assert_eq!(
            v["phases"][0]["queries"]["read"],
            v["phases"][0]["result"]["queries"]["read"]
        );
    }
}

#[test]
fn load_of_a_missing_run_says_so() {
    for place in common::both("load_of_a_missing_ru") {
        let store = Store::open(&place.db).unwrap();
        let err = store.load_run(qpslab_store::RunId(42)).unwrap_err();
        assert!(matches!(err, Error::RunNotFound(_)));
        assert_eq!(err.to_string(), "no run with id 42 in the results store");
    }
}

#[test]
fn live_actions_are_stored_with_the_phase_and_replaced_once_judged() {
    use qpslab_core::live::ActionRecord;
    for place in common::both("live_actions_are_sto") {
        let mut store = Store::open(&place.db).unwrap();
        let m = meta("root@localhost/sbtest", 1_700_000_000.0);
        let mut p = phase(4, 1200);
        p.actions = vec![ActionRecord {
            action: "set innodb_buffer_pool_size=512M".into(),
            at_s: 8.0,
            started_s: 8.001,
            outcome: "ok".into(),
            took_ms: 14.0,
            restored: Some("innodb_buffer_pool_size=8388608 ok".into()),
            tps: None,
            p95_ms: None,
            judgment: String::new(),
        }];
        let id = store.record_phase(&m, &p, &[]).unwrap();
        assert_eq!(store.load_run(id).unwrap().phases[0].result, p);
        let mut judged = p.actions.clone();
        judged[0].judgment = "gain".into();
        store.record_actions(id, 1, &judged).unwrap();
        let doc = serde_json::to_value(store.run_doc(id).unwrap()).unwrap();
        let a = &doc["phases"][0]["actions"][0];
        assert_eq!(a["judgment"], "gain", "{a}");
        assert_eq!(a["at_s"], 8.0);
        assert!(doc["phases"][0]["result"].get("actions").is_none());
        assert!(store.record_actions(id, 2, &judged).is_err(), "no phase 2");
    }
}

/// Several processes creating one new store at once all succeed: the schema is created once,
/// under the write lock, and the others find it made (issue 25, item 7).
#[test]
fn concurrent_first_opens_of_a_new_store_all_succeed() {
    for attempt in 0..10 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.db");
        let gate = std::sync::Arc::new(std::sync::Barrier::new(6));
        let opens: Vec<_> = (0..6)
            .map(|_| {
                let (path, gate) = (path.clone(), gate.clone());
                std::thread::spawn(move || {
                    gate.wait();
                    Store::open(&path).map(|mut s| {
                        s.record_phase(&meta("root@h/db", 1.0), &phase(1, 30), &[])
                            .map(|_| ())
                    })
                })
            })
            .collect();
        for o in opens {
            let r = o.join().unwrap();
            assert!(matches!(r, Ok(Ok(()))), "try {attempt}: {r:?}");
        }
        assert_eq!(Store::open(&path).unwrap().list_runs(100).unwrap().len(), 6);
    }
}

/// Several writers at once on one store, each writing runs phase by phase and interval by
/// interval while a reader lists them: nothing lost, nothing mixed, every phase numbered in
/// its run (a server's store takes its write lock per transaction as SQLite takes its file's).
#[test]
fn many_writers_at_once_lose_and_mix_nothing() {
    for place in common::both("writers") {
        drop(Store::open(&place.db).unwrap());
        let writers: Vec<_> = (0..4)
            .map(|w| {
                let db = place.db.clone();
                std::thread::spawn(move || {
                    let mut store = Store::open(&db).unwrap();
                    let mut ids = Vec::new();
                    for r in 0..6 {
                        let m = meta(&format!("w{w}@h:1/db"), f64::from(w * 100 + r));
                        for threads in [1, 4] {
                            let p = phase(threads, 10 * u64::from(threads));
                            let mut h = store.begin_phase(&m, threads).unwrap();
                            for s in &p.samples {
                                store.append_interval(&mut h, s, &[]).unwrap();
                            }
                            store.finish_phase(&h, &p, &telemetry()).unwrap();
                            ids.push((h.run_id, m.uuid.clone()));
                        }
                        store.finish_run(&m.uuid, RunStatus::Completed).unwrap();
                    }
                    ids
                })
            })
            .collect();
        let reader = Store::open(&place.db).unwrap();
        let mut seen = 0;
        while seen < 24 {
            seen = reader.list_runs(1000).unwrap().len();
            std::thread::sleep(std::time::Duration::from_millis(20));
            if writers.iter().all(|w| w.is_finished()) {
                break;
            }
        }
        let mut runs = std::collections::BTreeSet::new();
        for w in writers {
            for (id, uuid) in w.join().unwrap() {
                assert_eq!(
                    reader.run_id_by_uuid(&uuid).unwrap(),
                    Some(id),
                    "{}",
                    place.kind
                );
                runs.insert(id);
            }
        }
        assert_eq!(runs.len(), 24, "{}", place.kind);
        for id in runs {
            let run = reader.load_run(id).unwrap();
            let seqs: Vec<u32> = run.phases.iter().map(|p| p.seq).collect();
            assert_eq!(seqs, [1, 2], "{}", place.kind);
            assert_eq!(run.phases[1].result, phase(4, 40), "{}", place.kind);
            assert_eq!(run.status, RunStatus::Completed);
        }
    }
}
