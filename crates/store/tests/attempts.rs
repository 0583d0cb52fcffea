//! Cell attempts: every measurement of a study cell is kept, and a resume keeps the runs of
//! finished cells' attempts while dropping those of the cell it discards.

use qpslab_core::plan::RunPlan;
use qpslab_core::result::PhaseResult;
use qpslab_core::workload::{WorkloadKind, WorkloadOptions};
use qpslab_core::Cell;
use qpslab_store::{AttemptStatus, NewStudy, RunId, RunMeta, Store, StudyId};

fn run(store: &mut Store, label: &str) -> RunId {
    let meta = RunMeta::new(
        RunPlan::new(WorkloadOptions::new(WorkloadKind::OltpPointSelect)),
        "root@localhost/sbtest".into(),
        Default::default(),
        Default::default(),
        "qpslab lab run s.toml".into(),
    )
    .in_study("s", label);
    let phase = PhaseResult {
        threads: 1,
        duration_s: 1.0,
        events: 10,
        ..Default::default()
    };
    store.record_phase(&meta, &phase, &[]).unwrap()
}

fn study(store: &mut Store) -> StudyId {
    let cell = |seq: u32, label: &str| Cell {
        seq,
        label: label.into(),
        ..Cell::lone("v")
    };
    let new = NewStudy {
        name: "s".into(),
        spec_toml: "name = \"s\"".into(),
        spec_hash: "h".into(),
        env: serde_json::json!({}),
        factors: vec![],
    };
    store
        .create_study(&new, &[cell(1, "a"), cell(2, "b")])
        .unwrap()
}

#[test]
fn attempts_are_kept_and_a_resume_discards_only_the_unfinished_cells() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("s.db")).unwrap();
    let id = study(&mut store);
    let cells = store.study_cells(id).unwrap();
    let (a, b) = (cells[0].id, cells[1].id);
    store.cell_running(a).unwrap();
    let r1 = run(&mut store, "a");
    assert_eq!(
        store
            .record_attempt(a, r1, Some("unstable: stall of 2.0 s at 1.0 s"))
            .unwrap(),
        1
    );
    let r2 = run(&mut store, "a");
    assert_eq!(store.record_attempt(a, r2, None).unwrap(), 2);
    store.cell_done(a, r2).unwrap();
    // Cell b dies after one attempt.
    store.cell_running(b).unwrap();
    let r3 = run(&mut store, "b");
    store
        .record_attempt(b, r3, Some("unstable: trend of -20%"))
        .unwrap();

    let all = store.cell_attempts(id).unwrap();
    assert_eq!(all.len(), 3);
    assert_eq!(all[0].status, AttemptStatus::Unstable);
    assert!(all[0].reason.as_deref().unwrap().contains("stall"));
    assert_eq!(
        (all[1].status, all[1].run_id),
        (AttemptStatus::Done, Some(r2))
    );

    assert_eq!(store.discard_unfinished_cells(id).unwrap(), 1);
    let left = store.cell_attempts(id).unwrap();
    assert_eq!(left.len(), 2, "b's attempt is gone with its cell's reset");
    assert!(
        store.load_run(r1).is_ok(),
        "an unstable attempt of a done cell is kept"
    );
    assert!(store.load_run(r2).is_ok());
    assert!(
        store.load_run(r3).is_err(),
        "the discarded cell's run is dropped"
    );
}
