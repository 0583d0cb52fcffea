//! Readying a server for `qpslab run`, the step before [`crate::run::sweep::run`] measures it: the
//! server's facts read on the control connection, no settings left changed by a killed process
//! (`crate::server::restore`), its limits checked against the plan, the dataset made present (built on
//! a sandbox of ours, only checked on the user's server), the replica's lag monitor started
//! (`--replica`) and the threads' placement kept (`--pin`, [`crate::server::placement`]). In that
//! order: a leftover setting is refused before any dataset is built, and no thread is pinned
//! while the dataset loads. `qpslab prepare` and `cleanup` build and drop datasets here too
//! ([`prepare`], [`cleanup`]), holding a sandbox of ours alone while they do.
//!
//! ```no_run
//! # fn demo(target: &qpslab_core::ConnectOptions, mut plan: qpslab_core::RunPlan)
//! #     -> Result<(), Box<dyn std::error::Error>> {
//! use qpslab_lab::ready::{ready, Readying, Server};
//! let workload = qpslab_engine::workload::Workload::new(&plan.workload)?;
//! let lab = qpslab_sandbox::SandboxHome::default_location();
//! let policy = qpslab_core::placement::Policy::default();
//! let server = Server { target, sandbox: None, pid: None, target_args: &[] };
//! let req = Readying {
//!     server, lab: &lab, loaders: None, replica: None, pin: &policy, profile: None,
//! };
//! let ready = ready(req, &mut plan, &workload, &mut qpslab_lab::exec::Quiet)?;
//! println!("{}", ready.server.version);
//! # Ok(()) }
//! ```

use crate::error::ExecError;
use crate::run::exec::{check_only, dataset_changes, DatasetPolicy, Observer};
use crate::server::placement::{PlacementError, RunKeeper};
use crate::server::restore::{Ledger, RestoreError};
use qpslab_core::env::ServerInfo;
use qpslab_core::placement::Policy;
use qpslab_core::{
    ConnectOptions, ConsistencyCondition, Dsn, RunPlan, WorkloadKind, WorkloadOptions,
};
use qpslab_engine::prepare::{CleanupReport, PrepareReport};
use qpslab_engine::workload::Workload;
use qpslab_probe::replica::LagMonitor;
use qpslab_probe::Sampler;
use qpslab_sandbox::{Hold, SandboxHome, SandboxUse};
use std::path::PathBuf;

/// What a run readies, and on what server.
pub struct Readying<'a> {
    /// The server.
    pub server: Server<'a>,
    /// The lab directory: its sandboxes (`--replica NAME`) and the ledger of changed settings.
    pub lab: &'a SandboxHome,
    /// Loader connections for a dataset built now (`None`: [`crate::run::sizing::default_loaders`]).
    pub loaders: Option<u32>,
    /// `--replica`: a sandbox of this lab or a DSN whose lag is watched while the run loads.
    pub replica: Option<&'a str>,
    /// The run's own thread placement (`--pin`).
    pub pin: &'a Policy,
    /// Where the phases' flame graphs go (`--profile`).
    pub profile: Option<PathBuf>,
}

/// The server a run measures.
#[derive(Clone, Copy, Debug)]
pub struct Server<'a> {
    /// How to reach it (database set).
    pub target: &'a ConnectOptions,
    /// The sandbox of ours it is; `None`: the user's server, never changed.
    pub sandbox: Option<OurSandbox<'a>>,
    /// Its process on this machine when known: a sandbox of ours, or the user's server found
    /// as the peer of its Unix socket (`run --profile`). Telemetry reads its CPU and threads,
    /// and the client's loops are placed away from them.
    pub pid: Option<u32>,
    /// The target options as typed (no password), for the `qpslab prepare` command a missing
    /// dataset on the user's server names.
    pub target_args: &'a [String],
}

/// A sandbox of ours, which a run may build datasets on and place threads of.
#[derive(Clone, Copy, Debug)]
pub struct OurSandbox<'a> {
    /// The lab directory it lives in.
    pub home: &'a SandboxHome,
    /// Its name.
    pub name: &'a str,
    /// Its server's pid.
    pub pid: Option<u32>,
    /// Started before this command (`--sandbox NAME`): its own `--pin` policy applies.
    pub named: bool,
}

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

/// Why a server could not be readied.
#[derive(Debug, thiserror::Error)]
pub enum ReadyError {
    /// The control connection failed.
    #[error("connecting to {target}: {source}")]
    Connect {
        /// The redacted target.
        target: String,
        /// The client's error.
        source: qpslab_wire::Error,
    },
    /// The server's variables could not be read.
    #[error("reading server variables: {0}")]
    ServerInfo(qpslab_probe::Error),
    /// A killed process left settings changed, or another is changing them now.
    #[error(transparent)]
    Restore(RestoreError),
    /// The plan needs more than the server allows (the user's to fix).
    #[error("{0}")]
    Limits(String),
    /// The sandbox could not be found or held.
    #[error(transparent)]
    Sandbox(#[from] qpslab_sandbox::Error),
    /// The dataset could not be checked or built.
    #[error(transparent)]
    Dataset(ExecError),
    /// The tables qpslab created could not be dropped (`qpslab cleanup`), or checked
    /// (`qpslab check`).
    #[error(transparent)]
    Cleanup(qpslab_engine::prepare::PrepareError),
    /// The replica's lag monitor could not start.
    #[error("{source}")]
    Replica {
        /// The replica as named.
        replica: String,
        /// Why.
        source: MonitorError,
    },
    /// Placement was asked of a server that is not a sandbox of ours.
    #[error("only a sandbox of ours has its threads placed")]
    NotOurs,
    /// The placement could not start.
    #[error(transparent)]
    Placement(PlacementError),
}

/// Why the lag monitor of a replica could not start.
#[derive(Debug, thiserror::Error)]
pub enum MonitorError {
    /// The DSN does not parse.
    #[error(transparent)]
    Dsn(qpslab_core::dsn::DsnError),
    /// No such sandbox (or a bad name).
    #[error(transparent)]
    Sandbox(qpslab_sandbox::Error),
    /// The replica is the server the run loads.
    #[error("the replica is the server the run loads")]
    SameServer,
    /// The monitor could not reach or read the replica or the primary.
    #[error(transparent)]
    Start(qpslab_probe::Error),
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
    let (mut sampler, server) = control(req.server.target, req.server.pid, obs)?;
    // A killed tune's or run's settings would be measured as the server's own; a capture
    // changes only the logging, and records this run.
    let capture = Ledger::in_lab(req.lab.path())
        .refuse_leftovers_sharing_logs(&server_options)
        .map_err(ReadyError::Restore)?;
    if let Some(r) = capture {
        obs.message(&format!(
            "note: `{}` (pid {}) is logging every statement of this server: this run is in its log, and measures lower than without it",
            r.command, r.pid
        ));
    }
    check_server_limits(plan, workload.statements().len(), &server)?;
    let hold = shard_dataset(&req.server, plan, req.loaders, obs)?;
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

/// [`ensure_dataset`] for `plan`; for a shard of several, only shard 0 makes the dataset
/// present and says so on the server, and the others wait for it before they look
/// (`crate::shard::meet`).
fn shard_dataset(
    server: &Server,
    plan: &RunPlan,
    loaders: Option<u32>,
    obs: &mut dyn Observer,
) -> Result<Option<SandboxUse>, ReadyError> {
    let Some(shard) = crate::shard::of(plan) else {
        return ensure_dataset(server, &plan.workload, loaders, obs);
    };
    let never = std::sync::atomic::AtomicBool::new(false);
    let (index, count) = (shard.index, shard.count);
    let timeout = crate::shard::meet::timeout_s(plan);
    let meeting = crate::shard::meet::Meeting::new(server.target, shard, timeout, &never);
    let met = |e| ReadyError::Dataset(crate::error::ExecError::Run(e));
    if index > 0 {
        obs.message(&format!(
            "shard {index} of {count}: waiting for shard 0 to ready the dataset"
        ));
        meeting.wait_dataset().map_err(met)?;
    }
    let hold = ensure_dataset(server, &plan.workload, loaders, obs)?;
    if index == 0 {
        meeting.dataset_ready().map_err(met)?;
    }
    Ok(hold)
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

/// Makes sure the dataset `w` describes is present on `server`, built with `loaders`
/// connections (`None`: [`crate::run::sizing::default_loaders`]): on a sandbox of ours it is built when
/// missing or built by qpslab with another shape, only while no other process uses the
/// sandbox (else a user error naming them), and a run that finds others reading it says so;
/// the user's server is only checked ([`crate::run::exec::ensure_dataset`]). Returns the sandbox's
/// shared hold, to keep while measuring.
pub fn ensure_dataset(
    server: &Server,
    w: &WorkloadOptions,
    loaders: Option<u32>,
    obs: &mut dyn Observer,
) -> Result<Option<SandboxUse>, ReadyError> {
    let mut held = (server.sandbox)
        .map(|s| SandboxUse::share(s.home, s.name))
        .transpose()?;
    let policy = match server.sandbox {
        Some(s) => DatasetPolicy::Prepare {
            space: Some(s.home.path().to_path_buf()),
        },
        None => check_only(w, server.target_args),
    };
    if let Some(u) = held.as_mut() {
        let others = u.others();
        if dataset_changes(server.target, w).map_err(ReadyError::Dataset)? {
            u.upgrade()?;
        } else if !others.is_empty() {
            let pids: Vec<String> = others.iter().map(u32::to_string).collect();
            obs.message(&format!(
                "sharing sandbox '{}' with qpslab pid {}: they measure the same server at once",
                u.name(),
                pids.join(", ")
            ));
        }
    }
    let pid = server.sandbox.and_then(|s| s.pid);
    let loaders = loaders.unwrap_or_else(|| crate::run::sizing::default_loaders(w, server.target, pid));
    crate::run::exec::ensure_dataset(server.target, w, loaders, &policy, obs)
        .map_err(ReadyError::Dataset)?;
    if let Some(u) = held.as_mut().filter(|u| u.hold() == Hold::Exclusive) {
        u.downgrade()?;
    }
    Ok(held)
}

/// `qpslab prepare`: builds the dataset `w` describes on `server` with `loaders` connections
/// (`None`: [`crate::run::sizing::default_loaders`]), creating its database when `create_database`
/// or the server is a sandbox of ours, which is held alone meanwhile: nobody measures it while
/// its tables are built ([`crate::run::exec::load_dataset`]).
pub fn prepare(
    server: &Server,
    w: &WorkloadOptions,
    loaders: Option<u32>,
    create_database: bool,
    obs: &mut dyn Observer,
) -> Result<PrepareReport, ReadyError> {
    let pid = server.sandbox.and_then(|s| s.pid);
    let loaders = loaders.unwrap_or_else(|| crate::run::sizing::default_loaders(w, server.target, pid));
    let _held = hold_alone(server)?;
    let space = server.sandbox.map(|s| s.home.path());
    let create_database = create_database || server.sandbox.is_some();
    crate::run::exec::load_dataset(server.target, w, loaders, create_database, space, obs)
        .map_err(ReadyError::Dataset)
}

/// `qpslab cleanup`: drops the tables qpslab created in `server`'s database, holding a sandbox
/// of ours alone meanwhile: the TPC-C tables for `tpcc`, the sbtest tables for a sysbench
/// workload, both when no workload is named.
pub fn cleanup(server: &Server, kind: Option<WorkloadKind>) -> Result<CleanupReport, ReadyError> {
    use qpslab_engine::prepare::{cleanup, cleanup_tpcc};
    let _held = hold_alone(server)?;
    let o = server.target;
    let mut report = match kind {
        Some(WorkloadKind::Tpcc) => cleanup_tpcc(o),
        _ => cleanup(o, None),
    }
    .map_err(ReadyError::Cleanup)?;
    if kind.is_none() {
        let tpcc = cleanup_tpcc(o).map_err(ReadyError::Cleanup)?;
        report.dropped.extend(tpcc.dropped);
    }
    Ok(report)
}

/// `qpslab check tpcc`: TPC-C's consistency conditions on `server`'s database, holding a
/// sandbox of ours shared (runs may go on meanwhile: the conditions hold during runs too).
pub fn check_tpcc(server: &Server) -> Result<Vec<ConsistencyCondition>, ReadyError> {
    let held = (server.sandbox).map(|s| SandboxUse::share(s.home, s.name));
    let _held = held.transpose()?;
    qpslab_engine::prepare::check_tpcc(server.target).map_err(ReadyError::Cleanup)
}

/// Holds the sandbox of ours `server` is alone (another process using it is a user error
/// naming its pid); `None` for the user's server.
fn hold_alone(server: &Server) -> Result<Option<SandboxUse>, ReadyError> {
    let held = (server.sandbox).map(|s| SandboxUse::exclusive(s.home, s.name));
    Ok(held.transpose()?)
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
