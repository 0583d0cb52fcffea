//! `qpslab diff LOG --a SIDE --b SIDE`: the log's classes measured on both sides by the lab
//! (`lab::diff`), analyzed by the report crate (`report::diff`), printed or written as a table,
//! JSON, Markdown or HTML.

use crate::args::{DiffArgs, Format, SandboxHomeArgs, TargetArgs, WaitArgs};
use crate::error::{exec_error, user};
use crate::out::Output;
use crate::signals::INTERRUPTED;
use crate::target::{connect, sandbox_home};
use anyhow::Result;
use qpslab_core::diff::{ClassMeasure, Pair};
use qpslab_core::Dsn;
use qpslab_report::diff::{analyze, paired, precise, DiffReport};
use qpslab_sql::diff::profile::profile_side;
use qpslab_sql::diff::side::{Described, SideError};
use qpslab_sql::diff::{rounds, sample, DiffObserver, DiffOptions, PRECISION_PCT};
use std::time::Duration;

/// Runs `qpslab diff`.
pub fn diff(a: DiffArgs) -> Result<()> {
    let o = options(&a)?;
    let out = Output::new(&a.output, "diff")?;
    if let Some(path) = &a.out {
        crate::outfile::check("--out", path, true)?;
    }
    let described = [side(&a.a, &a.wait, &a.home)?, side(&a.b, &a.wait, &a.home)?];
    let timeout = Some(Duration::from_secs_f64(a.statement_timeout));
    let resolved = qpslab_sql::diff::side::resolve(described, timeout);
    let pids = match &a.profile {
        Some(dir) => Some(resolved.profile_pids().map_err(|e| side_error(e, dir))?),
        None => None,
    };
    let sides = resolved.sides;
    let kind = crate::cmd::digest::log_type(a.log_type);
    let loaded = qpslab_sql::replay::source::load(&a.log, kind).map_err(exec_error)?;
    let (mut work, skipped) = sample::plan(&loaded.log, &o);
    if let Some(n) = a.limit {
        sample::most_frequent(&mut work, n);
    }
    if work.classes.is_empty() {
        return Err(user(format!(
            "{}: no class to compare ({} skipped: writes need --allow-writes; DDL, destructive and server-level statements never run)",
            a.log.display(),
            skipped.len()
        )));
    }
    eprintln!(
        "diff: {} class(es) of {} to compare on A = {} and B = {}",
        work.classes.len(),
        a.log.display(),
        sides[0].label,
        sides[1].label
    );
    let mut progress = Progress {
        started: std::time::Instant::now(),
    };
    let m = rounds::measure(&sides, &work, skipped, &o, &mut progress, &INTERRUPTED)
        .map_err(exec_error)?;
    let mut report = analyze(&m, a.threshold);
    if let (Some(dir), Some(pids)) = (&a.profile, pids) {
        let time = Duration::from_secs_f64(a.profile_time);
        for (i, name) in ["a", "b"].into_iter().enumerate() {
            eprintln!(
                "diff: profiling side {} for {:.0} s ...",
                name.to_uppercase(),
                a.profile_time
            );
            let p = profile_side(&sides[i], pids[i], &work, (dir, name), time, &INTERRUPTED)
                .map_err(exec_error)?;
            report.profiles.push(p);
        }
        report.figures = crate::profile::draw_sides(&report.profiles, a.out.as_deref());
    }
    output(&a, &out, &report)
}

/// The measurement's options from the flags; bad values are the user's mistake.
fn options(a: &DiffArgs) -> Result<DiffOptions> {
    if a.repeats.is_some_and(|n| n < 2) {
        return Err(user("--repeats: at least 2 rounds make an interval"));
    }
    if !(a.max_time_per_class.is_finite() && a.max_time_per_class > 0.0) {
        return Err(user(format!(
            "--max-time-per-class {}: must be a positive number of seconds",
            a.max_time_per_class
        )));
    }
    if !(a.threshold.is_finite() && (0.0..100.0).contains(&a.threshold)) {
        return Err(user(format!(
            "--threshold {}: must be a percentage from 0 to 100",
            a.threshold
        )));
    }
    if a.profile.is_some() && !(a.profile_time.is_finite() && a.profile_time >= 1.0) {
        return Err(user(format!(
            "--profile-time {}: at least 1 second",
            a.profile_time
        )));
    }
    if !(a.statement_timeout.is_finite() && a.statement_timeout >= 1.0) {
        return Err(user(format!(
            "--statement-timeout {}: at least 1 second",
            a.statement_timeout
        )));
    }
    if a.sample == 0 || a.limit == Some(0) {
        return Err(user("--sample and --limit must be at least 1"));
    }
    Ok(DiffOptions {
        sample: a.sample,
        repeats: a.repeats,
        max_time_per_class: Duration::from_secs_f64(a.max_time_per_class),
        allow_writes: a.allow_writes,
    })
}

/// A side: a DSN (`mysql://...`, its password from the URL or MYSQL_PWD, never printed) or a
/// sandbox `NAME` or `NAME/DB` of the lab directory, reached. Its database, when it names one,
/// is where every statement runs.
fn side(spec: &str, wait: &WaitArgs, home: &SandboxHomeArgs) -> Result<Described> {
    let (target, database, label) = if spec.starts_with("mysql://") {
        let dsn: Dsn = spec.parse().map_err(|e| {
            let shown = qpslab_store::redact_url_passwords(spec);
            user(format!("side {shown}: {e}"))
        })?;
        let t = TargetArgs {
            target: Some(spec.to_string()),
            wait: wait.clone(),
            ..Default::default()
        };
        (t, dsn.options().database.clone(), dsn.to_string())
    } else {
        let (name, db) = match spec.split_once('/') {
            Some((n, d)) => (n, Some(d.to_string())),
            None => (spec, None),
        };
        if name.is_empty()
            || db
                .as_deref()
                .is_some_and(|d| d.is_empty() || d.contains('/'))
        {
            return Err(user(format!(
                "side '{spec}': give a DSN (mysql://user@host/db) or a sandbox NAME or NAME/DB"
            )));
        }
        let t = TargetArgs {
            sandbox: Some(name.to_string()),
            wait: wait.clone(),
            ..Default::default()
        };
        (t, db, spec.to_string())
    };
    let connected = connect(&target, None, &sandbox_home(home))?;
    Ok(Described {
        label,
        options: connected.options.clone(),
        database,
        server_pid: connected.server_pid,
    })
}

/// Why `--profile DIR` cannot work, in the words `run --profile` uses.
fn side_error(e: SideError, dir: &std::path::Path) -> anyhow::Error {
    match e {
        SideError::UnknownPid { side, label } => {
            crate::profile::unknown_pid(dir, &format!("side {side} ({label})"))
        }
        SideError::Perf(e) => user(format!("--profile: {e}")),
    }
}

/// Progress on stderr (each class measured, with the ETA of the classes left), and the
/// precision rule of the rounds.
struct Progress {
    started: std::time::Instant,
}

impl DiffObserver for Progress {
    fn precise_enough(&self, rounds: &[Pair<u64>]) -> bool {
        precise(rounds, PRECISION_PCT)
    }

    fn class_done(&mut self, i: usize, n: usize, c: &ClassMeasure) {
        let ratio = paired(&c.rounds)
            .map(|p| format!("B/A {:.3} [{:.3}, {:.3}]", p.ratio, p.low, p.high))
            .unwrap_or_else(|| c.error.clone().unwrap_or_default());
        let eta = crate::progress::eta_text((i + 1) as f64, n as f64, self.started.elapsed());
        eprintln!(
            "diff: class {}/{n} {}: {} round(s), {ratio}{eta}",
            i + 1,
            qpslab_report::diff::shorten(&c.fingerprint, 60),
            c.rounds.len()
        );
    }
}

/// The report in format `f`.
fn render(r: &DiffReport, f: Format) -> String {
    match f {
        Format::Json => crate::render_diff::json(r),
        Format::Md => qpslab_report::diff::md::markdown(r),
        Format::Html => qpslab_report::diff::html::html(r),
        _ => crate::render_diff::table(r),
    }
}

/// Prints the report (or writes it to --out), and the exports asked for.
fn output(a: &DiffArgs, out: &Output, r: &DiffReport) -> Result<()> {
    out.emit_to(a.out.as_deref(), |f| Ok(render(r, f)))?;
    if let Some(path) = &a.out {
        eprintln!("diff: report written to {}", path.display());
    }
    Ok(())
}
