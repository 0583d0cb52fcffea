//! A fileio run stored as it is measured (`qpslab io`): the phase begun in the results store,
//! each interval appended as fio reports it, and the run closed however it ends: completed,
//! or interrupted (a signal) or failed, with the intervals measured until then kept.

use super::{measure, IoError, IoRun, Measured};
use qpslab_core::result::Sample;
use qpslab_store::{RunId, RunMeta, RunStatus, Store};
use std::sync::atomic::AtomicBool;

/// Why a stored I/O run ended early.
#[derive(Debug, thiserror::Error)]
pub enum StoredIoError {
    /// The results store failed.
    #[error(transparent)]
    Store(#[from] qpslab_store::Error),
    /// The run could not run or finish; the run is closed as interrupted or failed.
    #[error(transparent)]
    Io(IoError),
}

/// Measures `run` ([`measure`]) as the run `meta` in `store`, handing each interval to `each`
/// before it is stored; returns what was measured and the stored run. `stop` ends it early.
pub fn measure_stored(
    store: &mut Store,
    meta: &RunMeta,
    run: &IoRun<'_>,
    stop: &AtomicBool,
    mut each: impl FnMut(&Sample),
) -> Result<(Measured, RunId), StoredIoError> {
    let mut handle = store.begin_phase(meta, run.timing.threads)?;
    let measured = measure(run, stop, |s| {
        each(s);
        store
            .append_interval(&mut handle, s, &[])
            .map_err(|e| IoError::Sink(format!("results store: {e}")))
    });
    let m = match measured {
        Ok(m) => m,
        Err(e) => {
            let status = match e {
                IoError::Interrupted => RunStatus::Interrupted,
                _ => RunStatus::Failed,
            };
            store.interrupt_phase(&handle)?;
            store.finish_run(&meta.uuid, status)?;
            return Err(StoredIoError::Io(e));
        }
    };
    store.finish_phase(&handle, &m.phase, &[])?;
    store.finish_run(&meta.uuid, RunStatus::Completed)?;
    Ok((m, handle.run_id))
}
