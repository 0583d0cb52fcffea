//! `qpslab prepare` and `qpslab cleanup`, and the dataset check `run` makes before measuring.

use crate::args::{CleanupArgs, PrepareArgs, TargetArgs};
use crate::error::user;
use crate::plan::workload_options;
use crate::target::{command_args, connect, lab_dir, Connected};
use anyhow::{Context, Result};
use qpslab_core::WorkloadOptions;
use qpslab_engine::prepare::{self, PrepareProgress, PrepareReport};
use qpslab_lab::exec::{check_only, DatasetPolicy};
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// Runs `qpslab prepare`.
pub fn prepare(a: PrepareArgs) -> Result<()> {
    let w = workload_options(&a.workload)?;
    let threads = match a.threads {
        Some(n) => crate::plan::loader_threads("--threads", n)?,
        None => default_loaders(),
    };
    let target = connect(&a.target, Some(&a.embedded), &lab_dir(&a.lab))?;
    // A sandbox is ours: its database is created as needed. On the user's server only when asked.
    let outcome = load(&target, &w, threads, a.create_db || target.ours);
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

/// Makes sure the dataset `w` describes is present on `target`. On a sandbox of ours it is
/// prepared when missing or built by qpslab with another shape; the user's server is only
/// checked, and a missing or different dataset is a user error naming the `qpslab prepare`
/// command to run (see `qpslab_lab::exec::ensure_dataset`).
pub fn ensure_dataset(
    target: &Connected,
    args: &TargetArgs,
    w: &WorkloadOptions,
    threads: Option<u32>,
) -> Result<()> {
    let policy = if target.ours {
        DatasetPolicy::Prepare {
            space: target.lab.clone(),
        }
    } else {
        check_only(w, &command_args(args))
    };
    qpslab_lab::exec::ensure_dataset(
        &target.options,
        w,
        threads.unwrap_or_else(default_loaders),
        &policy,
        &mut Printer::new(),
    )
    .map(|_| ())
    .map_err(exec_error)
}

/// An `ExecError` as an error chain that keeps the engine's and the client's errors visible to
/// the exit-code mapping.
pub fn exec_error(e: qpslab_lab::ExecError) -> anyhow::Error {
    use qpslab_lab::ExecError as E;
    if e.is_user_error() {
        return user(e.to_string());
    }
    match e {
        E::Run(e) => e.into(),
        E::Connect { target, source } => {
            anyhow::Error::new(source).context(format!("connecting to {target}"))
        }
        E::Dataset(e) => anyhow::Error::new(e).context("checking the dataset"),
        other => other.into(),
    }
}

fn default_loaders() -> u32 {
    qpslab_lab::exec::default_loaders()
}

fn load(target: &Connected, w: &WorkloadOptions, threads: u32, create_db: bool) -> Result<()> {
    qpslab_lab::exec::load_dataset(
        &target.options,
        w,
        threads,
        create_db,
        target.lab.as_deref(),
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

/// Prints dataset progress as `qpslab prepare` always has, and live lines of a phase.
pub struct Printer {
    last: Instant,
    tty: bool,
    every: Duration,
}

impl Printer {
    /// A printer for this terminal (or log).
    pub fn new() -> Printer {
        // On a terminal the progress line rewrites itself; in a log, one line every few seconds.
        let tty = std::io::stderr().is_terminal();
        Printer {
            last: Instant::now() - Duration::from_secs(10),
            tty,
            every: Duration::from_millis(if tty { 500 } else { 5000 }),
        }
    }
}

impl qpslab_lab::exec::Observer for Printer {
    fn message(&mut self, line: &str) {
        eprintln!("{line}");
    }

    fn prepare_progress(&mut self, p: &PrepareProgress) {
        if self.last.elapsed() >= self.every {
            self.last = Instant::now();
            if self.tty {
                eprint!("\r{}", progress_line(p));
                let _ = std::io::stderr().flush();
            } else {
                eprintln!("{}", progress_line(p));
            }
        }
    }

    fn prepared(&mut self, w: &WorkloadOptions, report: &PrepareReport, loaders: u32) {
        if self.tty {
            eprintln!();
        }
        if report.already_present {
            println!(
                "{} table(s) × {} rows already prepared in {} by qpslab: nothing to do",
                w.tables, w.table_size, report.database
            );
            return;
        }
        let secs = report.elapsed.as_secs_f64();
        println!(
            "prepared {} table(s) × {} rows in {:.1}s ({:.0} rows/s, {} loader connection(s), {})",
            w.tables,
            w.table_size,
            secs,
            report.rows as f64 / secs.max(1e-9),
            loaders,
            report.method.describe()
        );
    }

    fn sample(&mut self, threads: u32, s: &qpslab_core::Sample) {
        println!("{}", crate::render::live_line(threads, s));
    }
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
