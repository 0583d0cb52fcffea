//! `qpslab server threads` and the `--pin` placement flag.

use super::{OutputArgs, SandboxHomeArgs, TableJson, TargetArgs};
use clap::Args;

/// `--pin`, on `server start` and on runs with a sandbox of ours.
#[derive(Args, Debug, Clone, Default)]
pub struct PinArgs {
    /// Place a server thread class on CPUs (repeatable): CLASS=CPUS[,nice=N], CLASS a
    /// performance_schema thread name or glob (thread/innodb/page_cleaner_thread,
    /// thread/innodb/*), e.g. --pin thread/innodb/page_cleaner_thread=1. Turns
    /// performance_schema on for a sandbox started with it; re-applied every second to new
    /// threads during a run.
    #[arg(long = "pin", value_name = "CLASS=CPUS[,nice=N]")]
    pub pin: Vec<String>,
}

/// `qpslab server threads`.
#[derive(Args, Debug)]
pub struct ServerThreadsArgs {
    /// Sandbox name (or give a local server with --target, --socket or --defaults-file).
    #[arg(conflicts_with_all = ["target", "socket", "sandbox"])]
    pub name: Option<String>,
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub home: SandboxHomeArgs,
    /// Output: table (per class, then per thread) or json.
    #[command(flatten)]
    pub output: OutputArgs<TableJson>,
    /// Show CPU% over this many seconds (who is busy now) instead of CPU seconds since each
    /// thread started.
    #[arg(long, value_name = "S")]
    pub interval: Option<f64>,
}
