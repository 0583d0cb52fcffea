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
    let report = digest_log(&mut r, "x.log", None, Bound::NONE, |_| calls += 1).unwrap();
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

/// `n` classes (`SELECT c FROM tI`), class `I` seen `I % 3 + 1` times at `I` ms each, then a
/// heavy class last.
fn many(n: u64) -> Vec<(u64, String, Option<f64>, Option<&'static str>)> {
    let mut v = Vec::new();
    let mut line = 0;
    for i in 0..n {
        for _ in 0..i % 3 + 1 {
            line += 1;
            v.push(entry(
                line,
                &format!("SELECT c FROM t{i}"),
                Some(i as f64 / 1e3),
                None,
            ));
        }
    }
    v.push(entry(line + 1, "SELECT heavy FROM h", Some(100.0), None));
    v
}

fn bounded(entries: &[(u64, String, Option<f64>, Option<&'static str>)], bound: Bound) -> Digest {
    let mut d = Digest::new(bound);
    for (line, sql, t, db) in entries {
        d.add(&EntryRef {
            line: *line,
            at_us: None,
            thread_id: Some(1),
            user: None,
            host: None,
            db: *db,
            query_time_s: *t,
            lock_time_s: t.map(|t| t / 10.0),
            rows_sent: Some(1),
            rows_examined: Some(2),
            rows_affected: None,
            sql: sql.as_bytes(),
            command: "Query",
            extras: &[],
        });
    }
    d
}

#[test]
fn issue_45_classes_past_the_bound_fold_into_other_exactly() {
    let entries = many(1000);
    let d = bounded(
        &entries,
        Bound {
            max_classes: 40,
            max_bytes: usize::MAX,
        },
    );
    let kept = d.summaries(None);
    assert!(kept.len() <= 40 && kept.len() >= 30, "{}", kept.len());
    assert_eq!(kept[0].fingerprint, "select heavy from h");
    let o = d.other();
    let kept_count: u64 = kept.iter().map(|c| c.count).sum();
    assert_eq!(kept_count + o.count, d.entries());
    assert_eq!(d.entries(), entries.len() as u64);
    let total: f64 = entries.iter().filter_map(|e| e.2).sum();
    let kept_time: f64 = kept
        .iter()
        .map(|c| c.query_time.as_ref().unwrap().total_s)
        .sum();
    assert!((kept_time + o.query_time_s.unwrap() - total).abs() < 1e-6);
    assert_eq!(o.rows_sent, Some(o.count));
    assert_eq!(o.rows_examined, Some(2 * o.count));
    assert!(o.tallies >= 960, "{}", o.tallies);
    // What is kept is the heaviest (classes come in increasing weight here).
    assert!(kept
        .iter()
        .all(|c| c.query_time.as_ref().unwrap().total_s >= 0.9));
    // A class counted short says so (a class folded at its first entry and seen again).
    for c in &kept {
        let n: u64 = c
            .fingerprint
            .trim_start_matches("select c from t")
            .parse()
            .unwrap_or(0);
        let all = if c.fingerprint.contains("heavy") {
            1
        } else {
            n % 3 + 1
        };
        assert!(c.count == all || c.partial, "{c:?}");
    }
}

#[test]
fn issue_45_a_class_seen_again_after_its_fold_says_it_is_partial() {
    let mut entries = many(100);
    // A light class first, folded by the hundred after it, then seen again, heavily.
    entries.insert(0, entry(0, "SELECT back FROM b", Some(0.0), None));
    entries.push(entry(10_000, "SELECT back FROM b", Some(50.0), None));
    let d = bounded(
        &entries,
        Bound {
            max_classes: 8,
            max_bytes: usize::MAX,
        },
    );
    let s = d.summaries(None);
    let back = s
        .iter()
        .find(|c| c.fingerprint == "select back from b")
        .unwrap();
    assert!(back.partial);
    assert_eq!(back.count, 1);
    assert!(!s[0].partial, "{}", s[0].fingerprint);
}

#[test]
fn issue_45_the_bytes_bound_holds_whatever_the_statements_weigh() {
    // Classes of 64 KiB statements: a 2 MiB bound keeps about 30 of them.
    let big: Vec<_> = (0..200u64)
        .map(|i| {
            let sql = format!("SELECT '{}' FROM t{i}", "x".repeat(64 << 10));
            entry(i + 1, &sql, Some(i as f64), None)
        })
        .collect();
    let bound = Bound {
        max_classes: 1_000_000,
        max_bytes: 2 << 20,
    };
    let d = bounded(&big, bound);
    assert!(d.bytes <= bound.max_bytes);
    assert!(d.classes.len() < 32, "{}", d.classes.len());
    assert_eq!(
        d.summaries(None).iter().map(|c| c.count).sum::<u64>() + d.other().count,
        200
    );
}

#[test]
fn the_bound_for_memory() {
    let b = Bound::for_memory(1 << 30);
    assert_eq!(b.max_bytes, 1 << 30);
    assert_eq!(b.max_classes, (1 << 30) / CLASS_BYTES);
    const { assert!(CLASS_BYTES > 3000 && CLASS_BYTES < 8000) };
    assert_eq!(Bound::for_memory(0).max_classes, 1);
}
