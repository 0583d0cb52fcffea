//! The server as `qpslab_lab::ready` takes it, and the dataset check `tune` makes before
//! measuring (`run`'s is part of readying): prepared on a sandbox of ours when missing, only
//! checked on the user's server. A sandbox of ours is held while it is used
//! ([`qpslab_sandbox::SandboxUse`]): shared while runs read it, alone while its dataset is
//! built, so one run never drops the tables another is measuring.

use crate::args::TargetArgs;
use crate::error::exec_error;
use crate::printer::Printer;
use crate::target::{command_args, Connected};
use anyhow::Result;
use qpslab_core::WorkloadOptions;
use qpslab_lab::ready::{OurSandbox, ReadyError, Server};
use qpslab_sandbox::{SandboxHome, SandboxUse};

/// Makes sure the dataset `w` describes is present on `target`. On a sandbox of ours it is
/// prepared when missing or built by qpslab with another shape; the user's server is only
/// checked, and a missing or different dataset is a user error naming the `qpslab prepare`
/// command to run (see `qpslab_lab::ready::ensure_dataset`).
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
    let home = SandboxHome::new(target.home.clone().unwrap_or_default());
    let target_args = command_args(args);
    let server = server(target, args, &home, &target_args);
    qpslab_lab::ready::ensure_dataset(&server, w, threads, &mut Printer::new()).map_err(|e| match e
    {
        ReadyError::Dataset(e) => exec_error(e),
        ReadyError::Sandbox(e) => e.into(),
        e => anyhow::Error::new(e),
    })
}

/// The server `target` is, as the library readies it: a sandbox of ours (the embedded one, or
/// `--sandbox NAME` of the lab `home`) or the user's server, with the target options as typed
/// (`target_args`).
pub fn server<'a>(
    target: &'a Connected,
    args: &'a TargetArgs,
    home: &'a SandboxHome,
    target_args: &'a [String],
) -> Server<'a> {
    let name = match (&target.sandbox, &args.sandbox) {
        (Some(sb), _) => Some(sb.name()),
        (None, Some(name)) => Some(name.as_str()),
        (None, None) => None,
    };
    let sandbox = name
        .filter(|_| target.home.is_some())
        .map(|name| OurSandbox {
            home,
            name,
            pid: target.server_pid,
            named: target.sandbox.is_none(),
        });
    Server {
        target: &target.options,
        sandbox,
        pid: target.server_pid,
        target_args,
    }
}
