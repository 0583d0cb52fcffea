//! Executing one measured cell: run the phase with telemetry on every report tick, and store it
//! as it is measured (its dataset is made present first: [`crate::dataset`]). `qpslab run` and
//! studies share this loop.

use crate::run::live::Live;
pub use crate::run::measured::Measured;
pub use crate::run::observer::{Interval, Observer, Quiet};
use crate::run::ExecError;
use qpslab_core::result::PhaseResult;
use qpslab_core::stability::{self, Stability};
use qpslab_core::telemetry::{Reading, ReplicaLag};
use qpslab_core::{ConnectOptions, RunPlan, Sample};
use qpslab_engine::workload::Workload;
use qpslab_probe::Sampler;
use qpslab_store::{RunMeta, Store};
use std::cell::RefCell;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

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

/// The stability verdict of `phase`, measured under `plan` while other processes used
/// `others_cpu_share` of the machine (when known).
pub fn judge_phase(
    phase: &PhaseResult,
    plan: &RunPlan,
    others_cpu_share: Option<f64>,
) -> Stability {
    let client_cpus = match (&phase.client, &plan.client_cpus) {
        (Some(c), _) => c.cpus.len(),
        (None, Some(c)) => c.len(),
        (None, None) => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    stability::judge(
        phase,
        &stability::Facts {
            client_cpus: client_cpus as f64,
            others_cpu_share,
            paced_by_input: plan.replay.as_ref().is_some_and(|r| r.keeps_log_pace()),
        },
    )
}

/// Runs one phase of `threads` sessions of the run's plan (`meta.plan`, so what is stored is
/// what ran: warm-up, then measurement) on `target`, takes telemetry through `sampler` on
/// every report tick, and writes it to `store` under `meta` as it is measured (see
/// [`measure_with`]).
#[allow(clippy::too_many_arguments)]
pub fn measure(
    store: &mut Store,
    meta: &RunMeta,
    target: &ConnectOptions,
    workload: &Workload,
    threads: u32,
    sampler: &mut Sampler,
    obs: &mut dyn Observer,
    stop: &AtomicBool,
) -> Result<Measured, ExecError> {
    let live = meta
        .plan
        .live
        .as_ref()
        .filter(|l| !l.actions.is_empty())
        .map(|l| RefCell::new(Live::start(target, sampler.server_pid(), &l.actions)));
    // A shard runs its share of the sessions and rate, and meets the others before it starts.
    let (total, threads, shard_plan) = {
        let (mine, p) = crate::shard::phase_share(&meta.plan, threads);
        (threads, mine, p)
    };
    if let Some(s) = crate::shard::of(&shard_plan) {
        obs.message(&format!(
            "shard {} of {} (group {}): {threads} of {total} sessions",
            s.index, s.count, s.group
        ));
    }
    // The client places its loops beside the server as it runs now (a study restarts it).
    let plan = crate::run::sizing::placed(&shard_plan, target, sampler.server_pid());
    obs.placed(threads, &qpslab_engine::place(&plan, threads).describe());
    let phase = |on_sample: &mut dyn FnMut(&Sample)| {
        let result =
            crate::shard::run_phase(target, &plan, workload, (total, threads), on_sample, stop)
                .map_err(ExecError::from)
                .and_then(|p| crate::run::tpcc_check::checked(target, &plan, p));
        let Some(live) = &live else {
            return result;
        };
        let records = live.borrow_mut().finish();
        let mut phase = result?;
        phase.actions = records;
        Ok(phase)
    };
    match &live {
        Some(live) => {
            let measured = {
                let mut obs = LiveObserver {
                    obs: &mut *obs,
                    live,
                };
                measure_with(store, meta, threads, sampler, &mut obs, phase)
            };
            for line in live.borrow_mut().take_restores() {
                obs.message(&line);
            }
            measured
        }
        None => measure_with(store, meta, threads, sampler, obs, phase),
    }
}

/// Passes every report on, anchors the live actions' clock on the first one, and reports the
/// actions that finished since the last.
struct LiveObserver<'a> {
    obs: &'a mut dyn Observer,
    live: &'a RefCell<Live>,
}

impl Observer for LiveObserver<'_> {
    fn message(&mut self, line: &str) {
        self.obs.message(line);
    }
    fn interval(&mut self, i: &Interval<'_>) {
        self.obs.interval(i);
    }
    fn replica_lag(&mut self, threads: u32, lag: &ReplicaLag) {
        self.obs.replica_lag(threads, lag);
    }
    fn sample(&mut self, threads: u32, s: &Sample) {
        let mut live = self.live.borrow_mut();
        let began = Instant::now().checked_sub(Duration::from_secs_f64(s.elapsed_s));
        if let Some(began) = began {
            live.measured_from(began);
        }
        self.obs.sample(threads, s);
        for r in live.poll() {
            self.obs.action(threads, &r);
        }
    }
}

/// Stores the phase that `phase` measures (it calls its argument once per report interval) as
/// it is measured: the phase row first, each interval's sample and telemetry tick as it is
/// reported, the summary, stability verdict and histograms at the end. When the phase fails or
/// is interrupted, what was measured is kept and the phase is closed as `interrupted` (see
/// `Store::interrupt_phase`). The engine's phases and log replays share this path.
///
/// A store that cannot take the phase's first rows (locked by another writer past its busy
/// wait, gone read-only, full) does not stop the measurement: the phase is measured, tried
/// again at its end, and when the store still refuses it, returned as
/// [`ExecError::Unstored`] for its caller to print and keep elsewhere.
pub fn measure_with(
    store: &mut Store,
    meta: &RunMeta,
    threads: u32,
    sampler: &mut Sampler,
    obs: &mut dyn Observer,
    phase: impl FnOnce(&mut dyn FnMut(&Sample)) -> Result<PhaseResult, ExecError>,
) -> Result<Measured, ExecError> {
    let plan = &meta.plan;
    sampler.begin()?;
    let host = crate::run::contention::HostCpu::read();
    let (mut handle, mut write_error) = match store.begin_phase(meta, threads) {
        Ok(h) => (Some(h), None),
        Err(e) => {
            obs.message(&format!(
                "warning: {e}; the phase is measured and written when it ends"
            ));
            (None, Some(e))
        }
    };
    // Profiles (when asked for) are named after the run they belong to.
    let run = handle
        .as_ref()
        .map_or_else(|| "unstored".to_string(), |h| h.run_id.to_string());
    let name = format!("{run}-t{threads}");
    let title = format!("server on-CPU · {threads} thread(s)");
    if let Err(e) = sampler.start_profile(&name, &title) {
        if let Some(h) = &handle {
            let _ = store.interrupt_phase(h);
        }
        return Err(e.into());
    }
    let result = {
        let mut on_sample = |s: &Sample| {
            sampler.tick(s.elapsed_s);
            for t in sampler.last_tick() {
                if let Reading::ReplicaLag(lag) = &t.reading {
                    obs.replica_lag(threads, lag);
                }
            }
            obs.sample(threads, s);
            obs.interval(&Interval {
                run: &run,
                cell: meta.cell_label.as_deref(),
                threads,
                sample: s,
                telemetry: sampler.last_tick(),
            });
            let Some(handle) = handle.as_mut().filter(|_| write_error.is_none()) else {
                return;
            };
            if let Err(e) = store.append_interval(handle, s, sampler.last_tick()) {
                obs.message(&format!(
                    "warning: results store: {e}; the phase is written when it ends"
                ));
                write_error = Some(e);
            }
        };
        phase(&mut on_sample)
    };
    let finished = result.and_then(|phase| {
        let telemetry = sampler.finish(phase.duration_s + plan.warmup_s)?;
        Ok((phase, telemetry))
    });
    let (mut phase, telemetry) = match finished {
        Ok(done) => done,
        Err(e) => {
            // The phase's own error is the one to report; a store failure here is secondary
            // (the run then stays `running` until its process is found dead).
            if let Some(h) = &handle {
                let _ = store.interrupt_phase(h);
            }
            return Err(e);
        }
    };
    let others = crate::run::contention::others_share(host, &telemetry);
    phase.stability = Some(judge_phase(&phase, plan, others));
    let cores = crate::run::client_bound::machine_cores();
    phase.limits = crate::run::limits::judge(&phase, &telemetry, others, cores);
    // A phase the store refused at its start is tried again now (the other writer may be
    // gone); one it refuses again goes to the caller whole.
    let begun = match handle {
        Some(h) => Ok(h),
        None => store.begin_phase(meta, threads),
    };
    // Its place in the store when it has one; a phase the store never took has none.
    let (run_id, seq) = begun
        .as_ref()
        .map_or((qpslab_store::RunId(0), 0), |h| (h.run_id, h.seq));
    let stored = begun.and_then(|h| {
        let done = store.finish_phase(&h, &phase, &telemetry);
        if done.is_err() {
            // What the store kept of it so far stays, closed as interrupted when it can be.
            let _ = store.interrupt_phase(&h);
        }
        done
    });
    if let Err(source) = stored {
        return Err(ExecError::Unstored {
            measured: Box::new(Measured {
                run_id,
                seq,
                phase,
                telemetry,
            }),
            source,
        });
    }
    for t in &telemetry {
        if let Reading::Profile(files) = &t.reading {
            obs.profiled(threads, files);
        }
    }
    Ok(Measured {
        run_id,
        seq,
        phase,
        telemetry,
    })
}
