//! One run measured by three shards (`run --shard I/3`, three processes, each with its own
//! store) against one server, then `qpslab merge`: the merged run's events are the shards' sum,
//! its p99 is the p99 of the union of the shards' stored HDR histograms (decoded here with the
//! hdrhistogram crate, read from the stores with SQL, not through qpslab), and the shards
//! started within 50 ms of each other. A shard left alone fails, naming the one missing; a
//! merge of an incomplete group is the user's error.

mod common;
use common::*;
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;
use std::path::{Path, PathBuf};
use std::process::{Child, Output};
use std::time::{Duration, Instant};

/// The dataset every test here measures, in its own database of the shared server.
const DB: &str = "qpslab_shards_test";

/// Loads the dataset once for the tests of this process (they run at the same time).
fn prepared(s: &Scratch) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        prepare_shared(
            s,
            "oltp_point_select",
            DB,
            &["--tables", "1", "--table-size", "1000"],
        )
    });
}

/// `qpslab run` of shard `shard` of group `group` on the shared server, stored in `db`.
fn shard(s: &Scratch, shard: &str, group: &str, db: &Path, extra: &[&str]) -> Child {
    let sock = socket();
    on(
        s,
        &["--socket", &sock, "--database", DB],
        shard,
        group,
        db,
        extra,
    )
}

/// `qpslab run` of shard `shard` of group `group` on the server `target` names.
fn on(s: &Scratch, target: &[&str], shard: &str, group: &str, db: &Path, extra: &[&str]) -> Child {
    let db = db.display().to_string();
    let mut args = vec!["run", "oltp_point_select"];
    args.extend_from_slice(target);
    args.extend([
        "--tables",
        "1",
        "--table-size",
        "1000",
        "--threads",
        "3",
        "--time",
        "2",
        "--settle",
        "off",
        "--shard",
        shard,
        "--shard-group",
        group,
        "--db",
        &db,
    ]);
    args.extend_from_slice(extra);
    s.cmd(&args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start qpslab run")
}

/// Waits for `child` at most `limit`; kills it when it takes longer.
fn finish(mut child: Child, limit: Duration) -> Output {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        if child.try_wait().expect("wait").is_some() {
            return child.wait_with_output().expect("output");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    panic!("a shard ran past {limit:?}");
}

/// The stored phase's summary JSON and the event histograms (phase, then each interval) of
/// the one run of `db`, read with SQL.
fn stored(db: &Path) -> (serde_json::Value, Vec<u8>, Vec<Vec<u8>>) {
    let c = rusqlite::Connection::open(db).unwrap();
    let (phase_id, summary): (i64, String) = c
        .query_row("SELECT id, summary_json FROM phases", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    let event: Vec<u8> = c
        .query_row(
            "SELECT v2 FROM histograms WHERE phase_id = ?1 AND name = 'event'",
            [phase_id],
            |r| r.get(0),
        )
        .unwrap();
    let mut st = c
        .prepare("SELECT histogram FROM samples WHERE phase_id = ?1 ORDER BY seq")
        .unwrap();
    let intervals = st
        .query_map([phase_id], |r| r.get::<_, Option<Vec<u8>>>(0))
        .unwrap()
        .map(|r| {
            r.unwrap()
                .expect("a sharded run keeps each interval's histogram")
        })
        .collect();
    (serde_json::from_str(&summary).unwrap(), event, intervals)
}

fn decode(v2: &[u8]) -> Histogram<u64> {
    Deserializer::new().deserialize(&mut &v2[..]).unwrap()
}

/// The engine's quantile rule, in ms.
fn p99_ms(h: &Histogram<u64>) -> f64 {
    h.value_at_quantile(0.99) as f64 / 1e3
}

#[test]
fn three_shards_merge_exactly_and_start_together() {
    let s = Scratch::new();
    prepared(&s);
    let dbs: Vec<PathBuf> = (0..3)
        .map(|i| s.path().join(format!("shard{i}.db")))
        .collect();
    let group = format!("t{}", std::process::id());
    let children: Vec<Child> = (0..3)
        .map(|i| shard(&s, &format!("{i}/3"), &group, &dbs[i], &[]))
        .collect();
    for c in children {
        let o = finish(c, Duration::from_secs(120));
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let merged = s.path().join("merged.db");
    let mut args = vec!["merge".to_string()];
    args.extend(dbs.iter().map(|d| d.display().to_string()));
    args.extend(["--db".to_string(), merged.display().to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = s.run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("merged 3 shards"), "{}", stdout(&o));
    let id = stored_run_id(&stdout(&o));
    assert_eq!(id, "1");

    let shards: Vec<_> = dbs.iter().map(|d| stored(d)).collect();
    let (m, m_event, m_intervals) = stored(&merged);
    // Events: the sum; sessions: the shards' 1 + 1 + 1.
    let sum: u64 = shards
        .iter()
        .map(|(p, ..)| p["events"].as_u64().unwrap())
        .sum();
    assert!(sum > 0);
    assert_eq!(m["events"].as_u64(), Some(sum));
    assert_eq!(m["threads"].as_u64(), Some(3));
    // p99: the union of the shards' histograms, per phase and per interval.
    let mut union = decode(&shards[0].1);
    for (_, e, _) in &shards[1..] {
        union.add(decode(e)).unwrap();
    }
    assert_eq!(union.len(), sum);
    let p99 = m["latency"]["percentiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["p"] == 99.0)
        .unwrap()["ms"]
        .as_f64()
        .unwrap();
    assert_eq!(p99, p99_ms(&union));
    assert_eq!(decode(&m_event).len(), sum);
    let n = shards.iter().map(|(_, _, i)| i.len()).min().unwrap();
    assert!(n >= 2 && m_intervals.len() >= n);
    for k in 0..n {
        let mut u = decode(&shards[0].2[k]);
        for (_, _, i) in &shards[1..] {
            u.add(decode(&i[k])).unwrap();
        }
        assert_eq!(p99_ms(&decode(&m_intervals[k])), p99_ms(&u), "interval {k}");
    }
    // Started together: every shard's measured start within 50 ms of the others'.
    let starts: Vec<f64> = shards
        .iter()
        .map(|(p, ..)| p["shard"]["start_unix_s"].as_f64().unwrap())
        .collect();
    let spread = starts.iter().cloned().fold(f64::MIN, f64::max)
        - starts.iter().cloned().fold(f64::MAX, f64::min);
    assert!(spread < 0.050, "starts {starts:?}");
    let members = m["shard"]["members"].as_array().unwrap();
    assert_eq!(members.len(), 3);
    // The meeting rows are gone.
    let left = sql(&format!(
        "SELECT count(*) FROM qpslab_shards.meeting WHERE grp = '{group}'"
    ));
    assert_eq!(left.trim(), "0");

    // The merged run reads as any other.
    let o = s.run(&["show", &id, "--db", &merged.display().to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));

    // Two of three shards are not a run.
    let o = s.run(&[
        "merge",
        &dbs[0].display().to_string(),
        &dbs[2].display().to_string(),
        "--db",
        &s.path().join("partial.db").display().to_string(),
    ]);
    assert_user_error(&o, "shard(s) 1 of 3 missing");
}

#[test]
fn a_shard_alone_fails_naming_the_missing_one() {
    let s = Scratch::new();
    prepared(&s);
    let db = s.path().join("alone.db");
    let group = format!("alone{}", std::process::id());
    let child = shard(&s, "0/2", &group, &db, &["--shard-timeout", "2"]);
    let o = finish(child, Duration::from_secs(60));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("shard 1 did not arrive within 2 s"), "{err}");
}

#[test]
fn shard_auto_without_a_launcher_names_the_variables() {
    let s = Scratch::new();
    let o = s
        .cmd(&[
            "run",
            "oltp_point_select",
            "--socket",
            "/nonexistent",
            "--shard",
            "auto",
        ])
        .env_remove("SLURM_PROCID")
        .env_remove("OMPI_COMM_WORLD_RANK")
        .env_remove("JOB_COMPLETION_INDEX")
        .output()
        .unwrap();
    assert_user_error(&o, "SLURM_PROCID/SLURM_NTASKS");
}

#[test]
fn shard_0_prepares_the_dataset_while_the_other_waits() {
    let s = Scratch::new();
    let o = s.run(&["server", "start", "shards"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let group = format!("prep{}", std::process::id());
    let dbs: Vec<PathBuf> = (0..2).map(|i| s.path().join(format!("p{i}.db"))).collect();
    // The other shard first: it must wait, not prepare, not fail on a missing table.
    let other = on(&s, &["--sandbox", "shards"], "1/2", &group, &dbs[1], &[]);
    std::thread::sleep(Duration::from_millis(500));
    let first = on(&s, &["--sandbox", "shards"], "0/2", &group, &dbs[0], &[]);
    let (o0, o1) = (
        finish(first, Duration::from_secs(120)),
        finish(other, Duration::from_secs(120)),
    );
    assert!(o0.status.success(), "{}", stderr(&o0));
    assert!(o1.status.success(), "{}", stderr(&o1));
    let (e0, e1) = (stderr(&o0) + &stdout(&o0), stderr(&o1) + &stdout(&o1));
    assert!(e0.contains("dataset missing: preparing"), "{e0}");
    assert!(
        e1.contains("waiting for shard 0 to ready the dataset"),
        "{e1}"
    );
    assert!(!e1.contains("preparing"), "{e1}");
}
