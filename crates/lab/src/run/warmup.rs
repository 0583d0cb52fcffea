//! `--warmup auto`: warm up until throughput stops moving.
//!
//! The engine's warm-up is a fixed time. Auto warm-up runs one extra engine phase of at most
//! `max_s` seconds, watching its per-interval throughput: once the last [`WINDOW`] intervals
//! show no significant trend (or one too small to matter) it ends that phase and the measured
//! phase follows, with its own short fixed warm-up for its new sessions.

use crate::run::ExecError;
use qpslab_core::plan::StopCondition;
use qpslab_core::{ConnectOptions, RunPlan, Sample};
use qpslab_engine::workload::Workload;
use qpslab_engine::{run_phase, RunError};
use qpslab_stats::{fit, t_quantile};
use std::sync::atomic::{AtomicBool, Ordering};

/// Intervals the trend test looks at.
pub const WINDOW: usize = 5;
/// A change over the window smaller than this does not matter, significant or not.
const FLAT_PCT: f64 = 5.0;

/// True when the last [`WINDOW`] rates (events per second, one per interval of `interval_s`)
/// have no trend that is both significant (the least-squares slope against Student's t at a
/// two-sided 5%) and larger than [`FLAT_PCT`] over the window.
pub fn is_flat(rates: &[f64], interval_s: f64) -> bool {
    if rates.len() < WINDOW {
        return false;
    }
    let last = &rates[rates.len() - WINDOW..];
    let pts: Vec<(f64, f64)> = last
        .iter()
        .enumerate()
        .map(|(i, r)| (i as f64 * interval_s, *r))
        .collect();
    let Some((slope, se, mean)) = fit(&pts) else {
        return false;
    };
    let change_pct = slope * WINDOW as f64 * interval_s / mean * 100.0;
    let significant = se == 0.0 || (slope / se).abs() > t_quantile(0.975, (WINDOW - 2) as f64);
    !(significant && change_pct.abs() > FLAT_PCT)
}

/// Runs `threads` sessions of `plan`'s workload (built as `workload`) until their throughput
/// is flat, at most `max_s` seconds; returns the seconds it took. Ctrl-C (`stop`) is seen once
/// per interval.
pub fn auto_warmup(
    target: &ConnectOptions,
    plan: &RunPlan,
    workload: &Workload,
    threads: u32,
    max_s: f64,
    stop: &AtomicBool,
) -> Result<f64, ExecError> {
    let warm = RunPlan {
        warmup_s: 0.0,
        stop: StopCondition {
            time_s: Some(max_s.max(plan.report_interval_s)),
            events: None,
        },
        ..plan.clone()
    };
    let done = AtomicBool::new(false);
    let mut rates = Vec::new();
    let mut took = 0.0;
    let mut on_sample = |s: &Sample| {
        took = s.elapsed_s;
        if s.interval_s > 0.0 {
            rates.push(s.events as f64 / s.interval_s);
        }
        if stop.load(Ordering::SeqCst) || is_flat(&rates, plan.report_interval_s) {
            done.store(true, Ordering::SeqCst);
        }
    };
    match run_phase(target, &warm, workload, threads, &mut on_sample, &done) {
        Ok(p) => Ok(p.duration_s),
        Err(RunError::Interrupted) if !stop.load(Ordering::SeqCst) => Ok(took),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_only_once_the_rise_is_over() {
        let rising = [100.0, 300.0, 500.0, 700.0, 900.0, 1000.0];
        assert!(!is_flat(&rising, 1.0));
        let mut settled = rising.to_vec();
        settled.extend([1010.0, 990.0, 1005.0, 1000.0]);
        assert!(!is_flat(&settled[..7], 1.0));
        assert!(is_flat(&settled, 1.0));
        // Noise is flat: no significant slope.
        assert!(is_flat(&[1000.0, 700.0, 1200.0, 800.0, 1100.0], 1.0));
        assert!(!is_flat(&[1000.0; 4], 1.0));
    }
}
