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
use qpslab_core::{ConnectOptions, Dsn};
use qpslab_lab::server::restore::Ledger;
use qpslab_report::diff::{analyze, paired, precise, DiffReport};
use qpslab_traffic::diff::profile::profile_side;
use qpslab_traffic::diff::side::{read_log_as_sides, Described, SideError};
use qpslab_traffic::diff::{rounds, sample, DiffObserver, DiffOptions, DiffSide, PRECISION_PCT};
use qpslab_traffic::replay::account::{self, AccessOptions, ReadOnlyAccess};
use qpslab_traffic::replay::ReplayLog;
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
    let resolved = qpslab_traffic::diff::side::resolve(described, timeout);
    let pids = match &a.profile {
        Some(dir) => Some(resolved.profile_pids().map_err(|e| side_error(e, dir))?),
        None => None,
    };
    let mut sides = resolved.sides;
    let kind = crate::cmd::digest::log_type(a.log_type);
    let mut loaded = qpslab_traffic::replay::source::load(&a.log, kind).map_err(exec_error)?;
    // Statements read as both servers read them (the worse reading of the two).
    read_log_as_sides(&sides, &mut loaded.log).map_err(exec_error)?;
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
    let accesses = if o.allow_writes {
        Vec::new()
    } else {
        read_only(&a, &mut sides, &loaded.log)?
    };
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
        report.figures = crate::profile::figures(&report.profiles, a.out.as_deref());
    }
    for access in accesses {
        access.finish().map_err(exec_error)?;
    }
    output(&a, &out, &report)
}

/// Makes both sides read-only, as `replay --read-only` is: each runs as an account that only
/// reads (created for the diff, dropped by the returned accesses' `finish` or drop, or by
/// `qpslab restore` after a kill -9), in read-only transactions. Two sides on one server share
/// one account, granted what both read.
fn read_only(
    a: &DiffArgs,
    sides: &mut [DiffSide; 2],
    log: &ReplayLog,
) -> Result<Vec<ReadOnlyAccess>> {
    let ledger = Ledger::in_lab(sandbox_home(&a.home).path());
    let o = AccessOptions {
        trust_account: a.trust_account,
        grant_execute: a.grant_execute,
    };
    // Where each side's statements run: its database, else the log's (none: anywhere).
    let dbs = |side: &DiffSide| -> Vec<String> {
        match &side.options.database {
            Some(d) => vec![d.clone()],
            None => log.databases().into_iter().map(str::to_string).collect(),
        }
    };
    let same_server = sides[0].options.endpoint == sides[1].options.endpoint
        && sides[0].options.user == sides[1].options.user;
    let groups: Vec<(Vec<usize>, Vec<String>)> = if same_server {
        let (x, y) = (dbs(&sides[0]), dbs(&sides[1]));
        let both = if x.is_empty() || y.is_empty() {
            Vec::new()
        } else {
            x.into_iter()
                .chain(y)
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect()
        };
        vec![(vec![0, 1], both)]
    } else {
        vec![(vec![0], dbs(&sides[0])), (vec![1], dbs(&sides[1]))]
    };
    let mut accesses = Vec::new();
    for (members, dbs) in groups {
        let access = account::prepare_in(&sides[members[0]].options, &ledger, &dbs, o, "diff")
            .map_err(exec_error)?;
        for &i in &members {
            eprintln!("diff: side {}: {}", ["A", "B"][i], access.note);
            // The account, each side keeping its own database.
            let database = sides[i].options.database.take();
            sides[i].options = ConnectOptions {
                database,
                ..access.session.clone()
            };
            sides[i].read_only = true;
        }
        accesses.push(access);
    }
    Ok(accesses)
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
        Format::Json => crate::render::diff::json(r),
        Format::Md => qpslab_report::diff::md::markdown(r),
        Format::Html => qpslab_report::diff::html::html(r),
        _ => crate::render::diff::table(r),
    }
}

/// Prints the report (or writes it to --out), and the exports asked for.
fn output(a: &DiffArgs, out: &Output, r: &DiffReport) -> Result<()> {
    out.emit_to(a.out.as_deref(), |f| Ok(render(r, f)))?;
    if let Some(path) = &a.out {
        crate::outfile::tell("diff: report", path);
    }
    Ok(())
}
