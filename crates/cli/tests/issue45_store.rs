//! Issue 45: a measured phase is never lost to its store, and imports and merges validate
//! before they write. A store locked by another writer gets the store's bounded wait, then the
//! summary is printed and the phase kept where unstored phases go; a read-only `-shm` is refused
//! before measuring; a damaged store is not imported (and a refused import creates no target);
//! a store claiming 1e9 shards is merged under a 1 GiB address-space cap with a clear exit.

mod common;
use common::*;
use std::path::Path;
use std::process::Command;

/// The database of the shared server these tests measure, and its dataset.
const DB: &str = "issue45_store";
const DATASET: [&str; 4] = ["--tables", "1", "--table-size", "500"];

fn prepared(s: &Scratch) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| prepare_shared(s, "oltp_point_select", DB, &DATASET));
}

/// `qpslab run` of `time` seconds on the shared server, stored in `db`.
fn run(s: &Scratch, db: &Path, time: &str) -> std::process::Output {
    let sock = socket();
    let mut args = vec![
        "run",
        "oltp_point_select",
        "--socket",
        &sock,
        "--database",
        DB,
    ];
    args.extend_from_slice(&DATASET);
    args.extend([
        "--threads",
        "1",
        "--time",
        time,
        "--warmup",
        "0",
        "--report-interval",
        "0.5",
        "--db",
        db.to_str().unwrap(),
    ]);
    s.run(&args)
}

#[test]
fn a_store_locked_by_another_writer_keeps_the_phase_beside_it() {
    let s = Scratch::new();
    prepared(&s);
    let db = s.path().join("locked.db");
    stored::run_in(&db, None);
    // Another writer holds the store for the whole run.
    let other = rusqlite::Connection::open(&db).unwrap();
    other.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let o = run(&s, &db, "2");
    other.execute_batch("ROLLBACK").unwrap();
    let (out, err) = (stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(
        out.contains("SQL statistics:"),
        "the summary is printed: {out}"
    );
    let line = err
        .lines()
        .find(|l| l.starts_with("qpslab: error:"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(line.contains("database is locked"), "{line}");
    let kept = line
        .split("it is kept in ")
        .nth(1)
        .and_then(|r| r.split(" (the run's JSON form)").next())
        .unwrap_or_else(|| panic!("{line}"));
    assert!(
        Path::new(kept).starts_with(s.path()),
        "beside the store: {kept}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(kept).unwrap()).unwrap();
    assert_eq!(doc["phases"][0]["status"], "unstored");
    assert!(doc["phases"][0]["events"].as_u64().unwrap() > 0, "{doc}");
}

#[test]
fn a_study_whose_store_is_locked_mid_cell_keeps_the_phase_beside_it() {
    use std::io::{BufRead, BufReader};
    let s = Scratch::new();
    prepared(&s);
    let spec = s.path().join("locked.toml");
    std::fs::write(
        &spec,
        format!(
            "name = \"locked\"\n[defaults]\nworkload = \"oltp_point_select\"\ntables = 1\n\
             table_size = 500\nduration = \"3s\"\nwarmup = 0\nthreads = 1\n\
             [[variant]]\nname = \"ext\"\n\
             target = \"mysql://root@localhost/{DB}?socket={}\"\n",
            socket()
        ),
    )
    .unwrap();
    let mut child = s
        .cmd(&["lab", "run", spec.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Once the cell measures, another writer takes the store until the study has ended.
    let mut other = None;
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        if other.is_none() && line.starts_with('[') && line.contains("tps:") {
            let c = rusqlite::Connection::open(s.db()).unwrap();
            c.execute_batch("BEGIN EXCLUSIVE").unwrap();
            other = Some(c);
        }
    }
    let o = child.wait_with_output().unwrap();
    drop(other.expect("the cell printed no live line"));
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let kept = err
        .split("the store could not keep the phase: kept in ")
        .nth(1)
        .and_then(|r| r.lines().next())
        .unwrap_or_else(|| panic!("{err}"));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(kept.trim()).unwrap()).unwrap();
    assert!(doc["phases"][0]["events"].as_u64().unwrap() > 0, "{doc}");
}

#[test]
fn a_read_only_shm_is_refused_before_measuring() {
    let s = Scratch::new();
    prepared(&s);
    let db = s.path().join("shm.db");
    stored::run_in(&db, None);
    // A reader keeps the WAL's files; someone made the shared-memory one read-only.
    let reader = rusqlite::Connection::open(&db).unwrap();
    let n: i64 = reader
        .query_row("SELECT count(*) FROM runs", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 1);
    let shm = s.path().join("shm.db-shm");
    assert!(shm.exists());
    let ro = Command::new("chmod").arg("444").arg(&shm).status().unwrap();
    assert!(ro.success());
    let started = std::time::Instant::now();
    let o = run(&s, &db, "10");
    assert_user_error(&o, "shm.db-shm is read-only");
    assert!(
        started.elapsed().as_secs() < 10,
        "refused only after measuring"
    );
    assert!(!stdout(&o).contains("SQL statistics"), "{}", stdout(&o));
    let o = s.run(&["show", "--db", db.to_str().unwrap()]);
    assert!(o.status.success(), "the store still reads: {}", stderr(&o));
    drop(reader);
}

#[test]
fn a_damaged_store_is_not_imported_and_a_refused_import_creates_nothing() {
    let s = Scratch::new();
    let there = s.path().join("there.db");
    stored::run_in(&there, None);
    let damage = rusqlite::Connection::open(&there).unwrap();
    damage
        .execute("UPDATE runs SET server_json = '{\"version\": '", [])
        .unwrap();
    drop(damage);
    let there = there.to_str().unwrap();
    let fresh = s.path().join("fresh.db");
    let o = s.run(&["import", there, "--db", fresh.to_str().unwrap()]);
    assert_user_error(
        &o,
        "is damaged (run 1: results store JSON: EOF while parsing",
    );
    assert!(
        stderr(&o).trim_end().ends_with("; nothing imported"),
        "{}",
        stderr(&o)
    );
    let left: Vec<_> = std::fs::read_dir(s.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n.to_string_lossy().starts_with("fresh.db"))
        .collect();
    assert!(left.is_empty(), "a refused import left {left:?}");
    // Into a store that exists: refused, and the store reads and reports as before.
    stored::run_in(&s.db(), None);
    let o = s.run(&["import", there]);
    assert_user_error(&o, "is damaged");
    let o = s.run(&["show", "--format", "csv"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).lines().count(), 2, "{}", stdout(&o));
    let o = s.run(&["report", "1", "--format", "md"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn a_merge_of_a_store_claiming_1e9_shards_ends_clearly_under_a_1_gib_cap() {
    let s = Scratch::new();
    let claims = s.path().join("claims.db");
    stored::run_in(&claims, Some((0, 1_000_000_000)));
    // And a histogram whose header claims 4 GB of payload.
    let huge = s.path().join("huge.db");
    stored::run_in(&huge, Some((0, 1)));
    rusqlite::Connection::open(&huge)
        .unwrap()
        .execute(
            "UPDATE histograms SET v2 =
               CAST(substr(v2, 1, 4) || x'ffffffff' || substr(v2, 9) AS BLOB)",
            [],
        )
        .unwrap();
    let capped = |source: &Path| {
        let out = s.path().join("merged.db");
        let script = format!(
            "ulimit -v 1048576 && exec '{}' merge '{}' --db '{}'",
            env!("CARGO_BIN_EXE_qpslab"),
            source.display(),
            out.display()
        );
        Command::new("sh").args(["-c", &script]).output().unwrap()
    };
    let o = capped(&claims);
    assert_user_error(
        &o,
        "group g: shard(s) 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 999999989 more of 1000000000 missing",
    );
    let o = capped(&huge);
    assert!(
        matches!(o.status.code(), Some(1 | 2)),
        "{:?}: {}",
        o.status,
        stderr(&o)
    );
    assert!(
        stderr(&o).contains("not a V2 HDR histogram"),
        "{}",
        stderr(&o)
    );
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
}
