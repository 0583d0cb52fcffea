use super::*;

fn entry(
    i: u64,
    sql: &str,
    t: Option<f64>,
    db: Option<&'static str>,
) -> (u64, String, Option<f64>, Option<&'static str>) {
    (i, sql.to_string(), t, db)
}

fn digest(entries: &[(u64, String, Option<f64>, Option<&'static str>)]) -> Digest {
    let mut d = Digest::default();
    for (line, sql, t, db) in entries {
        d.add(&EntryRef {
            line: *line,
            at_us: Some(*line as i64 * 1_000_000),
            thread_id: Some(1),
            user: None,
            host: None,
            db: *db,
            query_time_s: *t,
            lock_time_s: t.map(|t| t / 10.0),
            rows_sent: Some(1),
            rows_examined: Some(*line),
            rows_affected: None,
            sql: sql.as_bytes(),
            command: "Query",
            extras: &[],
        });
    }
    d
}

#[test]
fn classes_sums_and_order() {
    let d = digest(&[
        entry(
            1,
            "SELECT c FROM sbtest1 WHERE id IN (1,2)",
            Some(0.001),
            Some("a"),
        ),
        entry(
            2,
            "SELECT c FROM sbtest1 WHERE id IN (7)",
            Some(0.003),
            Some("b"),
        ),
        entry(
            3,
            "SELECT c FROM sbtest12 WHERE id IN (1,2,3)",
            Some(0.010),
            Some("a"),
        ),
        entry(
            4,
            "select c from sbtest1 where id in (5,6,7,8)",
            Some(0.002),
            Some("a"),
        ),
    ]);
    let s = d.summaries(None);
    assert_eq!(d.entries(), 4);
    assert_eq!(s.len(), 2);
    assert_eq!(
        (s[0].fingerprint.as_str(), s[0].count),
        ("select c from sbtest12 where id in(?+)", 1)
    );
    let one = &s[1];
    assert_eq!(
        (one.fingerprint.as_str(), one.count, one.kind),
        ("select c from sbtest1 where id in(?+)", 3, "read")
    );
    let t = one.query_time.clone().unwrap();
    assert!(
        (t.total_s - 0.006).abs() < 1e-12 && (t.avg_s - 0.002).abs() < 1e-12 && t.max_s == 0.003
    );
    assert!((t.p95_s - 0.003).abs() <= 0.003 / 16.0, "{}", t.p95_s);
    assert!((one.lock_time_s.unwrap() - 0.0006).abs() < 1e-12);
    assert_eq!(
        one.rows_examined,
        Some(Rows {
            total: 7,
            avg: 7.0 / 3.0
        })
    );
    assert_eq!(
        (one.example.line, one.example.sql.as_str()),
        (2, "SELECT c FROM sbtest1 WHERE id IN (7)")
    );
    assert_eq!(
        (one.first_seen.as_deref(), one.last_seen.as_deref()),
        (Some("1970-01-01T00:00:01Z"), Some("1970-01-01T00:00:04Z"))
    );
    assert_eq!(one.databases, ["a", "b"]);
    assert_eq!(d.summaries(Some(1)).len(), 1);
}

#[test]
fn without_times_classes_go_by_count_and_keep_the_first_example() {
    let d = digest(&[
        entry(1, "BEGIN", None, None),
        entry(2, "SELECT 1", None, None),
        entry(3, "SELECT 2", None, None),
    ]);
    let s = d.summaries(None);
    assert_eq!(
        (
            s[0].fingerprint.as_str(),
            s[0].count,
            s[0].example.sql.as_str()
        ),
        ("select ?", 2, "SELECT 1")
    );
    assert_eq!((s[0].query_time.clone(), s[1].kind), (None, "other"));
}

#[test]
fn many_databases_are_capped() {
    let dbs = ["a", "b", "c", "d", "e", "f"];
    let entries: Vec<_> = dbs
        .iter()
        .enumerate()
        .map(|(i, db)| entry(i as u64, "SELECT 1", Some(0.1), Some(db)))
        .collect();
    assert_eq!(
        digest(&entries).summaries(None)[0].databases,
        ["a", "b", "c", "d", "+"]
    );
}

#[test]
fn the_real_log_digests_into_its_classes() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/mariadb-10.11-slow.log");
    let mut r = crate::open(&path, LogType::Slow).unwrap();
    let mut calls = 0;
    let report = digest_log(&mut r, "x.log", None, |_| calls += 1).unwrap();
    assert_eq!(
        (
            report.entries,
            report.classes,
            report.skipped,
            report.flavor
        ),
        (15, 15, 0, "MariaDB")
    );
    assert_eq!(report.top[0].fingerprint, "insert into sbtest1 values(?+)");
    assert_eq!(report.span_s, Some(0.0));
    assert_eq!(report.first_seen.as_deref(), Some("2026-11-23T04:25:49Z"));
}
