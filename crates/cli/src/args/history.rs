//! `qpslab history`: what the user typed.

use super::{DbArgs, OutputArgs, TableJsonCsvMd};
use clap::Args;

/// `qpslab history [SERIES|WORKLOAD...] [--by AXIS] [--check [--margin PCT]]`.
#[derive(Args, Debug)]
pub struct HistoryArgs {
    /// Series to show: a series' key (as history lists them), a --series name, or a workload
    /// (each of its series); none: every series.
    #[arg(value_name = "SERIES|WORKLOAD")]
    pub series: Vec<String>,
    /// The x axis the points are ordered along: time, server_version or label:KEY.
    #[arg(long, value_name = "AXIS", default_value = "time")]
    pub by: String,
    /// The change point test's level: on a series without change, the chance of finding any.
    #[arg(long, value_name = "P", default_value_t = 0.01)]
    pub significance: f64,
    /// The smallest relative change of throughput reported, in percent (5 or 5%).
    #[arg(long, value_name = "PCT", default_value = "5%")]
    pub min_change: String,
    /// Only runs with this id or a later one (a level accepted on purpose left behind).
    #[arg(long, value_name = "RUN")]
    pub since: Option<i64>,
    /// Only runs with this id or an earlier one (the series as it was when RUN was stored).
    #[arg(long, value_name = "RUN")]
    pub until: Option<i64>,
    /// Gate for CI: exit 1 when the newest points of the one series named are a regression
    /// beyond --margin (naming the change point and its runs), 0 when not, 2 on bad input.
    #[arg(long)]
    pub check: bool,
    /// With --check: the largest drop of throughput let pass, in percent.
    #[arg(long, value_name = "PCT", default_value = "5%", requires = "check")]
    pub margin: String,
    #[command(flatten)]
    pub db: DbArgs,
    /// Output: table, json, csv (a row per point) or md.
    #[command(flatten)]
    pub output: OutputArgs<TableJsonCsvMd>,
}
