//! The dataset check `run` makes before measuring: prepared on a sandbox of ours when missing,
//! only checked on the user's server.

use crate::args::TargetArgs;
use crate::error::exec_error;
use crate::printer::Printer;
use crate::target::{command_args, Connected};
use anyhow::Result;
use qpslab_core::WorkloadOptions;
use qpslab_lab::exec::{check_only, DatasetPolicy};

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
            space: target.home.clone(),
        }
    } else {
        check_only(w, &command_args(args))
    };
    qpslab_lab::exec::ensure_dataset(
        &target.options,
        w,
        threads.unwrap_or_else(|| default_loaders(w, target)),
        &policy,
        &mut Printer::new(),
    )
    .map(|_| ())
    .map_err(exec_error)
}

/// The default number of loader connections for `w` on `target` (one per table, at most two per
/// server CPU).
pub fn default_loaders(w: &qpslab_core::WorkloadOptions, target: &Connected) -> u32 {
    qpslab_lab::exec::default_loaders(w, &target.options, target.server_pid)
}
