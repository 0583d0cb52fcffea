//! Running a study: create it (or resume it), then execute its pending cells in order,
//! starting each setup's server when the setup changes, recording every cell as it ends; and
//! what `lab plan` shows before (`Loaded::plan`).

use crate::error::{SpecError, StudyError};
use crate::run::exec::Observer;
use crate::study::expand::{expand, Expanded};
pub use crate::study::sandboxes::{sandbox_name, sandbox_spec};
use crate::study::spec::Spec;
use qpslab_core::{ConnectOptions, PhaseResult};
use qpslab_host::os::OsGuard;
use qpslab_host::storage::{Mounted, StorageGuard};
use qpslab_probe::Sampler;
use qpslab_sandbox::{Sandbox, SandboxHome, SandboxUse};
use qpslab_store::{CellRecord, Factor, Store, StudyId, StudyRecord, StudyStatus};
use std::path::Path;
use std::sync::atomic::AtomicBool;

mod budget;
mod cell;
mod create;
mod estimate;
pub mod expand;
mod io_cell;
mod plan;
mod retry;
mod rounds;
pub mod sandboxes;
mod server;
pub mod spec;
pub mod stop;
pub use budget::BudgetEnd;
pub use create::{create, environment};
pub use estimate::{
    estimate, pilot, pilot_name, ComparisonEstimate, Estimate, EstimateError, Matched, Source,
};
pub use plan::{CellPlan, Plan, PlanDoc};
pub use rounds::{ComparisonState, RoundReport, RoundTracker};

/// What the runner tells about a study's progress, on top of a cell's [`Observer`] events.
pub trait StudyObserver: Observer {
    /// A cell begins (`total` cells in the study).
    fn cell_started(&mut self, _cell: &CellRecord, _total: usize) {}
    /// A cell ended: its phase, or why it failed.
    fn cell_finished(&mut self, _cell: &CellRecord, _outcome: Result<&PhaseResult, &str>) {}
    /// A setup's server is up.
    fn server_started(&mut self, _setup: &str, _version: &str) {}
    /// A round ended: each comparison's interval so far and the budget's state.
    fn round_finished(&mut self, _report: &RoundReport) {}
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
    /// Cells of rounds the study did not need (its comparisons were precise, or the budget
    /// could not pay for them), removed from the study.
    pub not_needed: usize,
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
    load_with(path, &[])
}

/// [`load`] with top-level keys given on the command line (`precision = "5%"`), each a TOML
/// line put before the spec's own text, so the study stores them with it; a key the spec
/// sets itself is refused.
pub fn load_with(path: &Path, top_keys: &[(&str, String)]) -> Result<Loaded, SpecError> {
    let (spec, text) = spec::load(path)?;
    let file = path.display().to_string();
    let (spec, text) = if top_keys.is_empty() {
        (spec, text)
    } else {
        let given = spec::normalized(&spec);
        let mut lines = String::new();
        for (key, toml) in top_keys {
            if given.get(*key).is_some() {
                return Err(SpecError::Value {
                    file,
                    message: format!("{key} is set in the spec and on the command line; keep one"),
                });
            }
            lines.push_str(&format!("{key} = {toml}\n"));
        }
        let text = format!("{lines}{text}");
        let dir = path.parent().unwrap_or(Path::new(""));
        let spec = crate::options::with_base_dir(dir, || spec::parse(&file, &text))?;
        (spec, text)
    };
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
    if let Some(message) = crate::study::sandboxes::storage_unsupported(&expanded) {
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
    // The budget counts from here: what is set up for the study is spent from it too.
    let started = std::time::Instant::now();
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
        started,
        stop_s: None,
    };
    for line in crate::study::sandboxes::clean_stale_storage(home, &spec.name, &loaded.expanded) {
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
    let (done, failed, skipped, not_needed) = result?;
    Ok(StudyOutcome {
        study: runner.store.study_by_name(&spec.name)?,
        done,
        failed,
        skipped,
        not_needed,
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
    /// When the study started, for its budget.
    started: std::time::Instant,
    /// Seconds the last server stop took, until the budget has been told.
    stop_s: Option<f64>,
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
    let (error, log_tail) = crate::study::sandboxes::start_failure(&e);
    CellError::Failed { error, log_tail }
}
