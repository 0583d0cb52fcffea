//! One pending cell after another: each one's server made ready, its dataset prepared and
//! its server settled, then measured until stable and stored as it ends.

use super::{profile_dir, Active, CellError, RoundTracker, Runner, StudyObserver};
use crate::dataset::check::{ensure_dataset, DatasetOutcome};
use crate::error::StudyError;
use crate::options::Transport;
use crate::run::exec::Observer;
use crate::run::phase::Bench;
use crate::run::settle::{settle, ServerKind};
use crate::study::expand::PlannedCell;
use crate::study::sandboxes::dataset_policy;
use qpslab_core::{ConnectOptions, PhaseResult};
use qpslab_engine::workload::Workload;
use qpslab_store::{CellId, CellRecord, CellStatus, RunMeta};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// The least a cell takes: its fixed warm-up and its phase's time, as planned (0 where the
/// phase ends on a count of events).
fn planned_s(cell: &PlannedCell) -> f64 {
    cell.options.resolve().map_or(0.0, |r| {
        r.plan.warmup_s.max(0.0) + r.plan.stop.time_s.unwrap_or(0.0).max(0.0)
    })
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
    ) -> Result<(), crate::run::ExecError> {
        let Some(s) = plan.settle.as_mut().filter(|_| !self.settled) else {
            return Ok(());
        };
        let owner = match self.sandbox {
            Some(_) => ServerKind::Sandbox,
            None => ServerKind::External,
        };
        let report = settle(target, &plan.workload, s.max_s, owner, stop)?;
        obs.message(&crate::run::settle::describe(&report));
        s.report = Some(report);
        self.settled = true;
        Ok(())
    }
}

impl Runner<'_> {
    /// Runs the pending cells round by round; a study with a precision target skips the
    /// cells of comparisons already precise and the rounds its budget cannot pay for, and
    /// removes them from the study. A resumed study's cells done before are paired with the
    /// new ones (and their time spent from the budget). Returns cells done, failed, done
    /// before, not needed.
    pub(super) fn run_cells<O: StudyObserver>(
        &mut self,
        obs: &mut O,
        stop: &AtomicBool,
    ) -> Result<(usize, usize, usize, usize), StudyError> {
        let records = self.store.study_cells(self.study)?;
        let total = records.len();
        let rule = self
            .loaded
            .spec
            .stop_rule()
            .map_err(|e| crate::error::SpecError::Value {
                file: self.loaded.spec.name.clone(),
                message: e.to_string(),
            })?;
        let mut rounds = RoundTracker::new(&rule, &records).counting_from(self.started);
        // A resumed study decides on every round it measured, before the resume too.
        let mut earlier = self.earlier_phases(&records)?;
        let (mut done, mut failed, mut skipped) = (0, 0, 0);
        let mut not_needed = Vec::new();
        let mut round = 0;
        // Whether a cell of the current round was measured: only such rounds are reported.
        let mut measured = false;
        for rec in &records {
            if rec.cell.repeat != round {
                if std::mem::take(&mut measured) {
                    obs.round_finished(&rounds.report());
                }
                round = rec.cell.repeat;
                rounds.start_round(round);
            }
            if rec.status != CellStatus::Pending {
                if let Some((phase, seconds)) = earlier.remove(&rec.id) {
                    rounds.record_earlier(rec, &phase, seconds);
                }
                skipped += 1;
                continue;
            }
            let cell = self
                .loaded
                .expanded
                .cells
                .iter()
                .find(|c| c.cell.label == rec.cell.label);
            if !rounds.needed_at_least(rec, cell.map_or(0.0, planned_s)) {
                not_needed.push(rec.id);
                continue;
            }
            if stop.load(Ordering::SeqCst) {
                return Err(StudyError::Interrupted(self.loaded.spec.name.clone()));
            }
            let Some(cell) = cell else {
                // The spec was compared on resume, so every stored label is in the expansion.
                self.store
                    .cell_failed(rec.id, "cell not in the spec", None)?;
                failed += 1;
                continue;
            };
            obs.cell_started(rec, total);
            self.store.cell_running(rec.id)?;
            let started = Instant::now();
            let outcome = self.run_cell(cell, rec, obs, stop);
            if let Some(s) = self.stop_s.take() {
                rounds.record_stop(s);
            }
            match outcome {
                Ok(phase) => {
                    done += 1;
                    measured = true;
                    rounds.record(rec, &phase, started.elapsed().as_secs_f64());
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
                    rounds.record_failed();
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
        if measured {
            obs.round_finished(&rounds.report());
        }
        if let Some(end) = rounds.budget_end() {
            obs.message(&end.describe());
            let record = end.record();
            self.update_env(|env| env["budget"] = record)?;
        }
        let dropped = self.store.drop_pending_cells(&not_needed)?;
        Ok((done, failed, skipped, dropped))
    }

    /// The phases of the cells measured before a resume, with the seconds each took then.
    fn earlier_phases(
        &self,
        records: &[CellRecord],
    ) -> Result<HashMap<CellId, (PhaseResult, f64)>, StudyError> {
        if records.iter().all(|r| r.status != CellStatus::Done) {
            return Ok(HashMap::new());
        }
        Ok(self
            .store
            .cell_figures(self.study)?
            .into_iter()
            .filter(|f| f.cell.status == CellStatus::Done)
            .filter_map(|f| {
                let seconds = match (f.cell.started_at, f.cell.finished_at) {
                    (Some(s), Some(e)) if e >= s => e - s,
                    _ => 0.0,
                };
                Some((f.cell.id, (f.phase?, seconds)))
            })
            .collect())
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
        let resolved = cell.options.resolve().map_err(|e| fail(e.to_string()))?;
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
        // `max_allowed_packet` reaches the cell's connection as `run --max-allowed-packet` does.
        if let Some(size) = resolved.max_allowed_packet {
            target.max_allowed_packet = size;
        }
        let loaders = resolved.prepare_threads.unwrap_or_else(|| {
            crate::dataset::loaders::default_loaders(
                &plan.workload,
                &target,
                active.sampler.server_pid(),
            )
        });
        let exec = |e: crate::run::ExecError| {
            if e.is_interrupted() {
                CellError::Interrupted
            } else if let crate::run::ExecError::Store(s) = e {
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
        crate::run::exec::resolve_seed(&mut plan);
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
        // A study that runs rounds until precise pairs a round a busy neighbour marked.
        let adaptive = self.loaded.spec.stop_rule().is_ok_and(|r| r.adaptive());
        let profiles = resolved.profile;
        let dir = profiles.then(|| profile_dir(self.home, &self.loaded.spec.name));
        active.sampler.profile_into(dir);
        let mut bench = Bench {
            store: self.store,
            target: &target,
            workload: &workload,
            sampler: &mut active.sampler,
            stop,
        };
        let m = bench
            .measure_until_stable(rec, meta, (resolved.retries, adaptive), self.home, obs)
            .map_err(exec)?;
        self.store
            .cell_done(rec.id, m.run_id)
            .map_err(CellError::Store)?;
        Ok(m.phase)
    }
}
