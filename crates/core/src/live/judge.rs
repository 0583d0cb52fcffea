//! Judging live actions (`qpslab run --at`): for each action, the per-interval throughput (and
//! p95 latency) of the segment before it against the segment after it and its settle window,
//! with the same autocorrelation-aware estimates and log-scale ratio intervals that comparisons
//! of runs use ([`qpslab_stats::estimate`], [`qpslab_stats::ratio`]). `qpslab run` judges each
//! phase's actions as it stores them (`qpslab_lab::run::sweep`); reports judge the actions a study
//! cell stored unjudged.
//!
//! The segment before an action runs from the start of the phase, or from the previous action
//! plus the settle window, to the action; the segment after runs from the action plus the settle
//! window to the next action or the end. Only whole report intervals inside a segment count.
//!
//! ```
//! use qpslab_core::live::{judge_actions, ActionRecord};
//! let mut records = [ActionRecord {
//!     action: "set x=1".into(), at_s: 1.0, started_s: 1.0, outcome: "ok".into(),
//!     took_ms: 1.0, restored: None, tps: None, p95_ms: None, judgment: String::new(),
//! }];
//! judge_actions(&[], &mut records, 5.0);
//! assert!(records[0].judgment.starts_with("too short to judge"));
//! ```

use super::{ActionRecord, SegmentChange};
use crate::Sample;
use qpslab_stats::{estimate, ratio};

/// Fewer intervals than this on either side are too few for an interval: no verdict.
pub const MIN_INTERVALS: usize = 3;
/// The confidence level of the intervals.
const LEVEL: f64 = 0.95;
/// Slack when deciding whether an interval lies inside a segment (clock rounding).
const EPS: f64 = 1e-6;

/// Fills in the judgment of every record from the phase's `samples`; `records` are in time
/// order, `settle_s` is the window after each action that neither segment uses.
pub fn judge_actions(samples: &[Sample], records: &mut [ActionRecord], settle_s: f64) {
    let times: Vec<f64> = records.iter().map(|r| r.at_s).collect();
    for (i, r) in records.iter_mut().enumerate() {
        let from = if i == 0 { 0.0 } else { times[i - 1] + settle_s };
        let to = times.get(i + 1).copied().unwrap_or(f64::INFINITY);
        let before = segment(samples, from, r.at_s);
        let after = segment(samples, r.at_s + settle_s, to);
        judge_one(r, &before, &after);
    }
}

fn judge_one(r: &mut ActionRecord, before: &[&Sample], after: &[&Sample]) {
    r.tps = None;
    r.p95_ms = None;
    if !r.ok() {
        r.judgment = "not judged: the action failed".into();
        return;
    }
    if before.len() < MIN_INTERVALS || after.len() < MIN_INTERVALS {
        r.judgment = format!(
            "too short to judge ({} interval(s) before, {} after; {MIN_INTERVALS} needed on each side)",
            before.len(),
            after.len()
        );
        return;
    }
    r.tps = change(&series(before, tps), &series(after, tps));
    r.p95_ms = p95_series(before)
        .zip(p95_series(after))
        .and_then(|(b, a)| change(&b, &a));
    r.judgment = match &r.tps {
        None => "no spread to judge by".into(),
        Some(c) if !c.significant => "no significant change".into(),
        Some(c) if c.change_pct > 0.0 => "gain".into(),
        Some(_) => "loss".into(),
    };
}

/// The samples whose whole interval lies in `[from, to]` seconds of the phase.
fn segment(samples: &[Sample], from: f64, to: f64) -> Vec<&Sample> {
    samples
        .iter()
        .filter(|s| s.elapsed_s - s.interval_s >= from - EPS && s.elapsed_s <= to + EPS)
        .collect()
}

fn tps(s: &Sample) -> f64 {
    if s.interval_s > 0.0 {
        s.events as f64 / s.interval_s
    } else {
        0.0
    }
}

fn series(samples: &[&Sample], f: fn(&Sample) -> f64) -> Vec<f64> {
    samples.iter().map(|s| f(s)).collect()
}

/// Per-interval p95 latency, when the phase reported it in every interval.
fn p95_series(samples: &[&Sample]) -> Option<Vec<f64>> {
    samples
        .iter()
        .map(|s| {
            let p = s.latency.percentiles.iter().find(|p| p.p == 95.0)?;
            Some(p.ms)
        })
        .collect()
}

/// Before against after: means, the change and its interval in percent.
fn change(before: &[f64], after: &[f64]) -> Option<SegmentChange> {
    let (b, a) = (estimate(before)?, estimate(after)?);
    let r = ratio(&b, &a, LEVEL)?;
    Some(SegmentChange {
        before: b.mean,
        after: a.mean,
        change_pct: (r.ratio - 1.0) * 100.0,
        ci_low: (r.low - 1.0) * 100.0,
        ci_high: (r.high - 1.0) * 100.0,
        significant: r.excludes_one(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{LatencySummary, Percentile};

    fn sample(t: f64, events: u64, p95: f64) -> Sample {
        Sample {
            elapsed_s: t,
            interval_s: 1.0,
            events,
            latency: LatencySummary {
                percentiles: vec![Percentile { p: 95.0, ms: p95 }],
                ..Default::default()
            },
            ..Default::default()
        }
    }

    /// 20 intervals: ~100 tps with a little noise, then ~200 after 8 s.
    fn phase(jump_at: f64) -> Vec<Sample> {
        (1..=20)
            .map(|i| {
                let t = i as f64;
                let noise = [0, 3, 1, 4, 2][i % 5];
                let (e, p) = if t > jump_at { (200, 2.0) } else { (100, 5.0) };
                sample(t, e + noise, p + noise as f64 / 10.0)
            })
            .collect()
    }

    fn record(at_s: f64, outcome: &str) -> ActionRecord {
        ActionRecord {
            action: "set x=1".into(),
            at_s,
            started_s: at_s,
            outcome: outcome.into(),
            took_ms: 1.0,
            restored: None,
            tps: None,
            p95_ms: None,
            judgment: String::new(),
        }
    }

    #[test]
    fn a_jump_after_the_action_is_a_significant_gain() {
        let mut rs = [record(8.0, "ok")];
        judge_actions(&phase(8.0), &mut rs, 2.0);
        let t = rs[0].tps.as_ref().unwrap();
        assert_eq!(rs[0].judgment, "gain");
        assert!(t.significant && t.ci_low > 50.0, "{t:?}");
        assert!(
            (t.before - 102.0).abs() < 3.0 && (t.after - 202.0).abs() < 3.0,
            "{t:?}"
        );
        let p = rs[0].p95_ms.as_ref().unwrap();
        assert!(p.change_pct < -40.0 && p.significant, "{p:?}");
    }

    #[test]
    fn no_change_is_not_significant_and_settle_is_left_out() {
        let mut rs = [record(8.0, "ok")];
        judge_actions(&phase(100.0), &mut rs, 2.0);
        assert_eq!(rs[0].judgment, "no significant change");
        // The jump at 9 s falls inside the settle window [8, 11]: after counts 12..20 only.
        let mut rs = [record(8.0, "ok")];
        judge_actions(&phase(9.0), &mut rs, 3.0);
        let t = rs[0].tps.as_ref().unwrap();
        assert!((t.before - 102.0).abs() < 3.0 && t.after > 195.0, "{t:?}");
    }

    #[test]
    fn short_segments_and_failed_actions_get_no_verdict() {
        let mut rs = [record(2.0, "ok"), record(15.0, "ok"), record(18.0, "boom")];
        judge_actions(&phase(8.0), &mut rs, 1.0);
        assert!(rs[0]
            .judgment
            .starts_with("too short to judge (2 interval(s) before"));
        assert!(rs[0].tps.is_none());
        // Before the second action: from 3 s (2 + settle) to 15 s.
        assert!(rs[1].tps.is_none() && rs[1].judgment.starts_with("too short"));
        assert_eq!(rs[2].judgment, "not judged: the action failed");
    }
}
