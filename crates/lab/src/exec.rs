//! Executing one measured cell: make sure the dataset is there, run the phase with telemetry on
//! every report tick, and store it at once. `qpslab run` and studies share this loop.

use crate::error::ExecError;
use qpslab_core::result::PhaseResult;
use qpslab_core::stability::{self, Stability};
use qpslab_core::{ConnectOptions, Sample, TelemetrySample, WorkloadOptions};
use qpslab_engine::prepare::{self, DatasetStatus, PrepareProgress, PrepareReport};
use qpslab_engine::workload::Workload;
use qpslab_engine::{run_phase, PhaseSpec};
use qpslab_probe::Sampler;
use qpslab_store::{RunId, RunMeta, Store};
use qpslab_wire::Conn;
use std::sync::atomic::AtomicBool;

/// Where progress goes: the CLI prints it, tests ignore it. Every method has a silent default.
pub trait Observer {
    /// A line worth showing (dataset prepared or rebuilt...).
    fn message(&mut self, _line: &str) {}
    /// Loading progress, a few times per second.
    fn prepare_progress(&mut self, _p: &PrepareProgress) {}
    /// Loading finished.
    fn prepared(&mut self, _w: &WorkloadOptions, _r: &PrepareReport, _loaders: u32) {}
    /// One report tick of the measured phase.
    fn sample(&mut self, _threads: u32, _s: &Sample) {}
}

/// An observer that shows nothing.
pub struct Quiet;
impl Observer for Quiet {}

/// What [`ensure_dataset`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DatasetOutcome {
    /// The dataset was there.
    Present,
    /// sbtest tables made by another tool (sysbench) fit and are used as they are.
    Foreign,
    /// It was missing, or differed, and was built now.
    Prepared,
}

/// Makes sure the dataset `w` describes is present on `target` (database set), preparing it
/// with `loaders` connections when it is missing or was built by qpslab with another shape. A
/// dataset built by another tool is used as it is when its shape fits, and never dropped.
pub fn ensure_dataset(
    target: &ConnectOptions,
    w: &WorkloadOptions,
    loaders: u32,
    obs: &mut dyn Observer,
) -> Result<DatasetOutcome, ExecError> {
    let status = match Conn::connect(target) {
        Ok(mut conn) => prepare::dataset_status(&mut conn, w)?,
        // The schema itself is missing: prepare creates it.
        Err(e) if e.server_code() == Some(1049) => DatasetStatus::Missing,
        Err(e) => {
            return Err(ExecError::Connect {
                target: target.describe(),
                source: e,
            })
        }
    };
    match status {
        DatasetStatus::Matches => Ok(DatasetOutcome::Present),
        DatasetStatus::Foreign => {
            obs.message("using existing sbtest tables (not created by qpslab)");
            Ok(DatasetOutcome::Foreign)
        }
        DatasetStatus::Missing => {
            obs.message(&format!(
                "dataset missing: preparing {} × {} rows",
                w.tables, w.table_size
            ));
            load_dataset(target, w, loaders, obs)?;
            Ok(DatasetOutcome::Prepared)
        }
        DatasetStatus::Different(why) => {
            obs.message(&format!("dataset differs ({why}): rebuilding it"));
            prepare::cleanup(target, None)?;
            load_dataset(target, w, loaders, obs)?;
            Ok(DatasetOutcome::Prepared)
        }
    }
}

/// Loads the dataset with `loaders` connections, reporting progress to `obs`.
pub fn load_dataset(
    target: &ConnectOptions,
    w: &WorkloadOptions,
    loaders: u32,
    obs: &mut dyn Observer,
) -> Result<PrepareReport, ExecError> {
    let report = {
        let mut progress = |p: PrepareProgress| obs.prepare_progress(&p);
        prepare::prepare(target, w, loaders, &mut progress)?
    };
    obs.prepared(w, &report, loaders);
    Ok(report)
}

/// Resolves seed 0 ("from the clock", as sysbench's `--rand-seed=0`) to a real seed, so the
/// stored plan holds the seed actually used and the cell can be repeated exactly.
pub fn resolve_seed(plan: &mut qpslab_core::RunPlan) {
    if plan.workload.rand.seed == 0 {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        plan.workload.rand.seed =
            (now.as_nanos() as u64 ^ u64::from(std::process::id()).rotate_left(32)).max(1);
    }
}

/// The default number of loader connections: two per core.
pub fn default_loaders() -> u32 {
    std::thread::available_parallelism().map_or(2, |n| n.get() as u32 * 2)
}

/// A phase measured and stored.
#[derive(Clone, Debug)]
pub struct Measured {
    /// The run it was stored in.
    pub run_id: RunId,
    /// The phase.
    pub phase: PhaseResult,
    /// Its telemetry (per tick, then whole-phase totals and perf).
    pub telemetry: Vec<TelemetrySample>,
}

/// The stability verdict of `phase`, measured under `spec` while other processes used
/// `others_cpu_share` of the machine (when known).
pub fn judge_phase(
    phase: &PhaseResult,
    spec: &PhaseSpec,
    others_cpu_share: Option<f64>,
) -> Stability {
    let client_cpus = spec.client_cpus.as_ref().map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        Vec::len,
    );
    stability::judge(
        phase,
        &stability::Facts {
            client_cpus: client_cpus as f64,
            others_cpu_share,
        },
    )
}

/// Runs one phase (warm-up, then measurement) on `target`, takes telemetry through `sampler` on
/// every report tick, and records the phase in `store` under `meta` the moment it ends. When the
/// phase fails or is interrupted nothing is stored for it.
#[allow(clippy::too_many_arguments)]
pub fn measure(
    store: &mut Store,
    meta: &RunMeta,
    target: &ConnectOptions,
    workload: &Workload,
    spec: &PhaseSpec,
    sampler: &mut Sampler,
    obs: &mut dyn Observer,
    stop: &AtomicBool,
) -> Result<Measured, ExecError> {
    sampler.begin()?;
    let host = crate::contention::HostCpu::read();
    let threads = spec.threads;
    let mut phase = {
        let mut on_sample = |s: &Sample| {
            obs.sample(threads, s);
            sampler.tick(s.elapsed_s);
        };
        run_phase(target, workload, spec, &mut on_sample, stop)?
    };
    let telemetry = sampler.finish(phase.duration_s + spec.warmup_s)?;
    let others = crate::contention::others_share(host, &telemetry);
    phase.stability = Some(judge_phase(&phase, spec, others));
    let run_id = store.record_phase(meta, &phase, &telemetry)?;
    Ok(Measured {
        run_id,
        phase,
        telemetry,
    })
}
