//! The confirmation, pure: in which order the baseline (A) and the candidate (B) are measured,
//! and whether B's gain is real. The decision is a paired ratio with its interval on the log
//! scale, from `qpslab_stats` like every other interval qpslab prints.

use qpslab_stats::paired_ratio;
/// The ratio with its interval that a [`Gain`] holds.
pub use qpslab_stats::Ratio;

/// Confidence level of the interval.
pub const LEVEL: f64 = 0.95;

/// Fewest measurements of each side.
pub const MIN_REPEATS: u32 = 3;

/// Which of the proof study's two variants a confirmation measurement runs (the A or B
/// of its A/B pairs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProofVariant {
    /// The server's settings as found.
    Baseline,
    /// The candidate's.
    Tuned,
}

impl ProofVariant {
    /// The variant's name in the proof study.
    pub fn name(self) -> &'static str {
        match self {
            ProofVariant::Baseline => "baseline",
            ProofVariant::Tuned => "tuned",
        }
    }
}

/// `repeats` measurements of each side in pairs that alternate which side goes first (AB BA AB
/// ...): a side measured second finds the server as the first left it (warmer caches, a pool
/// still resizing), so each side gets both positions.
pub fn order(repeats: u32) -> Vec<ProofVariant> {
    let side = |k: usize| [ProofVariant::Baseline, ProofVariant::Tuned][k];
    (0..repeats as usize)
        .flat_map(|i| {
            qpslab_lab::study::expand::round_order(i, 2)
                .into_iter()
                .map(side)
        })
        .collect()
}

/// The least gain worth a change of settings, as `diff`'s default threshold: a tuned
/// configuration is crowned only when its interval lies above 1 and its estimate is at least
/// this much above the baseline (a few percent can come from the resizes and the session's
/// drift alone).
pub const MIN_GAIN: f64 = 1.05;

/// What the confirmation found: the tuned configuration's gain over the baseline and whether
/// it is real.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Gain {
    /// Tuned over baseline throughput, with its interval.
    pub ratio: Ratio,
    /// The interval lies wholly above 1 and the estimate is at least [`MIN_GAIN`]: a gain.
    pub significant: bool,
}

/// Judges the throughputs of each side's measurements, the `i`-th of each side being measured
/// in the same pair: the ratio `exp(mean(ln(tuned / baseline)))` over the pairs with its t
/// interval at [`LEVEL`] (`qpslab_stats::paired_ratio`). Pairing cancels what the
/// machine does to both sides of a pair (a neighbour's load that comes and goes, caches warming
/// over the session). A gain only when the interval lies above 1 and the estimate reaches
/// [`MIN_GAIN`]. `None` with fewer than two
/// usable pairs.
pub fn judge(baseline: &[f64], tuned: &[f64]) -> Option<Gain> {
    let logs: Vec<f64> = baseline
        .iter()
        .zip(tuned)
        .filter(|(a, b)| **a > 0.0 && **b > 0.0)
        .map(|(a, b)| (b / a).ln())
        .collect();
    let ratio = paired_ratio(&logs, LEVEL)?;
    Some(Gain {
        ratio,
        significant: ratio.low > 1.0 && ratio.ratio >= MIN_GAIN,
    })
}

/// Whether a change can leave the confirmed set: `without` is the set without it over the set
/// with it, paired. It can when its removal keeps the gain within the noise: the interval
/// reaches 1 (no loss shown) and the estimate loses less than the least gain worth a change.
pub fn removable(without: &Ratio) -> bool {
    without.high >= 1.0 && without.ratio >= 1.0 / MIN_GAIN
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_goes_only_when_its_removal_keeps_the_gain() {
        let r = |ratio, low, high| Ratio {
            ratio,
            low,
            high,
            se_log: 0.1,
            df: 2.0,
        };
        // Without it: -1% [-8%, +6%]: within the noise, it goes.
        assert!(removable(&r(0.99, 0.92, 1.06)));
        // Without it the set is faster: it goes.
        assert!(removable(&r(1.04, 0.98, 1.10)));
        // A loss shown by the interval: it stays.
        assert!(!removable(&r(0.7, 0.6, 0.8)));
        // A loss of 10% that the noise cannot tell from none: it stays (a change worth 5%).
        assert!(!removable(&r(0.9, 0.7, 1.15)));
    }

    #[test]
    fn pairs_alternate_which_side_goes_first() {
        use ProofVariant::*;
        assert_eq!(
            order(3),
            [Baseline, Tuned, Tuned, Baseline, Baseline, Tuned]
        );
    }

    #[test]
    fn a_clear_gain_is_crowned() {
        let v = judge(&[100.0, 104.0, 98.0], &[200.0, 195.0, 207.0]).unwrap();
        assert!(v.significant);
        assert!((v.ratio.ratio - 2.0).abs() < 0.05);
        assert!(v.ratio.low > 1.5 && v.ratio.high < 2.5, "{:?}", v.ratio);
        // The machine speeding up during the session moves both sides of each pair.
        let v = judge(&[225.0, 467.0, 475.0], &[435.0, 665.0, 860.0]).unwrap();
        assert!(v.significant, "{:?}", v.ratio);
    }

    #[test]
    fn noise_is_not_a_gain() {
        // A/A: the same server measured in three pairs.
        let v = judge(&[100.0, 99.0, 101.0], &[97.0, 104.0, 108.0]).unwrap();
        assert!(v.ratio.ratio > 1.0);
        assert!(v.ratio.low < 1.0, "{:?}", v.ratio);
        assert!(!v.significant);
    }

    #[test]
    fn a_gain_too_small_to_matter_is_not_crowned() {
        // Three consistent pairs of +3..6%: beyond noise, below the least gain worth a change.
        let v = judge(&[1931.0, 1928.0, 1986.0], &[1990.0, 2048.0, 2069.0]).unwrap();
        assert!(
            v.ratio.low > 1.0 && v.ratio.ratio < MIN_GAIN,
            "{:?}",
            v.ratio
        );
        assert!(!v.significant);
    }

    #[test]
    fn a_loss_is_not_a_gain_and_too_few_is_no_verdict() {
        let v = judge(&[200.0, 201.0, 199.0], &[100.0, 101.0, 99.0]).unwrap();
        assert!(v.ratio.excludes_one());
        assert!(!v.significant);
        assert_eq!(judge(&[100.0], &[200.0, 210.0]), None);
        assert_eq!(judge(&[100.0, 0.0], &[200.0, 210.0]), None);
    }
}
