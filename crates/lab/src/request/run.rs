//! `qpslab run` as one call: the target resolved ([`super::target`]: the embedded sandbox
//! started, the connection flags applied), the `--profile` checks, the results store opened
//! (only once the input is known to be valid, so rejected input writes nothing), the server
//! readied ([`crate::run::ready`]: facts, leftover settings, limits, dataset, replica lag
//! monitor, thread placement), the sweep measured and stored ([`crate::run::sweep`]), and the placement stopped.
//! The caller resolves its input into a [`RunRequest`], watches through a [`RunObserver`] and
//! renders the [`RunOutcome`], then stops the sandbox it holds ([`Connected::finish`]); a run
//! that fails stops it (or keeps it, with `--keep`) before it returns.

use super::profile;
use super::target::{Connected, TargetRequest};
use super::RunError;
use crate::run::exec::Observer;
use crate::run::ready::{Ready, ReadyError, Readying};
use crate::run::settle::ServerKind;
use crate::run::sweep::{Sweep, SweepObserver, Swept};
use crate::server::placement::{RunKeeper, RunPlaced};
use crate::server::restore::Ledger;
use qpslab_core::placement::Policy;
use qpslab_core::{ConnectOptions, RunPlan};
use qpslab_engine::workload::Workload;
use qpslab_sandbox::SandboxHome;
use qpslab_store::Store;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// What `qpslab run` measures, on what, and where it is stored.
pub struct RunRequest<'a> {
    /// The resolved plan.
    pub plan: RunPlan,
    /// The plan's workload.
    pub workload: &'a Workload,
    /// Loader connections for a dataset built now (`None`: the default for the server).
    pub loaders: Option<u32>,
    /// The server: a sandbox of ours (started now for the embedded default) or the user's.
    pub target: TargetRequest,
    /// The target options as typed (no password), for the commands an error names.
    pub target_args: Vec<String>,
    /// The lab directory: its sandboxes and the ledger of changed settings.
    pub lab: &'a SandboxHome,
    /// `--replica`: a sandbox of this lab or a DSN whose lag is watched.
    pub replica: Option<&'a str>,
    /// The run's own thread placement (`--pin`).
    pub pin: Policy,
    /// Where the phases' flame graphs go (`--profile`).
    pub profile: Option<PathBuf>,
    /// The results store, created when missing.
    pub store: &'a Path,
    /// The command line as typed (passwords removed).
    pub command: String,
    /// `--rate-search`: the replica lag to hold, ms.
    pub rate_search: Option<f64>,
}

/// What a run measured, for the caller to render.
pub struct RunOutcome {
    /// The sweep as stored.
    pub swept: Swept,
    /// The store it is in.
    pub store: Store,
    /// The server, holding the sandbox started for this run: the caller renders, then stops
    /// it with [`Connected::finish`].
    pub target: Connected,
}

/// Where a run's progress goes: readying and the sweep report to observers of their own, and
/// the thread placement says what it placed as it starts and as it stops.
pub trait RunObserver {
    /// A line about the target: the embedded sandbox starting, or kept.
    fn note(&mut self, _line: &str) {}
    /// Connected: how sessions reach the server.
    fn connected(&mut self, _options: &ConnectOptions) {}
    /// Where readying the server reports (the dataset loading).
    fn readying(&mut self) -> &mut dyn Observer;
    /// Where the sweep reports.
    fn sweeping(&mut self) -> &mut dyn SweepObserver;
    /// The run's thread placement started (`--pin`).
    fn placement_started(&mut self, _keeper: &RunKeeper) {}
    /// The run's thread placement stopped, once the sweep ended (finished or not).
    fn placement_stopped(&mut self, _done: &RunPlaced) {}
}

/// Runs `req`: resolves the target (starting the embedded sandbox), checks `--profile`, opens
/// the store, readies the server and measures and stores the sweep, reporting to `obs`; `stop`
/// (Ctrl-C) ends it early. A failed run stops the sandbox it started (a failure to stop is
/// left unsaid: the run's error is the one to report).
pub fn run(
    req: RunRequest,
    obs: &mut dyn RunObserver,
    stop: &AtomicBool,
) -> Result<RunOutcome, RunError> {
    let target = super::target::resolve(&req.target, req.lab, &mut |line| obs.note(line))
        .map_err(RunError::Target)?;
    obs.connected(&target.options);
    match measure(req, &target, obs, stop) {
        Ok((swept, store)) => Ok(RunOutcome {
            swept,
            store,
            target,
        }),
        Err(e) => {
            let _ = target.finish(&mut |line| obs.note(line));
            Err(e)
        }
    }
}

/// The run on the connected `target`: the store, readying and the sweep.
fn measure(
    req: RunRequest,
    target: &Connected,
    obs: &mut dyn RunObserver,
    stop: &AtomicBool,
) -> Result<(Swept, Store), RunError> {
    let RunRequest {
        mut plan,
        workload,
        loaders,
        target: _,
        target_args,
        lab,
        replica,
        pin,
        profile,
        store,
        command,
        rate_search,
    } = req;
    let mut server = target.server(lab, &target_args);
    // Only the sandbox started for this command is settled as ours.
    let started = target.sandbox.is_some();
    if let Some(dir) = &profile {
        profile::find_server(&mut server);
        if let Some(s) = server.sandbox.as_mut() {
            s.pid = s.pid.or(server.pid);
        }
        profile::check(dir, &server).map_err(RunError::Profile)?;
    }
    let target_args = server.target_args.to_vec();
    let db = store;
    let mut store = Store::open(db).map_err(RunError::Store)?;
    // The settings a run changes (`--at` set) are recorded where every host sharing its store
    // looks for them: in that store when it is a server's.
    let ledger = Ledger::for_store(lab.path(), db).map_err(|e| RunError::Ready {
        source: Box::new(ReadyError::Restore(e)),
        target_args: target_args.clone(),
    })?;
    let readying = Readying {
        server,
        lab,
        ledger: &ledger,
        loaders,
        replica,
        pin: &pin,
        profile,
        dataset: crate::dataset::ready::shard_dataset,
    };
    let Ready {
        server: facts,
        mut sampler,
        placement,
        hold: _hold,
    } = crate::run::ready::ready(readying, &mut plan, workload, obs.readying()).map_err(
        |source| RunError::Ready {
            source: Box::new(source),
            target_args: target_args.clone(),
        },
    )?;
    // Before anything is measured: a store on the server under test is refused here.
    store.guard_target(&facts).map_err(RunError::Store)?;
    if let Some(keeper) = &placement {
        obs.placement_started(keeper);
    }
    let label = plan.workload.label();
    let sweep = Sweep {
        plan,
        target: server.target,
        // Only the sandbox started for this command is settled as ours.
        server_kind: if started {
            ServerKind::Sandbox
        } else {
            ServerKind::External
        },
        server: facts,
        command,
        workload,
        ledger: &ledger,
        rate_search,
    };
    let swept = crate::run::sweep::run(&mut store, sweep, &mut sampler, obs.sweeping(), stop);
    if let Some(done) = placement.and_then(|mut k| k.finish()) {
        obs.placement_stopped(&done);
    }
    match swept {
        Ok(swept) => Ok((swept, store)),
        Err(source) => Err(RunError::Sweep {
            label,
            target_args,
            source: Box::new(source),
        }),
    }
}
