//! The functions of `\set` expressions and the distributions behind them.
//!
//! `random`, `random_gaussian`, `random_exponential` and `random_zipfian` follow pgbench
//! (same formulas and parameter limits); `random_special` and `random_pareto` are sysbench's
//! `--rand-type` distributions over `[lo, hi]`, shaped by the run's `--rand-*` options.

use crate::rand::{Distribution, Rng};
use qpslab_core::workload::{RandOptions, RandType};
use std::ops::RangeInclusive;

/// A function, with a distribution's constant parameter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Func {
    Random,
    Gaussian(f64),
    Exponential(f64),
    Zipfian(f64),
    Special,
    Pareto,
    Abs,
    Least,
    Greatest,
}

/// pgbench's smallest gaussian parameter (`MIN_GAUSSIAN_PARAM`).
const MIN_GAUSSIAN: f64 = 2.0;
/// pgbench's zipfian parameter range (`MIN_ZIPFIAN_PARAM`, `MAX_ZIPFIAN_PARAM`).
const ZIPFIAN: RangeInclusive<f64> = 1.001..=1000.0;

/// Whether `name` takes a constant shape parameter as its third argument.
pub(crate) fn shaped(name: &str) -> bool {
    matches!(
        name,
        "random_gaussian" | "random_exponential" | "random_zipfian"
    )
}

/// How many arguments `name` takes; `None` for an unknown function.
pub(crate) fn arity(name: &str) -> Option<RangeInclusive<usize>> {
    Some(match name {
        "random" | "random_special" | "random_pareto" => 2..=2,
        "random_gaussian" | "random_exponential" | "random_zipfian" => 3..=3,
        "abs" => 1..=1,
        "least" | "greatest" => 1..=usize::MAX,
        _ => return None,
    })
}

/// [`arity`] in words.
pub(crate) fn arity_text(name: &str) -> &'static str {
    match arity(name).map(|r| *r.start()) {
        Some(1) if name == "abs" => "1 argument",
        Some(1) => "at least 1 argument",
        Some(2) => "2 arguments",
        _ => "3 arguments",
    }
}

/// The function `name` with its checked parameter.
pub(crate) fn func(name: &str, param: Option<f64>) -> Result<Func, String> {
    let p = param.unwrap_or(0.0);
    Ok(match name {
        "random" => Func::Random,
        "random_special" => Func::Special,
        "random_pareto" => Func::Pareto,
        "abs" => Func::Abs,
        "least" => Func::Least,
        "greatest" => Func::Greatest,
        "random_gaussian" if p >= MIN_GAUSSIAN => Func::Gaussian(p),
        "random_gaussian" => {
            return Err(format!(
                "random_gaussian()'s parameter must be at least {MIN_GAUSSIAN:.1} (got {p})"
            ))
        }
        "random_exponential" if p > 0.0 && p.is_finite() => Func::Exponential(p),
        "random_exponential" => {
            return Err(format!(
                "random_exponential()'s parameter must be greater than 0 (got {p})"
            ))
        }
        "random_zipfian" if ZIPFIAN.contains(&p) => Func::Zipfian(p),
        _ => {
            return Err(format!(
                "random_zipfian()'s parameter must be between {} and {} (got {p})",
                ZIPFIAN.start(),
                ZIPFIAN.end()
            ))
        }
    })
}

/// A draw in [0, span].
pub(crate) fn draw(f: Func, span: u64, rng: &mut Rng, rand: &RandOptions) -> u64 {
    // `n` values in all; as a double it may round, which the caller's `min` absorbs.
    let n = span as f64 + 1.0;
    match f {
        Func::Gaussian(p) => loop {
            // Box-Muller, redrawn outside [-p, p) as pgbench does.
            let (r1, r2) = (1.0 - rng.next_f64(), rng.next_f64());
            let stdev = (-2.0 * r1.ln()).sqrt() * (2.0 * std::f64::consts::PI * r2).sin();
            if (-p..p).contains(&stdev) {
                break (n * (stdev + p) / (2.0 * p)) as u64;
            }
        },
        Func::Exponential(p) => {
            let cut = (-p).exp();
            let u = 1.0 - rng.next_f64();
            (n * (-(cut + (1.0 - cut) * u).ln() / p)) as u64
        }
        Func::Zipfian(s) => zipfian(rng, n, s) - 1,
        Func::Special | Func::Pareto => {
            let rand_type = if f == Func::Special {
                RandType::Special
            } else {
                RandType::Pareto
            };
            let opts = RandOptions {
                rand_type,
                ..rand.clone()
            };
            Distribution::with_range(&opts, 0, span).sample(rng)
        }
        _ => rng.uniform(0, span),
    }
}

/// pgbench's `computeIterativeZipfian`: Devroye's rejection method, a value in [1, n].
fn zipfian(rng: &mut Rng, n: f64, s: f64) -> u64 {
    let b = 2f64.powf(s - 1.0);
    loop {
        let u = 1.0 - rng.next_f64();
        let v = rng.next_f64();
        let x = u.powf(-1.0 / (s - 1.0)).floor();
        let t = (1.0 + 1.0 / x).powf(s - 1.0);
        if v * x * (t - 1.0) / (b - 1.0) <= t / b && x <= n {
            return x as u64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(f: Func, span: u64, draws: usize) -> Vec<usize> {
        let mut rng = Rng::new(7);
        let rand = RandOptions::default();
        let mut c = vec![0; span as usize + 1];
        for _ in 0..draws {
            c[draw(f, span, &mut rng, &rand) as usize] += 1;
        }
        c
    }

    #[test]
    fn uniform_covers_the_range_evenly() {
        let c = counts(Func::Random, 9, 100_000);
        assert!(c.iter().all(|&n| (9_000..11_000).contains(&n)), "{c:?}");
    }

    #[test]
    fn gaussian_peaks_in_the_middle() {
        let c = counts(Func::Gaussian(2.5), 9, 100_000);
        assert!(c[4] > 2 * c[0] && c[5] > 2 * c[9], "{c:?}");
    }

    #[test]
    fn exponential_decreases() {
        let c = counts(Func::Exponential(3.0), 9, 100_000);
        assert!(c.windows(2).all(|w| w[0] > w[1]), "{c:?}");
    }

    #[test]
    fn zipfian_follows_its_ratio() {
        // pgbench: P(k) / P(k+1) = ((k+1)/k)^s; with s = 2.5, value 1 is ~5.66x value 2.
        let c = counts(Func::Zipfian(2.5), 99, 200_000);
        let ratio = c[0] as f64 / c[1] as f64;
        assert!((5.0..6.4).contains(&ratio), "{ratio}");
    }

    #[test]
    fn sysbench_shapes_stay_in_range_and_skew() {
        for f in [Func::Special, Func::Pareto] {
            let c = counts(f, 99, 50_000);
            assert_eq!(c.iter().sum::<usize>(), 50_000);
            let max = *c.iter().max().unwrap();
            assert!(max > 3 * 500, "{f:?} should be skewed: {c:?}");
        }
    }
}
