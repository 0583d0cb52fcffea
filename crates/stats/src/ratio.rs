//! Relative changes with intervals that mean something: the ratio `b / a` of two means, its
//! confidence interval on the log scale, the minimum detectable effect, and how many repeats
//! would bring that effect under a bound.
//!
//! A change in percent is a ratio. An interval built symmetric in percent reaches impossible
//! values (a latency "falling" by 300%); built on `ln(b / a)` and mapped back with `exp`, it is
//! asymmetric in percent and never reaches −100%. The standard error of `ln(mean)` is
//! `se / mean` (the delta method), so the point estimate stays the ratio of the means shown.

use crate::dist::t_quantile;
use crate::mean::{estimate_independent, welch_df, Estimate};
use serde::{Deserialize, Serialize};

/// Power assumed by [`mde_pct`]: the chance of calling an effect of exactly the MDE significant.
pub const POWER: f64 = 0.8;

/// The ratio `b / a` and its confidence interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ratio {
    /// `b.mean / a.mean`.
    pub ratio: f64,
    /// Lower end of the interval of the ratio (always > 0).
    pub low: f64,
    /// Upper end.
    pub high: f64,
    /// Standard error of `ln(ratio)`.
    pub se_log: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
}

impl Ratio {
    /// Whether the interval excludes 1 (no change).
    pub fn excludes_one(&self) -> bool {
        self.low > 1.0 || self.high < 1.0
    }
}

/// The estimate of `ln(mean)` from an estimate of the mean (delta method: standard error
/// `se / mean`); `None` without uncertainty or with a mean that is not positive.
pub fn log_of_mean(e: &Estimate) -> Option<Estimate> {
    (e.has_uncertainty() && e.mean > 0.0 && e.se.is_finite()).then(|| Estimate {
        mean: e.mean.ln(),
        se: e.se / e.mean,
        ..*e
    })
}

/// The ratio `b / a` with its two-sided interval at `level` (e.g. 0.95), from estimates of the
/// means (delta method on each side's log); `None` when either side lacks an uncertainty or a
/// positive mean.
pub fn ratio(a: &Estimate, b: &Estimate, level: f64) -> Option<Ratio> {
    ratio_of_logs(&log_of_mean(a)?, &log_of_mean(b)?, level)
}

/// The ratio `exp(lb − la)` of two estimates on the log scale (e.g. the means of the logs of
/// repeated runs' values: a ratio of geometric means), Welch's interval mapped back by `exp`.
pub fn ratio_of_logs(la: &Estimate, lb: &Estimate, level: f64) -> Option<Ratio> {
    if !la.has_uncertainty() || !lb.has_uncertainty() || !la.se.is_finite() {
        return None;
    }
    let (va, vb) = (la.se * la.se, lb.se * lb.se);
    let se_log = (va + vb).sqrt();
    let df = welch_df(va, la.df(), vb, lb.df());
    let t = t_quantile(0.5 + level / 2.0, df);
    let l = lb.mean - la.mean;
    Some(Ratio {
        ratio: l.exp(),
        low: (l - t * se_log).exp(),
        high: (l + t * se_log).exp(),
        se_log,
        df,
    })
}

/// The minimum detectable effect, in percent: the smallest increase that a two-sided test at
/// `level` calls significant with probability [`POWER`], given the standard error of the log
/// ratio and its degrees of freedom: `exp((t(1 − α/2) + t(power)) · se) − 1`.
pub fn mde_pct(se_log: f64, df: f64, level: f64) -> f64 {
    let k = t_quantile(0.5 + level / 2.0, df) + t_quantile(POWER, df);
    100.0 * ((k * se_log).exp() - 1.0)
}

/// The ratio `exp(mean(d))` of paired measurements, `d` being each pair's `ln(b / a)` (one A
/// and one B measured next to each other, so a drift of the machine cancels within a pair),
/// with the t interval at `level` over the pairs; `None` with fewer than two pairs or no spread.
pub fn paired_ratio(log_ratios: &[f64], level: f64) -> Option<Ratio> {
    let e = estimate_independent(log_ratios)?;
    if !e.se.is_finite() || e.se <= 0.0 {
        return None;
    }
    ratio_of_log_mean(&e, level)
}

/// The ratio `exp(mean)` of an estimate of a mean log ratio (paired measurements: each pair's
/// `ln(b / a)`), with the t interval at `level` on the log scale mapped back by `exp`, its
/// degrees of freedom the estimate's; `None` when the estimate has no uncertainty.
pub fn ratio_of_log_mean(e: &Estimate, level: f64) -> Option<Ratio> {
    if !e.has_uncertainty() {
        return None;
    }
    let df = e.df();
    let half = t_quantile(0.5 + level / 2.0, df) * e.se;
    Some(Ratio {
        ratio: e.mean.exp(),
        low: (e.mean - half).exp(),
        high: (e.mean + half).exp(),
        se_log: e.se,
        df,
    })
}

/// Repeats per side (`n` for both) that would bring the MDE to `bound_pct` or below, assuming
/// each side's spread per run stays what it is now (`se² · runs`, `la` and `lb` on the log
/// scale); `None` when even 1000 would not.
pub fn repeats_needed(
    la: &Estimate,
    runs_a: usize,
    lb: &Estimate,
    runs_b: usize,
    level: f64,
    bound_pct: f64,
) -> Option<usize> {
    // Variance of one run's log value on each side.
    let (sa, sb) = (la.se * la.se * runs_a as f64, lb.se * lb.se * runs_b as f64);
    (2..=1000).find(|&n| {
        let n_f = n as f64;
        let (va, vb) = (sa / n_f, sb / n_f);
        let df = welch_df(va, n_f - 1.0, vb, n_f - 1.0);
        mde_pct((va + vb).sqrt(), df, level) <= bound_pct
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paired_ratio_cancels_a_drift_shared_by_the_pair() {
        // The machine speeds up 2× over the pairs; B is 1.8× A in each pair.
        let pairs = [(225.0, 405.0), (467.0, 840.0), (475.0, 860.0)];
        let d: Vec<f64> = pairs
            .iter()
            .map(|(a, b): &(f64, f64)| (b / a).ln())
            .collect();
        let r = paired_ratio(&d, 0.95).unwrap();
        assert!((r.ratio - 1.8).abs() < 0.01, "{r:?}");
        assert!(r.low > 1.7 && r.high < 1.9, "{r:?}");
        assert_eq!(r.df, 2.0);
        assert_eq!(paired_ratio(&d[..1], 0.95), None);
    }

    #[test]
    fn the_ratio_of_a_mean_log_keeps_a_paired_interval_without_spread() {
        let d = [0.1, 0.2, 0.15, 0.12];
        let e = estimate_independent(&d).unwrap();
        assert_eq!(ratio_of_log_mean(&e, 0.95), paired_ratio(&d, 0.95));
        // Without spread the interval is the point (paired_ratio refuses it).
        let flat = estimate_independent(&[0.5, 0.5, 0.5]).unwrap();
        let r = ratio_of_log_mean(&flat, 0.95).unwrap();
        assert!(r.low == r.ratio && r.ratio == r.high, "{r:?}");
        assert_eq!(paired_ratio(&[0.5, 0.5, 0.5], 0.95), None);
        assert_eq!(ratio_of_log_mean(&Estimate::single(0.1), 0.95), None);
    }

    #[test]
    fn ratio_interval_is_on_the_log_scale_and_never_below_minus_100_percent() {
        // A wide spread: a symmetric percent interval would reach far below -100%.
        let a = estimate_independent(&[10.0, 30.0]).unwrap();
        let b = estimate_independent(&[1.0, 9.0]).unwrap();
        let r = ratio(&a, &b, 0.95).unwrap();
        assert!((r.ratio - 0.25).abs() < 1e-12);
        assert!(r.low > 0.0 && r.low < r.ratio && r.ratio < r.high, "{r:?}");
        // Symmetric on the log scale around the ratio.
        assert!(((r.ratio / r.low).ln() - (r.high / r.ratio).ln()).abs() < 1e-9);
        assert!(!r.excludes_one(), "{r:?}");
        // A mean that is not positive has no log: no interval.
        let zero = estimate_independent(&[0.0, 0.0]).unwrap();
        assert!(ratio(&zero, &b, 0.95).is_none());
    }

    #[test]
    fn ratio_interval_uses_welch_with_fractional_df() {
        // Two repeats a side with unequal spreads: df between 1 and 2, where t(0.975) is large.
        let a = estimate_independent(&[100.0, 102.0]).unwrap();
        let b = estimate_independent(&[110.0, 116.0]).unwrap();
        let r = ratio(&a, &b, 0.95).unwrap();
        assert!(r.df > 1.0 && r.df < 2.0, "{r:?}");
        let t = t_quantile(0.975, r.df);
        assert!(t > 4.303, "{t}");
        let half = (r.high / r.ratio).ln();
        assert!((half - t * r.se_log).abs() < 1e-12);
    }

    #[test]
    fn mde_grows_with_spread_and_shrinks_with_repeats() {
        let small = mde_pct(0.01, 10.0, 0.95);
        let large = mde_pct(0.05, 10.0, 0.95);
        assert!(small > 0.0 && large > 4.0 * small, "{small} {large}");
        // With many df, (1.96 + 0.84) · se.
        let z = mde_pct(0.01, 1e9, 0.95);
        assert!(
            (z - 100.0 * ((2.8016 * 0.01f64).exp() - 1.0)).abs() < 1e-3,
            "{z}"
        );
        // Few df cost detectability.
        assert!(mde_pct(0.01, 2.0, 0.95) > 1.8 * z);
    }

    #[test]
    fn repeats_needed_reach_the_bound() {
        // 3 runs a side, 10% spread between runs.
        let a = estimate_independent(&[90.0, 100.0, 110.0]).unwrap();
        let b = estimate_independent(&[92.0, 101.0, 110.0]).unwrap();
        let r = ratio(&a, &b, 0.95).unwrap();
        assert!(mde_pct(r.se_log, r.df, 0.95) > 10.0);
        let (la, lb) = (log_of_mean(&a).unwrap(), log_of_mean(&b).unwrap());
        let n = repeats_needed(&la, 3, &lb, 3, 0.95, 10.0).unwrap();
        assert!(n > 3, "{n}");
        // n repeats with the same spread per run meet the bound; n - 1 do not.
        let at = |n: f64| {
            let v = (a.se / a.mean).powi(2) * 3.0 / n + (b.se / b.mean).powi(2) * 3.0 / n;
            let df = welch_df(
                (a.se / a.mean).powi(2) * 3.0 / n,
                n - 1.0,
                (b.se / b.mean).powi(2) * 3.0 / n,
                n - 1.0,
            );
            mde_pct(v.sqrt(), df, 0.95)
        };
        assert!(at(n as f64) <= 10.0 && at(n as f64 - 1.0) > 10.0);
        let flat = log_of_mean(&estimate_independent(&[5.0, 5.0]).unwrap()).unwrap();
        assert_eq!(repeats_needed(&flat, 2, &flat, 2, 0.95, 10.0), Some(2));
    }
}

#[cfg(test)]
mod log_tests {
    use super::*;

    #[test]
    fn one_wild_repeat_widens_the_interval_of_logs_instead_of_faking_a_change() {
        // A p95 of 1 ms in every run but one stalled run of 2 s, against 1 ms throughout:
        // the mean of the values calls that a -99.8% change; the logs do not.
        let logs = |xs: &[f64]| {
            estimate_independent(&xs.iter().map(|x: &f64| x.ln()).collect::<Vec<_>>()).unwrap()
        };
        let a = [1.0, 1.1, 0.9, 2000.0];
        let b = [1.0, 0.95, 1.05, 1.0];
        let r = ratio_of_logs(&logs(&a), &logs(&b), 0.95).unwrap();
        assert!(!r.excludes_one(), "{r:?}");
        let by_means = ratio(
            &estimate_independent(&a).unwrap(),
            &estimate_independent(&b).unwrap(),
            0.95,
        )
        .unwrap();
        assert!(by_means.excludes_one(), "{by_means:?}");
    }
}
