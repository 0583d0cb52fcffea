//! `qpslab restore`: what the user typed.

use super::{DbArgs, OutputArgs, SandboxHomeArgs, TableJson, TargetArgs};
use clap::Args;

/// `qpslab restore`.
#[derive(Args, Debug)]
#[command(after_help = "\
Commands that change a server's settings (tune, run --at 'T:set ...', capture) record the original \
values before their first change and print the SET GLOBAL statement that restores them: in the lab \
directory, or in the results store when --db names a server's (then a record one host left is found \
from any host sharing that store). A process killed with kill -9 leaves that record behind: the next \
tune or run against the server refuses to start, advise warns, and this command puts the values \
back and clears the record. Without a server, it lists what is left to restore there.")]
pub struct RestoreArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    /// Where the records are: the store's, when it is a server's; the lab directory's otherwise.
    #[command(flatten)]
    pub db: DbArgs,
    #[command(flatten)]
    pub home: SandboxHomeArgs,
    /// Output: table (a line) or json (the server and the record restored, or null).
    #[command(flatten)]
    pub output: OutputArgs<TableJson>,
}
