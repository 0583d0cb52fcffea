//! The gate for CI (`qpslab history SERIES --check`): do the newest points of a series show
//! a regression of throughput beyond a margin?
//!
//! The newest points are the segment after the series' last change point, and the gate reads
//! that change point: it fails when it lowered throughput by more than the margin, and passes
//! otherwise (no change point, a smaller drop, or a rise). This is the question a CI job asks
//! of each new build, as continuous-benchmarking tools gate (Apache Otava, MongoDB's
//! change-point gating): did the series step down, and is that step the newest one? A drop
//! stays the newest change point, failing every later gate, until the series changes again;
//! a rise after it, even one that makes up only part of the drop, passes (the history shows
//! both levels). A drop accepted on purpose (a feature that costs throughput) is left behind
//! by gating from a run after it (`--since RUN`).

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
    let newest_run = stable().next_back().map_or(0, |p| p.run);
    let pct = |x: f64| format!("{:+.1}%", x * 100.0);
    let margin_text = format!("{}%", margin * 100.0);
    let last = s.change_points.last();
    let regression = last.filter(|c| c.relative_change < -margin);
    let message = match (regression, last) {
        (Some(c), _) => format!(
            "regression in {}: throughput {} at run {} ({}) after run {} ({}): {:.1} → {:.1} tps \
             (p = {:.3}), the newest change point (newest run {newest_run}; margin {margin_text})",
            s.key,
            pct(c.relative_change),
            c.run_after,
            c.x_after,
            c.run_before,
            c.x_before,
            c.before.mean,
            c.after.mean,
            c.p_value
        ),
        (None, Some(c)) => format!(
            "no regression in {}: the newest change point, at run {} ({}), changed throughput \
             {} ({:.1} → {:.1} tps; newest run {newest_run}, margin {margin_text})",
            s.key,
            c.run_after,
            c.x_after,
            pct(c.relative_change),
            c.before.mean,
            c.after.mean
        ),
        (None, None) => format!(
            "no regression in {}: no change point (newest run {newest_run}, {:.1} tps, margin \
             {margin_text})",
            s.key, newest_tps
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
