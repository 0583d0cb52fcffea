//! Replication: `server start --primary / --replica-of`, `server status`, `run --replica`.

use super::{JsonSwitch, OutputArgs, SandboxHomeArgs, TableJson};
use clap::Args;

/// How a sandbox takes part in replication (`server start`).
#[derive(Args, Debug, Clone, Default)]
pub struct ReplicationArgs {
    /// Write a binary log (row format) so that replicas can follow this sandbox.
    #[arg(long, conflicts_with = "replica_of")]
    pub primary: bool,
    /// Replicate from PRIMARY, a running sandbox of this lab started with --primary (GTID-based;
    /// the new replica replays the primary's binary log from the start, so data loaded there
    /// arrives). --set applies to the replica: --set slave_parallel_threads=4.
    #[arg(long, value_name = "PRIMARY")]
    pub replica_of: Option<String>,
}

/// Measuring a replica while `run` loads its primary.
#[derive(Args, Debug, Clone, Default)]
pub struct ReplicaRunArgs {
    /// Measure this replica's lag during each phase (heartbeat, GTID waits and
    /// Seconds_Behind_Master, per report interval): a sandbox name or a DSN (mysql://...).
    #[arg(long, value_name = "NAME|DSN")]
    pub replica: Option<String>,
    /// Find the highest write rate the replica keeps up with: fixed-rate phases from --rate
    /// (default 100), doubled while the replica's lag stays flat and below --max-lag, then
    /// bisected. Needs --replica and one --threads value.
    #[arg(long, requires = "replica")]
    pub rate_search: bool,
    /// The lag bound of --rate-search, in milliseconds.
    #[arg(
        long,
        value_name = "MS",
        default_value_t = 1000.0,
        requires = "rate_search"
    )]
    pub max_lag: f64,
}

/// `qpslab server status NAME`.
#[derive(Args, Debug)]
pub struct ServerStatusArgs {
    /// Sandbox name.
    pub name: String,
    #[command(flatten)]
    pub home: SandboxHomeArgs,
    #[command(flatten)]
    pub output: OutputArgs<TableJson, JsonSwitch>,
}
