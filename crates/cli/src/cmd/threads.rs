//! `qpslab server threads`, and `--pin` for `server start` and runs: the policy read from the
//! flags, performance_schema turned on for a sandbox started with one, the policy applied (and
//! kept applied during a run), and what each thread took reported.

use crate::args::{Format, PinArgs, ServerThreadsArgs, TargetArgs};
use crate::error::{fail, user};
use crate::render::threads::threads_text;
use crate::target::{connect, sandbox_home};
use anyhow::Result;
use qpslab_core::placement::{Applied, Policy};
use qpslab_lab::server::placement::{self, RunKeeper, RunPlaced};

/// Runs `qpslab server threads`.
pub fn server_threads(a: ServerThreadsArgs) -> Result<()> {
    let out = crate::out::Output::new(&a.output, "server threads")?;
    let mut target = a.target.clone();
    if let Some(name) = &a.name {
        target.sandbox = Some(name.clone());
    } else if !crate::target::explicit(&target) {
        return Err(user(
            "name a sandbox (qpslab server threads NAME) or a local server (--target, --socket, --defaults-file)",
        ));
    }
    let interval = a.interval.map(checked_interval).transpose()?;
    let connected = connect(&target, None, &sandbox_home(&a.home))?;
    let listed =
        placement::list_threads(&connected.server_options(), connected.server_pid, interval)
            .map_err(fail)?;
    out.emit(|f| match f {
        Format::Json => crate::out::json(&serde_json::json!({
            "pid": listed.pid,
            "performance_schema": listed.classes_known,
            "cpu": if interval.is_some() { "percent" } else { "seconds" },
            "interval_s": interval,
            "classes": listed.classes(),
            "threads": listed.threads,
        })),
        _ => Ok(threads_text(&listed, interval)),
    })
}

fn checked_interval(s: f64) -> Result<f64> {
    if s.is_finite() && (0.1..=3600.0).contains(&s) {
        Ok(s)
    } else {
        Err(user(format!(
            "--interval {s}: expected seconds from 0.1 to 3600"
        )))
    }
}

/// The policy of the `--pin` flags.
pub fn policy(p: &PinArgs) -> Result<Policy> {
    Policy::parse(&p.pin).map_err(|e| user(e.to_string()))
}

/// Adds `performance_schema=ON` to an embedded sandbox's settings when it starts with a
/// policy (the sandbox crate's rule, which refuses a policy with it turned off).
pub fn with_performance_schema(policy: &Policy, settings: &mut Vec<String>) -> Result<()> {
    let parsed = crate::plan::parse_settings(settings)?;
    if let Some((n, v)) = qpslab_sandbox::spec::pin_setting(&parsed, policy)? {
        settings.push(format!("{n}={v}"));
    }
    Ok(())
}

/// Checks a run's `--pin` before anything starts: only a sandbox of ours is placed, and the
/// embedded one starts with performance_schema on.
pub fn prepare_run(pin: &PinArgs, t: &TargetArgs, embedded: &mut Vec<String>) -> Result<()> {
    let policy = policy(pin)?;
    if crate::target::explicit(t) {
        if !policy.is_empty() && t.sandbox.is_none() {
            return Err(not_ours());
        }
        return Ok(());
    }
    with_performance_schema(&policy, embedded)
}

/// `--pin` asked of a server that is not a sandbox of ours.
pub(crate) fn not_ours() -> anyhow::Error {
    user("--pin places a sandbox's threads (the embedded one or --sandbox NAME); qpslab never changes another server")
}

/// Says what `server start --pin` placed: per rule, how many threads took their placement,
/// and each one that did not.
pub fn placed_at_start(policy: &Policy, applied: &Applied) {
    report(policy, applied);
    if policy.covers_connections() {
        eprintln!("connection threads are placed while a qpslab run uses this sandbox (it re-applies the policy every second)");
    }
}

/// Prints, per rule, how many threads took their placement, and each one that did not.
fn report(policy: &Policy, applied: &Applied) {
    for rule in &policy.rules {
        let n = applied
            .placed
            .iter()
            .filter(|p| rule.matches(&p.class) && p.took)
            .count();
        eprintln!("pin {rule}: {n} thread(s) placed, verified in /proc");
    }
    report_failures(applied);
}

/// Warns of each thread that did not take its placement.
fn report_failures(applied: &Applied) {
    for p in applied.failed() {
        eprintln!(
            "warning: thread {} ({}) did not take CPUs {:?}: {}",
            p.tid,
            p.class,
            p.cpus,
            p.error.as_deref().unwrap_or("unknown")
        );
    }
}

/// Says what a run's placement (the sandbox's own policy, `server start --pin`, followed by
/// the run's `--pin`, kept by `qpslab_lab::request::run`) placed as it started.
pub fn placement_started(keeper: &RunKeeper) {
    report(keeper.policy(), &keeper.initial().applied);
}

/// Says what a run's placement placed, once stopped.
pub fn placement_stopped(done: &RunPlaced) {
    let record = &done.record;
    let placed = record.applied.placed.len() as u64 + record.more;
    let failed = record.applied.failed().count();
    eprintln!("pin: {placed} thread(s) placed during the run, {failed} did not take");
    for e in &record.errors {
        eprintln!("warning: re-applying --pin: {e}");
    }
    match &done.reapplied {
        None => {}
        Some(Ok(a)) => report_failures(a),
        Some(Err(e)) => eprintln!("warning: re-applying the sandbox's own policy: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_policy_turns_performance_schema_on_and_refuses_it_off() {
        let p = Policy::parse(&["thread/innodb/*=0"]).unwrap();
        let mut s = vec!["innodb_buffer_pool_size=8M".to_string()];
        with_performance_schema(&p, &mut s).unwrap();
        assert_eq!(s.last().unwrap(), "performance_schema=ON");
        let mut s = vec!["performance-schema=OFF".to_string()];
        assert!(with_performance_schema(&p, &mut s).is_err());
        let mut s = vec![];
        with_performance_schema(&Policy::default(), &mut s).unwrap();
        assert!(s.is_empty());
    }
}
