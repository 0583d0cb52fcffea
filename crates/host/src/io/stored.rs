//! An I/O phase written to the results store as fio reports it, through the store's one
//! sequence for phases measured live: [`Store::begin_phase`], [`Store::append_interval`] per
//! report, [`Store::finish_phase`] (or [`Store::interrupt_phase`] on a signal or an error).
//! `qpslab io` and a study's fileio cells both measure through [`measure_stored`], so a kill
//! (even `kill -9`) keeps every interval already measured: the store closes a dead process's
//! run from them as `interrupted` the next time it is opened, as for any other phase.

use super::{measure, FioMeasured, IoError, IoRun};
use qpslab_core::result::Sample;
use qpslab_store::{RunId, RunMeta, RunStatus, Store};
use std::sync::atomic::AtomicBool;

/// A measured I/O phase and the run it is stored under.
#[derive(Clone, Debug)]
pub struct Stored {
    /// The run the phase was stored in.
    pub run_id: RunId,
    /// The phase, and fio's last report.
    pub measured: FioMeasured,
}

/// Measures `run` like [`measure`] and stores it in `store` under `meta` as it is measured:
/// the run's row and a `running` phase first, each interval as fio reports it (handed to
/// `on_sample` too), then the phase's summary, and the run marked completed. When the run
/// fails or `stop` is raised, the intervals stored so far are kept as an `interrupted` phase
/// (none stored: nothing is kept) and the run is marked interrupted or failed. A store failure
/// while appending stops fio ([`IoError::Sink`]).
pub fn measure_stored(
    store: &mut Store,
    meta: &RunMeta,
    run: &IoRun<'_>,
    stop: &AtomicBool,
    mut on_sample: impl FnMut(&Sample),
) -> Result<Stored, IoError> {
    let mut handle = store.begin_phase(meta, run.timing.threads)?;
    let measured = measure(run, stop, |s| {
        on_sample(s);
        store
            .append_interval(&mut handle, s, &[])
            .map_err(|e| IoError::Sink(format!("results store: {e}")))
    });
    let measured = match measured {
        Ok(m) => m,
        Err(e) => {
            let status = match e {
                IoError::Interrupted => RunStatus::Interrupted,
                _ => RunStatus::Failed,
            };
            store.interrupt_phase(&handle)?;
            store.finish_run(&meta.uuid, status)?;
            return Err(e);
        }
    };
    store.finish_phase(&handle, &measured.phase, &[])?;
    store.finish_run(&meta.uuid, RunStatus::Completed)?;
    Ok(Stored {
        run_id: handle.run_id,
        measured,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::job::Timing;
    use qpslab_core::fileio::{FileIoOptions, FileTestMode};
    use qpslab_core::workload::{WorkloadKind, WorkloadOptions};
    use qpslab_core::{HostFacts, RunPlan, ServerInfo};
    use std::sync::atomic::Ordering;

    fn meta(options: &FileIoOptions) -> RunMeta {
        let mut plan = RunPlan::new(WorkloadOptions::new(WorkloadKind::OltpReadOnly));
        plan.fileio = Some(options.clone());
        let host = HostFacts::default();
        RunMeta::new(
            plan,
            "files".into(),
            ServerInfo::default(),
            host,
            "t".into(),
        )
    }

    /// With the real fio: a whole phase is stored done; one stopped after two reports keeps
    /// those two intervals as an interrupted phase of an interrupted run.
    #[test]
    fn intervals_are_stored_as_fio_reports_them() {
        let tmp = tempfile::tempdir().unwrap();
        let mut store = Store::open(&tmp.path().join("r.db")).unwrap();
        let options = FileIoOptions {
            mode: FileTestMode::RndRd,
            total_size: 4 << 20,
            num: 2,
            ..Default::default()
        };
        let run = |time_s| IoRun {
            options: &options,
            timing: Timing {
                threads: 1,
                time_s,
                interval_s: 1.0,
            },
            dir: tmp.path(),
            files: crate::io::Files::Temporary,
        };
        let never = AtomicBool::new(false);
        let whole = meta(&options);
        let done = measure_stored(&mut store, &whole, &run(2.0), &never, |_| {}).unwrap();
        let stored = store.load_run(done.run_id).unwrap();
        assert_eq!(stored.status, RunStatus::Completed);
        assert_eq!(store.phase_statuses(done.run_id).unwrap(), ["done"]);
        assert_eq!(stored.phases[0].result.samples, done.measured.phase.samples);

        let stop = AtomicBool::new(false);
        let mut seen = 0;
        let cut = meta(&options);
        let e = measure_stored(&mut store, &cut, &run(30.0), &stop, |_| {
            seen += 1;
            if seen == 2 {
                stop.store(true, Ordering::SeqCst);
            }
        })
        .unwrap_err();
        assert!(matches!(e, IoError::Interrupted), "{e}");
        let id = store.run_id_by_uuid(&cut.uuid).unwrap().unwrap();
        let stored = store.load_run(id).unwrap();
        assert_eq!(stored.status, RunStatus::Interrupted);
        assert_eq!(store.phase_statuses(id).unwrap(), ["interrupted"]);
        assert_eq!(stored.phases[0].result.samples.len(), 2);
    }
}
