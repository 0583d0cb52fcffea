//! `qpslab prepare` and `qpslab cleanup`, and the dataset check `run` makes before measuring.

use crate::args::{CleanupArgs, PrepareArgs};
use crate::error::user;
use crate::hiargs::workload_options;
use crate::target::{connect, lab_dir, Connected};
use anyhow::{Context, Result};
use qpslab_core::WorkloadOptions;
use qpslab_engine::prepare::{self, DatasetStatus, PrepareProgress};
use qpslab_wire::Conn;
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// Runs `qpslab prepare`.
pub fn prepare(a: PrepareArgs) -> Result<()> {
    let w = workload_options(&a.workload)?;
    let threads = match a.threads {
        Some(0) => return Err(user("--threads must be at least 1")),
        Some(n) => n,
        None => default_loaders(),
    };
    let target = connect(&a.target, Some(&a.embedded), &lab_dir(&a.lab))?;
    let outcome = load(&target, &w, threads);
    let stopped = target.finish();
    outcome?;
    stopped
}

/// Runs `qpslab cleanup`.
pub fn cleanup(a: CleanupArgs) -> Result<()> {
    if let Some(name) = &a.workload {
        name.parse::<qpslab_core::WorkloadKind>()
            .map_err(|e| user(e.to_string()))?;
    }
    let target = connect(&a.target, None, &lab_dir(&a.lab))?;
    let outcome = prepare::cleanup(&target.options, None)
        .with_context(|| format!("cleaning up on {}", target.options.describe()));
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

/// Makes sure the dataset `w` describes is present on `target`, preparing it when it is missing or
/// was built by qpslab with another shape. A dataset built by another tool (sysbench) is used
/// as it is when its shape fits, and never dropped.
pub fn ensure_dataset(target: &Connected, w: &WorkloadOptions, threads: Option<u32>) -> Result<()> {
    let status = match Conn::connect(&target.options) {
        Ok(mut conn) => prepare::dataset_status(&mut conn, w).context("checking the dataset")?,
        // The schema itself is missing: prepare creates it.
        Err(e) if e.server_code() == Some(1049) => DatasetStatus::Missing,
        Err(e) => {
            return Err(e).with_context(|| format!("connecting to {}", target.options.describe()))
        }
    };
    match status {
        DatasetStatus::Matches => Ok(()),
        DatasetStatus::Foreign => {
            eprintln!("using existing sbtest tables (not created by qpslab)");
            Ok(())
        }
        DatasetStatus::Missing => {
            eprintln!(
                "dataset missing: preparing {} × {} rows",
                w.tables, w.table_size
            );
            load(target, w, threads.unwrap_or_else(default_loaders))
        }
        DatasetStatus::Different(why) => {
            eprintln!("dataset differs ({why}): rebuilding it");
            prepare::cleanup(&target.options, None).context("dropping the old dataset")?;
            load(target, w, threads.unwrap_or_else(default_loaders))
        }
    }
}

fn default_loaders() -> u32 {
    std::thread::available_parallelism().map_or(2, |n| n.get() as u32 * 2)
}

fn load(target: &Connected, w: &WorkloadOptions, threads: u32) -> Result<()> {
    let started = Instant::now();
    let mut last = Instant::now() - Duration::from_secs(1);
    // On a terminal the progress line rewrites itself; in a log, one line every few seconds.
    let tty = std::io::stderr().is_terminal();
    let every = Duration::from_millis(if tty { 500 } else { 5000 });
    let mut progress = |p: PrepareProgress| {
        if last.elapsed() >= every {
            last = Instant::now();
            if tty {
                eprint!("\r{}", progress_line(&p));
                let _ = std::io::stderr().flush();
            } else {
                eprintln!("{}", progress_line(&p));
            }
        }
    };
    let report = prepare::prepare(&target.options, w, threads, &mut progress)
        .with_context(|| format!("preparing {} on {}", w.kind, target.options.describe()))?;
    if tty {
        eprintln!();
    }
    let secs = started.elapsed().as_secs_f64();
    println!(
        "prepared {} table(s) × {} rows in {:.1}s ({:.0} rows/s, {} loader connection(s))",
        w.tables,
        w.table_size,
        secs,
        report.rows as f64 / secs.max(1e-9),
        threads
    );
    Ok(())
}

/// `loading 1200000/8000000 rows (15%) 412345 rows/s, ETA 16s`.
fn progress_line(p: &PrepareProgress) -> String {
    let secs = p.elapsed.as_secs_f64().max(1e-9);
    let rate = p.rows_done as f64 / secs;
    let pct = (100 * p.rows_done).checked_div(p.rows_total).unwrap_or(100);
    let eta = if rate > 0.0 {
        p.rows_total.saturating_sub(p.rows_done) as f64 / rate
    } else {
        0.0
    };
    format!(
        "loading {}/{} rows ({pct}%) {rate:.0} rows/s, ETA {eta:.0}s   ",
        p.rows_done, p.rows_total
    )
}
