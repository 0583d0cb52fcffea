//! Change points in a series of independent measurements (one value per run, in run order):
//! E-divisive means with its permutation test (Matteson and James 2014, "A Nonparametric
//! Approach for Multiple Change Point Analysis of Multivariate Data", JASA 109(505)).
//!
//! The series is cut where the energy distance between the points before and after the cut is
//! largest (the statistic `Q̂` with α = 1, below); a cut is kept only when fewer than a
//! `significance` share of the series' own permutations split as well, so the test adapts to
//! the series' noise and assumes no distribution. Cuts are found one at a time, the strongest
//! first, among all the segments cut so far (the paper's hierarchical procedure, which is also
//! what Apache Otava's `compute_change_points_orig` runs); the first cut that is not significant
//! ends the search. Change points whose relative change is below `min_magnitude` are then
//! merged away, the smallest first, with the levels of their neighbours recomputed.
//!
//! Why the permutation test and not Otava's default t-test: the t-test assumes normal noise
//! within each segment, while benchmark results are skewed (a slow run is further from the mean
//! than a fast one) and the permutation test needs only that the runs of one segment be
//! exchangeable; its level holds for any noise, which is what a CI gate must promise. Its cost
//! (a few hundred recomputations of the statistic) is nothing for series of hundreds of runs.
//!
//! ```
//! use qpslab_stats::changepoint::{detect, Options};
//! let mut tps: Vec<f64> = (0..15).map(|i| 1000.0 + [3.0, -2.0, 1.0][i % 3]).collect();
//! tps.extend((0..15).map(|i| 800.0 + [-1.0, 2.0, -3.0][i % 3]));
//! let found = detect(&tps, &Options::default()).unwrap();
//! assert_eq!(found.len(), 1);
//! assert_eq!(found[0].index, 15);
//! assert!(found[0].relative_change < -0.15);
//! ```

use crate::dist::t_quantile;
use crate::mean::estimate_independent;
use serde::{Deserialize, Serialize};

/// How change points are searched for and which are kept.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Options {
    /// The permutation p-value at or under which a cut is a change point (0 < s < 1): on a
    /// series without change, the chance of reporting any change point at all.
    pub significance: f64,
    /// The smallest relative change kept, as a fraction (0.05 = 5 %); 0 keeps every
    /// significant change.
    pub min_magnitude: f64,
    /// The fewest points on either side of a change point (2 at least, whatever is asked: a
    /// segment needs two points for its spread).
    pub min_segment: usize,
    /// Permutations per test; the p-value moves in steps of `1 / (permutations + 1)`, and at
    /// least `1 / significance - 1` are run so that significance can be reached.
    pub permutations: usize,
    /// The permutations' seed: the same series, options and seed give the same answer.
    pub seed: u64,
}

impl Default for Options {
    /// Significance 0.01, no minimum magnitude, segments of 3 points or more, 199
    /// permutations (the default of the authors' R package `ecp`: p-values in steps of 0.005,
    /// so 0.005 and 0.010 pass at the default level) and a fixed seed.
    fn default() -> Self {
        Options {
            significance: 0.01,
            min_magnitude: 0.0,
            min_segment: 3,
            permutations: 199,
            seed: 51,
        }
    }
}

/// A segment's level: its mean with the 95 % t interval of the mean.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Level {
    /// The arithmetic mean of the segment.
    pub mean: f64,
    /// Lower end of the 95 % interval of the mean (the mean itself when the segment has no
    /// spread).
    pub lo: f64,
    /// Upper end.
    pub hi: f64,
    /// Points in the segment.
    pub n: usize,
}

/// A change point: where the level changes, how significantly, from what to what.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChangePoint {
    /// The index of the first point after the change.
    pub index: usize,
    /// The permutation p-value of the cut when it was found.
    pub p_value: f64,
    /// The level of the segment before, from the previous change point (or the start).
    pub before: Level,
    /// The level of the segment after, to the next change point (or the end).
    pub after: Level,
    /// `after.mean / before.mean - 1` (±infinity from a mean of 0).
    pub relative_change: f64,
}

/// Why a series or options cannot be searched.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ChangePointError {
    /// Fewer points than two minimal segments.
    #[error("a change point needs at least {needed} points, the series has {got}")]
    TooShort {
        /// Points needed ([`min_points`]).
        needed: usize,
        /// Points given.
        got: usize,
    },
    /// A value that is NaN or infinite.
    #[error("the value at index {index} is not a finite number")]
    NotFinite {
        /// Index of the first such value.
        index: usize,
    },
    /// An option out of its range.
    #[error("{option} {value} is out of range: {expected}")]
    BadOption {
        /// The option's name in [`Options`].
        option: &'static str,
        /// The value given.
        value: f64,
        /// What it must be.
        expected: &'static str,
    },
}

/// The fewest points in which a change point can be found: two segments of `min_segment`.
pub fn min_points(opts: &Options) -> usize {
    2 * min_segment(opts)
}

/// The permutations a test runs: `opts.permutations`, raised where needed so that the smallest
/// p-value, `1 / (permutations + 1)`, is at or under the significance level.
pub fn permutations_used(opts: &Options) -> usize {
    let needed = (1.0 / opts.significance).ceil() as usize;
    opts.permutations.max(needed.saturating_sub(1))
}

fn min_segment(opts: &Options) -> usize {
    opts.min_segment.max(2)
}

/// The change points of `series`, in index order. The options are checked before the series,
/// so `detect(&[], opts)` tells whether `opts` are usable ([`ChangePointError::BadOption`]);
/// then the first value that is not finite, then the length ([`min_points`]).
pub fn detect(series: &[f64], opts: &Options) -> Result<Vec<ChangePoint>, ChangePointError> {
    check(series, opts)?;
    let min_seg = min_segment(opts);
    let mut rng = SplitMix(opts.seed);
    // Cuts found so far with their p-values, kept sorted by index.
    let mut cuts: Vec<(usize, f64)> = Vec::new();
    loop {
        let bounds = boundaries(series.len(), &cuts);
        let Some((index, q)) = best_cut(series, &bounds, min_seg) else {
            break;
        };
        match permutation_p(series, &bounds, q, min_seg, opts, &mut rng) {
            Some(p) => {
                let at = cuts.partition_point(|&(i, _)| i < index);
                cuts.insert(at, (index, p));
            }
            None => break,
        }
    }
    drop_small(series, &mut cuts, opts.min_magnitude);
    Ok(describe(series, &cuts))
}

fn check(series: &[f64], opts: &Options) -> Result<(), ChangePointError> {
    let bad = |option, value, expected| {
        Err(ChangePointError::BadOption {
            option,
            value,
            expected,
        })
    };
    // Under 1e-6 the permutations needed (a million per test) would not end in useful time.
    if !(opts.significance >= 1e-6 && opts.significance < 1.0) {
        return bad("significance", opts.significance, "between 1e-6 and 1");
    }
    if !(opts.min_magnitude >= 0.0 && opts.min_magnitude.is_finite()) {
        return bad(
            "min_magnitude",
            opts.min_magnitude,
            "a fraction of 0 or more",
        );
    }
    if let Some(index) = series.iter().position(|x| !x.is_finite()) {
        return Err(ChangePointError::NotFinite { index });
    }
    if series.len() < min_points(opts) {
        return Err(ChangePointError::TooShort {
            needed: min_points(opts),
            got: series.len(),
        });
    }
    Ok(())
}

/// The segments' bounds `[0, c1, …, ck, n]` of the series cut at `cuts`.
fn boundaries(n: usize, cuts: &[(usize, f64)]) -> Vec<usize> {
    let mut b = Vec::with_capacity(cuts.len() + 2);
    b.push(0);
    b.extend(cuts.iter().map(|&(i, _)| i));
    b.push(n);
    b
}

/// The best cut over all segments: its index in the series and its statistic. The first
/// segment wins a tie, as the first cut within a segment does.
fn best_cut(xs: &[f64], bounds: &[usize], min_seg: usize) -> Option<(usize, f64)> {
    let mut best: Option<(usize, f64)> = None;
    for w in bounds.windows(2) {
        if let Some((tau, q)) = best_split(&xs[w[0]..w[1]], min_seg) {
            if best.is_none_or(|(_, bq)| q > bq) {
                best = Some((w[0] + tau, q));
            }
        }
    }
    best
}

/// The split `τ` of `x` maximizing Matteson and James' `Q̂(X, Y)` with `X = x[..τ]` and
/// `Y = x[τ..κ]` over every `κ` (the right end is free so that a change followed by another
/// still shows), both at least `min_seg` long; `None` when `x` is too short.
///
/// `Q̂ = mn/(m+n) · Ê`, with `Ê = 2/(mn) Σ|Xi−Yj| − 2/(n(n−1)) Σi<k |Xi−Xk| − 2/(m(m−1))
/// Σj<k |Yj−Yk|` the empirical energy distance (α = 1). All `(τ, κ)` in `O(len²)` time and
/// `O(len)` memory: `above[k]` holds `Σi<τ |xi−xk|` for the current `τ`, `left[k]` holds
/// `Σj<k |xj−xk|`, so that the within-`Y` sum grows by `left[k] − above[k]`.
fn best_split(x: &[f64], min_seg: usize) -> Option<(usize, f64)> {
    let len = x.len();
    if len < 2 * min_seg {
        return None;
    }
    let left: Vec<f64> = (0..len)
        .map(|k| x[..k].iter().map(|xj| (xj - x[k]).abs()).sum())
        .collect();
    let mut above = vec![0.0; len];
    let mut within_x = 0.0;
    let mut best: Option<(usize, f64)> = None;
    for tau in 1..=len - min_seg {
        let new = x[tau - 1];
        for (a, xk) in above.iter_mut().zip(x) {
            *a += (new - xk).abs();
        }
        within_x += left[tau - 1];
        if tau < min_seg {
            continue;
        }
        let n = tau as f64;
        let (mut between, mut within_y) = (0.0, 0.0);
        for k in tau..len {
            between += above[k];
            within_y += left[k] - above[k];
            let m = (k + 1 - tau) as f64;
            if k + 1 - tau < min_seg {
                continue;
            }
            let q =
                (2.0 * between - 2.0 * m / (n - 1.0) * within_x - 2.0 * n / (m - 1.0) * within_y)
                    / (m + n);
            if best.is_none_or(|(_, bq)| q > bq) {
                best = Some((tau, q));
            }
        }
    }
    best
}

/// The permutation p-value of a best cut of statistic `q`: the points of each segment are
/// shuffled within it (the null hypothesis: no further change inside any segment), the best
/// cut of the shuffled series found the same way, and `p = (1 + #{q* ≥ q}) / (R + 1)`.
/// `None` as soon as the p-value is sure to be above the significance level (the count is
/// what it is after every permutation, so stopping early changes no verdict).
fn permutation_p(
    xs: &[f64],
    bounds: &[usize],
    q: f64,
    min_seg: usize,
    opts: &Options,
    rng: &mut SplitMix,
) -> Option<f64> {
    let r = permutations_used(opts);
    // The bound in counts, a hair above so that 0.01 × 200 is not read as 1.999….
    let allowed = opts.significance * (r + 1) as f64 * (1.0 + 1e-9);
    let mut shuffled = xs.to_vec();
    let mut at_least = 0usize;
    for _ in 0..r {
        for w in bounds.windows(2) {
            rng.shuffle(&mut shuffled[w[0]..w[1]]);
        }
        if best_cut(&shuffled, bounds, min_seg).is_some_and(|(_, qp)| qp >= q) {
            at_least += 1;
            if (at_least + 1) as f64 > allowed {
                return None;
            }
        }
    }
    Some((at_least + 1) as f64 / (r + 1) as f64)
}

/// Merges away, the smallest first, the cuts whose relative change is under `min_magnitude`,
/// each merge changing the levels its neighbours compare.
fn drop_small(xs: &[f64], cuts: &mut Vec<(usize, f64)>, min_magnitude: f64) {
    while !cuts.is_empty() {
        let bounds = boundaries(xs.len(), cuts);
        let change = |i: usize| {
            relative(
                mean(&xs[bounds[i]..bounds[i + 1]]),
                mean(&xs[bounds[i + 1]..bounds[i + 2]]),
            )
            .abs()
        };
        let (weakest, size) = (0..cuts.len())
            .map(|i| (i, change(i)))
            .fold((0, f64::INFINITY), |a, b| if b.1 < a.1 { b } else { a });
        if size >= min_magnitude {
            break;
        }
        cuts.remove(weakest);
    }
}

fn describe(xs: &[f64], cuts: &[(usize, f64)]) -> Vec<ChangePoint> {
    let bounds = boundaries(xs.len(), cuts);
    cuts.iter()
        .enumerate()
        .map(|(i, &(index, p_value))| {
            let before = level(&xs[bounds[i]..bounds[i + 1]]);
            let after = level(&xs[bounds[i + 1]..bounds[i + 2]]);
            ChangePoint {
                index,
                p_value,
                before,
                after,
                relative_change: relative(before.mean, after.mean),
            }
        })
        .collect()
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

fn relative(before: f64, after: f64) -> f64 {
    if before == 0.0 {
        return if after == 0.0 {
            0.0
        } else {
            f64::INFINITY.copysign(after)
        };
    }
    after / before - 1.0
}

/// The segment's mean with its 95 % t interval (runs are independent: no autocorrelation
/// correction, as for any repeated runs).
fn level(xs: &[f64]) -> Level {
    let Some(e) = estimate_independent(xs) else {
        return Level {
            mean: f64::NAN,
            lo: f64::NAN,
            hi: f64::NAN,
            n: 0,
        };
    };
    let half = if e.has_uncertainty() && e.se > 0.0 {
        t_quantile(0.975, e.df()) * e.se
    } else {
        0.0
    };
    Level {
        mean: e.mean,
        lo: e.mean - half,
        hi: e.mean + half,
        n: e.n,
    }
}

/// SplitMix64 (Steele, Lea and Flood 2014): a seeded generator, the same on every machine.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Fisher–Yates; the index by multiply-and-shift (Lemire), whose bias of `n / 2⁶⁴` is
    /// far below anything a few hundred permutations could show.
    fn shuffle(&mut self, xs: &mut [f64]) {
        for i in (1..xs.len()).rev() {
            let j = ((self.next() as u128 * (i as u128 + 1)) >> 64) as usize;
            xs.swap(i, j);
        }
    }
}

#[cfg(test)]
#[path = "changepoint_tests.rs"]
mod tests;
