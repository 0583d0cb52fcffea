//! Statistics of per-interval samples: means with an uncertainty that respects autocorrelation,
//! and the confidence interval of a difference between two such means.
//!
//! Consecutive report intervals of one run are not independent: a slow second tends to follow a
//! slow second. Treating `n` intervals as `n` independent draws makes the standard error too small
//! and calls noise a change. As latte does, we shrink `n` to an effective sample size computed
//! from the series' autocorrelation (Geyer's initial positive sequence: sum the autocorrelations
//! while they stay positive), then run Welch's t-test on the two means with those sizes.

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
    let df = if se > 0.0 {
        (va + vb).powi(2) / (va * va / a.df() + vb * vb / b.df())
    } else {
        a.df() + b.df()
    };
    let t = t_quantile(0.5 + level / 2.0, df);
    Some(Difference {
        diff,
        low: diff - t * se,
        high: diff + t * se,
        df,
    })
}

/// The standard normal quantile (Acklam's rational approximation, relative error < 1.2e-9).
pub fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    let p = p.clamp(1e-300, 1.0 - 1e-16);
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < 0.02425 {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - 0.02425 {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

/// Student's t quantile with `df` degrees of freedom (fractional allowed). Exact for df ≤ 2;
/// beyond, the Cornish–Fisher expansion (Abramowitz & Stegun 26.7.5), within 0.3% of tables
/// for df ≥ 3 at the usual levels.
pub fn t_quantile(p: f64, df: f64) -> f64 {
    if df <= 1.0 {
        return (std::f64::consts::PI * (p - 0.5)).tan();
    }
    if df <= 2.0 {
        let a = 4.0 * p * (1.0 - p);
        return 2.0 * (p - 0.5) * (2.0 / a).sqrt();
    }
    let z = normal_quantile(p);
    let z2 = z * z;
    let g1 = (z2 + 1.0) * z / 4.0;
    let g2 = ((5.0 * z2 + 16.0) * z2 + 3.0) * z / 96.0;
    let g3 = (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) * z / 384.0;
    let g4 = ((((79.0 * z2 + 776.0) * z2 + 1482.0) * z2 - 1920.0) * z2 - 945.0) * z / 92160.0;
    z + g1 / df + g2 / df.powi(2) + g3 / df.powi(3) + g4 / df.powi(4)
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
                (got - want).abs() / want < 0.004,
                "df {df}: {got} vs {want}"
            );
        }
        assert!((normal_quantile(0.975) - 1.959_964).abs() < 1e-5);
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
