//! `qpslab tune`'s arguments.

use super::{
    DbArgs, DurabilityArg, EmbeddedArgs, JsonPath, OnTargetArgs, OutputArgs, RunFlags,
    SandboxHomeArgs, TableJson, TargetArgs,
};
use clap::{Args, ValueEnum};
use qpslab_tune::confirm;
use std::path::PathBuf;

/// How the tuner searches the knob space within its budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SearchArg {
    /// Successive halving seeded by advise: short trials, the better half re-run twice as long.
    Halving,
    /// Random configurations, one trial each (the comparison for the search).
    Random,
}

/// `qpslab tune`: search server settings for the workload within a time budget, and keep only
/// a gain that a confirmation against the baseline shows with its interval.
#[derive(Args, Debug)]
#[command(after_help = after_help())]
pub struct TuneArgs {
    /// The workload and run options (`--threads` takes one value here).
    #[command(flatten)]
    pub options: RunFlags,
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub embedded: EmbeddedArgs,
    #[command(flatten)]
    pub db: DbArgs,
    #[command(flatten)]
    pub on_target: OnTargetArgs,
    #[command(flatten)]
    pub home: SandboxHomeArgs,
    /// Wall time for the whole session (search, confirmation, rechecks): 90s, 10m, 1h (a
    /// number alone is seconds).
    #[arg(long, value_name = "TIME")]
    pub budget: String,
    /// strict: durability settings are never changed; relaxed: they may be, and are listed.
    #[arg(long, value_enum, default_value = "strict")]
    pub durability: DurabilityArg,
    /// Only these knobs (comma-separated variable names).
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub knobs: Vec<String>,
    /// Time measured by the shortest trial (the confirmation's measurements too): seconds or a
    /// duration (10, 10s, 1m).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = super::capture::duration)]
    pub trial_time: std::time::Duration,
    #[arg(long, value_name = "N", default_value_t = confirm::MIN_REPEATS, help = format!(
        "Fewest rounds of the confirmation, one measurement of each side a round (at least \
         {}); it runs more until its interval decides or its share of the budget is spent",
        confirm::MIN_REPEATS
    ))]
    pub repeats: u32,
    /// Search strategy.
    #[arg(long, value_enum, default_value = "halving")]
    pub search: SearchArg,
    /// Write the confirmed settings as a my.cnf [mysqld] section.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Output: table or json (the outcome: baseline, best, ratio, interval, significant,
    /// trials).
    #[command(flatten)]
    pub output: OutputArgs<TableJson, JsonPath>,
    /// Serve the live interval figures for Prometheus at HOST:PORT (GET /metrics) while it
    /// runs (docs/metrics.md).
    #[arg(long, value_name = "HOST:PORT")]
    pub metrics_addr: Option<String>,
}

/// The text after `tune --help`'s options; its numbers come from the confirmation's constants.
fn after_help() -> String {
    format!(
        "The knobs are a curated list of OLTP-relevant InnoDB and server variables, kept when \
         the server has them and can change them at run time (SET GLOBAL: only such settings \
         are tuned), with ranges from the host's memory and the data size. The search is \
         seeded by `qpslab advise`'s findings. The best configuration is confirmed against the \
         baseline in paired rounds (AB BA AB ...) stored as a study (`qpslab report NAME`), \
         until the anytime-valid interval decides or the confirmation's share of the budget \
         ({:.0}%, with what the search leaves) is spent; it is written to --out only when the \
         {:.0}% interval of its throughput ratio lies above 1 and the ratio is at least {:.0}% \
         above the baseline. The budget counts every trial, setting change and warm-up (not the \
         dataset's preparation). Every setting is put back at the end, on error and on Ctrl-C.",
        qpslab_tune::budget::CONFIRM_SHARE * 100.0,
        confirm::LEVEL * 100.0,
        (confirm::MIN_GAIN - 1.0) * 100.0
    )
}
