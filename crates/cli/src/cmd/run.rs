//! `qpslab run`: the plan and the target from the flags, then one library call,
//! `qpslab_lab::request::run` (the embedded sandbox started, the `--profile` checks, the store,
//! readying the server and the sweep, which measures and stores each phase while the printer
//! shows its progress); then the sweep table and `--json`, and the sandbox stopped.

use crate::args::{JsonPath, OutputArgs, ReplicaRunArgs, RunArgs, TableJsonCsv};
use crate::error::user;
use crate::plan::run_plan;
use crate::printer::Printer;
use crate::render::run::{steps_table, stop_text, verdict};
use crate::render::sweep_table;
use crate::signals::INTERRUPTED;
use crate::target::{command_args, sandbox_home};
use anyhow::Result;
use qpslab_core::{ConnectOptions, RunPlan};
use qpslab_engine::workload::Workload;
use qpslab_lab::request::{RunObserver, RunOutcome, RunRequest};
use qpslab_lab::run::exec::Observer;
use qpslab_lab::run::sweep::SweepObserver;
use qpslab_lab::server::placement::{RunKeeper, RunPlaced};

/// Runs `qpslab run`.
pub fn run(a: RunArgs) -> Result<()> {
    crate::db::accept(&a.on_target);
    let resolved = run_plan(&a)?;
    let plan = resolved.plan;
    if plan.live.as_ref().is_some_and(|l| !l.actions.is_empty()) {
        // `--at` changes the server: a signal lets the phase end and put the settings back.
        crate::signals::undoing();
    }
    let workload = Workload::new(&plan.workload).map_err(|e| user(e.to_string()))?;
    check_rate_search(&a.replica, &plan)?;
    let exporter = crate::metrics::start(a.metrics_addr.as_deref())?;
    let mut embedded = a.embedded.clone();
    super::threads::prepare_run(&a.pin, &a.target, &mut embedded.settings)?;
    let home = sandbox_home(&a.home);
    let target = crate::target::request(&a.target, Some(&embedded))?;
    let plan_json = serde_json::to_string(&plan).unwrap_or_default();
    let outcome = super::threads::policy(&a.pin).and_then(|pin| {
        let req = RunRequest {
            plan,
            workload: &workload,
            loaders: resolved.prepare_threads,
            target,
            target_args: command_args(&a.target),
            lab: &home,
            replica: a.replica.replica.as_deref(),
            pin,
            profile: a.profile.clone(),
            store: &a.db.db,
            command: crate::target::command_line(),
            rate_search: a.replica.rate_search.then_some(a.replica.max_lag),
        };
        let mut printer = RunPrinter {
            lab: home.path().to_path_buf(),
            plan: plan_json,
            ready: Printer::new(),
            sweep: Printer::with_metrics(exporter.as_ref())
                .sysbench_output(a.histogram.as_deref() == Some("on"), !a.no_live_lines),
        };
        qpslab_lab::request::run(req, &mut printer, &INTERRUPTED).map_err(crate::error::fail)
    })?;
    crate::db::warn_on_target(&outcome.store);
    // Printed before the sandbox stops, as the run's last words on standard output.
    let rendered = finish(&outcome, &a.output);
    let stopped = crate::target::Connected(outcome.target).finish();
    rendered?;
    stopped
}

/// What `run` prints as it goes: readying the server (the dataset loading) and the sweep each
/// through a printer of their own, and what the thread placement placed.
struct RunPrinter {
    /// The lab directory (where a capture marks that it is arming).
    lab: std::path::PathBuf,
    /// The plan as JSON, shown once connected (`--verbose`).
    plan: String,
    ready: Printer,
    sweep: Printer,
}

impl RunObserver for RunPrinter {
    fn note(&mut self, line: &str) {
        eprintln!("{line}");
    }

    fn connected(&mut self, options: &ConnectOptions) {
        if let Some(pid) = crate::arming::capture_arming(&self.lab, &options.endpoint) {
            eprintln!(
                "warning: a capture of this server (pid {pid}) has not switched its log on yet: \
                 this run's connections will not be in its log; start the run once capture \
                 says `slow log on` (or its --ready-file exists)"
            );
        }
        detail!("target: {}", qpslab_core::dsn::Dsn(options.clone()));
        detail!("plan: {}", self.plan);
    }

    fn readying(&mut self) -> &mut dyn Observer {
        &mut self.ready
    }

    fn sweeping(&mut self) -> &mut dyn SweepObserver {
        &mut self.sweep
    }

    fn placement_started(&mut self, keeper: &RunKeeper) {
        super::threads::placement_started(keeper);
    }

    fn placement_stopped(&mut self, done: &RunPlaced) {
        super::threads::placement_stopped(done);
    }
}

/// Prints what a rate search found, the run's sweep table and where it is stored, then the
/// stored run as `out` asks.
fn finish(outcome: &RunOutcome, out: &OutputArgs<TableJsonCsv, JsonPath>) -> Result<()> {
    let RunOutcome { swept, store, .. } = outcome;
    // Called as sysbench, these are qpslab's own lines: standard error (`own!`).
    if let Some(s) = &swept.searched {
        own!("\n{}", steps_table(s).trim_end_matches('\n'));
        own!("{}", verdict(s));
    }
    let plan = &swept.meta.plan;
    own!(
        "\n{} on {} ({} per phase)",
        plan.workload.label(),
        swept.meta.target,
        stop_text(plan)
    );
    let table = sweep_table(&plan.percentiles, &swept.phases);
    own!("{}", table.trim_end_matches('\n'));
    if let Some(id) = swept.run_id {
        own!(
            "stored as run {} in {}  (qpslab show {})",
            id.0,
            store.path().display(),
            id.0
        );
        super::show::emit_run(out, "run", store, id)?;
    }
    tpcc_check(&swept.phases)?;
    no_events(&swept.phases)
}

/// A runtime failure naming the measured phases that completed no event (a server that never
/// answered, or sessions stuck for the whole phase): their figures measure nothing, though
/// they are printed and stored like any other.
fn no_events(phases: &[qpslab_core::PhaseResult]) -> Result<()> {
    let empty: Vec<String> = phases
        .iter()
        .filter(|p| p.events == 0)
        .map(|p| {
            let stuck = p
                .stability
                .iter()
                .flat_map(|s| &s.reasons)
                .find(|r| matches!(r, qpslab_core::Instability::Stuck { .. }));
            match stuck {
                Some(r) => format!("{} thread(s), {r}", p.threads),
                None => format!("{} thread(s)", p.threads),
            }
        })
        .collect();
    if empty.is_empty() {
        return Ok(());
    }
    Err(anyhow::anyhow!(
        "no event completed in the measured phase at {}",
        empty.join("; ")
    ))
}

/// A runtime failure naming TPC-C's consistency conditions that failed after a phase
/// (`run tpcc --check`; each phase's check is printed in its summary and stored with it).
fn tpcc_check(phases: &[qpslab_core::PhaseResult]) -> Result<()> {
    let failed: Vec<String> = phases
        .iter()
        .filter_map(|p| {
            let f = p.tpcc.as_ref()?.failed_conditions();
            let numbers: Vec<String> = f.iter().map(u32::to_string).collect();
            (!f.is_empty()).then(|| format!("{} after {} thread(s)", numbers.join(", "), p.threads))
        })
        .collect();
    if failed.is_empty() {
        return Ok(());
    }
    Err(anyhow::anyhow!(
        "TPC-C consistency condition(s) failed: {}",
        failed.join("; ")
    ))
}

/// Refuses a rate search that cannot run (`--rate-search`), before anything starts.
fn check_rate_search(a: &ReplicaRunArgs, plan: &RunPlan) -> Result<()> {
    if !a.rate_search {
        return Ok(());
    }
    if !(a.max_lag.is_finite() && a.max_lag > 0.0) {
        return Err(user("--max-lag must be a positive number of milliseconds"));
    }
    if plan.threads.len() != 1 {
        return Err(user(
            "--rate-search steps the rate at one session count: give one --threads value",
        ));
    }
    Ok(())
}
