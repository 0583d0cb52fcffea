//! Measuring configurations: a search trial is one engine phase with the configuration applied
//! (its throughput goes to the trial history only); the confirmation's measurements go through
//! the lab's `exec::measure` as the cells of the session's proof study, created by the lab's
//! `study::create` and stored like any study, one round at a time ([`Bench::proof_round`]),
//! each phase with its stability verdict.

use crate::apply::Applier;
use crate::confirm::{self, ProofVariant};
use crate::search::Config;
use crate::{Observer, Target, TuneError};
use qpslab_core::cell::Cell;
use qpslab_core::RunPlan;
use qpslab_engine::workload::Workload;
use qpslab_lab::run::exec::Interval;
use qpslab_lab::ExecError;
use qpslab_sandbox::SandboxHome;
use qpslab_store::{CellRecord, RunId, RunMeta, Store, StudyId, StudyStatus, TuneTrial};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// What one search trial measured: its throughput.
#[derive(Clone, Debug)]
pub struct TrialResult {
    /// Transactions per second.
    pub tps: f64,
    /// Per report interval.
    pub per_interval: Vec<f64>,
}

/// The server, the workload and the store a session measures with.
pub struct Bench<'a> {
    /// The server tuned.
    pub target: &'a Target<'a>,
    /// The trial's plan.
    pub plan: RunPlan,
    /// The workload measured.
    pub workload: &'a Workload,
    /// Its sessions.
    pub threads: u32,
    /// The settings as the tuner left them, and what to put back.
    pub applier: Applier,
    /// Where trials and the proof study go.
    pub store: &'a mut Store,
    /// The session's name, also its proof study's.
    pub session: String,
    /// Trials recorded so far.
    pub seq: u32,
    /// Seconds a trial costs beyond its measured time (settings, warm-up, ramp), as seen.
    pub overhead_s: f64,
    /// The command line stored with the proof study's runs.
    pub command: &'a str,
    /// The caller's stop flag (Ctrl-C).
    pub stop: &'a AtomicBool,
}

impl Bench<'_> {
    /// Measures `config` for `secs` seconds (after the plan's warm-up) and records the trial.
    pub fn trial(
        &mut self,
        config: &Config,
        secs: f64,
        phase: &str,
        obs: &mut dyn Observer,
    ) -> Result<TrialResult, TuneError> {
        let started = Instant::now();
        self.applier.apply(config)?;
        let mut plan = qpslab_lab::run::sizing::placed(
            &self.plan,
            self.target.options,
            self.target.server_pid,
        );
        plan.stop.time_s = Some(secs);
        let cell = format!("trial {} ({phase})", self.seq + 1);
        let result = qpslab_engine::run_phase(
            self.target.options,
            &plan,
            self.workload,
            self.threads,
            &mut |s| {
                obs.interval(&Interval {
                    run: &self.session,
                    cell: Some(&cell),
                    threads: self.threads,
                    sample: s,
                    telemetry: &[],
                });
            },
            self.stop,
        );
        let result = result.map_err(ExecError::from)?;
        self.stop_if_interrupted()?;
        let took = started.elapsed().as_secs_f64();
        self.overhead_s = self.overhead_s.max(took - secs);
        let m = phase_tps(&result);
        self.record(phase, config, (m.tps, result.duration_s), None)?;
        Ok(m)
    }

    /// Measures `a` and `b` in `pairs` pairs that alternate which goes first, as search trials
    /// of `secs` (phase `phase`); the throughputs of each side, pair by pair.
    pub fn pairs(
        &mut self,
        [a, b]: [&Config; 2],
        pairs: u32,
        (secs, phase): (f64, &str),
        obs: &mut dyn Observer,
    ) -> Result<[Vec<f64>; 2], TuneError> {
        let mut sides = [Vec::new(), Vec::new()];
        for side in confirm::order(pairs) {
            let second = side == ProofVariant::Tuned;
            let config = if second { b } else { a };
            let m = self.trial(config, secs, phase, obs)?;
            sides[usize::from(second)].push(m.tps);
        }
        Ok(sides)
    }

    fn record(
        &mut self,
        phase: &str,
        config: &Config,
        m: (f64, f64),
        run: Option<RunId>,
    ) -> Result<(), TuneError> {
        self.seq += 1;
        let t = TuneTrial {
            seq: self.seq,
            phase: phase.to_string(),
            settings: config.clone(),
            tps: m.0,
            duration_s: m.1,
            run_id: run,
        };
        self.store.record_tune_trial(&self.session, &t)?;
        Ok(())
    }

    /// Creates the proof study named after the session (`spec`: its spec, the environment
    /// read in `home`) with `max_rounds` rounds of cells in the confirmation's order; the
    /// rounds not run are removed when it closes ([`Bench::close_proof`]).
    pub fn open_proof(
        &mut self,
        max_rounds: u32,
        (spec, home): (&str, &SandboxHome),
    ) -> Result<Proof, TuneError> {
        let order = confirm::order(max_rounds);
        let cells = study_cells(&order);
        let name = (self.session.as_str(), spec, self.session.as_str());
        let id = qpslab_lab::study::create(self.store, home, name, Vec::new(), &cells)
            .map_err(TuneError::Study)?;
        let records = self.store.study_cells(id)?;
        Ok(Proof {
            id,
            cells: records.into_iter().zip(order).collect(),
            next: 0,
        })
    }

    /// Measures the proof study's next round: baseline and `config` in the round's order, each
    /// a cell of the study and a trial of the session.
    pub fn proof_round(
        &mut self,
        proof: &mut Proof,
        config: &Config,
        obs: &mut dyn Observer,
    ) -> Result<confirm::Round, TuneError> {
        let started = Instant::now();
        let (mut tps, mut stable) = ([0.0; 2], true);
        let end = (proof.next + 2).min(proof.cells.len());
        for (rec, side) in &proof.cells[proof.next..end] {
            let chosen = match side {
                ProofVariant::Baseline => Config::new(),
                ProofVariant::Tuned => config.clone(),
            };
            let (m, run, fit) = self.measure_cell(&chosen, &rec.cell.label, obs)?;
            self.store.cell_done(rec.id, run)?;
            let phase = format!("confirm {}", side.name());
            let secs = self.plan.stop.time_s.unwrap_or(0.0);
            self.record(&phase, &chosen, (m, secs), Some(run))?;
            tps[usize::from(*side == ProofVariant::Tuned)] = m;
            stable &= fit;
        }
        proof.next = end;
        Ok(confirm::Round {
            baseline: tps[0],
            tuned: tps[1],
            stable,
            seconds: started.elapsed().as_secs_f64(),
        })
    }

    /// Ends the proof study: the cells of rounds not run removed (as a study that stopped on
    /// its precision removes them), `conclusion` added to its environment under
    /// `confirmation`, and its status done.
    pub fn close_proof(
        &mut self,
        proof: Proof,
        conclusion: serde_json::Value,
    ) -> Result<(), TuneError> {
        let unused: Vec<_> = proof.cells[proof.next..].iter().map(|c| c.0.id).collect();
        self.store.drop_pending_cells(&unused)?;
        let mut env = self.store.study_by_name(&self.session)?.env;
        if let Some(env) = env.as_object_mut() {
            env.insert("confirmation".into(), conclusion);
        }
        self.store.set_study_env(proof.id, &env)?;
        self.store.set_study_status(proof.id, StudyStatus::Done)?;
        Ok(())
    }

    fn measure_cell(
        &mut self,
        config: &Config,
        label: &str,
        obs: &mut dyn Observer,
    ) -> Result<(f64, RunId, bool), TuneError> {
        self.applier.apply(config)?;
        let server_options = self.target.server_options();
        let mut control = qpslab_wire::Conn::connect(&server_options)?;
        let server =
            qpslab_probe::server_info(&mut control).map_err(|source| TuneError::Probe {
                doing: "reading server variables",
                source,
            })?;
        let meta = RunMeta::new(
            self.plan.clone(),
            self.target.options.describe(),
            server,
            qpslab_probe::host_facts(),
            self.command.to_string(),
        )
        .in_study(&self.session, label);
        let mut sampler = qpslab_probe::Sampler::new(control, self.target.server_pid)
            .reconnect_to(server_options);
        let m = qpslab_lab::run::exec::measure(
            self.store,
            &meta,
            self.target.options,
            self.workload,
            self.threads,
            &mut sampler,
            &mut Intervals(obs),
            self.stop,
        )
        .map_err(|source| TuneError::Measure {
            label: label.to_string(),
            study: self.session.clone(),
            source: Box::new(source),
        })?;
        self.store
            .finish_run(&meta.uuid, qpslab_store::RunStatus::Completed)?;
        self.stop_if_interrupted()?;
        // Paired as a study pairs it: a busy neighbour alone leaves the round in.
        let fit = m.phase.stability.as_ref().is_none_or(|s| s.fit_to_pair());
        Ok((m.phase.tps(), m.run_id, fit))
    }

    /// A signal stops the session between measurements, as the engine stops within one.
    fn stop_if_interrupted(&self) -> Result<(), TuneError> {
        if self.stop.load(Ordering::SeqCst) {
            return Err(ExecError::Run(qpslab_engine::RunError::Interrupted).into());
        }
        Ok(())
    }
}

/// The proof study being measured: its cells, each with its side, and the next to run.
pub struct Proof {
    id: StudyId,
    cells: Vec<(CellRecord, ProofVariant)>,
    next: usize,
}

/// Passes a confirmation measurement's intervals to the session's observer; nothing else of
/// it is shown.
struct Intervals<'a>(&'a mut dyn Observer);

impl qpslab_lab::run::exec::Observer for Intervals<'_> {
    fn interval(&mut self, i: &Interval<'_>) {
        self.0.interval(i);
    }
}

fn phase_tps(p: &qpslab_core::result::PhaseResult) -> TrialResult {
    TrialResult {
        tps: p.tps(),
        per_interval: p
            .samples
            .iter()
            .filter(|s| s.interval_s > 0.0)
            .map(|s| s.events as f64 / s.interval_s)
            .collect(),
    }
}

/// The proof study's cells: `baseline/r1`, `tuned/r1`, `tuned/r2`, `baseline/r2`...
fn study_cells(order: &[ProofVariant]) -> Vec<Cell> {
    let mut seen: BTreeMap<&str, u32> = BTreeMap::new();
    order
        .iter()
        .enumerate()
        .map(|(i, side)| {
            let n = seen.entry(side.name()).or_default();
            *n += 1;
            Cell {
                seq: i as u32 + 1,
                label: format!("{}/r{n}", side.name()),
                variant: side.name().to_string(),
                levels: BTreeMap::new(),
                params: BTreeMap::new(),
                repeat: *n,
            }
        })
        .collect()
}
