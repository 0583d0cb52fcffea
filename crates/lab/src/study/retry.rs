//! Measuring one study cell until it is stable: each attempt is a run of its own (auto warm-up
//! first when asked, through `crate::run::phase` as `qpslab run`'s phases), judged, and recorded as
//! the cell's next attempt; an unstable one is measured again, at most `retries` more times.
//! The cell uses the first stable attempt, or, when none was, the least disturbed one (a busy
//! neighbour counts less than a stall, trend or spikes in its own samples; the later one on a
//! tie), never chosen by its own numbers. The settings a cell's `set` actions change are
//! recorded before the first attempt (`restore`).

use crate::run::contention::wait_quiet;
use crate::run::exec::{Measured, Observer};
use crate::run::phase::{Bench, PhaseError, RunOf};
use crate::run::sweep::close;
use crate::run::ExecError;
use crate::server::restore::{Guard, Ledger};
use qpslab_sandbox::SandboxHome;
use qpslab_store::{CellRecord, RunMeta, RunStatus};
use std::time::{Duration, Instant};

/// A study cell is measured with the [`Bench`] that `qpslab run`'s phases use.
impl Bench<'_> {
    /// Measures `cell` (runs described by `base`, each attempt [`RunMeta::another`] of it)
    /// until an attempt is stable or `retries` more attempts were made; returns the attempt the
    /// cell uses. Every attempt is stored with its verdict. The settings its `set` actions
    /// change are recorded in the ledger of `lab` first (`crate::server::restore`). With
    /// `keep_contended` (a study that runs rounds until precise) an attempt whose only mark is
    /// a busy neighbour is kept: the round pairing uses it and measures that noise as spread,
    /// so waiting for quiet and measuring again would only spend the budget.
    pub(crate) fn measure_until_stable(
        &mut self,
        cell: &CellRecord,
        base: RunMeta,
        (retries, keep_contended): (u32, bool),
        lab: &SandboxHome,
        obs: &mut dyn Observer,
    ) -> Result<Measured, ExecError> {
        // The settings the cell's `set` actions change are recorded in the lab first.
        let live = base.plan.live.as_ref().map_or(&[][..], |l| &l.actions[..]);
        let guard = Ledger::in_lab(lab.path()).begin_live(self.target, "lab run", live)?;
        if let Some(hint) = guard.as_ref().and_then(Guard::killed_hint) {
            obs.message(&hint);
        }
        let m = self.attempts(cell, base, (retries, keep_contended), obs)?;
        if let Some(Err(e)) = guard.map(Guard::finish) {
            obs.message(&format!("warning: {e}"));
        }
        Ok(m)
    }

    fn attempts(
        &mut self,
        cell: &CellRecord,
        base: RunMeta,
        (retries, keep_contended): (u32, bool),
        obs: &mut dyn Observer,
    ) -> Result<Measured, ExecError> {
        let mut plan = base.plan.clone();
        let threads = plan.threads[0];
        let attempts = 1 + retries;
        let mut attempt = 1;
        let mut best: Option<(f64, Measured)> = None;
        loop {
            let mut meta = base.another(plan.clone());
            let measured = self.warm_and_measure(&mut meta, RunOf::Attempt, threads, obs);
            let m = match measured {
                Ok(m) => m,
                // Nothing of the attempt was stored.
                Err(PhaseError::WarmUp(e)) => return Err(e),
                Err(PhaseError::Measure(e)) => {
                    // What the attempt measured before it stopped is kept under its run (resume
                    // replaces it); the run says how it ended. A phase the store would not take
                    // (locked, full) is written beside it, as `qpslab run`'s is.
                    let closed = close(self.store, &meta, &e);
                    match closed.kept {
                        Some(Ok(path)) => obs.message(&format!(
                            "the store could not keep the phase: kept in {}",
                            path.display()
                        )),
                        Some(Err(why)) => obs.message(&format!(
                            "the store could not keep the phase, nor could it be written \
                             elsewhere: {why}"
                        )),
                        None => {}
                    }
                    return Err(e);
                }
            };
            self.store.finish_run(&meta.uuid, RunStatus::Completed)?;
            let verdict = m.phase.stability.clone().unwrap_or_default();
            let reason = (!verdict.is_stable()).then(|| verdict.to_string());
            self.store
                .record_attempt(cell.id, m.run_id, reason.as_deref())?;
            if reason.is_none()
                || client_bound_only(&verdict)
                || (keep_contended && verdict.fit_to_pair())
            {
                return Ok(m);
            }
            let score = disturbance(&verdict);
            if best.as_ref().is_none_or(|(s, _)| score <= *s) {
                best = Some((score, m));
            }
            if attempt == attempts {
                // Some attempt is kept: `best` was just set if it was empty.
                return best.map(|(_, m)| m).ok_or(ExecError::NoAttempt);
            }
            attempt += 1;
            obs.message(&format!(
                "{}: {verdict}: measuring again ({attempt} of {attempts})",
                cell.cell.label
            ));
            // Settling is not repeated: the disturbance came from outside the server.
            if let Some(s) = plan.settle.as_mut() {
                s.report = None;
            }
            if verdict
                .reasons
                .iter()
                .any(|r| matches!(r, qpslab_core::Instability::Contended { .. }))
            {
                self.wait_for_quiet(obs);
            }
        }
    }

    /// A busy neighbour disturbed the last attempt: measuring again at once would meet it
    /// again, so wait (bounded) until the machine is quiet.
    fn wait_for_quiet(&mut self, obs: &mut dyn Observer) {
        obs.message("other processes are using the CPUs: waiting for them to finish");
        let waited = Instant::now();
        let seen = wait_quiet(self.sampler.server_pid(), QUIET_WAIT_MAX, self.stop);
        let secs = waited.elapsed().as_secs_f64();
        match seen {
            Some((share, true)) => obs.message(&format!(
                "quiet after {secs:.0} s (others use {:.0}% of the CPUs)",
                share * 100.0
            )),
            Some((share, false)) => obs.message(&format!(
                "still busy after {secs:.0} s (others use {:.0}% of the CPUs): measuring anyway",
                share * 100.0
            )),
            None => {}
        }
    }
}

/// The client, not a disturbance, set the phase's ceiling: measuring again would meet the same
/// client, so the verdict stands as the cell's result (shown wherever the cell is).
fn client_bound_only(v: &qpslab_core::Stability) -> bool {
    v.reasons.iter().all(|r| {
        matches!(
            r,
            qpslab_core::Instability::ClientBound { .. }
                | qpslab_core::Instability::ClientSaturated { .. }
        )
    })
}

/// The longest wait for a busy machine to quiet down before measuring a cell again.
const QUIET_WAIT_MAX: Duration = Duration::from_secs(60);

/// How disturbed an unstable attempt was: two per reason seen in its own samples (a stall, a
/// trend or spikes distort its numbers outright), and the share of the machine other processes
/// took when that is the reason (a neighbour slows a phase evenly).
fn disturbance(v: &qpslab_core::Stability) -> f64 {
    v.reasons
        .iter()
        .map(|r| match r {
            qpslab_core::Instability::Contended { share } => *share,
            _ => 2.0,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use qpslab_core::{Instability, Stability};

    #[test]
    fn a_client_bound_cell_is_not_measured_again_but_a_disturbed_one_is() {
        let bound = Instability::ClientBound {
            saturated: 1,
            loops: 1,
            busiest: 0.98,
        };
        assert!(client_bound_only(&Stability {
            reasons: vec![bound.clone()]
        }));
        assert!(!client_bound_only(&Stability {
            reasons: vec![bound, Instability::Trend { change_pct: 20.0 }]
        }));
    }

    #[test]
    fn a_stall_is_worse_than_a_busy_neighbour() {
        let v = |reasons| Stability { reasons };
        let stall = v(vec![Instability::Stall {
            at_s: 1.0,
            duration_s: 0.5,
        }]);
        let busy = v(vec![Instability::Contended { share: 0.9 }]);
        let quieter = v(vec![Instability::Contended { share: 0.6 }]);
        assert!(disturbance(&busy) < disturbance(&stall));
        assert!(disturbance(&quieter) < disturbance(&busy));
    }
}
