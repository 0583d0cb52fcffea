//! Results written as they are measured: live phases, interrupted ones, runs of dead processes,
//! and the store file's mode, against real SQLite files.

use qpslab_core::env::{HostFacts, ServerInfo};
use qpslab_core::plan::RunPlan;
use qpslab_core::result::{LatencySummary, Percentile, PhaseResult, QueryCounts, Sample};
use qpslab_core::telemetry::{Reading, StatusCounts, Tick, TickChange};
use qpslab_core::workload::{WorkloadKind, WorkloadOptions};
use qpslab_store::{new_run_uuid, RunMeta, RunStatus, Store, TelemetrySample};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

fn meta() -> RunMeta {
    RunMeta {
        uuid: new_run_uuid(),
        started_at: 1_000.0,
        command: "qpslab run oltp_point_select".into(),
        plan: RunPlan::new(WorkloadOptions::new(WorkloadKind::OltpPointSelect)),
        target: "root@localhost/sbtest".into(),
        server: ServerInfo::default(),
        host: HostFacts::default(),
        tool_version: "0.1.0".into(),
        study_id: None,
        cell_label: None,
    }
}

fn sample(i: u64) -> Sample {
    Sample {
        elapsed_s: i as f64,
        interval_s: 1.0,
        events: 100 * i,
        queries: QueryCounts {
            read: 100 * i,
            write: 0,
            other: 0,
        },
        latency: LatencySummary {
            count: 100 * i,
            min_ms: 0.1 * i as f64,
            avg_ms: 0.5,
            max_ms: 2.0 * i as f64,
            percentiles: vec![Percentile { p: 95.0, ms: 1.0 }],
        },
        ..Default::default()
    }
}

fn tick(i: u64) -> TelemetrySample {
    let status = StatusCounts {
        counters: [("Com_select".to_string(), 100 * i as i64)].into(),
        ..StatusCounts::default()
    };
    let change = TickChange {
        interval_s: 1.0,
        status,
        server: None,
        client: None,
    };
    TelemetrySample {
        elapsed_s: i as f64,
        reading: Reading::Tick(Tick::Change(change)),
    }
}

fn finished(samples: Vec<Sample>) -> PhaseResult {
    let mut p = qpslab_store::summary_of_samples(4, samples);
    p.latency.percentiles = vec![Percentile { p: 95.0, ms: 1.25 }];
    p
}

fn status_of_phases(path: &Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(path).unwrap();
    let mut st = conn
        .prepare("SELECT status FROM phases ORDER BY id")
        .unwrap();
    let rows = st.query_map([], |r| r.get(0)).unwrap();
    rows.collect::<Result<_, _>>().unwrap()
}

#[test]
fn a_live_phase_is_readable_while_running_and_reads_back_like_a_whole_one_when_done() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    let mut store = Store::open(&path).unwrap();
    let m = meta();
    let mut h = store.begin_phase(&m, 4).unwrap();
    for i in 1..=3 {
        store
            .append_interval(&mut h, &sample(i), &[tick(i)])
            .unwrap();
    }
    // Another reader sees what was measured so far.
    let reader = Store::open(&path).unwrap();
    let run = reader.load_run(h.run_id).unwrap();
    assert_eq!(run.status, RunStatus::Running);
    assert_eq!(run.phases[0].result.samples.len(), 3);
    assert_eq!(run.phases[0].result.events, 600);
    assert_eq!(run.phases[0].telemetry.len(), 3);
    assert_eq!(status_of_phases(&path), ["running"]);

    // The final result replaces what was appended, samples included.
    let phase = finished((1..=4).map(sample).collect());
    let telemetry: Vec<_> = (1..=5).map(tick).collect();
    store.finish_phase(&h, &phase, &telemetry).unwrap();
    store.finish_run(&m.uuid, RunStatus::Completed).unwrap();
    let live = store.load_run(h.run_id).unwrap();
    assert_eq!(live.phases[0].result, phase);
    assert_eq!(live.phases[0].telemetry, telemetry);

    let whole = meta();
    let id = store.record_phase(&whole, &phase, &telemetry).unwrap();
    let whole = store.load_run(id).unwrap();
    assert_eq!(whole.phases[0].result, live.phases[0].result);
    assert_eq!(status_of_phases(&path), ["done", "done"]);
}

#[test]
fn an_interrupted_phase_keeps_its_samples_and_an_empty_one_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    let mut store = Store::open(&path).unwrap();
    let m = meta();
    let done = store.begin_phase(&m, 1).unwrap();
    store
        .finish_phase(&done, &finished(vec![sample(1)]), &[])
        .unwrap();
    let mut h = store.begin_phase(&m, 4).unwrap();
    store.append_interval(&mut h, &sample(1), &[]).unwrap();
    store.append_interval(&mut h, &sample(2), &[]).unwrap();
    store.interrupt_phase(&h).unwrap();
    store.finish_run(&m.uuid, RunStatus::Interrupted).unwrap();
    let run = store.load_run(h.run_id).unwrap();
    assert_eq!(run.status, RunStatus::Interrupted);
    assert_eq!(run.phases.len(), 2);
    let p = &run.phases[1].result;
    assert_eq!((p.threads, p.events, p.duration_s), (4, 300, 2.0));
    assert_eq!(p.tps(), 150.0);
    assert_eq!(p.samples.len(), 2);
    assert_eq!(status_of_phases(&path), ["done", "interrupted"]);

    // Stopped before its first interval: no phase, and no run when it had nothing else.
    let empty = meta();
    let h = store.begin_phase(&empty, 8).unwrap();
    store.interrupt_phase(&h).unwrap();
    assert_eq!(store.run_id_by_uuid(&empty.uuid).unwrap(), None);
    assert_eq!(store.list_runs(10).unwrap().len(), 1);
}

#[test]
fn a_run_whose_process_died_reads_as_interrupted_and_a_live_ones_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    let mut store = Store::open(&path).unwrap();
    let (dead, live, old) = (meta(), meta(), meta());
    let mut h = store.begin_phase(&dead, 2).unwrap();
    store.append_interval(&mut h, &sample(1), &[]).unwrap();
    store.append_interval(&mut h, &sample(3), &[]).unwrap();
    let mut l = store.begin_phase(&live, 2).unwrap();
    store.append_interval(&mut l, &sample(1), &[]).unwrap();
    let mut o = store.begin_phase(&old, 2).unwrap();
    store.append_interval(&mut o, &sample(1), &[]).unwrap();
    drop(store);

    // The dead run's owner becomes a process that has exited; the old one has no owner, as a
    // run written before owners were recorded.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let gone = child.id();
    child.wait().unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute(
        "UPDATE runs SET owner_pid = ?1 WHERE uuid = ?2",
        rusqlite::params![gone, dead.uuid],
    )
    .unwrap();
    conn.execute(
        "UPDATE runs SET owner_pid = NULL, owner_boot_id = NULL, owner_started = NULL
         WHERE uuid = ?1",
        [&old.uuid],
    )
    .unwrap();
    drop(conn);

    let store = Store::open(&path).unwrap();
    let run = store.load_run(h.run_id).unwrap();
    assert_eq!(run.status, RunStatus::Interrupted);
    assert!(run.finished_at.is_some());
    assert_eq!(run.phases[0].result.events, 400);
    assert_eq!(run.phases[0].result.samples.len(), 2);
    assert_eq!(
        store.load_run(l.run_id).unwrap().status,
        RunStatus::Running,
        "this process is alive: its run must stay running"
    );
    assert_eq!(store.load_run(o.run_id).unwrap().status, RunStatus::Running);
    assert_eq!(
        status_of_phases(&path),
        ["interrupted", "running", "running"]
    );
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn a_new_store_and_its_wal_files_are_private_and_an_existing_file_keeps_its_mode() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.db");
    let mut store = Store::open(&path).unwrap();
    store
        .record_phase(&meta(), &finished(vec![sample(1)]), &[])
        .unwrap();
    let wal = dir.path().join("new.db-wal");
    let shm = dir.path().join("new.db-shm");
    assert!(wal.exists() && shm.exists());
    for p in [&path, &wal, &shm] {
        assert_eq!(mode(p), 0o600, "{}", p.display());
    }
    drop(store);

    let shared = dir.path().join("shared.db");
    std::fs::write(&shared, b"").unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o644)).unwrap();
    drop(Store::open(&shared).unwrap());
    assert_eq!(mode(&shared), 0o644);
}
