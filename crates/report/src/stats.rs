//! Statistics of per-interval samples: means with an uncertainty that respects autocorrelation,
//! and the confidence interval of a difference between two such means.
//!
//! Consecutive report intervals of one run are not independent: a slow second tends to follow a
//! slow second. Treating `n` intervals as `n` independent draws makes the standard error too small
//! and calls noise a change. As latte does, we shrink `n` to an effective sample size computed
//! from the series' autocorrelation (Geyer's initial positive sequence: sum the autocorrelations
//! while they stay positive), then run Welch's t-test on the two means with those sizes.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

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
    let n = xs.len();
    if n == 0 {
        return None;
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    if n == 1 {
        return Some(Estimate::single(mean));
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let n_eff = effective_sample_size(xs);
    Some(Estimate {
        mean,
        se: (var / n_eff).sqrt(),
        n,
        n_eff,
    })
}

/// The estimate of independent observations (e.g. the means of repeated runs): no
/// autocorrelation correction, since each observation is a separate run.
pub fn estimate_independent(xs: &[f64]) -> Option<Estimate> {
    let n = xs.len();
    if n == 0 {
        return None;
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    if n == 1 {
        return Some(Estimate::single(mean));
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    Some(Estimate {
        mean,
        se: (var / n as f64).sqrt(),
        n,
        n_eff: n as f64,
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

/// The standard normal quantile.
pub fn normal_quantile(p: f64) -> f64 {
    // Normal::new(0, 1) cannot fail: the parameters are finite and the spread positive.
    match Normal::new(0.0, 1.0) {
        Ok(n) => n.inverse_cdf(p.clamp(1e-300, 1.0 - 1e-16)),
        Err(_) => f64::NAN,
    }
}

/// Student's t quantile with `df` degrees of freedom, fractional allowed (statrs: the inverse
/// of the regularized incomplete beta function, exact to floating-point precision). `df` of
/// infinity or above 1e7 is the normal quantile; `df` ≤ 0 has no quantile (NaN).
pub fn t_quantile(p: f64, df: f64) -> f64 {
    if df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if df > 1e7 {
        return normal_quantile(p);
    }
    match StudentsT::new(0.0, 1.0, df) {
        Ok(t) => t.inverse_cdf(p.clamp(0.0, 1.0)),
        Err(_) => f64::NAN,
    }
}

/// The two-sided p-value of a mean of `mean` with standard error `se` being 0, from Student's
/// t with `df` degrees of freedom. A mean without spread is certain: 0 unless it is 0.
pub fn t_p_value(mean: f64, se: f64, df: f64) -> f64 {
    if se <= 0.0 || !se.is_finite() {
        return if mean == 0.0 { 1.0 } else { 0.0 };
    }
    match StudentsT::new(0.0, 1.0, df) {
        Ok(t) => 2.0 * (1.0 - t.cdf((mean / se).abs())),
        Err(_) => f64::NAN,
    }
}

/// Welch–Satterthwaite degrees of freedom of a sum of two variances with their own dfs.
pub(crate) fn welch_df(va: f64, dfa: f64, vb: f64, dfb: f64) -> f64 {
    if va + vb > 0.0 {
        (va + vb).powi(2) / (va * va / dfa + vb * vb / dfb)
    } else {
        dfa + dfb
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles_match_tables() {
        for (df, want) in [
            (1.0, 12.706),
            (2.0, 4.303),
            (3.0, 3.182),
            (5.0, 2.571),
            (10.0, 2.228),
            (30.0, 2.042),
            (1000.0, 1.962),
        ] {
            let got = t_quantile(0.975, df);
            assert!(
                (got - want).abs() / want < 0.0005,
                "df {df}: {got} vs {want}"
            );
        }
        assert!((normal_quantile(0.975) - 1.959_964).abs() < 1e-5);
        assert!((t_quantile(0.8, 1e9) - 0.841_621).abs() < 1e-5);
        assert!(t_quantile(0.975, 0.0).is_nan());
    }

    #[test]
    fn t_quantiles_are_exact_for_fractional_df() {
        // Welch's df with two repeats a side falls between 1 and 2.
        for (df, want) in [(1.2, 8.649), (1.5, 6.017), (2.5, 3.575), (4.0, 2.776)] {
            let got = t_quantile(0.975, df);
            assert!((got - want).abs() < 0.0015, "df {df}: {got} vs {want}");
        }
        // Monotone in df between the integers, not a step.
        assert!(t_quantile(0.975, 1.2) > t_quantile(0.975, 1.5));
        assert!(t_quantile(0.975, 1.5) > t_quantile(0.975, 1.9));
        assert!(t_quantile(0.975, 1.9) > t_quantile(0.975, 2.0));
        assert!((normal_quantile(0.001) + 3.090_232).abs() < 1e-5);
    }

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
}
