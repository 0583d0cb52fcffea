//! Readying a server for `qpslab run`, the step before [`crate::run::sweep::run`] measures it: the
//! server's facts read on the control connection, no settings left changed by a killed process
//! (`crate::server::restore`), its limits checked against the plan, the dataset made present (built on
//! a sandbox of ours, only checked on the user's server), the replica's lag monitor started
//! (`--replica`) and the threads' placement kept (`--pin`, [`crate::server::placement`]). In that
//! order: a leftover setting is refused before any dataset is built, and no thread is pinned
//! while the dataset loads. The dataset's part is [`crate::dataset::ready`], where `qpslab
//! prepare` and `cleanup` build and drop datasets too.
//!
//! ```no_run
//! # fn demo(target: &qpslab_core::ConnectOptions, mut plan: qpslab_core::RunPlan)
//! #     -> Result<(), Box<dyn std::error::Error>> {
//! use qpslab_lab::run::ready::{ready, Readying, Server};
//! let workload = qpslab_engine::workload::Workload::new(&plan.workload)?;
//! let lab = qpslab_sandbox::SandboxHome::default_location();
//! let policy = qpslab_core::placement::Policy::default();
//! let server = Server { target, sandbox: None, pid: None, target_args: &[] };
//! let ledger = qpslab_lab::server::restore::Ledger::in_lab(lab.path());
//! let req = Readying {
//!     server, lab: &lab, ledger: &ledger, loaders: None, replica: None, pin: &policy, profile: None,
//!     dataset: qpslab_lab::dataset::ready::shard_dataset,
//! };
//! let ready = ready(req, &mut plan, &workload, &mut qpslab_lab::run::exec::Quiet)?;
//! println!("{}", ready.server.version);
//! # Ok(()) }
//! ```

use crate::run::exec::Observer;
use crate::server::placement::RunKeeper;
use qpslab_core::env::ServerInfo;
use qpslab_core::placement::Policy;
use qpslab_core::{ConnectOptions, Dsn, RunPlan};
use qpslab_engine::workload::Workload;
use qpslab_probe::replica::LagMonitor;
use qpslab_probe::Sampler;
use qpslab_sandbox::{SandboxHome, SandboxUse};

// What readying takes and how it fails, in their own module so that the dataset's
// readiness (`dataset::ready`) uses them without an import circle.
pub use crate::run::readying::{
    DatasetReadier, MonitorError, OurSandbox, ReadyError, Readying, Server,
};

/// A server ready to measure.
pub struct Ready {
    /// Its facts, stored with the run.
    pub server: ServerInfo,
    /// Telemetry on the control connection (with the replica's lag and the profile asked for).
    pub sampler: Sampler,
    /// The thread placement kept while the run measures.
    pub placement: Option<RunKeeper>,
    /// A sandbox of ours, held (shared) until the run ends: nobody rebuilds the dataset under it.
    pub hold: Option<SandboxUse>,
}

/// Readies the server of `req` for `plan` (recording the placement in it), reporting to
/// `obs`: the server's facts, no leftover settings, its limits, the dataset, the replica's
/// lag monitor and the threads' placement, in that order.
pub fn ready(
    req: Readying,
    plan: &mut RunPlan,
    workload: &Workload,
    obs: &mut dyn Observer,
) -> Result<Ready, ReadyError> {
    let server_options = ConnectOptions {
        database: None,
        ..req.server.target.clone()
    };
    let (mut sampler, mut server) = control(req.server.target, req.server.pid, obs)?;
    // A killed tune's or run's settings would be measured as the server's own; a capture
    // changes only the logging, and records this run.
    let capture = req
        .ledger
        .refuse_leftovers_sharing_logs(&server_options)
        .map_err(ReadyError::Restore)?;
    if let Some(r) = capture {
        obs.message(&format!(
            "note: `{}` (pid {}) is logging every statement of this server: this run is in its log, and measures lower than without it",
            r.command, r.pid
        ));
    }
    check_server_limits(plan, workload.statements().len(), &server)?;
    let hold = (req.dataset)(&req.server, plan, req.loaders, obs)?;
    let monitor = req
        .replica
        .map(|r| {
            monitor(r, req.lab, req.server.target).map_err(|source| ReadyError::Replica {
                replica: r.to_string(),
                source,
            })
        })
        .transpose()?;
    let placement = keep_placement(&req, &server_options)?;
    plan.placement = placement.as_ref().map(|p| p.initial().clone());
    server.cpus = affinity(&server_options, req.server.pid);
    if let Some(m) = monitor {
        sampler.watch_replica(m);
    }
    sampler.profile_into(req.profile);
    Ok(Ready {
        server,
        sampler,
        placement,
        hold,
    })
}

/// Opens the control connection to the server of `target`, reads its facts and tells `obs`
/// which server it is (`server: VERSION (COMMENT) at TARGET`); returns the telemetry sampler
/// on that connection, which reconnects to the server when it loses it and reads the process
/// `server_pid` (a sandbox of ours) when known.
pub fn control(
    target: &ConnectOptions,
    server_pid: Option<u32>,
    obs: &mut dyn Observer,
) -> Result<(Sampler, ServerInfo), ReadyError> {
    let server_options = ConnectOptions {
        database: None,
        ..target.clone()
    };
    let described = target.describe();
    // Bounded as every control connection of a run (not by --read-timeout, an hour by
    // default): a server that announces a result and goes silent stops the run in
    // REPLY_TIMEOUT, not after the phase's --time is long past.
    let mut conn =
        qpslab_wire::Conn::connect_timeout(&server_options, crate::server::control::REPLY_TIMEOUT)
            .map_err(|source| ReadyError::Connect {
                target: described.clone(),
                source,
            })?;
    let server = qpslab_probe::server_info(&mut conn).map_err(ReadyError::ServerInfo)?;
    obs.message(&format!(
        "server: {} ({}) at {described}",
        server.version, server.version_comment
    ));
    let sampler = Sampler::new(conn, server_pid).reconnect_to(server_options);
    Ok((sampler, server))
}

/// The CPUs the server's threads may run on now, as a list (`0-1`): none for a server on
/// another machine or whose process is not found.
pub fn affinity(server: &ConnectOptions, pid: Option<u32>) -> Option<String> {
    qpslab_probe::threads::server_cpus(server, pid)
        .filter(|c| !c.is_empty())
        .map(|c| qpslab_core::cpus::render_ranges(&c))
}

/// Starts keeping the run's placement: a named sandbox's own policy (`server start --pin`)
/// followed by the run's; none when both are empty.
fn keep_placement(
    req: &Readying,
    server: &ConnectOptions,
) -> Result<Option<RunKeeper>, ReadyError> {
    let ours = req.server.sandbox;
    let named = ours.filter(|s| s.named);
    let stored = match named {
        Some(s) => qpslab_sandbox::find(s.home, s.name)?.pin,
        None => Policy::default(),
    };
    if stored.then(req.pin).is_empty() {
        return Ok(None);
    }
    let Some(pid) = ours.and_then(|s| s.pid) else {
        return Err(ReadyError::NotOurs);
    };
    RunKeeper::start(pid, server, stored, req.pin, named.is_some())
        .map(Some)
        .map_err(ReadyError::Placement)
}

/// The replica `replica` names (a sandbox of the lab `home`, or a DSN), and its lag monitor
/// reading `primary`.
pub fn monitor(
    replica: &str,
    home: &SandboxHome,
    primary: &ConnectOptions,
) -> Result<LagMonitor, MonitorError> {
    let (opts, pid) = if replica.contains("://") {
        let dsn: Dsn = replica.parse().map_err(MonitorError::Dsn)?;
        (dsn.0, None)
    } else {
        qpslab_sandbox::validate_name(replica).map_err(MonitorError::Sandbox)?;
        let info = qpslab_sandbox::find(home, replica).map_err(MonitorError::Sandbox)?;
        (info.connect_options(), Some(info.pid))
    };
    if opts.endpoint == primary.endpoint {
        return Err(MonitorError::SameServer);
    }
    let monitor = LagMonitor::start(primary, &opts).map_err(MonitorError::Start)?;
    Ok(match pid {
        Some(pid) => monitor.with_pid(pid),
        None => monitor,
    })
}

/// Checks the plan against the server's own limits before any session opens: each session
/// prepares every statement of the workload once per table, and one connection per session
/// plus our control and telemetry connections must fit. The error is the user's, and says
/// what to change.
pub fn check_server_limits(
    plan: &RunPlan,
    statements: usize,
    server: &ServerInfo,
) -> Result<(), ReadyError> {
    let var = |name: &str| {
        server
            .variables
            .get(name)
            .and_then(|v| v.parse::<u64>().ok())
    };
    let sessions = u64::from(plan.threads.iter().copied().max().unwrap_or(1));
    if let Some(max) = var("max_connections") {
        if sessions + 2 > max {
            return Err(ReadyError::Limits(format!(
                "--threads {sessions}: the server accepts at most {max} connections \
                 (max_connections), and qpslab needs one per session plus 2"
            )));
        }
    }
    if let Some(max) = var("max_prepared_stmt_count") {
        let need = sessions * statements as u64;
        if plan.prepared_statements && need > max {
            return Err(ReadyError::Limits(format!(
                "{sessions} session(s) × {statements} prepared statements ({} table(s)) = {need}, \
                 more than the server's max_prepared_stmt_count {max}: use fewer --tables or \
                 --threads, --ps off, or raise max_prepared_stmt_count",
                plan.workload.tables
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_limits() {
        let mut plan = RunPlan::new(qpslab_core::WorkloadOptions::new(
            qpslab_core::WorkloadKind::OltpPointSelect,
        ));
        plan.threads = vec![1, 64];
        let mut server = qpslab_core::ServerInfo::default();
        assert!(
            check_server_limits(&plan, 300, &server).is_ok(),
            "unknown limits"
        );
        server
            .variables
            .insert("max_prepared_stmt_count".into(), "16382".into());
        server
            .variables
            .insert("max_connections".into(), "151".into());
        assert!(check_server_limits(&plan, 255, &server).is_ok());
        let e = check_server_limits(&plan, 257, &server).unwrap_err();
        assert!(e.to_string().contains("max_prepared_stmt_count"), "{e}");
        plan.prepared_statements = false;
        assert!(check_server_limits(&plan, 257, &server).is_ok());
        plan.threads = vec![150];
        let e = check_server_limits(&plan, 1, &server).unwrap_err();
        assert!(e.to_string().contains("max_connections"), "{e}");
    }

    #[test]
    fn a_replica_is_refused_before_any_connection_when_it_cannot_be_one() {
        let lab = tempfile::tempdir().unwrap();
        let home = SandboxHome::new(lab.path().to_path_buf());
        let dsn: Dsn = "mysql://root@127.0.0.1:3306/sbtest".parse().unwrap();
        let primary = dsn.0;
        let refused = |replica: &str| monitor(replica, &home, &primary).err().unwrap();
        let e = refused("bogus://x");
        assert!(matches!(e, MonitorError::Dsn(_)), "{e:?}");
        let e = refused("nosuch");
        assert!(matches!(e, MonitorError::Sandbox(_)), "{e:?}");
        let e = refused("mysql://other@127.0.0.1:3306/x");
        assert!(matches!(e, MonitorError::SameServer), "{e:?}");
    }
}
