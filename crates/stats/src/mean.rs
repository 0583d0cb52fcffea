//! Means with an uncertainty that respects autocorrelation, the confidence interval of a
//! difference between two such means (Welch), and of a linear contrast of several.
//!
//! Consecutive report intervals of one run are not independent: a slow second tends to follow a
//! slow second. Treating `n` intervals as `n` independent draws makes the standard error too small
//! and calls noise a change. As latte does, we shrink `n` to an effective sample size computed
//! from the series' autocorrelation (Geyer's initial positive sequence: sum the autocorrelations
//! while they stay positive), then run Welch's t-test on the two means with those sizes.

use crate::dist::t_quantile;
use serde::{Deserialize, Serialize};

/// A mean and its uncertainty.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// The arithmetic mean.
    pub mean: f64,
    /// Its standard error (0 when unknown: a single observation).
    pub se: f64,
    /// Observations it came from.
    pub n: usize,
    /// Observations worth of independent information (≤ `n`).
    pub n_eff: f64,
}

impl Estimate {
    /// A value known from a single reading, without uncertainty.
    pub fn single(value: f64) -> Estimate {
        Estimate {
            mean: value,
            se: 0.0,
            n: 1,
            n_eff: 1.0,
        }
    }

    /// Degrees of freedom of its standard error.
    pub fn df(&self) -> f64 {
        (self.n_eff - 1.0).max(0.0)
    }

    /// Whether it carries an uncertainty (at least two effective observations).
    pub fn has_uncertainty(&self) -> bool {
        self.n >= 2 && self.df() > 0.0
    }
}

/// The estimate of a series of per-interval values that may be autocorrelated.
pub fn estimate(xs: &[f64]) -> Option<Estimate> {
    of_observations(xs, effective_sample_size)
}

/// The estimate of independent observations (e.g. the means of repeated runs): no
/// autocorrelation correction, since each observation is a separate run.
pub fn estimate_independent(xs: &[f64]) -> Option<Estimate> {
    of_observations(xs, |xs| xs.len() as f64)
}

/// The mean of `xs` with the standard error `√(s² / n_eff)`, `s²` the sample variance and
/// `n_eff` what `n_eff` says of `xs` (asked only with two or more observations).
fn of_observations(xs: &[f64], n_eff: impl FnOnce(&[f64]) -> f64) -> Option<Estimate> {
    let n = xs.len();
    if n == 0 {
        return None;
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    if n == 1 {
        return Some(Estimate::single(mean));
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let n_eff = n_eff(xs);
    Some(Estimate {
        mean,
        se: (var / n_eff).sqrt(),
        n,
        n_eff,
    })
}

/// `n / (1 + 2 Σ ρ_k)`, summing lag autocorrelations while pairs of them stay positive; at
/// least 2 (so a t quantile exists) and at most `n`.
pub fn effective_sample_size(xs: &[f64]) -> f64 {
    let n = xs.len();
    if n < 3 {
        return n as f64;
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    let c0 = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
    if c0 <= 0.0 {
        return n as f64;
    }
    let rho = |k: usize| -> f64 {
        (0..n - k)
            .map(|i| (xs[i] - mean) * (xs[i + k] - mean))
            .sum::<f64>()
            / n as f64
            / c0
    };
    // Geyer: sums of adjacent pairs of autocorrelations are positive for a stationary series;
    // stop at the first pair that is not (beyond it the estimates are noise).
    let mut sum = 0.0;
    let mut k = 1;
    while k + 1 < n {
        let pair = rho(k) + rho(k + 1);
        if pair <= 0.0 {
            break;
        }
        sum += pair;
        k += 2;
    }
    let tau = (1.0 + 2.0 * sum).max(1.0);
    (n as f64 / tau).clamp(2.0_f64.min(n as f64), n as f64)
}

/// The difference `b - a` of two estimates with its confidence interval (Welch).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Difference {
    /// `b.mean - a.mean`.
    pub diff: f64,
    /// Lower end of the confidence interval of `diff`.
    pub low: f64,
    /// Upper end.
    pub high: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
}

impl Difference {
    /// Whether the interval excludes zero.
    pub fn excludes_zero(&self) -> bool {
        self.low > 0.0 || self.high < 0.0
    }
}

/// Welch's confidence interval (two-sided, `level` e.g. 0.95) of `b - a`; `None` when either side
/// has no uncertainty to work with.
pub fn difference(a: &Estimate, b: &Estimate, level: f64) -> Option<Difference> {
    if !a.has_uncertainty() || !b.has_uncertainty() {
        return None;
    }
    let (va, vb) = (a.se * a.se, b.se * b.se);
    let se = (va + vb).sqrt();
    let diff = b.mean - a.mean;
    let df = welch_df(va, a.df(), vb, b.df());
    let t = t_quantile(0.5 + level / 2.0, df);
    Some(Difference {
        diff,
        low: diff - t * se,
        high: diff + t * se,
        df,
    })
}

/// Welch–Satterthwaite degrees of freedom of a sum of two variances with their own dfs.
pub(crate) fn welch_df(va: f64, dfa: f64, vb: f64, dfb: f64) -> f64 {
    if va + vb > 0.0 {
        (va + vb).powi(2) / (va * va / dfa + vb * vb / dfb)
    } else {
        dfa + dfb
    }
}

/// A linear contrast `Σ w·mean` of independent estimates (`coeffs`: each weight `w` with its
/// estimate) and its two-sided interval at `level`: the variance `Σ (w·se)²`, the degrees of
/// freedom from Welch–Satterthwaite over the terms. `None` without terms; `None` inside when any
/// estimate lacks an uncertainty.
pub fn contrast(coeffs: &[(f64, Estimate)], level: f64) -> Option<(f64, Option<(f64, f64)>)> {
    if coeffs.is_empty() {
        return None;
    }
    let value: f64 = coeffs.iter().map(|(w, e)| w * e.mean).sum();
    if !coeffs.iter().all(|(_, e)| e.has_uncertainty()) {
        return Some((value, None));
    }
    let var: f64 = coeffs.iter().map(|(w, e)| (w * e.se).powi(2)).sum();
    let denom: f64 = coeffs
        .iter()
        .map(|(w, e)| (w * e.se).powi(4) / e.df())
        .sum();
    let df = if denom > 0.0 { var * var / denom } else { 1e6 };
    let half = t_quantile(0.5 + level / 2.0, df) * var.sqrt();
    Some((value, Some((value - half, value + half))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn white_noise_keeps_its_size_and_a_trend_loses_it() {
        // A deterministic, alternating series has negative lag-1 correlation: no shrinking.
        let alt: Vec<f64> = (0..40)
            .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 })
            .collect();
        assert_eq!(effective_sample_size(&alt), 40.0);
        // A slow drift is strongly autocorrelated: far fewer independent observations.
        let drift: Vec<f64> = (0..40).map(|i| (i as f64 / 10.0).sin()).collect();
        let n_eff = effective_sample_size(&drift);
        assert!(n_eff < 10.0, "{n_eff}");
        assert!(n_eff >= 2.0);
    }

    #[test]
    fn difference_of_clearly_separated_series_excludes_zero() {
        let a: Vec<f64> = (0..20).map(|i| 100.0 + (i % 3) as f64).collect();
        let b: Vec<f64> = (0..20).map(|i| 120.0 + (i % 3) as f64).collect();
        let (ea, eb) = (estimate(&a).unwrap(), estimate(&b).unwrap());
        let d = difference(&ea, &eb, 0.95).unwrap();
        assert!((d.diff - 20.0).abs() < 1e-9);
        assert!(d.excludes_zero() && d.low > 18.0 && d.high < 22.0, "{d:?}");
        // Overlapping noise: the interval spans zero.
        let c: Vec<f64> = (0..20).map(|i| 100.0 + ((i + 1) % 3) as f64).collect();
        let d = difference(&ea, &estimate(&c).unwrap(), 0.95).unwrap();
        assert!(!d.excludes_zero(), "{d:?}");
    }

    #[test]
    fn single_readings_have_no_interval() {
        let one = estimate(&[5.0]).unwrap();
        assert!(!one.has_uncertainty());
        assert!(difference(&one, &one, 0.95).is_none());
        assert!(estimate(&[]).is_none());
        let reps = estimate_independent(&[1.0, 2.0, 3.0]).unwrap();
        assert_eq!(reps.n_eff, 3.0);
        assert!((reps.se - (1.0f64 / 3.0).sqrt()).abs() < 1e-12);
    }

    #[test]
    fn a_contrast_of_two_is_welchs_difference() {
        let a = estimate_independent(&[10.0, 12.0, 11.0, 13.0]).unwrap();
        let b = estimate_independent(&[15.0, 19.0, 17.0]).unwrap();
        let d = difference(&a, &b, 0.95).unwrap();
        let (value, ci) = contrast(&[(-1.0, a), (1.0, b)], 0.95).unwrap();
        let (low, high) = ci.unwrap();
        assert!((value - d.diff).abs() < 1e-12);
        assert!(
            (low - d.low).abs() < 1e-9 && (high - d.high).abs() < 1e-9,
            "{d:?}"
        );
        // A term without uncertainty leaves the value without an interval.
        let one = Estimate::single(4.0);
        assert_eq!(contrast(&[(0.5, a), (0.5, one)], 0.95), Some((7.75, None)));
        assert_eq!(contrast(&[], 0.95), None);
    }
}
