//! The statistics of qpslab: every statistical formula the lab, the reports and the stability
//! verdict use lives here, on top of statrs, and nothing here knows of runs, studies or servers.
//!
//! - Distributions (`dist.rs`): quantiles of the standard normal and of Student's t (fractional
//!   degrees of freedom allowed), and the two-sided p-value of a t statistic.
//! - Means (`mean.rs`): an [`Estimate`] (mean, standard error, effective sample size) of an
//!   autocorrelated series ([`estimate`], [`effective_sample_size`]) or of independent
//!   observations ([`estimate_independent`]); Welch's interval of a [`difference`]; the
//!   interval of a linear [`contrast`] of independent estimates.
//! - Ratios (`ratio.rs`): the [`Ratio`] `b / a` with its interval on the log scale
//!   ([`ratio`], [`ratio_of_logs`], [`log_of_mean`]), paired ratios ([`paired_ratio`],
//!   [`ratio_of_log_mean`]), the minimum detectable effect ([`mde_pct`]) and the repeats that
//!   would bring it under a bound ([`repeats_needed`]).
//! - Anytime-valid intervals (`sequence.rs`): an [`AnytimeDesign`] builds a confidence
//!   sequence for the mean of round-paired log ratios (Robbins' normal mixture, Howard et al.
//!   2021), valid at every round at once, so a study may stop when it is precise enough.
//! - Planned looks (`looks.rs`): a [`LookDesign`] gives repeated confidence intervals at looks
//!   every few rounds (Pocock's boundary, Jennison and Turnbull 1989), valid at all of them at
//!   once and narrower than the sequence for a study that decides only at its looks.
//! - Decisions (`decide.rs`): a study's [`Sequential`] rule gives a round-paired
//!   comparison one interval (the sequence's, or paired t for fixed rounds) and one
//!   [`Decision`], and says when it is settled: answered at the precision asked.
//! - Trends (`trend.rs`): Mann–Kendall's statistic ([`mann_kendall_z`]), the Theil–Sen slope
//!   ([`theil_sen_slope`]) and a least-squares line with its slope's standard error ([`fit`]).
//! - Samples (`sample.rs`): [`median`], [`upper_quartile`] and the nearest-rank
//!   [`nearest_rank`] quantile.
//! - Multiple tests (`holm.rs`): Holm's step-down correction ([`holm`]).
//! - Change points (module [`changepoint`]): where a series of runs changes level, by
//!   E-divisive means with a permutation test (Matteson and James 2014), with each segment's
//!   level and interval.
//!
//! Its parts, file by file (the crate map in docs/ARCHITECTURE.md points here): every statistical
//! formula, on statrs: normal and t quantiles and p-values (`dist.rs`), means with
//! autocorrelation-aware standard errors, Welch differences and linear contrasts (`mean.rs`),
//! ratio intervals on the log scale, paired ratios, minimum detectable effects and repeats needed
//! (`ratio.rs`), Mann–Kendall, Theil–Sen and least-squares trends (`trend.rs`), medians and
//! quantiles of samples (`sample.rs`), Holm's correction (`holm.rs`), confidence sequences for
//! round-paired log ratios (`sequence.rs`), repeated confidence intervals at planned looks with
//! Pocock's boundary computed by numerical integration (`looks.rs`), and a study's one rule for a
//! comparison's interval, its answer and when it is settled (`decide.rs`, read by the study's
//! rounds and by every report).
//!
//! ```
//! use qpslab_stats::{estimate_independent, ratio};
//! let a = estimate_independent(&[100.0, 102.0, 98.0]).unwrap();
//! let b = estimate_independent(&[120.0, 123.0, 118.0]).unwrap();
//! let r = ratio(&a, &b, 0.95).unwrap();
//! assert!(r.excludes_one() && r.low > 1.0);
//! ```

pub mod changepoint;
mod decide;
mod dist;
mod holm;
mod looks;
mod mean;
#[cfg(test)]
mod normals;
mod ratio;
mod sample;
mod sequence;
mod trend;

pub use decide::{half_log, Decision, Sequential};
pub use dist::{normal_cdf, normal_quantile, t_p_value, t_quantile};
pub use holm::holm;
pub use looks::{crossing_probability, pocock_boundary, LookDesign, LookDesignError, MAX_LOOKS};
pub use mean::{
    contrast, difference, effective_sample_size, estimate, estimate_independent, Difference,
    Estimate,
};
pub use ratio::{
    log_of_mean, mde_pct, paired_ratio, ratio, ratio_of_log_mean, ratio_of_logs, repeats_needed,
    Ratio, POWER,
};
pub use sample::{median, nearest_rank, upper_quartile};
pub use sequence::{
    anytime_p_value, fixed_t_multiplier, mixing_r2, normal_mixture_boundary, AnytimeDesign,
    AnytimeInterval, MIN_ROUNDS,
};
pub use trend::{fit, mann_kendall_z, theil_sen_slope};
