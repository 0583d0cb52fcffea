//! A file's store copied to a server's and back to a new file, every row compared: the copy is
//! exact both ways (doubles to the last bit, histograms byte for byte, text beyond ASCII).

use super::tests::store_with_run;
use super::*;
use crate::db::Value;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A new, empty schema's URL on the test process's shared MariaDB sandbox.
fn server_url(name: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let sandbox = qpslab_sandbox::testing::shared_server();
    PathBuf::from(format!(
        "mysql://root@localhost/rt_{name}_{}_{}?socket={}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed),
        sandbox.socket().display()
    ))
}

/// Every row of every copied table, ids and references left out (they are renumbered) and
/// the origin columns too (a copy records where it came from), in the store's order.
fn dump(store: &Store) -> Vec<(String, Vec<Vec<Value>>)> {
    let tables = tables::tables(&store.conn).unwrap();
    let mut out = Vec::new();
    for t in &tables {
        if t.name == "qpslab_store" {
            continue;
        }
        let skip = |i: usize, c: &str| {
            Some(i) == t.id
                || t.refs.iter().any(|r| r.col == i)
                || c == "original_id"
                || c == "imported_from"
        };
        let (select, _) = tables::statements(t);
        let order = if t.id.is_some() {
            " ORDER BY id".to_string()
        } else {
            " ORDER BY 1, 2".to_string()
        };
        let rows = tables::rows(&store.conn, t, &format!("{select}{order}"))
            .unwrap()
            .into_iter()
            .map(|row| {
                row.into_iter()
                    .zip(&t.cols)
                    .enumerate()
                    .filter(|(i, (_, c))| !skip(*i, c))
                    .map(|(_, (v, _))| v)
                    .collect()
            })
            .collect();
        out.push((t.name.clone(), rows));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn a_file_copied_to_a_server_and_back_keeps_every_value_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let (first, back) = (dir.path().join("first.db"), dir.path().join("back.db"));
    let original = store_with_run(&first, "u-rt", "höst-ß", "s_rt", 7);
    // Values that a text round trip or a float would change.
    original
        .conn
        .execute_batch(
            "UPDATE phases SET tps = 0.30000000000000004, qps = 1e-300,
                               lat_avg_ms = 123456.78901234567, lat_max_ms = 5e-324;
             UPDATE runs SET started_at = 1765161234.1234567, cell_label = 'c1 ✓ 😀';
             UPDATE telemetry SET json = '{\"k\": \"é\\u0000\"}';",
        )
        .unwrap();
    let rows = |t: &str| {
        dump(&original)
            .into_iter()
            .find(|d| d.0 == t)
            .map(|d| d.1.len())
    };
    for (t, n) in [
        ("samples", 2),
        ("histograms", 1),
        ("telemetry", 1),
        ("tune_trials", 1),
    ] {
        assert_eq!(rows(t), Some(n), "{t}");
    }
    let url = server_url("copy");
    let mut server = Store::open(&url).unwrap();
    let done = server.import(&first, &[]).unwrap();
    assert_eq!(done.runs.len(), 1);
    assert!(!done.runs[0].already);
    assert_eq!(done.studies[0].name, "s_rt");
    assert_eq!(dump(&server), dump(&original), "file to server");
    let run = done.runs[0].id;
    let (a, b) = (
        original.load_run(RunId(7)).unwrap(),
        server.load_run(run).unwrap(),
    );
    assert_eq!(a.phases.len(), b.phases.len());
    assert_eq!(
        format!("{:?}", a.phases),
        format!("{:?}", b.phases).replace(&format!("run_id: {}", run.0), "run_id: 7")
    );

    // A second import recognises everything.
    let again = server.import(&first, &[]).unwrap();
    assert!(again.runs[0].already && again.studies[0].already);

    let out = server.export(&back, &[]).unwrap();
    assert_eq!(out.runs.len(), 1);
    let back_store = Store::open(&back).unwrap();
    assert_eq!(dump(&back_store), dump(&original), "server back to a file");
    let origin: (i64, String) = back_store
        .conn
        .query_row("SELECT original_id, imported_from FROM runs", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!(
        origin,
        (7, first.display().to_string()),
        "where it was measured"
    );

    // A server's store read by import, into another server's and into a file.
    let mut other = Store::open(&server_url("other")).unwrap();
    let done = other.import(&url, &[]).unwrap();
    assert_eq!(done.runs.len(), 1);
    assert_eq!(dump(&other), dump(&original), "server to server");
    let mut file = Store::open(&dir.path().join("file.db")).unwrap();
    file.import(&url, &[Pick::Study("s_rt".into())]).unwrap();
    assert_eq!(dump(&file), dump(&original), "server to a file, by study");
    assert!(matches!(
        server.import(&url, &[]),
        Err(ImportError::SameStore(_))
    ));

    // Export never overwrites; a failed export leaves no file.
    assert!(matches!(
        server.export(&back, &[]),
        Err(ImportError::Exists(_))
    ));
    let missing = dir.path().join("none.db");
    assert!(matches!(
        server.export(&missing, &[Pick::Run(999)]),
        Err(ImportError::NoRun { id: 999, .. })
    ));
    assert!(!missing.exists());
}
