//! Executing one measured cell: make sure the dataset is there, run the phase with telemetry on
//! every report tick, and store it as it is measured. `qpslab run` and studies share this loop.

use crate::error::ExecError;
use qpslab_core::result::PhaseResult;
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

/// Runs one phase (warm-up, then measurement) on `target`, takes telemetry through `sampler` on
/// every report tick, and writes it to `store` under `meta` as it is measured: the phase row
/// before the warm-up, each interval's sample and telemetry tick as the engine reports it, the
/// summary and histograms at the end. When the phase fails or is interrupted, what was measured
/// is kept and the phase is closed as `interrupted` (see `Store::interrupt_phase`).
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
    let threads = spec.threads;
    let mut handle = store.begin_phase(meta, threads)?;
    let mut write_error = None;
    let result = {
        let mut on_sample = |s: &Sample| {
            obs.sample(threads, s);
            sampler.tick(s.elapsed_s);
            if write_error.is_some() {
                return;
            }
            if let Err(e) = store.append_interval(&mut handle, s, sampler.ticks().last()) {
                obs.message(&format!(
                    "warning: results store: {e}; the phase is written when it ends"
                ));
                write_error = Some(e);
            }
        };
        run_phase(target, workload, spec, &mut on_sample, stop)
    };
    let finished = result.map_err(ExecError::from).and_then(|phase| {
        let telemetry = sampler.finish(phase.duration_s + spec.warmup_s)?;
        Ok((phase, telemetry))
    });
    let (phase, telemetry) = match finished {
        Ok(done) => done,
        Err(e) => {
            // The phase's own error is the one to report; a store failure here is secondary
            // (the run then stays `running` until its process is found dead).
            let _ = store.interrupt_phase(&handle);
            return Err(e);
        }
    };
    store.finish_phase(&handle, &phase, &telemetry)?;
    Ok(Measured {
        run_id: handle.run_id,
        phase,
        telemetry,
    })
}
