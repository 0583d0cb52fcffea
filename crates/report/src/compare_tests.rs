//! Verdicts, warnings and refusals of [`compare`](super::compare) on runs built in memory.

use super::*;
use crate::model::{points, ReportInput};
use crate::test_runs::{run, side, tps, RO};
use qpslab_core::fault::Blame;
use qpslab_core::{Instability, Stability, WorkloadKind};
use qpslab_store::StoredRun;

fn cmp(a: &ReportInput, b: &ReportInput) -> Result<Comparison, Error> {
    compare("a", &points(a), "b", &points(b))
}

#[test]
fn repeats_with_a_wide_spread_are_inconclusive_and_say_how_many_repeats() {
    let a = side("a", vec![run(1, RO, 900.0, 0.01), run(2, RO, 1100.0, 0.01)]);
    let b = side("b", vec![run(3, RO, 950.0, 0.01), run(4, RO, 1150.0, 0.01)]);
    let c = cmp(&a, &b).unwrap();
    let m = tps(&c);
    assert_eq!(c.points[0].basis, Basis::Repeats);
    assert!(!m.significant);
    assert!(m.mde_pct.unwrap() > INCONCLUSIVE_MDE_PCT, "{m:?}");
    let n: usize = m
        .verdict
        .strip_prefix("inconclusive: need ~")
        .and_then(|r| r.strip_suffix(" repeats"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{}", m.verdict));
    assert!(n > 2, "{n}");
    // Repeats: no within-run warning.
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
}

#[test]
fn tight_repeats_tell_improvement_regression_and_no_change_apart() {
    let base = side(
        "a",
        vec![run(1, RO, 1000.0, 0.01), run(2, RO, 1010.0, 0.01)],
    );
    let up = side(
        "b",
        vec![run(3, RO, 1200.0, 0.01), run(4, RO, 1212.0, 0.01)],
    );
    let same = side(
        "b",
        vec![run(5, RO, 1003.0, 0.01), run(6, RO, 1008.0, 0.01)],
    );
    let c = cmp(&base, &up).unwrap();
    assert_eq!(tps(&c).verdict, "improvement", "{:?}", tps(&c));
    assert!(tps(&c).ci_low.unwrap() > 0.0);
    let c = cmp(&up, &base).unwrap();
    assert_eq!(tps(&c).verdict, "regression");
    // Never at or past -100%, however large the fall.
    let c = cmp(
        &up,
        &side("b", vec![run(7, RO, 2.0, 0.01), run(8, RO, 40.0, 0.01)]),
    )
    .unwrap();
    assert!(tps(&c).ci_low.unwrap() > -100.0, "{:?}", tps(&c));
    let c = cmp(&base, &same).unwrap();
    let m = tps(&c);
    assert_eq!(m.verdict, "no significant change", "{m:?}");
    assert!(m.mde_pct.unwrap() <= INCONCLUSIVE_MDE_PCT);
    assert!(m.ci_low.unwrap() < m.change_pct && m.change_pct < m.ci_high.unwrap());
}

#[test]
fn the_p_value_is_below_five_percent_exactly_when_the_interval_excludes_no_change() {
    let base = side(
        "a",
        vec![run(1, RO, 1000.0, 0.01), run(2, RO, 1010.0, 0.01)],
    );
    for (b, significant) in [
        (
            vec![run(3, RO, 1200.0, 0.01), run(4, RO, 1212.0, 0.01)],
            true,
        ),
        (
            vec![run(5, RO, 1003.0, 0.01), run(6, RO, 1008.0, 0.01)],
            false,
        ),
        (
            vec![run(7, RO, 950.0, 0.01), run(8, RO, 1150.0, 0.01)],
            false,
        ),
        (
            vec![run(9, RO, 880.0, 0.01), run(10, RO, 885.0, 0.01)],
            true,
        ),
    ] {
        let c = cmp(&base, &side("b", b)).unwrap();
        let m = tps(&c);
        let p = m.p_value.unwrap();
        assert_eq!(m.significant, significant, "{m:?}");
        assert_eq!(p < 0.05, significant, "{m:?}");
        assert!((0.0..=1.0).contains(&p), "{m:?}");
    }
}

#[test]
fn single_runs_say_their_interval_covers_within_run_noise_only() {
    let a = side("a", vec![run(1, RO, 1000.0, 0.02)]);
    let b = side("b", vec![run(2, RO, 1001.0, 0.02)]);
    let c = cmp(&a, &b).unwrap();
    assert_eq!(c.points[0].basis, Basis::WithinRun);
    assert!(tps(&c).mde_pct.is_some());
    assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
    assert!(
        c.warnings[0].contains("within each run only"),
        "{:?}",
        c.warnings
    );
}

#[test]
fn different_workloads_are_refused_and_different_options_warned() {
    let a = side("a", vec![run(1, RO, 1000.0, 0.02)]);
    let b = side(
        "b",
        vec![run(2, WorkloadKind::OltpPointSelect, 1000.0, 0.02)],
    );
    let e = cmp(&a, &b).unwrap_err();
    assert!(e.is_user_error());
    let msg = e.to_string();
    assert!(
        msg.contains("different workloads") && msg.contains("oltp_point_select"),
        "{msg}"
    );
    let mut other = run(3, RO, 1000.0, 0.02);
    other.meta.plan.workload.tables = 8;
    let c = cmp(&a, &side("b", vec![other])).unwrap();
    let w = c.warnings.iter().find(|w| w.contains("run options differ"));
    assert!(
        w.is_some_and(|w| w.contains("tables 1 → 8")),
        "{:?}",
        c.warnings
    );
}

#[test]
fn a_setups_storage_is_a_setup_difference_not_a_run_option() {
    let with_fs = |id, fs: &str| {
        let mut r = run(id, RO, 1000.0, 0.02);
        r.meta.plan.storage = Some([("fs".to_string(), fs.to_string())].into());
        r
    };
    let c = cmp(
        &side("a", vec![with_fs(1, "ext4")]),
        &side("b", vec![with_fs(2, "xfs")]),
    )
    .unwrap();
    let d: Vec<_> = c
        .differences
        .iter()
        .map(|d| (d.name.as_str(), d.a.as_str(), d.b.as_str()))
        .collect();
    assert_eq!(d, [("storage.fs", "ext4", "xfs")]);
    assert!(
        c.warnings.iter().all(|w| !w.contains("run options differ")),
        "{:?}",
        c.warnings
    );
}

#[test]
fn unstable_phases_are_named_and_unjudged_ones_say_nothing() {
    let a = side(
        "a",
        vec![run(1, RO, 1000.0, 0.01), run(2, RO, 1010.0, 0.01)],
    );
    let mut bad = run(12, RO, 1000.0, 0.01);
    bad.phases[0].result.stability = Some(Stability {
        reasons: vec![Instability::Stall {
            at_s: 1.3,
            duration_s: 2.1,
        }],
    });
    let mut good = run(13, RO, 1005.0, 0.01);
    good.phases[0].result.stability = Some(Stability::default());
    let b = side("b", vec![bad, good]);
    let c = cmp(&a, &b).unwrap();
    assert_eq!(
        c.warnings,
        vec!["B run 12 at threads=4: unstable: stall of 2.1 s at 1.3 s".to_string()]
    );
    let p = &c.points[0];
    assert!(p.a_stability.iter().all(|s| s.stability.is_none()));
    assert_eq!(p.b_stability.len(), 2);
    let json = serde_json::to_string(&c).unwrap();
    assert!(json.contains("\"kind\":\"stall\""), "{json}");
}

/// A run whose intervals' p95s average 2 ms while its whole phase's histogram gives 5 ms
/// (one slow interval dominates the phase's tail): the comparison shows the phase's value,
/// as `show` does, not the mean of the interval percentiles.
fn with_latency(id: i64, phase_p95: f64) -> StoredRun {
    use qpslab_core::result::{LatencySummary, Percentile};
    let mut r = run(id, RO, 1000.0, 0.05);
    let ph = &mut r.phases[0].result;
    for (i, s) in ph.samples.iter_mut().enumerate() {
        let ms = [1.0, 3.0][i % 2];
        s.latency.percentiles = vec![Percentile { p: 95.0, ms }];
    }
    ph.latency = LatencySummary {
        count: ph.events,
        max_ms: 40.0,
        percentiles: vec![Percentile {
            p: 95.0,
            ms: phase_p95,
        }],
        ..Default::default()
    };
    r
}

#[test]
fn a_percentile_is_the_phase_value_not_a_mean_of_intervals() {
    let c = cmp(
        &side("a", vec![with_latency(1, 5.0)]),
        &side("b", vec![with_latency(2, 6.0)]),
    )
    .unwrap();
    let p95 = c.points[0]
        .metrics
        .iter()
        .find(|m| m.metric == "p95")
        .unwrap();
    assert_eq!((p95.a, p95.b), (5.0, 6.0), "{p95:?}");
    assert!((p95.change_pct - 20.0).abs() < 1e-9, "{p95:?}");
    // The interval spread still gives the single run's interval.
    assert!(p95.ci_low.is_some() && p95.ci_high.is_some(), "{p95:?}");
    // Throughput is the phase's too: events over the measured time.
    assert_eq!(tps(&c).a, with_latency(1, 5.0).phases[0].result.tps());
}
