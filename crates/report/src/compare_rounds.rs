//! Comparisons that conclude: the runs of two variants paired by study round (A and B of round
//! k ran next to each other, so the machine's drift between rounds cancels), one log ratio per
//! round, and the anytime-valid interval of their mean ([`AnytimeDesign`]), which stays valid
//! however the study chose when to stop (a study with a fixed number of rounds, `repeats = N`,
//! chose nothing on the data: its interval is the paired t interval). A round where either side's phase was judged unstable
//! (a stall, a stuck session, a trend, spikes, errors, a bound client) is left out of the pairing
//! (and counted) instead of widening every interval; a round whose only mark is a neighbour's
//! CPU use is kept, its noise measured as spread ([`Stability::fit_to_pair`]).
//!
//! The answer is one of four ([`Decision`], decided in `qpslab_stats` by the rule the study's
//! rounds ran by): an improvement, a regression, equivalent within ±precision, or undecided,
//! with the rounds the mean and spread seen so far say would settle it.

use crate::metrics::Metric;
use crate::model::Point;
use qpslab_core::stability::Stability;
use qpslab_core::units::duration_text;
use qpslab_stats::{t_p_value, Ratio, MIN_ROUNDS};
pub use qpslab_stats::{Decision, Sequential};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Why a comparison has no more rounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stopped {
    /// It was answered at the precision asked ([`Sequential::settled`]).
    Precise,
    /// The study's budget ran out first.
    Budget,
    /// It ran the most rounds it may (`max_repeats`, or `repeats = N`).
    MaxRepeats,
}

/// Rounds a comparison paired, and rounds it left out for an unstable side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rounds {
    /// Rounds in the interval.
    pub used: usize,
    /// Rounds where both sides ran but one was unstable.
    pub dropped: usize,
}

/// A round-paired comparison of one metric.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RoundComparison {
    pub ratio: Ratio,
    pub decision: Decision,
    pub verdict: String,
    pub rounds: Rounds,
    pub stopped: Stopped,
    pub rounds_to_target: Option<usize>,
    /// Seconds those rounds would take beyond the rounds paired, at the study's pace.
    pub seconds_to_target: Option<f64>,
    pub p_value: Option<f64>,
}

/// Seconds a round of the study took: from the first round both sides of a comparison ran to
/// the last, the time between the phases written last in each, per round between them (so
/// the cells of the study's other comparisons in those rounds count too). `None` with fewer
/// than two such rounds, or phases without a time (runs built in memory).
pub(crate) fn round_pace(a: &[Point<'_>], b: &[Point<'_>]) -> Option<f64> {
    let mut at: BTreeMap<u32, (Option<f64>, Option<f64>)> = BTreeMap::new();
    for (side, ps) in [(0, a), (1, b)] {
        for p in ps.iter().filter(|p| p.phase.recorded_at > 0.0) {
            let e = at.entry(p.subject.cell.repeat).or_default();
            let t = if side == 0 { &mut e.0 } else { &mut e.1 };
            *t = Some(t.map_or(p.phase.recorded_at, |t| t.max(p.phase.recorded_at)));
        }
    }
    let both: Vec<(u32, f64)> = at
        .into_iter()
        .filter_map(|(r, (ta, tb))| Some((r, ta?.max(tb?))))
        .collect();
    let (&(r0, t0), &(r1, t1)) = (both.first()?, both.last()?);
    (r1 > r0 && t1 > t0).then(|| (t1 - t0) / f64::from(r1 - r0))
}

/// The log ratio `ln(b / a)` of each round both sides ran, stable on both; `None` when a side
/// has two runs of one round (runs compared by id, not rounds of a study) or a value is not
/// positive (`value`: a run's value of the metric).
pub(crate) fn pair_rounds(
    m: Metric,
    a: &[Point<'_>],
    b: &[Point<'_>],
    value: impl Fn(Metric, &Point<'_>) -> Option<f64>,
) -> Option<(Vec<f64>, usize)> {
    let (ra, rb) = (by_round(m, a, &value)?, by_round(m, b, &value)?);
    let (mut logs, mut dropped) = (Vec::new(), 0);
    for (round, (va, sa)) in &ra {
        let Some((vb, sb)) = rb.get(round) else {
            continue;
        };
        if *sa && *sb {
            logs.push((vb / va).ln());
        } else {
            dropped += 1;
        }
    }
    Some((logs, dropped))
}

/// Each round's value and whether its phase may be paired (unjudged counts as stable).
fn by_round(
    m: Metric,
    ps: &[Point<'_>],
    value: impl Fn(Metric, &Point<'_>) -> Option<f64>,
) -> Option<BTreeMap<u32, (f64, bool)>> {
    let mut out = BTreeMap::new();
    for p in ps {
        let v = value(m, p).filter(|v| *v > 0.0)?;
        let stable = p
            .phase
            .result
            .stability
            .as_ref()
            .is_none_or(Stability::fit_to_pair);
        if out.insert(p.subject.cell.repeat, (v, stable)).is_some() {
            return None;
        }
    }
    Some(out)
}

/// The anytime-valid answer from the rounds' log ratios; `None` when fewer than
/// [`MIN_ROUNDS`] rounds ran (see [`too_few`] for rounds that ran but were dropped).
pub(crate) fn conclude(
    m: Metric,
    logs: &[f64],
    dropped: usize,
    s: &Sequential,
    pace: Option<f64>,
) -> Option<RoundComparison> {
    if logs.len() < MIN_ROUNDS {
        return None;
    }
    // With planned looks the interval is the last look's, from the rounds up to it.
    let logs = &logs[..s.counted(logs.len())];
    // A study that stops on what it saw is judged by the confidence sequence (or at its
    // looks), one whose rounds were fixed in advance (`repeats = N`) by the paired t
    // interval: the same rule the study's rounds ran by (`Sequential`).
    let ratio = s.interval(logs)?;
    let p = s.precision_pct;
    let decision = s.decision(&ratio, m.higher_is_better());
    let rounds = Rounds {
        used: logs.len(),
        dropped,
    };
    let stopped = if s.adaptive && s.settled(&ratio) {
        Stopped::Precise
    } else if !s.adaptive || rounds.used + rounds.dropped >= s.max_rounds {
        Stopped::MaxRepeats
    } else {
        Stopped::Budget
    };
    let rounds_to_target = s.rounds_to_settle(logs, 1000);
    let seconds_to_target = match (decision, rounds_to_target, pace) {
        (Decision::Undecided, Some(n), Some(pace)) => {
            Some(n.saturating_sub(rounds.used) as f64 * pace)
        }
        _ => None,
    };
    let verdict = match decision {
        Decision::Improvement => "improvement".to_string(),
        Decision::Regression => "regression".to_string(),
        Decision::Equivalent => format!("equivalent within ±{}%", fmt_pct(p)),
        Decision::Undecided => {
            let head = undecided(stopped, s, rounds);
            let time = match (seconds_to_target, pace) {
                (Some(more), Some(pace)) => format!(
                    " (~{} more at {} a round)",
                    duration_text(more),
                    pace_text(pace)
                ),
                _ => String::new(),
            };
            match rounds_to_target {
                Some(n) => format!("{head}: ~{n} rounds would decide at ±{}%{time}", fmt_pct(p)),
                None => format!("{head}: > 1000 rounds would decide at ±{}%", fmt_pct(p)),
            }
        }
    };
    Some(RoundComparison {
        ratio,
        decision,
        verdict,
        rounds,
        stopped,
        rounds_to_target,
        seconds_to_target,
        p_value: if s.adaptive {
            s.adaptive_p_value(logs)
        } else {
            let mean = logs.iter().sum::<f64>() / logs.len() as f64;
            Some(t_p_value(mean, ratio.se_log, ratio.df))
        },
    })
}

/// Fewer than [`MIN_ROUNDS`] rounds paired, in a study that ran rounds until precise or whose
/// rounds were enough but too many had an unstable side: `undecided`, saying so (`None`
/// otherwise: a study of two repeats keeps the pooled comparison).
pub(crate) fn too_few(
    logs: &[f64],
    dropped: usize,
    s: &Sequential,
) -> Option<(Rounds, Stopped, String)> {
    let rounds = Rounds {
        used: logs.len(),
        dropped,
    };
    let ran = rounds.used + rounds.dropped;
    // An interval needs three rounds, and with planned looks the first look.
    let needs = s.looks().map_or(MIN_ROUNDS, |d| d.every.max(MIN_ROUNDS));
    if rounds.used >= needs || ran == 0 || (ran < MIN_ROUNDS && !s.adaptive) {
        return None;
    }
    let stopped = if !s.adaptive || rounds.used + rounds.dropped >= s.max_rounds {
        Stopped::MaxRepeats
    } else {
        Stopped::Budget
    };
    let verdict = format!(
        "{}: {} of {ran} round(s) stable on both sides, an interval needs {needs}",
        undecided(stopped, s, rounds),
        rounds.used
    );
    Some((rounds, stopped, verdict))
}

/// How an undecided verdict begins, saying what ended its rounds: the budget, the study's
/// `max_repeats`, or the rounds fixed in advance (`repeats = N`, or runs compared outside a
/// study), which had no budget to run out of.
fn undecided(stopped: Stopped, s: &Sequential, rounds: Rounds) -> String {
    match (stopped, s.adaptive) {
        (Stopped::Budget, true) => "undecided within budget".to_string(),
        (_, true) => "undecided within max_repeats".to_string(),
        (_, false) => format!("undecided after {} round(s)", rounds.used + rounds.dropped),
    }
}

/// A round's seconds: `8.5s` under a minute, else as [`duration_text`] (`1m05s`).
fn pace_text(secs: f64) -> String {
    if secs < 59.95 {
        format!("{secs:.1}s")
    } else {
        duration_text(secs)
    }
}

/// `5` for 5.0, `2.5` for 2.5.
fn fmt_pct(p: f64) -> String {
    if p.fract() == 0.0 {
        format!("{p:.0}")
    } else {
        format!("{p}")
    }
}

#[cfg(test)]
#[path = "compare_rounds_tests.rs"]
mod tests;
