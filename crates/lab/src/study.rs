//! Running a study: create it (or resume it), then execute its pending cells in order,
//! starting each setup's server when the setup changes, recording every cell as it ends.

use crate::error::{SpecError, StudyError};
use crate::exec::{ensure_dataset, DatasetOutcome, Observer};
use crate::expand::{expand, Expanded, PlannedCell};
use crate::options::Transport;
use crate::os::OsGuard;
use crate::placement;
use crate::retry::CellRun;
use crate::sandboxes::{dataset_policy, start_afresh};
pub use crate::sandboxes::{sandbox_name, sandbox_spec};
use crate::settle::{settle, Owner};
use crate::spec::{self, Setup, Spec};
use crate::storage::{Mounted, StorageGuard};
use qpslab_core::{ConnectOptions, PhaseResult};
use qpslab_engine::workload::Workload;
use qpslab_probe::Sampler;
use qpslab_sandbox::{Sandbox, SandboxHome, SandboxUse};
use qpslab_store::{
    CellRecord, CellStatus, Factor, RunMeta, Store, StudyId, StudyRecord, StudyStatus,
};
use qpslab_wire::Conn;
use serde_json::json;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

mod create;
#[path = "study_io.rs"]
mod io_cell;
pub use create::{create, environment};

/// What the runner tells about a study's progress, on top of a cell's [`Observer`] events.
pub trait StudyObserver: Observer {
    /// A cell begins (`total` cells in the study).
    fn cell_started(&mut self, _cell: &CellRecord, _total: usize) {}
    /// A cell ended: its phase, or why it failed.
    fn cell_finished(&mut self, _cell: &CellRecord, _outcome: Result<&PhaseResult, &str>) {}
    /// A setup's server is up.
    fn server_started(&mut self, _setup: &str, _version: &str) {}
}

/// Run a new study, or resume an existing one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Create the study; refuse if the name exists.
    Run,
    /// Continue the study of that name; refuse if the spec changed.
    Resume,
}

/// How a study run ended.
#[derive(Clone, Debug, PartialEq)]
pub struct StudyOutcome {
    /// The study.
    pub study: StudyRecord,
    /// Cells measured now.
    pub done: usize,
    /// Cells that failed now.
    pub failed: usize,
    /// Cells already done before (resume).
    pub skipped: usize,
}

/// A parsed and expanded spec, ready to plan or run.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// The spec.
    pub spec: Spec,
    /// Its text.
    pub text: String,
    /// Its cells.
    pub expanded: Expanded,
}

/// Where the profiles of a study's cells go (study key `perf_profile`): `LAB/profiles/STUDY/`, one
/// `RUN-tTHREADS.folded` (and `.svg`, drawn by the caller) per measured cell.
pub fn profile_dir(home: &SandboxHome, study: &str) -> std::path::PathBuf {
    home.path().join("profiles").join(study)
}

/// Reads, checks and expands the spec at `path`, checking every cell's options.
pub fn load(path: &Path) -> Result<Loaded, SpecError> {
    let (spec, text) = spec::load(path)?;
    let file = path.display().to_string();
    let expanded = expand(&file, &spec)?;
    for s in &expanded.setups {
        // A target's password file is read now, so a missing one is the user's error at once.
        s.setup
            .target_options()
            .map_err(|message| SpecError::Value {
                file: file.clone(),
                message: format!("{}: {message}", s.name),
            })?;
    }
    if let Some(message) = crate::sandboxes::storage_unsupported(&expanded) {
        return Err(SpecError::Value { file, message });
    }
    for c in &expanded.cells {
        c.options.to_plan().map_err(|message| SpecError::Value {
            file: file.clone(),
            message: format!("cell {}: {message}", c.cell.label),
        })?;
    }
    Ok(Loaded {
        spec,
        text,
        expanded,
    })
}

/// The server of the setup being measured.
struct Active {
    setup: usize,
    /// Keeps the setup's `pin` applied; dropped (stopped) before the sandbox.
    placement: Option<qpslab_probe::threads::Keeper>,
    sandbox: Option<Sandbox>,
    /// The setup's replica (`replica = {...}`), whose lag the sampler measures.
    replica: Option<Sandbox>,
    /// Without a database; cells add `sbtest`.
    socket: ConnectOptions,
    tcp: Option<ConnectOptions>,
    server: qpslab_core::ServerInfo,
    sampler: Sampler,
    /// What the setup's `storage` mounted, recorded in each run's plan.
    storage: Option<Mounted>,
    /// Settled since it started and since the last prepare.
    settled: bool,
    /// The sandbox, held alone (the study restarts it) from before its mount until it stops.
    _held: Option<SandboxUse>,
}

impl Active {
    /// Settles the server unless it was settled since it started and since the last prepare;
    /// the report goes into `plan` (the cell that paid for it).
    fn settle(
        &mut self,
        target: &ConnectOptions,
        plan: &mut qpslab_core::RunPlan,
        obs: &mut dyn Observer,
        stop: &AtomicBool,
    ) -> Result<(), crate::error::ExecError> {
        let Some(s) = plan.settle.as_mut().filter(|_| !self.settled) else {
            return Ok(());
        };
        let owner = match self.sandbox {
            Some(_) => Owner::Sandbox,
            None => Owner::External,
        };
        let report = settle(target, &plan.workload, s.max_s, owner, stop)?;
        obs.message(&crate::settle::describe(&report));
        s.report = Some(report);
        self.settled = true;
        Ok(())
    }
}

/// A setup whose server did not start: its cells fail without retrying in this round.
struct Broken {
    setup: usize,
    error: String,
    log_tail: Option<String>,
}

/// Runs (or resumes) the study of `loaded` in `store`, with sandboxes under `lab`; `stop` is the
/// Ctrl-C flag. Finished cells are stored as they end; on Ctrl-C the running cell is discarded
/// and the study marked interrupted.
pub fn run_study<O: StudyObserver>(
    store: &mut Store,
    loaded: &Loaded,
    command: &str,
    mode: Mode,
    home: &SandboxHome,
    obs: &mut O,
    stop: &AtomicBool,
) -> Result<StudyOutcome, StudyError> {
    let spec = &loaded.spec;
    let id = match mode {
        Mode::Run => create_from(store, loaded, home)?,
        Mode::Resume => {
            // Refused while another process drives it; from here on this one does.
            let old = store.claim_study(&spec.name)?;
            let stored = spec::parse(&spec.name, &old.spec_toml)?;
            let changes = spec::differences(&spec::normalized(&stored), &spec::normalized(spec));
            if !changes.is_empty() {
                return Err(StudyError::SpecChanged {
                    name: spec.name.clone(),
                    changes: changes.join(", "),
                });
            }
            store.reopen_unfinished_cells(old.id)?;
            store.set_study_status(old.id, StudyStatus::Running)?;
            old.id
        }
    };
    let mut runner = Runner {
        store,
        loaded,
        home,
        command,
        study: id,
        active: None,
        broken: None,
        os: OsGuard::new(),
        storage: StorageGuard::new(),
        io_mount: None,
        undo_errors: Vec::new(),
        host: qpslab_probe::host_facts(),
    };
    for line in crate::sandboxes::clean_stale_storage(home, &spec.name, &loaded.expanded) {
        obs.message(&line);
    }
    let result = runner.run_cells(obs, stop);
    runner.stop_server();
    runner.os.restore();
    for e in std::mem::take(&mut runner.undo_errors) {
        obs.message(&format!("could not undo: {e}"));
    }
    let status = match &result {
        Ok(_) => StudyStatus::Done,
        Err(StudyError::Interrupted(_)) => StudyStatus::Interrupted,
        Err(_) => StudyStatus::Failed,
    };
    runner.store.set_study_status(id, status)?;
    let (done, failed, skipped) = result?;
    Ok(StudyOutcome {
        study: runner.store.study_by_name(&spec.name)?,
        done,
        failed,
        skipped,
    })
}

fn create_from(
    store: &mut Store,
    loaded: &Loaded,
    home: &SandboxHome,
) -> Result<StudyId, StudyError> {
    let spec = &loaded.spec;
    let factors = spec::factor_list(spec).into_iter();
    let factors = factors
        .map(|(name, levels)| Factor { name, levels })
        .collect();
    let (hash, cells) = (spec::spec_hash(spec), loaded.expanded.cells.iter());
    let cells = cells.map(|c| &c.cell);
    create(
        store,
        home,
        (&spec.name, &loaded.text, &hash),
        factors,
        cells,
    )
}

struct Runner<'a> {
    store: &'a mut Store,
    loaded: &'a Loaded,
    home: &'a SandboxHome,
    command: &'a str,
    study: StudyId,
    active: Option<Active>,
    broken: Option<Broken>,
    os: OsGuard,
    /// The mounted storage of the active setup.
    storage: StorageGuard,
    /// The setup whose storage is mounted for its fileio cells (no server), and the mount.
    io_mount: Option<(usize, Mounted)>,
    /// What the storage guard failed to undo, told at the end.
    undo_errors: Vec<String>,
    host: qpslab_core::HostFacts,
}

impl Runner<'_> {
    fn run_cells<O: StudyObserver>(
        &mut self,
        obs: &mut O,
        stop: &AtomicBool,
    ) -> Result<(usize, usize, usize), StudyError> {
        let records = self.store.study_cells(self.study)?;
        let total = records.len();
        let (mut done, mut failed, mut skipped) = (0, 0, 0);
        for rec in &records {
            if rec.status != CellStatus::Pending {
                skipped += 1;
                continue;
            }
            if stop.load(Ordering::SeqCst) {
                return Err(StudyError::Interrupted(self.loaded.spec.name.clone()));
            }
            let Some(cell) = self
                .loaded
                .expanded
                .cells
                .iter()
                .find(|c| c.cell.label == rec.cell.label)
            else {
                // The spec was compared on resume, so every stored label is in the expansion.
                self.store
                    .cell_failed(rec.id, "cell not in the spec", None)?;
                failed += 1;
                continue;
            };
            obs.cell_started(rec, total);
            self.store.cell_running(rec.id)?;
            match self.run_cell(cell, rec, obs, stop) {
                Ok(phase) => {
                    done += 1;
                    obs.cell_finished(rec, Ok(&phase));
                }
                Err(CellError::Interrupted) => {
                    self.store.reopen_unfinished_cells(self.study)?;
                    return Err(StudyError::Interrupted(self.loaded.spec.name.clone()));
                }
                Err(CellError::Store(e)) => return Err(StudyError::Store(e)),
                Err(CellError::Failed { error, log_tail }) => {
                    self.store
                        .cell_failed(rec.id, &error, log_tail.as_deref())?;
                    failed += 1;
                    obs.cell_finished(rec, Err(&error));
                    // A server that died takes its setup with it: start it again next time.
                    if let Some(a) = &self.active {
                        if let Some(sb) = &a.sandbox {
                            if qpslab_probe::process_cpu(sb.pid()).is_err() {
                                self.stop_server();
                            }
                        }
                    }
                }
            }
        }
        Ok((done, failed, skipped))
    }

    fn run_cell<O: StudyObserver>(
        &mut self,
        cell: &PlannedCell,
        rec: &CellRecord,
        obs: &mut O,
        stop: &AtomicBool,
    ) -> Result<PhaseResult, CellError> {
        let fail = |e: String| CellError::Failed {
            error: e,
            log_tail: None,
        };
        let resolved = cell.options.resolve().map_err(fail)?;
        if resolved.plan.fileio.is_some() {
            return self.run_io_cell(resolved.plan, cell.setup, rec, obs, stop);
        }
        self.ensure_server(cell.setup, obs)?;
        // Checked as it was resolved; the workload is built once the seed is resolved.
        let mut plan = resolved.plan;
        let Some(active) = self.active.as_mut() else {
            return Err(fail("no server".into()));
        };
        let mut target = match (resolved.transport, &active.tcp) {
            (Transport::Tcp, Some(t)) => t.clone(),
            _ => active.socket.clone(),
        };
        target.database.get_or_insert_with(|| "sbtest".into());
        let loaders = resolved.prepare_threads.unwrap_or_else(|| {
            crate::sizing::default_loaders(&plan.workload, &target, active.sampler.server_pid())
        });
        let exec = |e: crate::error::ExecError| {
            if e.is_interrupted() {
                CellError::Interrupted
            } else if let crate::error::ExecError::Store(s) = e {
                CellError::Store(s)
            } else {
                fail(e.to_string())
            }
        };
        let setup = &self.loaded.expanded.setups[cell.setup].setup;
        // The dataset goes where the datadir is: the setup's own filesystem, if it has one.
        let space = active.storage.as_ref().map_or(self.home.path(), |m| &m.dir);
        let policy = dataset_policy(setup, &plan, space);
        let dataset =
            ensure_dataset(&target, &plan.workload, loaders, &policy, obs).map_err(exec)?;
        if dataset == DatasetOutcome::Prepared {
            active.settled = false;
        }
        crate::exec::resolve_seed(&mut plan);
        // The plan's workload, real seed included: its unique ids follow from the stored plan.
        let workload = Workload::new(&plan.workload).map_err(|e| fail(e.to_string()))?;
        active.settle(&target, &mut plan, obs, stop).map_err(exec)?;
        plan.placement = active.placement.as_ref().map(|k| k.initial().clone());
        plan.storage = active.storage.as_ref().map(|m| m.facts.clone());
        let meta = RunMeta::new(
            plan,
            target.describe(),
            active.server.clone(),
            self.host.clone(),
            self.command.to_string(),
        )
        .in_study(&self.loaded.spec.name, &rec.cell.label);
        let profiles = resolved.profile;
        let dir = profiles.then(|| profile_dir(self.home, &self.loaded.spec.name));
        active.sampler.profile_into(dir);
        let mut cell_run = CellRun {
            store: self.store,
            cell: rec,
            target: &target,
            workload: &workload,
            sampler: &mut active.sampler,
            stop,
        };
        let m = cell_run
            .measure_until_stable(meta, resolved.retries, self.home, obs)
            .map_err(exec)?;
        self.store
            .cell_done(rec.id, m.run_id)
            .map_err(CellError::Store)?;
        Ok(m.phase)
    }

    fn stop_server(&mut self) {
        if let Some(a) = self.active.take() {
            drop(a.sampler); // its lag monitor first, then the replica, then its primary
            for sb in [a.replica, a.sandbox].into_iter().flatten() {
                let _ = sb.stop();
            }
        }
        // After the server: its files keep the filesystem busy.
        self.io_mount = None;
        let failed = self.storage.restore();
        self.undo_errors.extend(failed);
    }

    fn ensure_server<O: StudyObserver>(
        &mut self,
        setup: usize,
        obs: &mut O,
    ) -> Result<(), CellError> {
        if self.active.as_ref().is_some_and(|a| a.setup == setup) {
            return Ok(());
        }
        if let Some(b) = &self.broken {
            if b.setup == setup {
                return Err(CellError::Failed {
                    error: b.error.clone(),
                    log_tail: b.log_tail.clone(),
                });
            }
        }
        self.stop_server();
        self.broken = None;
        match self.start_server(setup, obs) {
            Ok(a) => {
                self.active = Some(a);
                Ok(())
            }
            Err(CellError::Failed { error, log_tail }) => {
                self.broken = Some(Broken {
                    setup,
                    error: error.clone(),
                    log_tail: log_tail.clone(),
                });
                Err(CellError::Failed { error, log_tail })
            }
            Err(e) => Err(e),
        }
    }

    fn start_server<O: StudyObserver>(
        &mut self,
        idx: usize,
        obs: &mut O,
    ) -> Result<Active, CellError> {
        let sc = &self.loaded.expanded.setups[idx];
        let fail = |error: String, log_tail: Option<String>| CellError::Failed { error, log_tail };
        if let Some(thp) = &sc.setup.os.thp {
            self.os.set_thp(thp).map_err(|e| fail(e, None))?;
        }
        let (mut mounted, mut held) = (None, None);
        let (sandbox, socket, tcp) = match sc.setup.target_options().map_err(|e| fail(e, None))? {
            Some(options) => (None, options, None),
            None => {
                let mut spec = sandbox_spec(&self.loaded.spec.name, &sc.name, &sc.setup)
                    .map_err(|e| fail(e, None))?;
                held = Some(SandboxUse::exclusive(self.home, &spec.name).map_err(start_error)?);
                mounted = self.mount_storage(idx, &spec.name, obs)?;
                spec.datadir_root = mounted.as_ref().map(|m| m.dir.clone());
                obs.message(&format!("starting sandbox '{}' for {}", spec.name, sc.name));
                let sb = start_afresh(self.home, &spec).map_err(start_error)?;
                let (s, t) = (sb.connect_options(), sb.tcp_options());
                (Some(sb), s, Some(t))
            }
        };
        let (replica, monitor) =
            crate::replica::for_setup(self.home, &sc.setup, &sandbox).map_err(|e| fail(e, None))?;
        let server_opts = ConnectOptions {
            database: None,
            ..socket.clone()
        };
        let mut conn = Conn::connect(&server_opts).map_err(|e| {
            fail(
                format!("connecting to {}: {e}", server_opts.describe()),
                None,
            )
        })?;
        let server = qpslab_probe::server_info(&mut conn)
            .map_err(|e| fail(format!("reading server variables: {e}"), None))?;
        obs.server_started(&sc.name, &server.version);
        self.record_server(&sc.name, &server, sandbox.as_ref(), &sc.setup)
            .map_err(CellError::Store)?;
        let pid = sandbox.as_ref().map(|s| s.pid());
        let pin = sc.setup.pin_policy().map_err(|e| fail(e, None))?;
        let placement = placement::keep(&pin, pid, &server_opts).map_err(|e| fail(e, None))?;
        Ok(Active {
            setup: idx,
            placement,
            sandbox,
            replica,
            socket,
            tcp,
            server,
            sampler: monitor.watched_by(Sampler::new(conn, pid).reconnect_to(server_opts)),
            storage: mounted,
            settled: false,
            _held: held,
        })
    }

    /// Mounts the `storage` of setup `idx` (sandbox `sandbox`), says so and records it in the
    /// study's environment with how to undo it by hand.
    fn mount_storage<O: StudyObserver>(
        &mut self,
        idx: usize,
        sandbox: &str,
        obs: &mut O,
    ) -> Result<Option<Mounted>, CellError> {
        let sc = &self.loaded.expanded.setups[idx];
        let Some(st) = &sc.setup.storage else {
            return Ok(None);
        };
        use crate::sandboxes::{describe_storage, mount_storage, storage_record};
        let failed = |error| CellError::Failed {
            error,
            log_tail: None,
        };
        let m = mount_storage(&mut self.storage, self.home, sandbox, st).map_err(failed)?;
        obs.message(&describe_storage(&sc.name, &m, &self.storage));
        let (setup, record) = (sc.name.clone(), storage_record(&m, &self.storage));
        self.update_env(|env| env["storage"][&setup] = record)
            .map_err(CellError::Store)?;
        Ok(Some(m))
    }

    fn record_server(
        &mut self,
        name: &str,
        server: &qpslab_core::ServerInfo,
        sb: Option<&Sandbox>,
        setup: &Setup,
    ) -> Result<(), qpslab_store::Error> {
        let thp = self.os.original_thp().map(str::to_string);
        let record = crate::sandboxes::server_record(server, sb, setup);
        self.update_env(|env| {
            env["servers"][name] = record;
            if let Some(t) = thp {
                env["os_toggles"]["thp"]["restore_to"] = json!(t);
            }
        })
    }

    /// Changes the study's stored environment with `f`.
    fn update_env(
        &mut self,
        f: impl FnOnce(&mut serde_json::Value),
    ) -> Result<(), qpslab_store::Error> {
        let mut study = self.store.study_by_name(&self.loaded.spec.name)?;
        f(&mut study.env);
        self.store.set_study_env(self.study, &study.env)
    }
}

enum CellError {
    Interrupted,
    Store(qpslab_store::Error),
    Failed {
        error: String,
        log_tail: Option<String>,
    },
}

fn start_error(e: qpslab_sandbox::Error) -> CellError {
    let (error, log_tail) = crate::sandboxes::start_failure(&e);
    CellError::Failed { error, log_tail }
}
