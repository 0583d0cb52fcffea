//! A history built from runs made in memory: the step found at the right run, unstable points
//! shown but not searched, the x axis, and the user's errors.

use super::*;
use crate::test_runs::{run, RO};
use qpslab_core::{Instability, Stability};

/// Runs 1..=n of one series: `tps(i)` each (a fixed wobble of ±0.5 %), labelled build=i,
/// started i minutes apart.
fn runs(n: usize, tps: impl Fn(usize) -> f64) -> Vec<StoredRun> {
    (1..=n)
        .map(|i| {
            let wobble = [0.005, -0.003, 0.001, -0.005, 0.002][i % 5];
            let mut r = run(i as i64, RO, tps(i) * (1.0 + wobble), 0.0);
            r.meta.started_at = 1_800_000_000.0 + 60.0 * i as f64;
            r.meta.plan.labels.insert("build".into(), i.to_string());
            r.meta.host.hostname = "c1".into();
            r
        })
        .collect()
}

fn query(by: By) -> Query {
    Query {
        by,
        ..Query::new(Vec::new())
    }
}

#[test]
fn a_drop_and_a_recovery_are_found_at_their_runs() {
    let mut rs = runs(24, |i| {
        if (11..=18).contains(&i) {
            600.0
        } else {
            1000.0
        }
    });
    rs[10]
        .meta
        .server
        .variables
        .insert("innodb_buffer_pool_size".into(), "8388608".into());
    let h = build(rs, &query(By::Label("build".into()))).unwrap();
    let s = &h.series[0];
    assert_eq!(h.series.len(), 1);
    let at: Vec<(i64, i64)> = s
        .change_points
        .iter()
        .map(|c| (c.run_before, c.run_after))
        .collect();
    assert_eq!(at, vec![(10, 11), (18, 19)], "{:?}", s.change_points);
    assert!(s.change_points[0].relative_change < -0.3);
    assert!(s.change_points[1].relative_change > 0.3);
    let names: Vec<&str> = s.change_points[0]
        .differences
        .iter()
        .map(|d| d.name.as_str())
        .collect();
    assert!(
        names.contains(&"server.innodb_buffer_pool_size") && names.contains(&"plan.labels.build"),
        "{names:?}"
    );
    // The gate: failing with the drop newest, passing once made good.
    let cut: Vec<StoredRun> = runs(18, |i| if i >= 11 { 600.0 } else { 1000.0 });
    let h_cut = build(cut, &query(By::Time)).unwrap();
    let v = gate::check(&h_cut.series[0], 0.05).unwrap();
    assert!(
        !v.passed() && v.message.contains("at run 11"),
        "{}",
        v.message
    );
    let v = gate::check(s, 0.05).unwrap();
    assert!(v.passed(), "{}", v.message);
    // A margin wider than the drop lets it pass.
    assert!(gate::check(&h_cut.series[0], 0.5).unwrap().passed());
}

#[test]
fn unstable_points_are_shown_but_not_searched() {
    let mut rs = runs(12, |_| 1000.0);
    // A stall halved this run: left out, it moves nothing.
    rs[5].phases[0].result.events /= 2;
    rs[5].phases[0].result.stability = Some(Stability {
        reasons: vec![Instability::Errors {
            errors: 3,
            reconnects: 0,
        }],
    });
    let h = build(rs, &query(By::Time)).unwrap();
    let s = &h.series[0];
    assert_eq!((s.points.len(), s.searched), (12, 11));
    assert!(s.points[5].unstable.is_some());
    assert!(s.change_points.is_empty(), "{:?}", s.change_points);
    assert!(render::text(&h, None).contains("left out of the change point search"));
}

#[test]
fn series_are_picked_by_key_name_or_workload_and_bad_words_are_named() {
    let mut rs = runs(8, |_| 1000.0);
    for r in &mut rs[4..] {
        r.meta.host.hostname = "c2".into();
    }
    let h = build(rs.clone(), &query(By::Time));
    // Two series of 4 points: each too short for segments of 3 on either side.
    let e = h.unwrap_err().to_string();
    assert!(
        e.contains("has 4 point(s) to search") && e.contains("needs 6"),
        "{e}"
    );
    let mut q = query(By::Time);
    q.wanted = vec!["oltp_write_only".into()];
    let e = build(rs, &q).unwrap_err().to_string();
    assert!(
        e.starts_with("no series matches oltp_write_only; the series there are: ")
            && e.contains("oltp_read_only · 4 sessions · c1")
            && e.contains("oltp_read_only · 4 sessions · c2"),
        "{e}"
    );
}

#[test]
fn labels_that_cannot_be_ordered_are_refused() {
    let mut rs = runs(8, |_| 1000.0);
    rs[3]
        .meta
        .plan
        .labels
        .insert("build".into(), "abc123".into());
    let e = build(rs.clone(), &query(By::Label("build".into())))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("abc123 is neither a number nor a version"),
        "{e}"
    );
    let e = build(rs, &query(By::Label("commit".into())))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("run 1 has no label commit (its labels: build)"),
        "{e}"
    );
}
