//! `qpslab prepare` and `qpslab cleanup`.

use crate::args::{CleanupArgs, PrepareArgs};
use crate::dataset::{default_loaders, sandbox_use};
use crate::error::{exec_error, user};
use crate::plan::workload_options;
use crate::printer::Printer;
use crate::target::{connect, sandbox_home, Connected};
use anyhow::{Context, Result};
use qpslab_core::{WorkloadKind, WorkloadOptions};
use qpslab_engine::prepare;
use qpslab_sandbox::Hold;

/// Runs `qpslab prepare`.
pub fn prepare(a: PrepareArgs) -> Result<()> {
    let w = workload_options(&a.workload)?;
    let threads = a
        .threads
        .map(|n| crate::plan::loader_threads("--threads", n))
        .transpose()?;
    let target = connect(&a.target, Some(&a.embedded), &sandbox_home(&a.home))?;
    let threads = threads.unwrap_or_else(|| default_loaders(&w, &target));
    // A sandbox is ours: its database is created as needed. On the user's server only when asked.
    // Nobody may measure a sandbox while its tables are built.
    let outcome = sandbox_use(&target, &a.target, Hold::Exclusive)
        .and_then(|_held| load(&target, &w, threads, a.create_db || target.ours));
    let stopped = target.finish();
    outcome?;
    stopped
}

/// Runs `qpslab cleanup`.
pub fn cleanup(a: CleanupArgs) -> Result<()> {
    let kind = a
        .workload
        .as_ref()
        .map(|name| {
            name.parse::<WorkloadKind>()
                .map_err(|e| user(e.to_string()))
        })
        .transpose()?;
    let target = connect(&a.target, None, &sandbox_home(&a.home))?;
    let outcome = sandbox_use(&target, &a.target, Hold::Exclusive).and_then(|_held| {
        let o = &target.options;
        // `tpcc` drops the TPC-C tables, a sysbench workload the sbtest tables, none both.
        let mut report = match kind {
            Some(WorkloadKind::Tpcc) => prepare::cleanup_tpcc(o),
            _ => prepare::cleanup(o, None),
        }
        .with_context(|| format!("cleaning up on {}", o.describe()))?;
        if kind.is_none() {
            let tpcc = prepare::cleanup_tpcc(o)
                .with_context(|| format!("cleaning up on {}", o.describe()))?;
            report.dropped.extend(tpcc.dropped);
        }
        Ok(report)
    });
    let stopped = target.finish();
    let report = outcome?;
    if report.dropped.is_empty() {
        println!("nothing to drop: no tables created by qpslab in this database");
    } else {
        println!(
            "dropped {} table(s): {}",
            report.dropped.len(),
            report.dropped.join(", ")
        );
    }
    stopped
}

fn load(target: &Connected, w: &WorkloadOptions, threads: u32, create_db: bool) -> Result<()> {
    qpslab_lab::exec::load_dataset(
        &target.options,
        w,
        threads,
        create_db,
        target.home.as_deref(),
        &mut Printer::new(),
    )
    .map(|_| ())
    .map_err(|e| {
        if let qpslab_lab::ExecError::Dataset(prepare::PrepareError::MissingDatabase(db)) = &e {
            return user(format!(
                "database {db} does not exist on {}: add --create-db to create it",
                target.options.describe()
            ));
        }
        exec_error(e).context(format!(
            "preparing {} on {}",
            w.kind,
            target.options.describe()
        ))
    })
}
