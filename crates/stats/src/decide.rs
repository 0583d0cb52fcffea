//! Deciding a round-paired comparison: one interval and one answer, the same for the study
//! deciding whether to run another round and for every report of it afterwards.
//!
//! A study that stops on what it saw (`precision` or `budget`) is judged by the confidence
//! sequence ([`AnytimeDesign`]), valid however many rounds it ran, or, when it decides only at
//! planned looks (`look_every`), by the repeated confidence interval at its last look
//! ([`LookDesign`]); one whose rounds were fixed in advance (`repeats = N`) by the paired t
//! interval. The answer is one of four: the interval
//! excludes no change (an improvement or a regression), it lies wholly inside ±precision
//! (equivalent: the question "did it change by more than P?" answered "no", as two one-sided
//! tests would), or neither (undecided).
//!
//! A comparison is *settled* when it has an answer at the precision asked: equivalent, or an
//! improvement or regression whose interval is at most ±precision wide. A precise interval is
//! not yet an answer: `[−1%, +8%]` is ±4.5% wide and neither excludes no change nor lies within
//! ±5%. It settles once its half-width is below the larger of the mean's distance from zero and
//! from ±precision, so an effect near half the precision takes the most rounds.

use crate::looks::LookDesign;
use crate::ratio::{paired_ratio, Ratio};
use crate::sequence::{anytime_p_value, AnytimeDesign, MIN_ROUNDS};
use serde::{Deserialize, Serialize};

/// The precision a study asks of its comparisons and the rounds it may run.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sequential {
    /// Target half-width of the 95% interval of the change, in percent; also the margin of
    /// "equivalent".
    pub precision_pct: f64,
    /// The most rounds the study runs (the sequence is tuned to be tightest there).
    pub max_rounds: usize,
    /// Whether the study ran rounds until precise (`precision` or `budget`): its intervals
    /// are the confidence sequence's, and fewer than three paired rounds are `undecided`.
    #[serde(default)]
    pub adaptive: bool,
    /// Paired rounds between the looks of a study that decides only at planned looks (0: it
    /// may decide after every round, by the confidence sequence).
    #[serde(default)]
    pub look_every: usize,
}

/// What a study asks when its spec does not say: ±5% within 20 rounds.
impl Default for Sequential {
    fn default() -> Sequential {
        Sequential {
            precision_pct: 5.0,
            max_rounds: 20,
            adaptive: false,
            look_every: 0,
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

impl Sequential {
    /// The confidence sequence the study's intervals come from.
    pub fn design(&self) -> AnytimeDesign {
        AnytimeDesign::new(0.95, self.max_rounds)
    }

    /// The planned looks of a study that decides only at them (`None`: it decides after every
    /// round, or its rounds are fixed).
    pub fn looks(&self) -> Option<LookDesign> {
        if !self.adaptive || self.look_every == 0 {
            return None;
        }
        LookDesign::new(0.95, self.look_every, self.max_rounds).ok()
    }

    /// Rounds of `n` paired ones that an interval uses: those up to the last look in a study
    /// with planned looks (the rounds after it count from the next look on), else all.
    pub fn counted(&self, n: usize) -> usize {
        match self.looks() {
            Some(d) => d.last_look(n).unwrap_or(n),
            None => n,
        }
    }

    /// The 95% interval of the ratio from the rounds' log ratios `ln(b / a)`: the confidence
    /// sequence's in a study that stopped on what it saw, the repeated confidence interval at
    /// the last look in one with planned looks, the paired t interval in one with fixed
    /// rounds; `None` below [`MIN_ROUNDS`] (or before the first look) or without spread.
    pub fn interval(&self, logs: &[f64]) -> Option<Ratio> {
        if logs.len() < MIN_ROUNDS {
            return None;
        }
        if let Some(d) = self.looks() {
            return d.paired_ratio(logs);
        }
        if self.adaptive {
            self.design().paired_ratio(logs)
        } else {
            paired_ratio(logs, 0.95)
        }
    }

    /// The p-value of "no change" that goes with [`Sequential::interval`] in a study that
    /// stopped on what it saw: below 0.05 exactly when that interval excludes no change
    /// (`None` for fixed rounds, whose p-value is the t test's, or without an interval).
    pub fn adaptive_p_value(&self, logs: &[f64]) -> Option<f64> {
        match self.looks() {
            Some(d) => d.p_value(logs),
            None if self.adaptive => anytime_p_value(logs, self.max_rounds),
            None => None,
        }
    }

    /// The precision on the log scale: `ln(1 + P/100)`.
    pub fn target_log(&self) -> f64 {
        (1.0 + self.precision_pct / 100.0).ln()
    }

    /// The answer an interval gives; `higher_is_better` says which side is an improvement.
    pub fn decision(&self, r: &Ratio, higher_is_better: bool) -> Decision {
        let p = self.precision_pct;
        let (low, high) = (100.0 * (r.low - 1.0), 100.0 * (r.high - 1.0));
        if r.excludes_one() {
            if (r.ratio > 1.0) == higher_is_better {
                Decision::Improvement
            } else {
                Decision::Regression
            }
        } else if low >= -p && high <= p {
            Decision::Equivalent
        } else {
            Decision::Undecided
        }
    }

    /// Whether an interval answers at the precision asked: equivalent, or excluding no change
    /// with a half-width (log scale) of at most the precision.
    pub fn settled(&self, r: &Ratio) -> bool {
        match self.decision(r, true) {
            Decision::Equivalent => true,
            Decision::Undecided => false,
            Decision::Improvement | Decision::Regression => half_log(r) <= self.target_log(),
        }
    }

    /// The half-width (log scale) at which a comparison whose mean log ratio is `mean` would
    /// settle: at most the precision, and below the larger of the mean's distance from zero
    /// (to exclude no change) and from the nearer margin (to lie within ±precision).
    pub fn settling_half(&self, mean: f64) -> f64 {
        let t = self.target_log();
        let m = mean.abs();
        t.min(m.max(t - m))
    }

    /// Rounds after which a comparison with the rounds `logs` so far would settle if its mean
    /// and spread stayed as seen (confidence sequence's rounds in a study that stops on what
    /// it saw, the first look's that would in one with planned looks, t's otherwise); `None`
    /// below [`MIN_ROUNDS`] or when `limit` rounds would not.
    pub fn rounds_to_settle(&self, logs: &[f64], limit: usize) -> Option<usize> {
        let r = self.interval(logs)?;
        let sd = r.se_log * (self.counted(logs.len()) as f64).sqrt();
        let half = self.settling_half(r.ratio.ln());
        if let Some(d) = self.looks() {
            // Past the design's last look, the rounds a study deciding after every round
            // would need: more than a design with looks up to there would.
            return d
                .rounds_needed(sd, half, limit)
                .or_else(|| self.design().rounds_needed(sd, half, limit));
        }
        if self.adaptive {
            return self.design().rounds_needed(sd, half, limit);
        }
        (MIN_ROUNDS..=limit.max(MIN_ROUNDS)).find(|&n| {
            crate::dist::t_quantile(0.975, (n - 1) as f64) * sd / (n as f64).sqrt() <= half
        })
    }
}

/// Half the interval's width on the log scale.
pub fn half_log(r: &Ratio) -> f64 {
    0.5 * (r.high.ln() - r.low.ln())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seq(adaptive: bool) -> Sequential {
        Sequential {
            precision_pct: 5.0,
            max_rounds: 20,
            adaptive,
            look_every: 0,
        }
    }

    fn ratio(low_pct: f64, mid_pct: f64, high_pct: f64) -> Ratio {
        Ratio {
            ratio: 1.0 + mid_pct / 100.0,
            low: 1.0 + low_pct / 100.0,
            high: 1.0 + high_pct / 100.0,
            se_log: 0.01,
            df: 9.0,
        }
    }

    #[test]
    fn four_answers() {
        let s = seq(true);
        assert_eq!(
            s.decision(&ratio(2.0, 4.0, 6.0), true),
            Decision::Improvement
        );
        assert_eq!(
            s.decision(&ratio(2.0, 4.0, 6.0), false),
            Decision::Regression
        );
        assert_eq!(
            s.decision(&ratio(-3.0, 0.5, 4.0), true),
            Decision::Equivalent
        );
        assert_eq!(
            s.decision(&ratio(-1.0, 3.5, 8.0), true),
            Decision::Undecided
        );
    }

    #[test]
    fn a_precise_interval_that_answers_nothing_is_not_settled() {
        let s = seq(true);
        // ±4.5%: within the precision, yet it neither excludes no change nor lies within ±5%.
        let r = ratio(-1.0, 3.5, 8.0);
        assert!(half_log(&r) < s.target_log());
        assert!(!s.settled(&r));
        // An improvement wider than the precision is an answer, not yet a precise one.
        assert!(!s.settled(&ratio(10.0, 40.0, 70.0)));
        assert!(s.settled(&ratio(30.0, 34.0, 38.0)));
        assert!(s.settled(&ratio(-4.0, 0.0, 4.0)));
    }

    #[test]
    fn an_effect_near_half_the_precision_needs_the_narrowest_interval() {
        let s = seq(true);
        let t = s.target_log();
        assert!((s.settling_half(0.0) - t).abs() < 1e-12);
        assert!((s.settling_half(t / 2.0) - t / 2.0).abs() < 1e-12);
        assert!((s.settling_half(-t / 2.0) - t / 2.0).abs() < 1e-12);
        assert!((s.settling_half(3.0 * t) - t).abs() < 1e-12);
        assert!(s.settling_half(0.4 * t) > s.settling_half(0.5 * t));
    }

    #[test]
    fn fixed_rounds_take_the_t_interval_and_adaptive_ones_the_sequence() {
        let logs = [0.01, -0.02, 0.03, 0.00, 0.02, -0.01];
        let t = seq(false).interval(&logs).unwrap();
        let cs = seq(true).interval(&logs).unwrap();
        assert_eq!(t, paired_ratio(&logs, 0.95).unwrap());
        assert!(cs.low < t.low && cs.high > t.high);
        assert!(seq(true).interval(&logs[..2]).is_none());
    }

    #[test]
    fn rounds_to_settle_grow_as_the_effect_nears_half_the_precision() {
        let s = seq(true);
        let spread = [0.05, -0.05, 0.04, -0.04, 0.0, 0.03, -0.03];
        let shifted = |by: f64| spread.iter().map(|x| x + by).collect::<Vec<_>>();
        let at_zero = s.rounds_to_settle(&shifted(0.0), 1000).unwrap();
        let at_half = s
            .rounds_to_settle(&shifted(s.target_log() / 2.0), 1000)
            .unwrap();
        let far = s.rounds_to_settle(&shifted(0.5), 1000).unwrap();
        assert!(at_half > at_zero, "{at_half} vs {at_zero}");
        assert!(far <= at_zero, "{far} vs {at_zero}");
        assert!(seq(false).rounds_to_settle(&shifted(0.0), 1000).unwrap() < at_zero);
    }

    #[test]
    fn planned_looks_decide_at_the_last_look_and_narrower_than_the_sequence() {
        let looks = Sequential {
            look_every: 5,
            ..seq(true)
        };
        let logs: Vec<f64> = (0..13)
            .map(|i| 0.05 + 0.02 * ((i % 3) as f64 - 1.0))
            .collect();
        assert_eq!(looks.counted(13), 10);
        assert_eq!(looks.counted(4), 4);
        assert!(looks.interval(&logs[..4]).is_none());
        let at = looks.interval(&logs).unwrap();
        assert_eq!(at, looks.interval(&logs[..10]).unwrap());
        let cs = seq(true).interval(&logs[..10]).unwrap();
        assert!(at.low > cs.low && at.high < cs.high, "{at:?} vs {cs:?}");
        let p = looks.adaptive_p_value(&logs).unwrap();
        assert_eq!(p < 0.05, at.excludes_one(), "{p}");
        let n = looks.rounds_to_settle(&logs, 1000).unwrap();
        assert_eq!(n % 5, 0, "{n}");
        // Fixed rounds have no looks.
        let fixed = Sequential {
            look_every: 5,
            ..seq(false)
        };
        assert!(fixed.looks().is_none() && fixed.counted(13) == 13);
    }
}
