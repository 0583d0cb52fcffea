//! `qpslab run`: resolve the target, make sure the dataset is there, then for each thread count
//! run a warm-up and a measured phase (the lab's `exec::measure`, telemetry on every tick),
//! print it, and store it as it is measured (an interrupted or failed phase keeps its intervals).

use crate::args::RunArgs;
use crate::dataset::ensure_dataset;
use crate::error::exec_error;
use crate::error::user;
use crate::plan::run_plan;
use crate::printer::Printer;
use crate::render::{phase_summary, sweep_table};
use crate::signals::INTERRUPTED;
use crate::target::{connect, sandbox_home, Connected};
use anyhow::Result;
use qpslab_core::result::PhaseResult;
use qpslab_core::RunPlan;
use qpslab_engine::workload::Workload;
use qpslab_store::{RunMeta, RunStatus, Store, TelemetrySample};

/// Runs `qpslab run`.
pub fn run(a: RunArgs) -> Result<()> {
    let resolved = run_plan(&a)?;
    let plan = resolved.plan;
    if plan.live.as_ref().is_some_and(|l| !l.actions.is_empty()) {
        // `--at` changes the server: a signal lets the phase end and put the settings back.
        crate::signals::undoing();
    }
    let workload = Workload::new(&plan.workload).map_err(|e| user(e.to_string()))?;
    super::rate_search::check(&a.replica, &plan)?;
    let mut embedded = a.embedded.clone();
    super::threads::prepare_run(&a.pin, &a.target, &mut embedded.settings)?;
    let mut connected = connect(&a.target, Some(&embedded), &sandbox_home(&a.home))?;
    if let Some(dir) = &a.profile {
        crate::profile::find_server(&mut connected);
        if let Err(e) = crate::profile::check(dir, &connected) {
            let _ = connected.finish();
            return Err(e);
        }
    }
    // The store is opened once the target is known to be valid, so rejected input writes nothing.
    let outcome = crate::db::open_to_write(&a.db.db).and_then(|mut store| {
        let loaders = resolved.prepare_threads;
        sweep(&a, &plan, loaders, &workload, &mut store, &connected)
    });
    let stopped = connected.finish();
    outcome?;
    stopped
}

fn sweep(
    a: &RunArgs,
    plan: &RunPlan,
    loaders: Option<u32>,
    workload: &Workload,
    store: &mut Store,
    target: &Connected,
) -> Result<()> {
    let (control, server) = target.control()?;
    let home = sandbox_home(&a.home);
    // A killed tune's or run's settings would be measured as the server's own.
    super::restore::refuse_leftovers(&home, &target.server_options(), &a.target)?;
    crate::plan::check_server_limits(plan, workload.statements().len(), &server)?;
    // Held (shared) until the run ends: nobody rebuilds the dataset under it.
    let _sandbox = ensure_dataset(target, &a.target, &plan.workload, loaders)?;
    let mut plan = plan.clone();
    let monitor = (a.replica.replica.as_deref())
        .map(|r| super::replica::monitor(r, &home, &target.options))
        .transpose()?;
    let placement = super::threads::keep_for_run(target, &a.target, &a.pin, &home)?;
    plan.placement = placement.as_ref().map(|p| p.initial());
    settle_target(target, &mut plan)?;
    let meta = RunMeta::new(
        plan,
        target.options.describe(),
        server,
        qpslab_probe::host_facts(),
        command_line(),
    );
    let guard = live_guard(a, &home, target, &meta.plan)?;
    let mut sampler = target.sampler(control);
    if let Some(m) = monitor {
        sampler.watch_replica(m);
    }
    let mut phases = Phases {
        store,
        target,
        workload,
        sampler,
        printer: Printer::new(),
        meta,
        run_id: None,
        lag: Vec::new(),
    };
    phases.sampler.profile_into(a.profile.clone());
    let threads = phases.meta.plan.threads.clone();
    let results = if a.replica.rate_search {
        let given = phases.meta.plan.rate.clone();
        super::rate_search::search(given, a.replica.max_lag, |rate| {
            phases.meta.plan.rate = Some(rate);
            let phase = phases.measure(threads[0])?;
            Ok((phase, std::mem::take(&mut phases.lag)))
        })
    } else {
        threads.into_iter().map(|t| phases.measure(t)).collect()
    };
    if let Some(p) = placement {
        p.stop();
    }
    if let Some(g) = guard {
        super::restore::finish(g);
    }
    phases.finish(&results?, a.json.as_deref())
}

/// For `--at '...:set NAME=VALUE'`: the variables' values recorded before the first change.
fn live_guard(
    a: &RunArgs,
    home: &qpslab_sandbox::SandboxHome,
    target: &Connected,
    plan: &RunPlan,
) -> Result<Option<qpslab_lab::restore::Guard>> {
    let Some(live) = &plan.live else {
        return Ok(None);
    };
    let guard = qpslab_lab::restore::Ledger::in_lab(home.path())
        .begin_live(&target.server_options(), "run --at", &live.actions)
        .map_err(|e| super::restore::error(e, &a.target))?;
    if let Some(g) = &guard {
        super::restore::announce(g);
    }
    Ok(guard)
}

/// The measured phases of one run, stored as one run.
struct Phases<'a> {
    store: &'a mut Store,
    target: &'a Connected,
    workload: &'a Workload,
    sampler: qpslab_probe::Sampler,
    printer: Printer,
    /// What is stored with the run; `--rate-search` changes the rate between phases.
    meta: RunMeta,
    run_id: Option<qpslab_store::RunId>,
    /// The last phase's replica lag per interval, `(elapsed_s, ms)` (`--replica`).
    lag: Vec<(f64, f64)>,
}

impl Phases<'_> {
    /// Warms up (auto when the plan says so), measures and prints the phase of `threads`.
    fn measure(&mut self, threads: u32) -> Result<PhaseResult> {
        let plan = &self.meta.plan;
        println!(
            "\n== {} · {threads} thread(s) · {} ==",
            plan.workload.label(),
            stop_text(plan)
        );
        if let Some(auto) = &plan.warmup_auto {
            let took = qpslab_lab::warmup::auto_warmup(
                &self.target.options,
                &qpslab_lab::sizing::placed(plan, &self.target.options, self.target.server_pid),
                self.workload,
                threads,
                auto.max_s,
                &INTERRUPTED,
            )
            .map_err(exec_error)?;
            eprintln!("warm-up: {took:.0} s until throughput was flat");
            // The stored plan keeps the first phase's warm-up.
            if let (Some(a), None) = (self.meta.plan.warmup_auto.as_mut(), self.run_id) {
                a.took_s = Some(took);
            }
        }
        let measured = qpslab_lab::exec::measure(
            self.store,
            &self.meta,
            &self.target.options,
            self.workload,
            threads,
            &mut self.sampler,
            &mut self.printer,
            &INTERRUPTED,
        );
        match measured {
            Ok(mut m) => {
                self.run_id = Some(m.run_id);
                self.lag = super::rate_search::lag_points(&m.telemetry);
                println!();
                print!("{}", phase_summary(&m.phase));
                warn_if_client_bound(&m.phase, &m.telemetry);
                self.judge_actions(&mut m)?;
                Ok(m.phase)
            }
            Err(e) => {
                // Measured but not stored: the numbers are still the user's to see.
                if let qpslab_lab::ExecError::Unstored { measured, .. } = &e {
                    println!();
                    print!("{}", phase_summary(&measured.phase));
                    warn_if_client_bound(&measured.phase, &measured.telemetry);
                }
                Err(self.failed(e, threads))
            }
        }
    }

    /// Judges the phase's live actions (`--at`) before against after, stores the judgments and
    /// prints them.
    fn judge_actions(&mut self, m: &mut qpslab_lab::exec::Measured) -> Result<()> {
        let Some(live) = self
            .meta
            .plan
            .live
            .as_ref()
            .filter(|l| !l.actions.is_empty())
        else {
            return Ok(());
        };
        let p = &mut m.phase;
        qpslab_report::live::judge_actions(&p.samples, &mut p.actions, live.settle_after_s);
        self.store.record_actions(m.run_id, m.seq, &p.actions)?;
        print!("{}", crate::render_live::actions_table(&p.actions));
        Ok(())
    }

    /// Closes the run after a phase that did not finish, and says where what was measured is.
    fn failed(&mut self, e: qpslab_lab::ExecError, threads: u32) -> anyhow::Error {
        let what = format!("{} at {threads} thread(s)", self.meta.plan.workload.label());
        close_unfinished(self.store, &self.meta, e, what)
    }

    /// Closes the run, prints the sweep table and writes `--json`.
    fn finish(self, results: &[PhaseResult], json: Option<&std::path::Path>) -> Result<()> {
        let plan = &self.meta.plan;
        self.store
            .finish_run(&self.meta.uuid, RunStatus::Completed)?;
        println!(
            "\n{} on {} ({} per phase)",
            plan.workload.label(),
            self.meta.target,
            stop_text(plan)
        );
        print!("{}", sweep_table(&plan.percentiles, results));
        if let Some(id) = self.run_id {
            println!(
                "stored as run {} in {}  (qpslab show {})",
                id.0,
                self.store.path().display(),
                id.0
            );
            if let Some(path) = json {
                crate::outfile::write_json(path, &self.store.run_doc(id)?)?;
            }
        }
        Ok(())
    }
}

/// Settles the server when the plan asks for it (`--settle`, on by default): waits for a
/// sandbox to drain and warms it; an external server is only checked.
fn settle_target(target: &Connected, plan: &mut RunPlan) -> Result<()> {
    use qpslab_lab::settle::{describe, settle, Owner};
    let Some(s) = plan.settle.as_mut() else {
        return Ok(());
    };
    let owner = match target.sandbox {
        Some(_) => Owner::Sandbox,
        None => Owner::External,
    };
    let report = settle(
        &target.options,
        &plan.workload,
        s.max_s,
        owner,
        &INTERRUPTED,
    )
    .map_err(exec_error)?;
    eprintln!("{}", describe(&report));
    s.report = Some(report);
    Ok(())
}

fn stop_text(plan: &RunPlan) -> String {
    match (plan.stop.time_s, plan.stop.events) {
        (Some(t), Some(n)) => format!("{t} s or {n} events"),
        (Some(t), None) => format!("{t} s"),
        (None, Some(n)) => format!("{n} events"),
        (None, None) => "no limit".into(),
    }
}

/// The command line as typed, for the stored run; the store strips URL passwords again.
fn command_line() -> String {
    std::env::args().collect::<Vec<_>>().join(" ")
}

/// Warns when the client used most of a CPU: then the client, not the server, may be the limit.
fn warn_if_client_bound(phase: &PhaseResult, telemetry: &[TelemetrySample]) {
    let c = &phase.client_cpu;
    if phase.duration_s <= 0.0 {
        return;
    }
    let share = (c.user_s + c.sys_s) / phase.duration_s;
    let cores = std::thread::available_parallelism()
        .map(|n| n.get() as f64)
        .unwrap_or(1.0);
    let server = telemetry
        .iter()
        .find_map(TelemetrySample::server_proc)
        .map(|p| p.cpu_s());
    if let Some(s) = server {
        println!(
            "    server cpu:                          {:.2}s ({:.0}% of the machine)",
            s,
            100.0 * s / phase.duration_s / cores
        );
    }
    if let Some(l) = phase.client.as_ref().filter(|l| l.saturated() > 0) {
        println!(
            "warning: {} of {} event loop(s) were busy at least 90% of the phase (busiest {:.0}% \
             of a CPU): the client limited this result; give it more loops (--event-loops) or \
             CPUs of its own (--client-cpus)",
            l.saturated(),
            l.loops(),
            l.busiest() * 100.0
        );
        return;
    }
    // The client is the limit when it keeps the machine's CPUs busy, or spends more CPU than the
    // server it is measuring.
    let client_s = c.user_s + c.sys_s;
    if share >= 0.9 * cores || server.is_some_and(|s| client_s > s) {
        println!(
            "warning: the client used {:.0}% of the machine{}: it may be limiting the result; \
             place it with --client-cpus and --server-cpus on disjoint CPUs",
            100.0 * share / cores,
            server.map_or(String::new(), |s| format!(
                ", more CPU than the server ({client_s:.2}s vs {s:.2}s)"
            )),
        );
    }
}

/// Closes a run whose phase did not finish (interrupted or failed), says where what was
/// measured is stored, and returns the error to report, in the context `what`.
pub(crate) fn close_unfinished(
    store: &mut Store,
    meta: &RunMeta,
    e: qpslab_lab::ExecError,
    what: String,
) -> anyhow::Error {
    let status = e.run_status();
    let stored = store
        .finish_run(&meta.uuid, status)
        .and_then(|()| store.run_id_by_uuid(&meta.uuid));
    match stored {
        Ok(Some(id)) => eprintln!(
            "what was measured is stored as run {id} ({status}) in {}  (qpslab show {id})",
            store.path().display()
        ),
        Ok(None) => {}
        // The error that ended the run is the one to report; a store that cannot even close
        // the run is said once, beside it.
        Err(s) => eprintln!("warning: the run could not be closed in the results store: {s}"),
    }
    if let qpslab_lab::ExecError::Unstored { measured, source } = &e {
        let kept = qpslab_lab::unstored::keep(store.path(), meta, measured);
        let whereto = match kept {
            Ok(path) => format!("it is kept in {} (the run's JSON form)", path.display()),
            Err(why) => format!("it could not be written anywhere either ({why})"),
        };
        return anyhow::anyhow!(
            "{what}: the results store {} could not keep the measured phase ({source}); {whereto}",
            store.path().display()
        );
    }
    exec_error(e).context(what)
}
