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
use anyhow::{Context, Result};
use qpslab_core::result::PhaseResult;
use qpslab_core::RunPlan;
use qpslab_engine::workload::Workload;
use qpslab_store::{RunMeta, RunStatus, Store, TelemetrySample};
use qpslab_wire::Conn;
use std::io::Write;

/// Runs `qpslab run`.
pub fn run(a: RunArgs) -> Result<()> {
    let resolved = run_plan(&a)?;
    let plan = resolved.plan;
    let workload = Workload::new(&plan.workload).map_err(|e| user(e.to_string()))?;
    let connected = connect(&a.target, Some(&a.embedded), &sandbox_home(&a.home))?;
    // The store is opened once the target is known to be valid, so rejected input writes nothing.
    let outcome = Store::open(&a.db.db)
        .with_context(|| format!("results store {}", a.db.db.display()))
        .and_then(|mut store| {
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
    let mut control = Conn::connect(&target.server_options())
        .with_context(|| format!("connecting to {}", target.options.describe()))?;
    let server = qpslab_probe::server_info(&mut control).context("reading server variables")?;
    eprintln!(
        "server: {} ({}) at {}",
        server.version,
        server.version_comment,
        target.options.describe()
    );
    crate::plan::check_server_limits(plan, workload.statements().len(), &server)?;
    ensure_dataset(target, &a.target, &plan.workload, loaders)?;
    let mut plan = plan.clone();
    settle_target(target, &mut plan)?;
    let plan = &plan;
    let mut meta = RunMeta::new(
        plan.clone(),
        target.options.describe(),
        server,
        qpslab_probe::host_facts(),
        command_line(),
    );
    let mut sampler = qpslab_probe::Sampler::new(control, target.server_pid)
        .reconnect_to(target.server_options());
    let mut printer = Printer::new();
    let mut phases = Vec::new();
    let mut run_id = None;
    for &threads in &plan.threads {
        println!(
            "\n== {} · {threads} thread(s) · {} ==",
            plan.workload.kind,
            stop_text(plan)
        );
        if let Some(auto) = &plan.warmup_auto {
            let took = qpslab_lab::warmup::auto_warmup(
                &target.options,
                plan,
                workload,
                threads,
                auto.max_s,
                &INTERRUPTED,
            )
            .map_err(exec_error)?;
            eprintln!("warm-up: {took:.0} s until throughput was flat");
            if let (Some(a), None) = (meta.plan.warmup_auto.as_mut(), run_id) {
                a.took_s = Some(took);
            }
        }
        let measured = qpslab_lab::exec::measure(
            store,
            &meta,
            &target.options,
            workload,
            threads,
            &mut sampler,
            &mut printer,
            &INTERRUPTED,
        );
        let (phase, telemetry) = match measured {
            Ok(m) => {
                run_id = Some(m.run_id);
                (m.phase, m.telemetry)
            }
            Err(e) => {
                let status = if e.is_interrupted() {
                    RunStatus::Interrupted
                } else {
                    RunStatus::Failed
                };
                store.finish_run(&meta.uuid, status)?;
                if let Some(id) = store.run_id_by_uuid(&meta.uuid)? {
                    eprintln!(
                        "what was measured is stored as run {id} ({status}) in {}  (qpslab show {id})",
                        store.path().display()
                    );
                }
                return Err(exec_error(e))
                    .with_context(|| format!("{} at {threads} thread(s)", plan.workload.kind));
            }
        };
        println!();
        print!("{}", phase_summary(&phase));
        warn_if_client_bound(&phase, &telemetry);
        phases.push(phase);
    }
    store.finish_run(&meta.uuid, RunStatus::Completed)?;
    println!(
        "\n{} on {} ({} per phase)",
        plan.workload.kind,
        meta.target,
        stop_text(plan)
    );
    print!("{}", sweep_table(&plan.percentiles, &phases));
    if let Some(id) = run_id {
        let shown = id.0;
        println!(
            "stored as run {shown} in {}  (qpslab show {shown})",
            store.path().display()
        );
        if let Some(path) = &a.json {
            write_json(path, &store.run_doc(id)?)?;
        }
    }
    Ok(())
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
        (None, None) => "10 s".into(),
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

/// Writes `value` to `path` through a temporary file, so a failure never leaves half a file.
pub fn write_json(path: &std::path::Path, value: &impl serde::Serialize) -> Result<()> {
    let tmp = path.with_extension("json.tmp");
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        serde_json::to_writer_pretty(&mut f, value)?;
        f.write_all(b"\n")?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        user(format!("--json {}: {e}", path.display()))
    })
}
