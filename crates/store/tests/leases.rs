//! Leases on a server's store: what a process on another host owns is judged by its
//! heartbeat (the server's clock), renewed while its writer lives; a run or a study whose
//! heartbeat stopped longer than the lease ago is taken over, one still beating never is.
//! A lost store session is opened again. Against a real MariaDB sandbox; "another host" is a
//! row whose owner carries another boot id.

use qpslab_core::plan::RunPlan;
use qpslab_core::result::{PhaseResult, Sample};
use qpslab_core::workload::{WorkloadKind, WorkloadOptions};
use qpslab_core::Dsn;
use qpslab_store::{NewStudy, RunMeta, RunStatus, Store};
use std::time::{Duration, Instant};

mod common;

fn meta() -> RunMeta {
    RunMeta::new(
        RunPlan::new(WorkloadOptions::new(WorkloadKind::OltpPointSelect)),
        "root@localhost/sbtest".into(),
        Default::default(),
        Default::default(),
        "qpslab run".into(),
    )
}

#[test]
fn a_live_writer_renews_its_lease_and_an_open_store_leaves_it_alone() {
    let place = common::server("renews");
    let mut writer = Store::open(&place.db).unwrap();
    let m = meta();
    let mut h = writer.begin_phase(&m, 1).unwrap();
    let mut c = common::raw(&place);
    let first: f64 = common::value(&mut c, "SELECT heartbeat_at FROM runs")
        .parse()
        .unwrap();
    // Renewed by the writer's own thread while the phase has nothing to write.
    let deadline = Instant::now() + Duration::from_secs(30);
    let renewed = loop {
        std::thread::sleep(Duration::from_millis(500));
        let now: f64 = common::value(&mut c, "SELECT heartbeat_at FROM runs")
            .parse()
            .unwrap();
        if now > first || Instant::now() > deadline {
            break now;
        }
    };
    assert!(renewed > first, "no beat in 30 s: {first} {renewed}");
    // Seen from "another host": the run is alive while its heartbeat is, whatever its pid.
    c.query("UPDATE runs SET owner_boot_id = 'another-host', owner_pid = 999999")
        .unwrap();
    c.query("UPDATE runs SET heartbeat_at = UNIX_TIMESTAMP(NOW(6)) - 5")
        .unwrap();
    drop(Store::open(&place.db).unwrap());
    assert_eq!(common::value(&mut c, "SELECT status FROM runs"), "running");
    // Its lease run out: the next store opened closes it as interrupted, keeping what it
    // measured.
    c.query("UPDATE runs SET heartbeat_at = UNIX_TIMESTAMP(NOW(6)) - 31")
        .unwrap();
    writer
        .append_interval(
            &mut h,
            &Sample {
                elapsed_s: 1.0,
                interval_s: 1.0,
                events: 5,
                ..Default::default()
            },
            &[],
        )
        .unwrap();
    let reader = Store::open(&place.db).unwrap();
    let run = reader.load_run(h.run_id).unwrap();
    assert_eq!(run.status, RunStatus::Interrupted);
    assert_eq!(run.phases[0].result.events, 5);
}

#[test]
fn a_study_driven_from_another_host_is_taken_over_only_after_its_lease() {
    let place = common::server("study");
    let mut a = Store::open(&place.db).unwrap();
    let new = NewStudy {
        name: "s".into(),
        spec_toml: "name = \"s\"".into(),
        spec_hash: "h".into(),
        env: serde_json::json!({}),
        factors: vec![],
    };
    a.create_study(&new, &[]).unwrap();
    let mut c = common::raw(&place);
    c.query("UPDATE studies SET owner_boot_id = 'another-host', owner_pid = 4242, heartbeat_at = UNIX_TIMESTAMP(NOW(6)) - 10")
        .unwrap();
    drop(a);
    let mut b = Store::open(&place.db).unwrap();
    match b.claim_study("s") {
        Err(qpslab_store::Error::StudyBusy { pid, .. }) => assert_eq!(pid, 4242),
        other => panic!("{:?}", other.map(|s| s.name)),
    }
    c.query("UPDATE studies SET heartbeat_at = UNIX_TIMESTAMP(NOW(6)) - 31")
        .unwrap();
    assert_eq!(b.claim_study("s").unwrap().name, "s");
    let pid: u32 = common::value(&mut c, "SELECT owner_pid FROM studies")
        .parse()
        .unwrap();
    assert_eq!(pid, std::process::id());
}

#[test]
fn a_file_store_judges_by_the_process_alone() {
    let place = common::file("f.db");
    let mut s = Store::open(&place.db).unwrap();
    let m = meta();
    s.record_phase(&m, &PhaseResult::default(), &[]).unwrap();
    drop(s);
    let c = rusqlite::Connection::open(&place.db).unwrap();
    let beat: Option<f64> = c
        .query_row("SELECT heartbeat_at FROM runs", [], |r| r.get(0))
        .unwrap();
    assert_eq!(beat, None, "a file's store keeps no heartbeat");
}

/// The store's sessions killed on the server between two intervals (its server restarted, a
/// proxy's idle cut): the writer opens its session again and loses nothing.
#[test]
fn a_lost_store_session_is_opened_again_and_nothing_is_lost() {
    let place = common::server("lost");
    let mut writer = Store::open(&place.db).unwrap();
    let m = meta();
    let mut h = writer.begin_phase(&m, 2).unwrap();
    let sample = |i: u64| Sample {
        elapsed_s: i as f64,
        interval_s: 1.0,
        events: 10 * i,
        ..Default::default()
    };
    writer.append_interval(&mut h, &sample(1), &[]).unwrap();
    let mut c = common::raw(&place);
    let dsn: Dsn = place.db.to_str().unwrap().parse().unwrap();
    let schema = dsn.options().database.clone().unwrap();
    let ids: Vec<String> = c
        .query(&format!(
            "SELECT id FROM information_schema.processlist
              WHERE db = '{schema}' AND id <> CONNECTION_ID()"
        ))
        .unwrap()
        .rows
        .into_iter()
        .filter_map(|r| r.into_iter().next().flatten())
        .collect();
    assert!(!ids.is_empty(), "the writer's sessions are on the server");
    for id in &ids {
        c.query(&format!("KILL {id}")).unwrap();
    }
    writer.append_interval(&mut h, &sample(2), &[]).unwrap();
    let phase = PhaseResult {
        threads: 2,
        events: 30,
        samples: vec![sample(1), sample(2)],
        ..Default::default()
    };
    writer.finish_phase(&h, &phase, &[]).unwrap();
    writer.finish_run(&m.uuid, RunStatus::Completed).unwrap();
    let run = Store::open(&place.db).unwrap().load_run(h.run_id).unwrap();
    assert_eq!(run.status, RunStatus::Completed);
    assert_eq!(run.phases[0].result.samples.len(), 2);
    assert_eq!(run.phases[0].result.events, 30);
}
