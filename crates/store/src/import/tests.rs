//! Imports between real store files in a temporary directory.

use super::*;
use crate::model::RunId;
use crate::schema;
use qpslab_core::fault::Blame;
use rusqlite::Connection;

/// A store at `path` holding one run (uuid `uuid`, host `host`) of study `study` with a
/// phase, two samples, a histogram and a telemetry tick, and the study's one cell and
/// attempt. Ids start at `first` so that copies can be told from originals.
pub(super) fn store_with_run(
    path: &Path,
    uuid: &str,
    host: &str,
    study: &str,
    first: i64,
) -> Store {
    let store = Store::open(path).unwrap();
    let crate::db::Conn::Lite(conn) = &store.conn else {
        unreachable!("a file's store")
    };
    fill(conn, uuid, host, study, first);
    store
}

/// `value` as JSON in an SQL string literal.
fn json(value: &impl serde::Serialize) -> String {
    format!(
        "'{}'",
        serde_json::to_string(value).unwrap().replace('\'', "''")
    )
}

/// A V2 histogram of `values` microseconds as an SQL blob literal.
fn histogram(values: &[u64]) -> String {
    use hdrhistogram::serialization::{Serializer, V2Serializer};
    let mut h = qpslab_core::latency::new_histogram();
    for v in values {
        h.record(*v).unwrap();
    }
    let mut v2 = Vec::new();
    V2Serializer::new().serialize(&h, &mut v2).unwrap();
    let hex: String = v2.iter().map(|b| format!("{b:02x}")).collect();
    format!("x'{hex}'")
}

/// The rows of [`store_with_run`], written through `conn`: each JSON column as qpslab writes
/// it, the phase's histogram holding its 10 events.
fn fill(conn: &Connection, uuid: &str, host: &str, study: &str, first: i64) {
    use qpslab_core::{PhaseResult, RunPlan, WorkloadKind, WorkloadOptions};
    let plan = json(&RunPlan::new(WorkloadOptions::new(
        WorkloadKind::OltpReadOnly,
    )));
    let server = json(&qpslab_core::ServerInfo::default());
    let mut facts = serde_json::to_value(qpslab_core::env::HostFacts::default()).unwrap();
    facts["hostname"] = host.into();
    facts["cpu_model"] = "cpu".into();
    let facts = json(&facts);
    let mut summary = PhaseResult {
        threads: 4,
        duration_s: 1.0,
        events: 10,
        ..Default::default()
    };
    summary.latency.count = 10;
    let summary = json(&summary);
    let h = histogram(&[1000; 10]);
    conn.execute_batch(&format!(
            "INSERT INTO runs (id, uuid, started_at, finished_at, status, command, workload,
                               plan_json, target, server_version, server_json, host_json,
                               tool_version, study_id, cell_label)
             VALUES ({first}, '{uuid}', 1.0, 2.0, 'completed', 'qpslab run', 'oltp_read_only',
                     {plan}, 'root@h:3306/sbtest', '10.11', {server},
                     {facts}, '0.1', '{study}', 'c1');
             INSERT INTO phases (id, run_id, seq, recorded_at, threads, duration_s, events,
                                 reads, writes, other, errors_json, reconnects, tps, qps,
                                 lat_min_ms, lat_avg_ms, lat_max_ms, percentiles_json,
                                 statements_json, client_cpu_user_s, client_cpu_sys_s,
                                 client_max_rss_kib, summary_json)
             VALUES ({first}, {first}, 1, 1.0, 4, 1.0, 10, 0, 0, 0, '{{}}', 0, 10.0, 10.0, 1, 1,
                     1, '[]', '[]', 0, 0, 0, {summary});
             INSERT INTO samples (phase_id, seq, elapsed_s, interval_s, events, reads, writes,
                                  other, errors, reconnects, lat_count, lat_min_ms, lat_avg_ms,
                                  lat_max_ms, p_json, client_cpu_user_s, client_cpu_sys_s,
                                  client_max_rss_kib, late_events, max_lag_ms)
             VALUES ({first}, 1, 0.5, 0.5, 4, 0, 0, 0, 0, 0, 4, 1, 1, 1, '[]', 0, 0, 0, 0, 0),
                    ({first}, 2, 1.0, 0.5, 6, 0, 0, 0, 0, 0, 6, 1, 1, 1, '[]', 0, 0, 0, 0, 0);
             INSERT INTO histograms (phase_id, seq, name, v2) VALUES ({first}, 0, 'event', {h});
             INSERT INTO telemetry (phase_id, seq, elapsed_s, source, json)
             VALUES ({first}, 1, 0.5, 'server_status', '{{}}');
             INSERT INTO studies (id, name, spec_toml, spec_hash, created_at, status, env_json,
                                  factors_json)
             VALUES ({first}, '{study}', 'name = \"{study}\"', 'h-{uuid}', 1.0, 'done', '{{}}', '[]');
             INSERT INTO cells (id, study_id, seq, label, variant, levels_json, params_json,
                                repeat, status, run_id)
             VALUES ({first}, {first}, 1, 'c1', 'v', '{{}}', '{{}}', 1, 'done', {first});
             INSERT INTO cell_attempts (cell_id, attempt, run_id, status, recorded_at)
             VALUES ({first}, 1, {first}, 'done', 1.0);
             INSERT INTO tune_trials (session, seq, phase, settings_json, tps, duration_s,
                                      run_id, recorded_at)
             VALUES ('{study}', 1, 'confirm tuned', '{{}}', 10.0, 1.0, {first}, 1.0);"
    ))
    .unwrap();
}

fn count(store: &Store, sql: &str) -> i64 {
    store.conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

#[test]
fn a_run_and_its_study_are_copied_with_new_ids_and_recognised_the_second_time() {
    let dir = tempfile::tempdir().unwrap();
    let (here, there) = (dir.path().join("here.db"), dir.path().join("there.db"));
    let mut store = store_with_run(&here, "u-here", "alpha", "s", 1);
    drop(store_with_run(&there, "u-there", "beta", "s", 7));

    let done = store.import(&there, &[]).unwrap();
    assert_eq!(done.runs.len(), 1);
    let run = &done.runs[0];
    assert_eq!(
        (run.original, run.already, run.host.as_str()),
        (7, false, "beta")
    );
    assert_ne!(run.id, RunId(7));
    let id = run.id.0;
    assert_eq!(
        count(
            &store,
            &format!("SELECT original_id FROM runs WHERE id = {id}")
        ),
        7
    );
    for (table, n) in [("samples", 2), ("histograms", 1), ("telemetry", 1)] {
        let sql = format!(
            "SELECT count(*) FROM {table} t JOIN phases p ON p.id = t.phase_id
             WHERE p.run_id = {id}"
        );
        assert_eq!(count(&store, &sql), n, "{table}");
    }
    // The name `s` is taken here: the study comes as s@beta, its cell and run follow it.
    assert_eq!(done.studies.len(), 1);
    assert_eq!(done.studies[0].name, "s@beta");
    let sid = done.studies[0].id.0;
    assert_eq!(
        count(
            &store,
            &format!("SELECT run_id FROM cells WHERE study_id = {sid}")
        ),
        id
    );
    assert_eq!(
        count(
            &store,
            &format!(
                "SELECT count(*) FROM cell_attempts a JOIN cells c ON c.id = a.cell_id
                 WHERE c.study_id = {sid} AND a.run_id = {id}"
            )
        ),
        1
    );
    assert_eq!(
        count(
            &store,
            &format!("SELECT count(*) FROM runs WHERE id = {id} AND study_id = 's@beta'")
        ),
        1
    );

    let trial = "SELECT run_id FROM tune_trials WHERE session = 's@beta'";
    assert_eq!(
        count(&store, trial),
        id,
        "the tune session follows its study"
    );

    let again = store.import(&there, &[]).unwrap();
    assert!(again.runs[0].already && again.runs[0].id == RunId(id));
    assert!(again.studies[0].already && again.studies[0].name == "s@beta");
    assert_eq!(count(&store, "SELECT count(*) FROM runs"), 2);
    assert_eq!(count(&store, "SELECT count(*) FROM samples"), 4);
    assert_eq!(count(&store, "SELECT count(*) FROM studies"), 2);
    assert_eq!(count(&store, "SELECT count(*) FROM tune_trials"), 2);
}

#[test]
fn a_missing_id_a_run_still_running_or_a_foreign_file_imports_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (here, there) = (dir.path().join("here.db"), dir.path().join("there.db"));
    let mut store = Store::open(&here).unwrap();
    drop(store_with_run(&there, "u-there", "beta", "s", 7));

    let e = store
        .import(&there, &[Pick::Run(7), Pick::Run(8)])
        .unwrap_err();
    assert!(matches!(e, ImportError::NoRun { id: 8, .. }), "{e}");
    assert!(e.is_user_error());
    // A run still being measured there: refused when picked, left out of everything.
    let other = Connection::open(&there).unwrap();
    other
        .execute("UPDATE runs SET status = 'running' WHERE id = 7", [])
        .unwrap();
    drop(other);
    let e = store.import(&there, &[Pick::Run(7)]).unwrap_err();
    assert!(matches!(e, ImportError::StillRunning { id: 7, .. }), "{e}");
    let done = store.import(&there, &[]).unwrap();
    assert_eq!((done.runs.len(), &done.still_running[..]), (0, &[7][..]));
    store.conn.execute("DELETE FROM studies", []).unwrap();
    let e = store
        .import(&there, &[Pick::Study("nope".into())])
        .unwrap_err();
    assert!(matches!(e, ImportError::NoStudy { .. }), "{e}");
    assert_eq!(count(&store, "SELECT count(*) FROM runs"), 0);

    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "not a database at all, just some words").unwrap();
    let e = store.import(&text, &[]).unwrap_err();
    assert!(matches!(e, ImportError::NotAStore(_)), "{e}");
    let e = store.import(&dir.path().join("none.db"), &[]).unwrap_err();
    assert!(
        matches!(e, ImportError::NoFile(_)) && e.is_user_error(),
        "{e}"
    );
    let e = store.import(dir.path(), &[]).unwrap_err();
    assert!(matches!(e, ImportError::NotAStore(_)), "{e}");
    let other = dir.path().join("other.sqlite");
    Connection::open(&other)
        .unwrap()
        .execute_batch("CREATE TABLE t (x)")
        .unwrap();
    let e = store.import(&other, &[]).unwrap_err();
    assert!(
        e.is_user_error() && e.to_string().contains("not a qpslab"),
        "{e}"
    );
    let newer = Connection::open(&there).unwrap();
    newer
        .pragma_update(None, "user_version", schema::SCHEMA_VERSION + 1)
        .unwrap();
    drop(newer);
    let e = store.import(&there, &[]).unwrap_err();
    assert!(e.is_user_error() && e.to_string().contains("newer"), "{e}");
    let e = store.import(&here, &[]).unwrap_err();
    assert!(matches!(e, ImportError::SameStore(_)), "{e}");
    assert_eq!(count(&store, "SELECT count(*) FROM runs"), 0);
}

#[test]
fn an_older_store_is_migrated_in_a_copy_and_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let (here, there) = (dir.path().join("here.db"), dir.path().join("there.db"));
    let mut store = Store::open(&here).unwrap();
    let mut old = Connection::open(&there).unwrap();
    schema::create_before_import(&mut old).unwrap();
    fill(&old, "u-there", "beta", "s", 7);
    let before: i64 = old
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    drop(old);
    let done = store.import(&there, &[Pick::Run(7)]).unwrap();
    assert_eq!(done.runs.len(), 1);
    assert!(done.studies.is_empty());
    let version: i64 = Connection::open(&there)
        .unwrap()
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, before, "the other file is only read");
    let id = done.runs[0].id.0;
    let sql = format!("SELECT original_id FROM runs WHERE id = {id}");
    assert_eq!(count(&store, &sql), 7);
}

#[test]
fn a_damaged_run_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let (here, there) = (dir.path().join("here.db"), dir.path().join("there.db"));
    let mut store = Store::open(&here).unwrap();
    let summary = "SELECT summary_json FROM phases";
    for (damage, says) in [
        (
            "UPDATE runs SET plan_json = '{\"workload\": '".to_string(),
            "run 7: results store JSON: EOF while parsing",
        ),
        (
            "UPDATE runs SET plan_json = '{}'".into(),
            "run 7: results store JSON: missing field",
        ),
        (
            "UPDATE samples SET p_json = 'p99' WHERE seq = 2".into(),
            "run 7: results store JSON: expected value",
        ),
        (
            "UPDATE studies SET factors_json = '[{'".into(),
            "studies.factors_json holds something that is not JSON",
        ),
        (
            "UPDATE histograms SET v2 = x'1c84'".into(),
            "run 7: phase 1: histogram event is not a V2 HDR histogram",
        ),
        (
            // The header claims 4 GB of payload: refused, not allocated.
            "UPDATE histograms SET v2 =
               CAST(substr(v2, 1, 4) || x'ffffffff' || substr(v2, 9) AS BLOB)"
                .into(),
            "run 7: phase 1: histogram event is not a V2 HDR histogram",
        ),
        (
            format!(
                "UPDATE phases SET summary_json =
                   json_set(({summary}), '$.latency.count', 11)"
            ),
            "run 7: phase 1: histogram event holds 10 values, its summary counts 11",
        ),
    ] {
        let _ = std::fs::remove_file(&there);
        drop(store_with_run(&there, "u-there", "beta", "s", 7));
        Connection::open(&there)
            .unwrap()
            .execute_batch(&damage)
            .unwrap();
        let e = store.import(&there, &[]).unwrap_err();
        assert!(
            matches!(e, ImportError::Damaged { .. }) && e.is_user_error(),
            "{damage}: {e}"
        );
        let text = e.to_string();
        assert!(
            text.contains(says) && text.ends_with("; nothing imported"),
            "{damage}: {text}"
        );
        for table in ["runs", "phases", "studies", "cells", "tune_trials"] {
            let n = count(&store, &format!("SELECT count(*) FROM {table}"));
            assert_eq!(n, 0, "{damage}: {table}");
        }
    }
}
