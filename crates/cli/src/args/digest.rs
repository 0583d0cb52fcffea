//! `qpslab digest`'s arguments.

use super::{JsonPath, OutputArgs, TableJsonMd};
use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// Which log the file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LogTypeArg {
    /// The slow query log (`slow_query_log`).
    Slow,
    /// The general query log (`general_log`).
    General,
}

/// `qpslab digest LOG`: group a slow or general log's statements into classes.
#[derive(Args, Debug)]
pub struct DigestArgs {
    /// The log file (`-` for standard input).
    #[arg(value_name = "LOG")]
    pub log: PathBuf,
    /// Which log it is.
    #[arg(long, value_enum, default_value = "slow")]
    pub log_type: LogTypeArg,
    /// Classes shown, heaviest first (default: 20 for table and md, all for json).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Classes kept in memory at most; those beyond it, the lightest, are folded into one
    /// `other` row with exact sums (default: what a quarter of the memory free now holds).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_classes: Option<u64>,
    /// Output: table (then each class's example), json (every class unless --limit is
    /// given) or md.
    #[command(flatten)]
    pub output: OutputArgs<TableJsonMd, JsonPath>,
}
