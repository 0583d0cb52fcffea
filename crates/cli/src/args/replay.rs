//! `qpslab replay`: its own flags; the target, the results store and the lab directory are the
//! shared argument groups.

use super::{
    DbArgs, JsonPath, LogTypeArg, OnTargetArgs, OutputArgs, SandboxHomeArgs, TableJsonCsv,
    TargetArgs,
};
use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// `--mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ReplayModeArg {
    /// Each original connection in order on one session, with the log's timing.
    Sessions,
    /// Every statement as fast as --threads sessions can run them (order not kept).
    Max,
}

/// `qpslab replay`.
#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// The captured log (MariaDB or MySQL slow or general log).
    #[arg(value_name = "LOG")]
    pub log: PathBuf,
    /// What kind of log it is.
    #[arg(long, value_enum, default_value = "slow")]
    pub log_type: LogTypeArg,
    /// sessions: keep each connection's order and the log's timing; max: as fast as possible.
    #[arg(long, value_enum, default_value = "sessions")]
    pub mode: ReplayModeArg,
    /// Replay speed in sessions mode: 2 = twice as fast, 0 = no waiting (order only).
    #[arg(
        long,
        value_name = "X",
        default_value_t = 1.0,
        allow_negative_numbers = true
    )]
    pub speed: f64,
    /// Sessions: at most this many (sessions mode; default: the log's peak concurrency), or
    /// exactly this many (max mode; default 4).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub threads: Option<i64>,
    /// Run only statements that change no data and no server state (reads, SET SESSION, USE,
    /// BEGIN...); the others are counted as skipped, with their reason.
    #[arg(long)]
    pub read_only: bool,
    /// With --read-only: replay as the connecting account even though it can write or
    /// administer (by default qpslab refuses it, or creates a read-only account when the
    /// connecting one may create users).
    #[arg(long, requires = "read_only")]
    pub trust_account: bool,
    /// With --read-only: also grant the replay's account EXECUTE on each SQL SECURITY INVOKER
    /// routine of its databases (they run with its read privileges); DEFINER routines run with
    /// their definer's rights and stay refused by the server.
    #[arg(long, requires = "read_only")]
    pub grant_execute: bool,
    /// Also run server-level statements (SHUTDOWN, KILL, SET GLOBAL, accounts, GRANT, plugins,
    /// FLUSH, RESET, replication, PURGE, LOAD DATA, INTO OUTFILE...): skipped by default.
    #[arg(long)]
    pub allow_admin: bool,
    /// Also run DROP/TRUNCATE of databases and tables: skipped by default.
    #[arg(long)]
    pub allow_destructive: bool,
    /// The server (`--database NAME` runs every statement there instead of the log's databases).
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub db: DbArgs,
    #[command(flatten)]
    pub on_target: OnTargetArgs,
    #[command(flatten)]
    pub home: SandboxHomeArgs,
    /// Serve the live interval figures for Prometheus at HOST:PORT (GET /metrics) while it
    /// runs (docs/metrics.md).
    #[arg(long, value_name = "HOST:PORT")]
    pub metrics_addr: Option<String>,
    /// Output: table (the live lines), json or csv (the stored run, printed at its end).
    #[command(flatten)]
    pub output: OutputArgs<TableJsonCsv, JsonPath>,
}
