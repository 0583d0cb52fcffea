//! The gate for CI (`qpslab history SERIES --check`): do the newest points of a series show
//! a regression of throughput beyond a margin?
//!
//! The newest level is the segment after the series' last change point. The gate fails when
//! the last change point that lowered throughput by more than the margin has not been made
//! good since: the newest level is still more than the margin below the level before that
//! drop. A drop followed by a recovery passes; a drop followed by a partial recovery still
//! fails. A drop accepted on purpose (a feature that costs throughput) is left behind by
//! gating from a run after it (`--since RUN`).

use super::{Change, HistoryError, Series};
use serde::Serialize;

/// What the gate decided.
#[derive(Clone, Debug, Serialize)]
pub struct Verdict {
    /// The series' key.
    pub series: String,
    /// The margin, as a fraction.
    pub margin: f64,
    /// The newest level's mean throughput (all searched points when there is no change point).
    pub newest_tps: f64,
    /// The drop not made good, when there is one: the gate fails.
    pub regression: Option<Change>,
    /// One line saying what was decided and why.
    pub message: String,
}

impl Verdict {
    /// Whether the gate passes.
    pub fn passed(&self) -> bool {
        self.regression.is_none()
    }
}

/// The gate's verdict on `s` with `margin` (a fraction, 0.05 for 5 %).
pub fn check(s: &Series, margin: f64) -> Result<Verdict, HistoryError> {
    if !(0.0..1.0).contains(&margin) {
        return Err(HistoryError::Bad(format!(
            "--margin: from 0% to under 100%, not {}%",
            margin * 100.0
        )));
    }
    if s.searched < s.needed {
        return Err(super::too_short(s));
    }
    let stable = || s.points.iter().filter(|p| p.unstable.is_none());
    let newest_tps = match s.change_points.last() {
        Some(c) => c.after.mean,
        None => stable().map(|p| p.tps).sum::<f64>() / s.searched as f64,
    };
    let newest_run = stable().last().map_or(0, |p| p.run);
    let drop = s
        .change_points
        .iter()
        .rev()
        .find(|c| c.relative_change < -margin);
    let pct = |x: f64| format!("{:+.1}%", x * 100.0);
    let regression = drop.filter(|c| newest_tps < c.before.mean * (1.0 - margin));
    let message = match (&regression, drop) {
        (Some(c), _) => format!(
            "regression in {}: throughput {} at run {} ({}) after run {} ({}): {:.1} → {:.1} tps \
             (p = {:.3}); the newest level, to run {newest_run}, is {} against the level before",
            s.key,
            pct(c.relative_change),
            c.run_after,
            c.x_after,
            c.run_before,
            c.x_before,
            c.before.mean,
            c.after.mean,
            c.p_value,
            pct(newest_tps / c.before.mean - 1.0)
        ),
        (None, Some(c)) => format!(
            "no regression in {}: the drop at run {} ({}) was made good; the newest level, to \
             run {newest_run}, is {} against the level before it (margin {})",
            s.key,
            c.run_after,
            pct(c.relative_change),
            pct(newest_tps / c.before.mean - 1.0),
            pct(margin).trim_start_matches('+')
        ),
        (None, None) => format!(
            "no regression in {}: no change point lowered throughput by more than {} (newest \
             run {newest_run}, {:.1} tps)",
            s.key,
            pct(margin).trim_start_matches('+'),
            newest_tps
        ),
    };
    Ok(Verdict {
        series: s.key.clone(),
        margin,
        newest_tps,
        regression: regression.cloned(),
        message,
    })
}
