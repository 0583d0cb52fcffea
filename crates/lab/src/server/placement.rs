//! Placing a server's threads on CPUs: a study setup's placement, `pin = {
//! "thread/innodb/page_cleaner_thread" = "1" }` (the policy read from the spec, so placement
//! is a factor like any setting, kept with the setup's sandbox and re-applied every second
//! while its cells run); the server's threads listed (`qpslab server threads`); a policy
//! applied once (`server start --pin`) or kept while a run lasts (`run --pin`).

use qpslab_core::fault::{Blame, Fault};
use qpslab_core::placement::{Applied, PlacementRecord, Policy};
use qpslab_core::ConnectOptions;
use qpslab_probe::threads::{self, Keeper, ServerThreads};
use qpslab_wire::Conn;
use std::time::Duration;

/// Why a server's threads could not be listed or placed.
#[derive(Debug, thiserror::Error)]
pub enum PlacementError {
    /// The server did not accept a connection.
    #[error("connecting to {target}: {source}")]
    Connect {
        /// The server, as [`ConnectOptions::describe`] names it.
        target: String,
        /// The client's error.
        #[source]
        source: qpslab_wire::Error,
    },
    /// Reading or placing the threads failed (or the server is not a local one).
    #[error(transparent)]
    Probe(#[from] qpslab_probe::Error),
}

impl Blame for PlacementError {
    /// The client's error decides a failed connection (nothing listening there is the
    /// user's); the probe's decides the rest.
    fn fault(&self) -> Fault {
        match self {
            PlacementError::Connect { source, .. } => source.fault(),
            PlacementError::Probe(e) => e.fault(),
        }
    }
}

fn connect(opts: &ConnectOptions) -> Result<Conn, PlacementError> {
    Conn::connect(opts).map_err(|source| PlacementError::Connect {
        target: opts.describe(),
        source,
    })
}

/// The threads of the server at `opts` (its process `pid`, or found from the server when
/// `None`: a local server only) with the CPU time each used; with `interval_s`, listed twice
/// that far apart, with each thread's CPU share in between.
pub fn list_threads(
    opts: &ConnectOptions,
    pid: Option<u32>,
    interval_s: Option<f64>,
) -> Result<ServerThreads, PlacementError> {
    if pid.is_none() {
        threads::check_local(opts)?;
    }
    let mut conn = connect(opts)?;
    let pid = match pid {
        Some(pid) => pid,
        None => threads::local_pid(opts, &mut conn)?,
    };
    let mut listed = threads::server_threads(pid, &mut conn)?;
    if let Some(secs) = interval_s {
        std::thread::sleep(Duration::from_secs_f64(secs));
        let earlier = listed;
        listed = threads::server_threads(pid, &mut conn)?;
        listed.rate_since(&earlier, secs);
    }
    Ok(listed)
}

/// Applies `policy` once to the threads of the server (process `pid`) at `opts`.
pub fn apply_once(
    pid: u32,
    opts: &ConnectOptions,
    policy: &Policy,
) -> Result<Applied, PlacementError> {
    let mut conn = connect(opts)?;
    Ok(threads::apply(pid, &mut conn, policy)?)
}

/// The policy a run keeps on a sandbox's server: the sandbox's own policy followed by the
/// run's. Stopped by [`RunKeeper::finish`] or, on an error or an interrupt, when dropped.
pub struct RunKeeper {
    keeper: Option<Keeper>,
    policy: Policy,
    initial: PlacementRecord,
    /// The sandbox's own policy, re-applied after restoring when the run added rules.
    kept: Option<(Policy, u32, ConnectOptions)>,
}

/// What a run's placement did, told when it stops.
pub struct RunPlaced {
    /// Every thread placed during the run.
    pub record: PlacementRecord,
    /// The sandbox's own policy applied again (when the run added rules to it), or why not.
    pub reapplied: Option<Result<Applied, PlacementError>>,
}

impl RunKeeper {
    /// Starts keeping `stored` (the sandbox's own policy) followed by `own` (the run's) on the
    /// server (process `pid`) at `opts`; `restore_stored`: the server is a named sandbox whose
    /// own policy is applied again when the run ends.
    pub fn start(
        pid: u32,
        opts: &ConnectOptions,
        stored: Policy,
        own: &Policy,
        restore_stored: bool,
    ) -> Result<RunKeeper, PlacementError> {
        let policy = stored.then(own);
        let keeper = Keeper::start(pid, opts, &policy)?;
        let kept = (!own.is_empty() && restore_stored).then(|| (stored, pid, opts.clone()));
        Ok(RunKeeper {
            initial: keeper.initial().clone(),
            keeper: Some(keeper),
            policy,
            kept,
        })
    }

    /// The whole policy kept (the sandbox's and the run's).
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The policy and what it placed at the start, for the stored plan.
    pub fn initial(&self) -> &PlacementRecord {
        &self.initial
    }

    /// Stops keeping the policy: connection threads go back to the server's CPUs; on a sandbox
    /// the run added rules to, every thread does and the sandbox's own policy is applied
    /// again. `None` once stopped.
    pub fn finish(&mut self) -> Option<RunPlaced> {
        let keeper = self.keeper.take()?;
        let record = keeper.stop(self.kept.is_some());
        let reapplied = self
            .kept
            .take()
            .filter(|k| !k.0.is_empty())
            .map(|(stored, pid, opts)| {
                Conn::connect(&opts)
                    .map_err(qpslab_probe::Error::from)
                    .and_then(|mut conn| threads::apply(pid, &mut conn, &stored))
                    .map_err(PlacementError::from)
            });
        Some(RunPlaced { record, reapplied })
    }
}

impl Drop for RunKeeper {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Starts keeping the sandbox's policy on its server, if it has one.
pub fn keep(
    spec: &Policy,
    pid: Option<u32>,
    opts: &ConnectOptions,
) -> Result<Option<Keeper>, qpslab_probe::Error> {
    let Some(pid) = pid.filter(|_| !spec.is_empty()) else {
        return Ok(None);
    };
    Keeper::start(pid, opts, spec).map(Some)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_setup_pin_table_becomes_the_sandbox_policy() {
        let spec = crate::study::spec::parse(
            "t.toml",
            "name = \"p\"\n[[variant]]\nname = \"split\"\npin = { \"thread/innodb/page_cleaner_thread\" = \"0\" }\n",
        )
        .unwrap();
        let mut sb = qpslab_sandbox::SandboxSpec::new("x");
        sb.set_pin(spec.variant[0].pin_policy().unwrap()).unwrap();
        assert_eq!(sb.pin.rules[0].class, "thread/innodb/page_cleaner_thread");
        assert!(sb
            .settings
            .contains(&("performance_schema".into(), "ON".into())));
        let bad = crate::study::spec::parse(
            "t.toml",
            "name = \"p\"\n[[variant]]\nname = \"a\"\npin = { \"page_cleaner\" = \"0\" }\n",
        )
        .unwrap_err();
        assert!(bad.to_string().contains("pin 'page_cleaner=0'"), "{bad}");
    }
}
