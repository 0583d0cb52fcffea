//! The dataset check `run` makes before measuring: prepared on a sandbox of ours when missing,
//! only checked on the user's server. A sandbox of ours is held while it is used
//! ([`qpslab_sandbox::SandboxUse`]): shared while runs read it, alone while its dataset is built,
//! so one run never drops the tables another is measuring.

use crate::args::TargetArgs;
use crate::error::exec_error;
use crate::printer::Printer;
use crate::target::{command_args, Connected};
use anyhow::Result;
use qpslab_core::WorkloadOptions;
use qpslab_lab::exec::{check_only, DatasetPolicy};
use qpslab_sandbox::{Hold, SandboxHome, SandboxUse};

/// Makes sure the dataset `w` describes is present on `target`. On a sandbox of ours it is
/// prepared when missing or built by qpslab with another shape; the user's server is only
/// checked, and a missing or different dataset is a user error naming the `qpslab prepare`
/// command to run (see `qpslab_lab::exec::ensure_dataset`).
///
/// On a sandbox of ours, returns its shared hold, to keep while measuring: the dataset is built
/// only while no other process uses the sandbox (else a user error naming them), and a run
/// that finds others reading it says so.
pub fn ensure_dataset(
    target: &Connected,
    args: &TargetArgs,
    w: &WorkloadOptions,
    threads: Option<u32>,
) -> Result<Option<SandboxUse>> {
    let mut held = sandbox_use(target, args, Hold::Shared)?;
    let policy = if target.ours {
        DatasetPolicy::Prepare {
            space: target.home.clone(),
        }
    } else {
        check_only(w, &command_args(args))
    };
    if let Some(u) = held.as_mut() {
        let others = u.others();
        if qpslab_lab::exec::dataset_changes(&target.options, w).map_err(exec_error)? {
            u.upgrade()?;
        } else if !others.is_empty() {
            let pids: Vec<String> = others.iter().map(u32::to_string).collect();
            eprintln!(
                "sharing sandbox '{}' with qpslab pid {}: they measure the same server at once",
                u.name(),
                pids.join(", ")
            );
        }
    }
    qpslab_lab::exec::ensure_dataset(
        &target.options,
        w,
        threads.unwrap_or_else(|| default_loaders(w, target)),
        &policy,
        &mut Printer::new(),
    )
    .map_err(exec_error)?;
    if let Some(u) = held.as_mut().filter(|u| u.hold() == Hold::Exclusive) {
        u.downgrade()?;
    }
    Ok(held)
}

/// Holds the sandbox of ours that `target` is (the embedded one, or `--sandbox NAME`) as
/// `hold`; `None` for the user's server. Another process holding it in a conflicting way is a
/// user error naming its pid.
pub fn sandbox_use(
    target: &Connected,
    args: &TargetArgs,
    hold: Hold,
) -> Result<Option<SandboxUse>> {
    let name = match (&target.sandbox, &args.sandbox) {
        (Some(sb), _) => sb.name().to_string(),
        (None, Some(name)) => name.clone(),
        (None, None) => return Ok(None),
    };
    let Some(home) = &target.home else {
        return Ok(None);
    };
    let home = SandboxHome::new(home.clone());
    Ok(Some(match hold {
        Hold::Shared => SandboxUse::share(&home, &name)?,
        Hold::Exclusive => SandboxUse::exclusive(&home, &name)?,
    }))
}

/// The default number of loader connections for `w` on `target` (one per table, at most two per
/// server CPU).
pub fn default_loaders(w: &qpslab_core::WorkloadOptions, target: &Connected) -> u32 {
    qpslab_lab::sizing::default_loaders(w, &target.options, target.server_pid)
}
