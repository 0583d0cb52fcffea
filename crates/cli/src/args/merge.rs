//! `qpslab merge`: what the user typed.

use super::DbArgs;
use clap::Args;

/// `qpslab merge [--db OUT] SOURCE...`, or `qpslab merge --group GROUP [--db STORE]`.
#[derive(Args, Debug)]
pub struct MergeArgs {
    /// The shards' stores (each shard's --db: files or server URLs), every shard run of one
    /// group in them; FILE:RUN_ID takes one run of a file that holds several groups.
    #[arg(value_name = "SOURCE", required_unless_present = "group")]
    pub sources: Vec<String>,
    /// The shard group to merge (`--shard-group`; `show RUN --format json` gives a shard's
    /// under meta.plan.shard.group): without SOURCE its shards are read from --db, where
    /// every shard stored its run (a server store, or one file), and merged there.
    #[arg(long, value_name = "GROUP")]
    pub group: Option<String>,
    /// The store the merged run is written to.
    #[command(flatten)]
    pub db: DbArgs,
}
