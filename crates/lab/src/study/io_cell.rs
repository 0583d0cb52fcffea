//! A study's fileio cell (`workload = "fileio"`): fio in the cell's directory
//! ([`qpslab_host::io::cell_dir`]), no server started, the phase stored as the cell's run as it is
//! measured ([`qpslab_host::io::stored::measure_stored`]), so a killed cell keeps its intervals.

use super::{CellError, Runner, StudyObserver};
use qpslab_core::{PhaseResult, RunPlan, ServerInfo};
use qpslab_host::io::{job::Timing, IoError, IoRun};
use qpslab_store::{CellRecord, RunMeta};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

fn failed(error: String) -> CellError {
    CellError::Failed {
        error,
        log_tail: None,
    }
}

impl Runner<'_> {
    /// Measures the fileio cell `rec` of setup `setup` with `plan` (measured once: fio's runs
    /// are not re-measured when unstable; the verdict is stored with the phase).
    pub(super) fn run_io_cell<O: StudyObserver>(
        &mut self,
        mut plan: RunPlan,
        setup: usize,
        rec: &CellRecord,
        obs: &mut O,
        stop: &AtomicBool,
    ) -> Result<PhaseResult, CellError> {
        plan.report_interval_s = qpslab_host::io::job::status_interval(plan.report_interval_s);
        let options = plan
            .fileio
            .clone()
            .ok_or_else(|| failed("not fileio".into()))?;
        let dir = self.io_dir(setup, obs)?;
        plan.storage = self.io_mount.as_ref().map(|(_, m)| m.facts.clone());
        let name = &self.loaded.spec.name;
        std::fs::create_dir_all(&dir).map_err(|e| failed(format!("{}: {e}", dir.display())))?;
        let time_s = plan
            .stop
            .time_s
            .filter(|t| *t > 0.0)
            .ok_or_else(|| failed("fileio needs a time".into()))?;
        let run = IoRun {
            options: &options,
            timing: Timing {
                threads: plan.threads.first().copied().unwrap_or(1),
                time_s,
                interval_s: plan.report_interval_s,
            },
            dir: &dir,
            files: qpslab_host::io::Files::Temporary,
        };
        let target = format!("files in {}", dir.display());
        let meta = RunMeta::new(
            plan,
            target,
            ServerInfo::default(),
            self.host.clone(),
            self.command.to_string(),
        )
        .in_study(name, &rec.cell.label);
        let stored = qpslab_host::io::stored::measure_stored(self.store, &meta, &run, stop, |_| {})
            .map_err(|e| match e {
                IoError::Interrupted => CellError::Interrupted,
                IoError::Store(e) => CellError::Store(e),
                e => failed(e.to_string()),
            })?;
        let (id, m) = (stored.run_id, stored.measured);
        let verdict = m.phase.stability.clone().unwrap_or_default();
        let reason = (!verdict.is_stable()).then(|| verdict.to_string());
        let store = &mut *self.store;
        store
            .record_attempt(rec.id, id, reason.as_deref())
            .map_err(CellError::Store)?;
        store.cell_done(rec.id, id).map_err(CellError::Store)?;
        Ok(m.phase)
    }

    /// Where a fileio cell of `setup` puts its files: on the setup's `storage`, mounted for it
    /// (a server of another cell is stopped first: nothing else runs while fio measures), else
    /// [`qpslab_host::io::cell_dir`].
    fn io_dir<O: StudyObserver>(
        &mut self,
        setup: usize,
        obs: &mut O,
    ) -> Result<PathBuf, CellError> {
        let sc = &self.loaded.expanded.setups[setup];
        if self.active.is_some() || self.io_mount.as_ref().is_some_and(|(s, _)| *s != setup) {
            self.stop_server();
        }
        if sc.setup.storage.is_none() {
            return Ok(qpslab_host::io::cell_dir(
                self.home.path(),
                &self.loaded.spec.name,
                &sc.name,
            ));
        }
        if self.io_mount.is_none() {
            let name = crate::study::sandboxes::sandbox_name(&self.loaded.spec.name, &sc.name);
            let mounted = self.mount_storage(setup, &name, obs)?;
            self.io_mount = mounted.map(|m| (setup, m));
        }
        let (_, m) = self
            .io_mount
            .as_ref()
            .ok_or_else(|| failed("storage not mounted".into()))?;
        Ok(m.dir.join("fileio"))
    }
}
