//! The server a command connected to, as the lab takes it (`qpslab_lab::run::ready::Server`): a
//! sandbox of ours, whose dataset the lab builds when missing, or the user's server, whose
//! dataset it only checks. `run` and `tune` reach the dataset through their library call.

use crate::args::TargetArgs;
use crate::target::Connected;
use qpslab_lab::run::ready::{OurSandbox, Server};
use qpslab_sandbox::SandboxHome;

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
