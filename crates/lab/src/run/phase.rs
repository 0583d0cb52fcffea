//! One measured phase, taken the one way `qpslab run`'s sweep and a study cell's attempts
//! (`retry`) both take it: the auto warm-up when the plan asks for one, then the phase
//! measured and stored as it runs ([`crate::run::exec::measure`]).

use crate::run::exec::{measure, Measured, Observer};
use crate::run::warmup::auto_warmup;
use crate::run::ExecError;
use qpslab_core::ConnectOptions;
use qpslab_engine::workload::Workload;
use qpslab_probe::Sampler;
use qpslab_store::{RunMeta, Store};
use std::sync::atomic::AtomicBool;

/// Whose run a phase is stored under, which decides what its auto warm-up leaves in the
/// stored plan and when the run starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunOf {
    /// A run of several phases (`qpslab run`'s sweep): its plan keeps the first phase's
    /// warm-up time, and it started when it was described.
    Sweep,
    /// A run of its own (a study cell's attempt): its plan holds this warm-up's time, and it
    /// starts when the server is warm.
    Attempt,
}

/// Why a phase was not measured: the warm-up before it failed (nothing of the phase is
/// stored), or the phase itself did (what it measured is kept, see [`crate::run::exec::measure`]).
#[derive(Debug, thiserror::Error)]
pub enum PhaseError {
    /// The auto warm-up failed or was interrupted.
    #[error(transparent)]
    WarmUp(ExecError),
    /// The measured phase failed or was interrupted.
    #[error(transparent)]
    Measure(ExecError),
}

impl From<PhaseError> for ExecError {
    fn from(e: PhaseError) -> ExecError {
        match e {
            PhaseError::WarmUp(e) | PhaseError::Measure(e) => e,
        }
    }
}

/// What a phase is measured with: the store, the server, its workload and telemetry; the
/// same for `qpslab run`'s phases and a study cell's attempts.
pub struct Bench<'a> {
    /// Where the phase is stored as it is measured.
    pub store: &'a mut Store,
    /// The server (database set).
    pub target: &'a ConnectOptions,
    /// The workload of the plan.
    pub workload: &'a Workload,
    /// Telemetry on every report tick (it knows the server's pid).
    pub sampler: &'a mut Sampler,
    /// Raised to stop the warm-up or the phase (Ctrl-C).
    pub stop: &'a AtomicBool,
}

impl Bench<'_> {
    /// Warms the server up when `meta.plan` asks for an auto warm-up (reporting its time to
    /// `obs` and recording it in `meta.plan` as `run` says), then measures the phase of
    /// `threads` sessions and stores it under `meta` as it runs.
    pub fn warm_and_measure(
        &mut self,
        meta: &mut RunMeta,
        run: RunOf,
        threads: u32,
        obs: &mut dyn Observer,
    ) -> Result<Measured, PhaseError> {
        if let Some(max_s) = meta.plan.warmup_auto.as_ref().map(|a| a.max_s) {
            let pid = self.sampler.server_pid();
            let warm = crate::run::sizing::placed(&meta.plan, self.target, pid);
            let took = auto_warmup(self.target, &warm, self.workload, threads, max_s, self.stop)
                .map_err(PhaseError::WarmUp)?;
            obs.warmed_up(threads, took);
            let recorded = meta.plan.warmup_auto.as_mut().filter(|a| match run {
                RunOf::Sweep => a.took_s.is_none(),
                RunOf::Attempt => true,
            });
            if let Some(a) = recorded {
                a.took_s = Some(took);
            }
            if run == RunOf::Attempt {
                *meta = meta.another(meta.plan.clone());
            }
        }
        measure(
            self.store,
            meta,
            self.target,
            self.workload,
            threads,
            self.sampler,
            obs,
            self.stop,
        )
        .map_err(PhaseError::Measure)
    }
}
