//! A server's dataset, made present for a run or built, dropped and checked on command, while
//! the sandbox of ours it is on is held: alone while its tables change (nobody measures it
//! meanwhile), shared while runs read it. The user's server is only checked
//! ([`crate::dataset::check`]). `qpslab prepare`, `cleanup` and `check tpcc` are here.

use crate::dataset::check::{check_only, dataset_changes, DatasetPolicy};
use crate::run::observer::Observer;
use crate::run::readying::{ReadyError, Server};
use qpslab_core::{ConsistencyCondition, RunPlan, WorkloadKind, WorkloadOptions};
use qpslab_engine::prepare::{CleanupReport, PrepareReport};
use qpslab_sandbox::{Hold, SandboxUse};

/// [`ensure_dataset`] for `plan`; for a shard of several, only shard 0 makes the dataset
/// present and says so on the server, and the others wait for it before they look
/// (`crate::shard::meet`).
pub fn shard_dataset(
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
    let met = |e| ReadyError::Dataset(crate::run::ExecError::Run(e));
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

/// Makes sure the dataset `w` describes is present on `server`, built with `loaders`
/// connections (`None`: [`crate::dataset::loaders::default_loaders`]): on a sandbox of ours it is built when
/// missing or built by qpslab with another shape, only while no other process uses the
/// sandbox (else a user error naming them), and a run that finds others reading it says so;
/// the user's server is only checked ([`crate::dataset::check::ensure_dataset`]). Returns the sandbox's
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
    let loaders =
        loaders.unwrap_or_else(|| crate::dataset::loaders::default_loaders(w, server.target, pid));
    crate::dataset::check::ensure_dataset(server.target, w, loaders, &policy, obs)
        .map_err(ReadyError::Dataset)?;
    if let Some(u) = held.as_mut().filter(|u| u.hold() == Hold::Exclusive) {
        u.downgrade()?;
    }
    Ok(held)
}

/// `qpslab prepare`: builds the dataset `w` describes on `server` with `loaders` connections
/// (`None`: [`crate::dataset::loaders::default_loaders`]), creating its database when `create_database`
/// or the server is a sandbox of ours, which is held alone meanwhile: nobody measures it while
/// its tables are built ([`crate::dataset::check::load_dataset`]).
pub fn prepare(
    server: &Server,
    w: &WorkloadOptions,
    loaders: Option<u32>,
    create_database: bool,
    obs: &mut dyn Observer,
) -> Result<PrepareReport, ReadyError> {
    let pid = server.sandbox.and_then(|s| s.pid);
    let loaders =
        loaders.unwrap_or_else(|| crate::dataset::loaders::default_loaders(w, server.target, pid));
    let _held = hold_alone(server)?;
    let space = server.sandbox.map(|s| s.home.path());
    let create_database = create_database || server.sandbox.is_some();
    crate::dataset::check::load_dataset(server.target, w, loaders, create_database, space, obs)
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
