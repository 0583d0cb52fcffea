//! Cell attempts: every measurement of a study cell is kept; a resume reopens the unfinished
//! cells and keeps what they measured, an interrupted run as an `interrupted` attempt; run ids
//! are never given twice; one process drives a study at a time.

use qpslab_core::plan::RunPlan;
use qpslab_core::result::PhaseResult;
use qpslab_core::workload::{WorkloadKind, WorkloadOptions};
use qpslab_core::Cell;
use qpslab_store::{
    AttemptStatus, NewStudy, RunId, RunMeta, RunStatus, Store, StudyId, STUDY_CSV_HEADER,
};

mod common;

fn run(store: &mut Store, label: &str) -> RunId {
    run_ending(store, label, RunStatus::Completed)
}

/// A run of a point-select workload (not yet stored).
fn meta() -> RunMeta {
    RunMeta::new(
        RunPlan::new(WorkloadOptions::new(WorkloadKind::OltpPointSelect)),
        "root@localhost/sbtest".into(),
        Default::default(),
        Default::default(),
        "qpslab lab run s.toml".into(),
    )
}

fn run_ending(store: &mut Store, label: &str, status: RunStatus) -> RunId {
    let meta = meta().in_study("s", label);
    let phase = PhaseResult {
        threads: 1,
        duration_s: 1.0,
        events: 10,
        ..Default::default()
    };
    let id = store.record_phase(&meta, &phase, &[]).unwrap();
    store.finish_run(&meta.uuid, status).unwrap();
    id
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
fn attempts_are_kept_and_a_resume_keeps_what_unfinished_cells_measured() {
    for place in common::both("attempts_are_kept_an") {
        let mut store = Store::open(&place.db).unwrap();
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

        // Cell b's second attempt was cut short: its run is nobody's attempt yet.
        let r4 = run_ending(&mut store, "b", RunStatus::Interrupted);
        assert_eq!(store.reopen_unfinished_cells(id).unwrap(), 1);
        let left = store.cell_attempts(id).unwrap();
        assert_eq!(left.len(), 4, "every attempt is kept: {left:?}");
        let last = &left[3];
        assert_eq!(
            (last.cell_id, last.attempt, last.run_id, last.status),
            (b, 2, Some(r4), AttemptStatus::Interrupted)
        );
        assert!(last.reason.as_deref().unwrap().contains("interrupted"));
        for r in [r1, r2, r3, r4] {
            assert!(store.load_run(r).is_ok(), "run {r:?} was deleted");
        }
        // A second resume finds nothing new to keep.
        store.reopen_unfinished_cells(id).unwrap();
        assert_eq!(store.cell_attempts(id).unwrap().len(), 4);
        let cells = store.study_cells(id).unwrap();
        assert_eq!(cells[1].status, qpslab_store::CellStatus::Pending);
    }
}

#[test]
fn a_run_id_is_never_given_twice() {
    for place in common::both("a_run_id_is_never_gi") {
        let mut store = Store::open(&place.db).unwrap();
        let first = run(&mut store, "a");
        // A run that measured nothing is removed when it is closed: its id stays used.
        let h = store.begin_phase(&meta(), 1).unwrap();
        let empty = h.run_id;
        store.interrupt_phase(&h).unwrap();
        assert!(store.load_run(empty).is_err());
        let next = run(&mut store, "a");
        assert!(
            first < empty && empty < next,
            "{first:?} {empty:?} {next:?}"
        );
    }
}

#[test]
fn one_process_drives_a_study() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    let mut store = Store::open(&path).unwrap();
    let id = study(&mut store);
    // This process created it: it may claim it again.
    assert_eq!(store.claim_study("s").unwrap().id, id);
    // A live process that is not this one drives it: both a new run and a resume are refused,
    // naming it.
    let mut other = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let pid = other.id();
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute(
            "UPDATE studies SET owner_pid = ?1, owner_boot_id = NULL, owner_started = NULL",
            [pid],
        )
        .unwrap();
    let busy = |e: qpslab_store::Error| match e {
        qpslab_store::Error::StudyBusy { pid: p, .. } => {
            assert_eq!(p, pid);
            assert!(e.to_string().contains(&format!("pid {pid}")), "{e}");
        }
        e => panic!("{e}"),
    };
    busy(store.claim_study("s").unwrap_err());
    let new = NewStudy {
        name: "s".into(),
        spec_toml: String::new(),
        spec_hash: String::new(),
        env: serde_json::json!({}),
        factors: vec![],
    };
    busy(store.create_study(&new, &[]).unwrap_err());
    // Once it is gone, the study is free again.
    other.kill().unwrap();
    other.wait().unwrap();
    assert!(matches!(
        store.create_study(&new, &[]),
        Err(qpslab_store::Error::StudyExists(_))
    ));
    assert_eq!(store.claim_study("s").unwrap().id, id);
}

/// Cell `a` measured twice (the first attempt unstable) and done; `b` pending.
fn measured(store: &mut Store) -> (StudyId, RunId) {
    let id = study(store);
    let a = store.study_cells(id).unwrap()[0].id;
    store.cell_running(a).unwrap();
    let r1 = run(store, "a");
    store.record_attempt(a, r1, Some("unstable")).unwrap();
    let r2 = run(store, "a");
    store.record_attempt(a, r2, None).unwrap();
    store.cell_done(a, r2).unwrap();
    (id, r2)
}

#[test]
fn a_study_doc_holds_each_cell_its_attempts_and_the_run_it_uses() {
    for place in common::both("a_study_doc_holds_ea") {
        let mut store = Store::open(&place.db).unwrap();
        let (_, used) = measured(&mut store);
        let doc = store.study_doc(&store.study_by_name("s").unwrap()).unwrap();
        assert_eq!((doc.name.as_str(), doc.cells.len()), ("s", 2));
        let a = &doc.cells[0];
        let flags: Vec<bool> = a.attempts.iter().map(|t| t.used).collect();
        assert_eq!(flags, [false, true]);
        assert_eq!(a.run.as_ref().map(|r| r.id), Some(used));
        assert!(doc.cells[1].attempts.is_empty() && doc.cells[1].run.is_none());
        // the record's fields sit beside the attempts and the run
        let v = serde_json::to_value(&doc).unwrap();
        assert_eq!(v["cells"][0]["label"], "a");
        assert_eq!(v["cells"][0]["attempts"][0]["reason"], "unstable");
        assert_eq!(v["cells"][1]["run"], serde_json::Value::Null);
    }
}

#[test]
fn csv_rows_carry_the_figures_of_measured_cells_only() {
    for place in common::both("csv_rows_carry_the_f") {
        let mut store = Store::open(&place.db).unwrap();
        let (id, used) = measured(&mut store);
        let figures = store.cell_figures(id).unwrap();
        let rows: Vec<Vec<String>> = figures.iter().map(|f| f.csv_row().unwrap()).collect();
        assert!(rows.iter().all(|r| r.len() == STUDY_CSV_HEADER.len()));
        // 10 events in 1 s
        assert_eq!(
            rows[0][6..9],
            [used.to_string(), "2".into(), "10.000".into()]
        );
        assert_eq!(figures[1].headline(), [None; 7]);
        assert_eq!(
            rows[1][4..9],
            ["pending", "{}", "", "0", ""].map(String::from)
        );
    }
}
