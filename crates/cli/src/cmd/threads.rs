//! `qpslab server threads`, and `--pin` for `server start` and runs: the policy read from the
//! flags, performance_schema turned on for a sandbox started with one, the policy applied (and
//! kept applied during a run), and what each thread took reported.

use crate::args::{PinArgs, ServerThreadsArgs, TargetArgs, ThreadsFormat};
use crate::error::user;
use crate::render_threads::threads_text;
use crate::target::{connect, sandbox_home, Connected};
use anyhow::{Context, Result};
use qpslab_core::placement::{Applied, PlacementRecord, Policy};
use qpslab_probe::threads::{self, Keeper};
use qpslab_sandbox::SandboxHome;
use std::time::Duration;

/// Runs `qpslab server threads`.
pub fn server_threads(a: ServerThreadsArgs) -> Result<()> {
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
    let opts = connected.server_options();
    if connected.server_pid.is_none() {
        threads::check_local(&opts).map_err(probe_error)?;
    }
    let mut conn = qpslab_wire::Conn::connect(&opts)
        .with_context(|| format!("connecting to {}", opts.describe()))?;
    let pid = match connected.server_pid {
        Some(pid) => pid,
        None => threads::local_pid(&opts, &mut conn).map_err(probe_error)?,
    };
    let mut listed = threads::server_threads(pid, &mut conn).map_err(probe_error)?;
    if let Some(secs) = interval {
        std::thread::sleep(Duration::from_secs_f64(secs));
        let earlier = listed;
        listed = threads::server_threads(pid, &mut conn).map_err(probe_error)?;
        listed.rate_since(&earlier, secs);
    }
    match a.format {
        ThreadsFormat::Table => print!("{}", threads_text(&listed, interval)),
        ThreadsFormat::Json => {
            let doc = serde_json::json!({
                "pid": listed.pid,
                "performance_schema": listed.classes_known,
                "cpu": if interval.is_some() { "percent" } else { "seconds" },
                "interval_s": interval,
                "classes": listed.classes(),
                "threads": listed.threads,
            });
            println!("{}", serde_json::to_string_pretty(&doc)?);
        }
    }
    Ok(())
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

/// A probe error, exit 2 when the user can fix it.
fn probe_error(e: qpslab_probe::Error) -> anyhow::Error {
    if e.is_user_error() {
        user(e.to_string())
    } else {
        anyhow::Error::new(e)
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

fn not_ours() -> anyhow::Error {
    user("--pin places a sandbox's threads (the embedded one or --sandbox NAME); qpslab never changes another server")
}

/// Applies a sandbox's policy once (`server start --pin`) and says what it did.
pub fn apply_at_start(pid: u32, opts: &qpslab_core::ConnectOptions, policy: &Policy) -> Result<()> {
    let mut conn = qpslab_wire::Conn::connect(opts).context("connecting to apply --pin")?;
    let applied = threads::apply(pid, &mut conn, policy).map_err(probe_error)?;
    report(policy, &applied);
    if policy.covers_connections() {
        eprintln!("connection threads are placed while a qpslab run uses this sandbox (it re-applies the policy every second)");
    }
    Ok(())
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

/// The policy a run keeps on its server: the sandbox's own (`server start --pin`) followed by
/// the run's `--pin`; none for a server that is not a sandbox of ours. Stopped by
/// [`RunPlacement::stop`] or, on an error or an interrupt, when dropped.
pub struct RunPlacement {
    keeper: Option<Keeper>,
    initial: PlacementRecord,
    /// The sandbox's own policy, re-applied after restoring when the run added rules.
    kept: Option<(Policy, u32, qpslab_core::ConnectOptions)>,
}

/// Starts keeping the run's policy, if there is one.
pub fn keep_for_run(
    c: &Connected,
    t: &TargetArgs,
    pin: &PinArgs,
    home: &SandboxHome,
) -> Result<Option<RunPlacement>> {
    let own = policy(pin)?;
    let stored = match &t.sandbox {
        Some(name) => qpslab_sandbox::find(home, name)?.pin,
        None => Policy::default(),
    };
    let all = stored.then(&own);
    if all.is_empty() {
        return Ok(None);
    }
    let Some(pid) = c.server_pid.filter(|_| c.ours) else {
        return Err(not_ours());
    };
    let opts = c.server_options();
    let keeper = Keeper::start(pid, &opts, &all).map_err(probe_error)?;
    let initial = keeper.initial().clone();
    report(&all, &initial.applied);
    let kept = (!own.is_empty() && t.sandbox.is_some()).then_some((stored, pid, opts));
    Ok(Some(RunPlacement {
        keeper: Some(keeper),
        initial,
        kept,
    }))
}

impl RunPlacement {
    /// The policy and what it placed at the start, for the stored plan.
    pub fn initial(&self) -> PlacementRecord {
        self.initial.clone()
    }

    /// Stops keeping the policy and says what it placed.
    pub fn stop(mut self) {
        self.finish();
    }

    /// Connection threads go back to the server's CPUs; on a sandbox the run added rules to,
    /// every thread does and the sandbox's own policy is applied again.
    fn finish(&mut self) {
        let Some(keeper) = self.keeper.take() else {
            return;
        };
        let record = keeper.stop(self.kept.is_some());
        let placed = record.applied.placed.len() as u64 + record.more;
        let failed = record.applied.failed().count();
        eprintln!("pin: {placed} thread(s) placed during the run, {failed} did not take");
        for e in &record.errors {
            eprintln!("warning: re-applying --pin: {e}");
        }
        let Some((stored, pid, opts)) = self.kept.take().filter(|k| !k.0.is_empty()) else {
            return;
        };
        let again = qpslab_wire::Conn::connect(&opts)
            .map_err(qpslab_probe::Error::from)
            .and_then(|mut conn| threads::apply(pid, &mut conn, &stored));
        match again {
            Ok(a) => report_failures(&a),
            Err(e) => eprintln!("warning: re-applying the sandbox's own policy: {e}"),
        }
    }
}

impl Drop for RunPlacement {
    fn drop(&mut self) {
        self.finish();
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
