//! `qpslab run`'s measuring, from a resolved plan on a connected server to a stored run: the
//! server settled, then one phase per session count of the plan (or, for a replica's rate
//! search, one per rate that [`crate::run::rate_search`] asks for), each warmed up, measured and
//! stored as it runs ([`crate::run::phase`], as studies do), its live actions judged and stored, and
//! its client checked; the run is closed however it ends. Progress goes to a
//! [`SweepObserver`]; what the terminal shows at the end is returned ([`Swept`]).
//!
//! ```no_run
//! # fn demo(store: &mut qpslab_store::Store, sweep: qpslab_lab::run::sweep::Sweep,
//! #         sampler: &mut qpslab_probe::Sampler) -> Result<(), qpslab_lab::run::sweep::SweepError> {
//! struct Quiet;
//! impl qpslab_lab::run::exec::Observer for Quiet {}
//! impl qpslab_lab::run::sweep::SweepObserver for Quiet {}
//! let stop = std::sync::atomic::AtomicBool::new(false);
//! let swept = qpslab_lab::run::sweep::run(store, sweep, sampler, &mut Quiet, &stop)?;
//! println!("{} phase(s), run {:?}", swept.phases.len(), swept.run_id);
//! # Ok(()) }
//! ```

use crate::run::client_bound::{check, machine_cores, ClientCheck};
use crate::run::exec::{Measured, Observer};
use crate::run::phase::{Bench, PhaseError, RunOf};
use crate::run::rate_search::{lag_points, search, Searched};
use crate::run::settle::{settle, ServerKind};
use crate::run::unstored::keep;
use crate::run::ExecError;
use crate::server::restore::{Guard, Ledger, RestoreError};
use qpslab_core::env::ServerInfo;
use qpslab_core::live::{judge_actions, ActionRecord};
use qpslab_core::plan::SettleReport;
use qpslab_core::{ConnectOptions, PhaseResult, RunPlan};
use qpslab_engine::workload::Workload;
use qpslab_probe::Sampler;
use qpslab_store::{RunId, RunMeta, RunStatus, Store};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

/// What `qpslab run` measures, and on what.
pub struct Sweep<'a> {
    /// The resolved plan, with the threads' placement recorded when there is one.
    pub plan: RunPlan,
    /// The server (database set).
    pub target: &'a ConnectOptions,
    /// Whose server it is: a sandbox we started is settled, the user's only checked.
    pub server_kind: ServerKind,
    /// The server's facts, stored with the run.
    pub server: ServerInfo,
    /// The command line (passwords are removed again when stored).
    pub command: String,
    /// The plan's workload.
    pub workload: &'a Workload,
    /// The lab directory, whose ledger records what live actions change.
    /// The restore trail the live `set` actions are recorded in first.
    pub ledger: &'a Ledger,
    /// `run --rate-search`: the replica lag to hold, ms; the plan then has one session count.
    pub rate_search: Option<f64>,
}

/// What a finished run measured.
#[derive(Debug)]
pub struct Swept {
    /// The run as stored (its plan with the settle report and auto warm-up).
    pub meta: RunMeta,
    /// Every phase, in order.
    pub phases: Vec<PhaseResult>,
    /// The stored run (`None` when nothing was measured).
    pub run_id: Option<RunId>,
    /// What a rate search found.
    pub searched: Option<Searched>,
}

/// Why a run ended early.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// Settling, an auto warm-up or the work before the first phase failed.
    #[error(transparent)]
    Exec(#[from] ExecError),
    /// The settings the live actions change could not be recorded, or a killed process left
    /// some changed.
    #[error(transparent)]
    Restore(#[from] RestoreError),
    /// The results store failed between phases.
    #[error(transparent)]
    Store(#[from] qpslab_store::Error),
    /// The phase of `threads` sessions did not finish; the run is closed ([`Closed`]).
    #[error("{source}")]
    Unfinished {
        /// The phase's session count.
        threads: u32,
        /// How the run was closed.
        closed: Box<Closed>,
        /// Why the phase ended.
        source: ExecError,
    },
}

/// Where a run's progress goes, on top of each phase's [`Observer`] events. Every method has
/// a silent default.
pub trait SweepObserver: Observer {
    /// The server was settled (or, the user's, checked).
    fn settled(&mut self, _report: &SettleReport) {}
    /// The phase of `threads` sessions of `plan` begins (its warm-up first).
    fn phase_begins(&mut self, _plan: &RunPlan, _threads: u32) {}
    /// A phase was measured (stored or not), with what it says of its client.
    fn phase_measured(&mut self, _phase: &PhaseResult, _client: Option<&ClientCheck>) {}
    /// The phase's live actions were judged and stored.
    fn actions_judged(&mut self, _actions: &[ActionRecord]) {}
    /// A phase did not finish and the run was closed.
    fn run_closed(&mut self, _closed: &Closed) {}
}

/// Runs `sweep` on its server: settles it, records what its live actions change (in
/// `sweep.ledger`), measures every phase with telemetry from `sampler` into `store`,
/// puts the live settings back and closes the run. `stop` (Ctrl-C) ends it early.
pub fn run(
    store: &mut Store,
    sweep: Sweep,
    sampler: &mut Sampler,
    obs: &mut dyn SweepObserver,
    stop: &AtomicBool,
) -> Result<Swept, SweepError> {
    let mut plan = sweep.plan;
    if let Some(s) = plan.settle.as_mut() {
        let report = settle(
            sweep.target,
            &plan.workload,
            s.max_s,
            sweep.server_kind,
            stop,
        )?;
        obs.settled(&report);
        s.report = Some(report);
    }
    let meta = RunMeta::new(
        plan,
        sweep.target.describe(),
        sweep.server,
        qpslab_probe::host_facts(),
        sweep.command,
    );
    let guard = live_guard(sweep.ledger, sweep.target, &meta.plan, obs)?;
    let mut phases = Phases {
        bench: Bench {
            store,
            target: sweep.target,
            workload: sweep.workload,
            sampler,
            stop,
        },
        obs,
        meta,
        run_id: None,
    };
    let measured = phases.all(sweep.rate_search);
    if let Some(Err(e)) = guard.map(Guard::finish) {
        phases.obs.message(&format!("warning: {e}"));
    }
    let (results, searched) = measured?;
    let Phases {
        bench,
        meta,
        run_id,
        ..
    } = phases;
    bench.store.finish_run(&meta.uuid, RunStatus::Completed)?;
    Ok(Swept {
        meta,
        phases: results,
        run_id,
        searched,
    })
}

/// How a run that a failed or interrupted phase ended was closed.
#[derive(Debug)]
pub struct Closed {
    /// The status it was closed with.
    pub status: RunStatus,
    /// The store's file.
    pub store: PathBuf,
    /// The stored run (`None`: nothing of it was stored), or why the store could not close it.
    pub stored: Result<Option<RunId>, qpslab_store::Error>,
    /// Where the phase went that the store could not keep (`unstored::keep`), when that was
    /// the failure.
    pub kept: Option<Result<PathBuf, crate::run::unstored::UnstoredError>>,
}

/// Closes the run `meta` after `e` ended one of its phases: interrupted or failed, with what
/// was stored of it kept, and a phase the store could not take written beside it
/// (`unstored::keep`). `qpslab replay` closes its run this way too.
pub fn close(store: &mut Store, meta: &RunMeta, e: &ExecError) -> Closed {
    let status = e.run_status();
    let stored = store
        .finish_run(&meta.uuid, status)
        .and_then(|()| store.run_id_by_uuid(&meta.uuid));
    let kept = match e {
        ExecError::Unstored { measured, .. } => Some(keep(store.path(), meta, measured)),
        _ => None,
    };
    Closed {
        status,
        store: store.path().to_path_buf(),
        stored,
        kept,
    }
}

/// For live `set` actions: the variables' values recorded before the first change.
fn live_guard(
    ledger: &Ledger,
    target: &ConnectOptions,
    plan: &RunPlan,
    obs: &mut dyn SweepObserver,
) -> Result<Option<Guard>, RestoreError> {
    let Some(live) = &plan.live else {
        return Ok(None);
    };
    let server = ConnectOptions {
        database: None,
        ..target.clone()
    };
    let guard = ledger.begin_live(&server, "run --at", &live.actions)?;
    if let Some(hint) = guard.as_ref().and_then(Guard::killed_hint) {
        obs.message(&hint);
    }
    Ok(guard)
}

/// The measured phases of one run, stored as one run.
struct Phases<'a, 'o> {
    bench: Bench<'a>,
    obs: &'o mut dyn SweepObserver,
    /// What is stored with the run; a rate search changes the rate between phases.
    meta: RunMeta,
    run_id: Option<RunId>,
}

impl Phases<'_, '_> {
    /// Every phase: one per session count, or a rate search's at the one session count.
    fn all(
        &mut self,
        rate_search: Option<f64>,
    ) -> Result<(Vec<PhaseResult>, Option<Searched>), SweepError> {
        let threads = self.meta.plan.threads.clone();
        let Some(max_lag_ms) = rate_search else {
            let results = threads
                .into_iter()
                .map(|t| self.measure(t).map(|m| m.phase));
            return Ok((results.collect::<Result<_, _>>()?, None));
        };
        let given = self.meta.plan.rate.clone();
        let (results, searched) = search(given, max_lag_ms, |rate| {
            self.meta.plan.rate = Some(rate);
            let m = self.measure(threads[0])?;
            let lag = lag_points(&m.telemetry);
            Ok::<_, SweepError>((m.phase, lag))
        })?;
        Ok((results, Some(searched)))
    }

    /// Warms up, measures, stores and judges the phase of `threads` sessions.
    fn measure(&mut self, threads: u32) -> Result<Measured, SweepError> {
        self.obs.phase_begins(&self.meta.plan, threads);
        let measured =
            self.bench
                .warm_and_measure(&mut self.meta, RunOf::Sweep, threads, &mut *self.obs);
        match measured {
            Ok(mut m) => {
                self.run_id = Some(m.run_id);
                let client = check(&m.phase, &m.telemetry, machine_cores());
                self.obs.phase_measured(&m.phase, client.as_ref());
                self.judge_actions(&mut m)?;
                Ok(m)
            }
            Err(PhaseError::WarmUp(e)) => Err(e.into()),
            Err(PhaseError::Measure(e)) => {
                // Measured but not stored: the numbers are still the user's to see.
                if let ExecError::Unstored { measured: m, .. } = &e {
                    let client = check(&m.phase, &m.telemetry, machine_cores());
                    self.obs.phase_measured(&m.phase, client.as_ref());
                }
                let closed = close(self.bench.store, &self.meta, &e);
                self.obs.run_closed(&closed);
                Err(SweepError::Unfinished {
                    threads,
                    closed: Box::new(closed),
                    source: e,
                })
            }
        }
    }

    /// Judges the phase's live actions before against after, and stores the judgments.
    fn judge_actions(&mut self, m: &mut Measured) -> Result<(), SweepError> {
        let plan = &self.meta.plan;
        let Some(live) = plan.live.as_ref().filter(|l| !l.actions.is_empty()) else {
            return Ok(());
        };
        let p = &mut m.phase;
        judge_actions(&p.samples, &mut p.actions, live.settle_after_s);
        (self.bench.store).record_actions(m.run_id, m.seq, &p.actions)?;
        self.obs.actions_judged(&p.actions);
        Ok(())
    }
}
