//! `qpslab merge`: what the user typed.

use super::DbArgs;
use clap::Args;

/// `qpslab merge [--db OUT] SOURCE...`.
#[derive(Args, Debug)]
pub struct MergeArgs {
    /// The shards' stores (each shard's --db), every shard run of one group in them; FILE:RUN_ID
    /// takes one run of a store that holds several groups.
    #[arg(value_name = "SOURCE", required = true)]
    pub sources: Vec<String>,
    /// The store the merged run is written to.
    #[command(flatten)]
    pub db: DbArgs,
}
