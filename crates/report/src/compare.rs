//! Comparisons of two variants (or two runs): per metric the two values, the change, its 95%
//! confidence interval, the minimum detectable effect and a verdict, for every setting both were
//! measured at; what differs between their configurations and environments; and warnings the
//! reader must see (different run options, unstable phases, intervals that only cover the
//! noise within single runs).
//!
//! The interval of a change is built where it is meaningful: on the log of the ratio of the two
//! means ([`qpslab_stats::ratio`]), so it never reaches −100%. With two or more runs a side the
//! observations are the runs (their spread is the run-to-run variation a decision must survive);
//! with one run a side, only the noise within each run is known, and the comparison says so.
//!
//! Runs of a study are paired by round when three or more rounds have both sides
//! (`compare_rounds.rs`): the interval is then the anytime-valid one of the round-paired log
//! ratios, and the verdict one of improvement, regression, equivalent within ±precision or
//! undecided within budget ([`Decision`]), with the rounds used and dropped and why the rounds
//! stopped ([`Stopped`]).

use crate::error::Error;
use crate::metrics::Metric;
use crate::model::Point;
pub use crate::setup::Difference;
use crate::setup::{self, check_same_workload};
use qpslab_core::Stability;
use qpslab_stats::{
    estimate, estimate_independent, log_of_mean, mde_pct, ratio_of_logs, repeats_needed, t_p_value,
    Estimate,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use crate::compare_rounds as rounds;
pub use crate::compare_rounds::{Decision, Rounds, Sequential, Stopped};

/// Confidence level of every interval.
pub const LEVEL: f64 = 0.95;

/// A comparison that finds no significant change is "inconclusive" when its minimum detectable
/// effect is above this many percent: it could not have seen a change of a size that usually
/// decides a tuning or upgrade question, so "no change" would be a claim the data cannot make.
pub const INCONCLUSIVE_MDE_PCT: f64 = 10.0;

/// Where the uncertainty of a point's comparison comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// Two or more runs a side: the spread between runs.
    Repeats,
    /// One run on a side: the per-interval noise within it (autocorrelation-corrected), which
    /// does not cover what changes from one run to the next.
    WithinRun,
}

/// One metric compared.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricComparison {
    /// Which metric (`tps`, `p99`...).
    pub metric: String,
    /// Unit of `a` and `b`.
    pub unit: String,
    /// Baseline value: the run's value for the phase (a percentile from its merged histogram,
    /// as `show` prints it), or with repeats the mean of the runs' values (their geometric mean
    /// with repeats on both sides: the scale the interval is computed on).
    pub a: f64,
    /// Candidate value.
    pub b: f64,
    /// `(b - a) / a`, in percent.
    pub change_pct: f64,
    /// Lower end of the 95% confidence interval of the change, in percent, never at or below
    /// −100 (`None`: nothing to build one from).
    pub ci_low: Option<f64>,
    /// Upper end, in percent.
    pub ci_high: Option<f64>,
    /// Minimum detectable effect, in percent: the smallest change this many runs with this
    /// spread call significant at the 5% level with 80% power.
    pub mde_pct: Option<f64>,
    /// Two-sided p-value of "no change" (Welch's t on the log of the ratio, the test the
    /// interval inverts): below 0.05 exactly when `significant`. `None` without an interval.
    pub p_value: Option<f64>,
    /// Whether the interval excludes zero.
    pub significant: bool,
    /// `improvement`, `regression`, `no significant change`, `inconclusive: need ~N repeats`
    /// or `no interval`; with rounds paired, `improvement`, `regression`, `equivalent within
    /// ±P%` or `undecided within budget: ~N rounds would decide at ±P% (~4m10s more at 8s a
    /// round)`.
    pub verdict: String,
    /// The answer of a round-paired comparison (`None`: fewer than three paired rounds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
    /// The anytime-valid 95% interval of the change, in percent, with rounds paired.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<[f64; 2]>,
    /// The precision asked: the target half-width of `interval` in percent, and the margin of
    /// `equivalent`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<f64>,
    /// Rounds paired and rounds left out for an unstable side.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<Rounds>,
    /// Why no more rounds were run: `precise`, `budget` or `max_repeats`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<Stopped>,
    /// Rounds the mean and spread seen so far say would settle it ([`Sequential::settled`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds_to_target: Option<usize>,
    /// Seconds the rounds still missing would take at the pace the study's rounds ran
    /// (`rounds_to_target` less the rounds paired); undecided comparisons of a study only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds_to_target: Option<f64>,
    /// Each paired round's ratio B/A, in round order: the figures the round-paired interval
    /// is computed from (empty when the sides were not paired by round).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub round_ratios: Vec<f64>,
}

/// The stability verdict of one compared phase (`None`: not judged, e.g. an older run).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhaseStability {
    /// The run.
    pub run: i64,
    /// Its verdict.
    pub stability: Option<Stability>,
}

/// Two variants compared at one setting of the swept parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointComparison {
    /// The swept settings, e.g. `threads=16`.
    pub key: String,
    /// Where the intervals' uncertainty comes from.
    pub basis: Basis,
    /// Runs of the baseline at this setting.
    pub a_runs: Vec<i64>,
    /// Runs of the candidate.
    pub b_runs: Vec<i64>,
    /// The stability of each baseline phase compared.
    pub a_stability: Vec<PhaseStability>,
    /// The stability of each candidate phase.
    pub b_stability: Vec<PhaseStability>,
    /// One entry per metric both sides have.
    pub metrics: Vec<MetricComparison>,
    /// What limited each side, as stored with its phases, and the figures that moved most.
    #[serde(default)]
    pub limits: crate::limits::SidesLimits,
}

impl PointComparison {
    /// The throughput comparison, if any.
    pub fn tps(&self) -> Option<&MetricComparison> {
        self.metrics.iter().find(|m| m.metric == "tps")
    }
}

/// Variant B against baseline A.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Baseline name.
    pub a: String,
    /// Candidate name.
    pub b: String,
    /// One entry per setting both were measured at.
    pub points: Vec<PointComparison>,
    /// Configuration and environment differences (only what differs).
    pub differences: Vec<Difference>,
    /// What the reader must know before trusting the verdicts, one line each.
    pub warnings: Vec<String>,
    /// Both sides are file I/O (`qpslab io`, fileio studies): their events are I/O operations,
    /// named IOPS (and their queries, the same operations, left out) wherever it is printed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub io: bool,
}

impl Comparison {
    /// One line: the throughput verdict at each setting.
    pub fn headline(&self) -> String {
        let parts: Vec<String> = self
            .points
            .iter()
            .filter_map(|p| {
                let m = p.tps()?;
                Some(format!("{}: {}", p.key, short_verdict(m)))
            })
            .collect();
        if parts.is_empty() {
            format!("{} vs {}: no setting measured by both", self.b, self.a)
        } else {
            format!("{} vs {}: throughput {}", self.b, self.a, parts.join("; "))
        }
    }
}

/// `+12.3% [+8.1, +16.4] improvement` or `-0.4% [-2.0, +1.2] no significant change`.
pub fn short_verdict(m: &MetricComparison) -> String {
    match (m.ci_low, m.ci_high) {
        (Some(l), Some(h)) => format!("{:+.1}% [{l:+.1}, {h:+.1}] {}", m.change_pct, m.verdict),
        _ => format!("{:+.1}% ({})", m.change_pct, m.verdict),
    }
}

/// Compares the points of variant `b` with those of `a`, matched by their swept settings;
/// refuses points of one setting that measured different workloads. Rounds paired are judged
/// against the default precision ([`Sequential::default`]).
pub fn compare(
    a_name: &str,
    a: &[Point<'_>],
    b_name: &str,
    b: &[Point<'_>],
) -> Result<Comparison, Error> {
    compare_with(a_name, a, b_name, b, &Sequential::default())
}

/// [`compare`] with the precision and rounds of a study.
pub fn compare_with(
    a_name: &str,
    a: &[Point<'_>],
    b_name: &str,
    b: &[Point<'_>],
    seq: &Sequential,
) -> Result<Comparison, Error> {
    let both: Vec<Point<'_>> = a.iter().chain(b).copied().collect();
    check_same_workload(&both)?;
    let ga = by_key(a);
    let gb = by_key(b);
    let points: Vec<PointComparison> = ga
        .iter()
        .filter_map(|(key, pa)| {
            let pb = gb.get(key)?;
            Some(PointComparison {
                key: key.clone(),
                basis: if pa.len() >= 2 && pb.len() >= 2 {
                    Basis::Repeats
                } else {
                    Basis::WithinRun
                },
                a_runs: run_ids(pa),
                b_runs: run_ids(pb),
                a_stability: stabilities(pa),
                b_stability: stabilities(pb),
                metrics: Metric::ALL
                    .iter()
                    .filter_map(|&m| compare_metric(m, pa, pb, seq))
                    .collect(),
                limits: crate::limits::sides(&stored_limits(pa), &stored_limits(pb)),
            })
        })
        .collect();
    let differences = match (a.first(), b.first()) {
        (Some(x), Some(y)) => setup::differences(x.subject, y.subject),
        _ => Vec::new(),
    };
    let warnings = warnings(&points, &differences);
    let io = !both.is_empty() && both.iter().all(|p| p.phase.result.io.is_some());
    Ok(Comparison {
        a: a_name.to_string(),
        b: b_name.to_string(),
        points,
        differences,
        warnings,
        io,
    })
}

fn stored_limits<'a>(ps: &[Point<'a>]) -> Vec<Option<&'a qpslab_core::limits::Limits>> {
    ps.iter().map(|p| p.phase.result.limits.as_ref()).collect()
}

fn stabilities(ps: &[Point<'_>]) -> Vec<PhaseStability> {
    ps.iter()
        .map(|p| PhaseStability {
            run: p.subject.run.id.0,
            stability: p.phase.result.stability.clone(),
        })
        .collect()
}

/// Different run options, unstable phases, and within-run-only intervals, one line each.
fn warnings(points: &[PointComparison], differences: &[Difference]) -> Vec<String> {
    let mut out: Vec<String> = setup::option_warning(differences).into_iter().collect();
    for p in points {
        for (side, list) in [("A", &p.a_stability), ("B", &p.b_stability)] {
            for s in list {
                if let Some(st) = s.stability.as_ref().filter(|st| !st.is_stable()) {
                    out.push(format!("{side} run {} at {}: {st}", s.run, p.key));
                }
            }
        }
    }
    let single: Vec<&str> = points
        .iter()
        .filter(|p| p.basis == Basis::WithinRun)
        .map(|p| p.key.as_str())
        .collect();
    if !single.is_empty() {
        out.push(format!(
            "one run on a side at {}: the intervals cover the noise within each run only, not \
             the variation between runs; compare repeats (a study with repeats, or run ids \
             joined by commas) for a verdict on the setups",
            single.join(", ")
        ));
    }
    out
}

/// Points grouped by their swept settings, in order of first appearance of each thread count.
pub fn by_key<'a>(points: &[Point<'a>]) -> BTreeMap<String, Vec<Point<'a>>> {
    let mut out: BTreeMap<String, Vec<Point<'a>>> = BTreeMap::new();
    for p in points {
        out.entry(p.key()).or_default().push(*p);
    }
    out
}

fn run_ids(ps: &[Point<'_>]) -> Vec<i64> {
    let mut ids: Vec<i64> = ps.iter().map(|p| p.subject.run.id.0).collect();
    ids.dedup();
    ids
}

/// The estimate of a metric over the repeats of one setting. Its value is always built from
/// each run's [`Metric::phase_value`] (a percentile from the phase's histogram, never a mean of
/// interval percentiles): with two or more repeats, those values are the observations
/// (run-to-run noise is what matters); with one, its value carries the standard error of the
/// mean of its intervals, corrected for autocorrelation; without intervals, the value alone.
pub fn group_estimate(metric: Metric, ps: &[Point<'_>]) -> Option<Estimate> {
    if ps.len() >= 2 {
        let values: Option<Vec<f64>> = ps.iter().map(|p| run_value(metric, p)).collect();
        return estimate_independent(&values?);
    }
    let p = ps.first()?;
    let value = run_value(metric, p)?;
    match estimate(&metric.series(p.phase)) {
        Some(e) if e.has_uncertainty() => Some(Estimate { mean: value, ..e }),
        _ => Some(Estimate::single(value)),
    }
}

/// One run's value of a metric: its phase value, else the mean of its intervals.
fn run_value(metric: Metric, p: &Point<'_>) -> Option<f64> {
    metric
        .phase_value(p)
        .or_else(|| estimate(&metric.series(p.phase)).map(|e| e.mean))
}

/// The logs of each run's value of a metric, for two or more runs whose values are all
/// positive.
fn log_repeats(metric: Metric, ps: &[Point<'_>]) -> Option<Estimate> {
    if ps.len() < 2 {
        return None;
    }
    let logs: Option<Vec<f64>> = ps
        .iter()
        .map(|p| {
            let v = run_value(metric, p)?;
            (v > 0.0).then(|| v.ln())
        })
        .collect();
    estimate_independent(&logs?)
}

/// The two sides' estimates on the log scale (when both have one), and the values shown.
type LogSides = (Option<(Estimate, Estimate)>, f64, f64);

/// Both sides on the log scale: the logs of the runs' values with repeats on both sides (one
/// wild run widens the interval instead of dominating a mean), else the log of each side's mean
/// (delta method). Returns the two estimates and the values to show for each side (geometric
/// means with repeats, means otherwise).
fn log_sides(m: Metric, a: &[Point<'_>], b: &[Point<'_>]) -> Option<LogSides> {
    if let (Some(la), Some(lb)) = (log_repeats(m, a), log_repeats(m, b)) {
        return Some((Some((la, lb)), la.mean.exp(), lb.mean.exp()));
    }
    let ea = group_estimate(m, a)?;
    let eb = group_estimate(m, b)?;
    if ea.mean == 0.0 {
        return None;
    }
    let logs = log_of_mean(&ea).zip(log_of_mean(&eb));
    Some((logs, ea.mean, eb.mean))
}

fn compare_metric(
    m: Metric,
    a: &[Point<'_>],
    b: &[Point<'_>],
    seq: &Sequential,
) -> Option<MetricComparison> {
    let (logs, va, vb) = log_sides(m, a, b)?;
    let pairs = rounds::pair_rounds(m, a, b, run_value);
    if let Some((logs, dropped)) = &pairs {
        let pace = rounds::round_pace(a, b);
        if let Some(o) = rounds::conclude(m, logs, *dropped, seq, pace) {
            let used = &logs[..o.rounds.used.min(logs.len())];
            return Some(paired_comparison(m, va, vb, o, seq, ratios(used)));
        }
    }
    // The rounds are shown only where the verdict is theirs (too few of them to decide).
    let round_ratios = match &pairs {
        Some((logs, dropped)) if rounds::too_few(logs, *dropped, seq).is_some() => ratios(logs),
        _ => Vec::new(),
    };
    let too_few = pairs.and_then(|(logs, dropped)| rounds::too_few(&logs, dropped, seq));
    let r = logs.and_then(|(la, lb)| ratio_of_logs(&la, &lb, LEVEL));
    let mde = r.map(|r| mde_pct(r.se_log, r.df, LEVEL));
    let significant = r.is_some_and(|r| r.excludes_one());
    let verdict = match (r, mde, logs) {
        (None, _, _) => "no interval".to_string(),
        (Some(r), _, _) if significant => {
            if (r.ratio > 1.0) == m.higher_is_better() {
                "improvement".into()
            } else {
                "regression".into()
            }
        }
        (Some(_), Some(mde), Some((la, lb))) if mde > INCONCLUSIVE_MDE_PCT => {
            let n = repeats_needed(&la, a.len(), &lb, b.len(), LEVEL, INCONCLUSIVE_MDE_PCT);
            match n {
                Some(n) => format!("inconclusive: need ~{n} repeats"),
                None => "inconclusive: need > 1000 repeats".into(),
            }
        }
        _ => "no significant change".into(),
    };
    let pct = |ratio: f64| 100.0 * (ratio - 1.0);
    Some(MetricComparison {
        metric: m.name().into(),
        unit: m.unit().into(),
        a: va,
        b: vb,
        change_pct: pct(vb / va),
        ci_low: r.map(|r| pct(r.low)),
        ci_high: r.map(|r| pct(r.high)),
        mde_pct: mde,
        p_value: r.map(|r| t_p_value(r.ratio.ln(), r.se_log, r.df)),
        significant,
        decision: too_few.as_ref().map(|_| Decision::Undecided),
        precision: too_few.as_ref().map(|_| seq.precision_pct),
        rounds: too_few.as_ref().map(|t| t.0),
        stopped: too_few.as_ref().map(|t| t.1),
        verdict: too_few.map_or(verdict, |t| t.2),
        interval: None,
        rounds_to_target: None,
        seconds_to_target: None,
        round_ratios,
    })
}

/// Each round's ratio from its log.
fn ratios(logs: &[f64]) -> Vec<f64> {
    logs.iter().map(|l| l.exp()).collect()
}

/// A metric compared round by round: the change is the mean round-paired ratio, its interval
/// the anytime-valid one.
fn paired_comparison(
    m: Metric,
    va: f64,
    vb: f64,
    o: rounds::RoundComparison,
    seq: &Sequential,
    round_ratios: Vec<f64>,
) -> MetricComparison {
    let pct = |ratio: f64| 100.0 * (ratio - 1.0);
    let r = o.ratio;
    MetricComparison {
        metric: m.name().into(),
        unit: m.unit().into(),
        a: va,
        b: vb,
        change_pct: pct(r.ratio),
        ci_low: Some(pct(r.low)),
        ci_high: Some(pct(r.high)),
        mde_pct: Some(mde_pct(r.se_log, r.df, LEVEL)),
        p_value: o.p_value,
        significant: r.excludes_one(),
        verdict: o.verdict,
        decision: Some(o.decision),
        interval: Some([pct(r.low), pct(r.high)]),
        precision: Some(seq.precision_pct),
        rounds: Some(o.rounds),
        stopped: Some(o.stopped),
        rounds_to_target: o.rounds_to_target,
        seconds_to_target: o.seconds_to_target,
        round_ratios,
    }
}

#[cfg(test)]
#[path = "compare_tests.rs"]
mod tests;
