//! Comparisons that conclude: the runs of two variants paired by study round (A and B of round
//! k ran next to each other, so the machine's drift between rounds cancels), one log ratio per
//! round, and the anytime-valid interval of their mean ([`AnytimeDesign`]), which stays valid
//! however the study chose when to stop (a study with a fixed number of rounds, `repeats = N`,
//! chose nothing on the data: its interval is the paired t interval). A round where either side's phase was judged unstable
//! (a stall, a stuck session, a trend, spikes, errors, a bound client) is left out of the pairing
//! (and counted) instead of widening every interval; a round whose only mark is a neighbour's
//! CPU use is kept, its noise measured as spread ([`Stability::fit_to_pair`]).
//!
//! The answer is one of four: the interval excludes no change (an improvement or a regression),
//! it lies wholly inside ±precision (equivalent, the question "did it change by more than P?"
//! answered "no", as a two one-sided test would), or neither yet (undecided, with the rounds
//! the spread seen so far says would reach the precision).

use crate::metrics::Metric;
use crate::model::Point;
use qpslab_core::stability::Stability;
use qpslab_stats::{anytime_p_value, paired_ratio, t_p_value, AnytimeDesign, Ratio, MIN_ROUNDS};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The precision a study asks of its comparisons and the rounds it may run.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sequential {
    /// Target half-width of the 95% interval of the change, in percent; also the margin of
    /// "equivalent".
    pub precision_pct: f64,
    /// The most rounds the study runs (the sequence is tuned to be tightest there).
    pub max_rounds: usize,
    /// Whether the study ran rounds until precise (`precision` or `budget`): then fewer than
    /// three paired rounds are `undecided`, never a pooled verdict.
    #[serde(default)]
    pub adaptive: bool,
}

/// What a study asks when its spec does not say: ±5% within 20 rounds.
impl Default for Sequential {
    fn default() -> Sequential {
        Sequential {
            precision_pct: 5.0,
            max_rounds: 20,
            adaptive: false,
        }
    }
}

/// The answer of a round-paired comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// The interval excludes no change, on the better side.
    Improvement,
    /// The interval excludes no change, on the worse side.
    Regression,
    /// The whole interval lies inside ±precision.
    Equivalent,
    /// Neither yet.
    Undecided,
}

/// Why a comparison has no more rounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stopped {
    /// Its interval reached the precision.
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
    pub p_value: Option<f64>,
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
) -> Option<RoundComparison> {
    if logs.len() < MIN_ROUNDS {
        return None;
    }
    let design = AnytimeDesign::new(0.95, s.max_rounds);
    // A study that stops when it is precise decides on what it saw, so its interval must hold
    // at every round (the confidence sequence); one whose rounds were fixed in advance
    // (`repeats = N`) looks once, and the paired t interval is valid and narrower.
    let ratio = if s.adaptive {
        design.paired_ratio(logs)?
    } else {
        paired_ratio(logs, 0.95)?
    };
    let p = s.precision_pct;
    let (low, high) = (pct(ratio.low), pct(ratio.high));
    let half_log = 0.5 * (ratio.high.ln() - ratio.low.ln());
    let target_log = (1.0 + p / 100.0).ln();
    let decision = if ratio.excludes_one() {
        if (ratio.ratio > 1.0) == m.higher_is_better() {
            Decision::Improvement
        } else {
            Decision::Regression
        }
    } else if low >= -p && high <= p {
        Decision::Equivalent
    } else {
        Decision::Undecided
    };
    let rounds = Rounds {
        used: logs.len(),
        dropped,
    };
    let stopped = if half_log <= target_log {
        Stopped::Precise
    } else if !s.adaptive || rounds.used + rounds.dropped >= s.max_rounds {
        Stopped::MaxRepeats
    } else {
        Stopped::Budget
    };
    let sd = ratio.se_log * (logs.len() as f64).sqrt();
    let rounds_to_target = design.rounds_needed(sd, target_log, 1000);
    let verdict = match decision {
        Decision::Improvement => "improvement".to_string(),
        Decision::Regression => "regression".to_string(),
        Decision::Equivalent => format!("equivalent within ±{}%", fmt_pct(p)),
        Decision::Undecided => {
            let head = undecided(stopped, s, rounds);
            match rounds_to_target {
                Some(n) => format!("{head}: ~{n} rounds would reach ±{}%", fmt_pct(p)),
                None => format!("{head}: > 1000 rounds would reach ±{}%", fmt_pct(p)),
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
        p_value: if s.adaptive {
            anytime_p_value(logs, s.max_rounds)
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
    if rounds.used >= MIN_ROUNDS || ran == 0 || (ran < MIN_ROUNDS && !s.adaptive) {
        return None;
    }
    let stopped = if !s.adaptive || rounds.used + rounds.dropped >= s.max_rounds {
        Stopped::MaxRepeats
    } else {
        Stopped::Budget
    };
    let verdict = format!(
        "{}: {} of {ran} round(s) stable on both sides, an interval needs {MIN_ROUNDS}",
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

/// `5` for 5.0, `2.5` for 2.5.
fn fmt_pct(p: f64) -> String {
    if p.fract() == 0.0 {
        format!("{p:.0}")
    } else {
        format!("{p}")
    }
}

fn pct(ratio: f64) -> f64 {
    100.0 * (ratio - 1.0)
}
