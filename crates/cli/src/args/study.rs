//! The flags of `lab`, `report` and `compare`.

use super::{
    DbArgs, HtmlMdJson, JsonSwitch, OnTargetArgs, OutputArgs, SandboxHomeArgs, TableJsonCsv,
    TableJsonMd,
};
use clap::{Args, Subcommand};
use std::path::PathBuf;

/// `qpslab lab` subcommands.
#[derive(Subcommand, Debug)]
pub enum LabCommand {
    /// Print the cells a study spec expands to, in the order they would run, and the
    /// precision its budget buys and the budget its precision needs, from earlier runs.
    Plan(LabSpecArgs),
    /// Create the study and execute all its cells.
    Run(LabRunArgs),
    /// Continue an interrupted study without rerunning its finished cells.
    Resume(LabRunArgs),
    /// List studies, or one study's cells with status and headline numbers.
    Show(LabShowArgs),
}

/// `lab plan`: a study spec file, and where its estimate comes from.
#[derive(Args, Debug)]
pub struct LabSpecArgs {
    /// The study spec (TOML).
    pub spec: PathBuf,
    /// Run the study's three first rounds as study NAME-pilot before the estimate, and
    /// estimate from them (else from earlier runs of the same setups in the store).
    #[arg(long)]
    pub pilot: bool,
    #[command(flatten)]
    pub db: DbArgs,
    #[command(flatten)]
    pub home: SandboxHomeArgs,
    /// Output: table, json or csv (one row per cell).
    #[command(flatten)]
    pub output: OutputArgs<TableJsonCsv, JsonSwitch>,
}

/// `lab run` / `lab resume`.
#[derive(Args, Debug)]
pub struct LabRunArgs {
    /// The study spec (TOML).
    pub spec: PathBuf,
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
    /// Run rounds until each comparison's 95% interval is within ±PCT (e.g. 5%); the spec's
    /// `precision` (docs/studies.md).
    #[arg(long, value_name = "PCT")]
    pub precision: Option<String>,
    /// The metric --precision is about: tps (default), qps, p50, p95 or p99.
    #[arg(long, value_name = "METRIC")]
    pub precision_metric: Option<String>,
    /// Wall time of the whole study, start-ups and loads included (e.g. 10m); the spec's
    /// `budget`.
    #[arg(long, value_name = "TIME")]
    pub budget: Option<String>,
    /// Rounds every comparison runs before it may stop (default 3).
    #[arg(long, value_name = "N")]
    pub min_repeats: Option<u32>,
    /// The most rounds (default 20).
    #[arg(long, value_name = "N")]
    pub max_repeats: Option<u32>,
    /// Decide only every N paired rounds and at --max-repeats (planned looks: narrower
    /// intervals than deciding after every round; docs/studies.md).
    #[arg(long, value_name = "N")]
    pub look_every: Option<u32>,
    /// Output: table (the cells as they run), json or csv (the study, as `lab show` writes it).
    #[command(flatten)]
    pub output: OutputArgs<TableJsonCsv>,
}

/// `lab show`.
#[derive(Args, Debug)]
pub struct LabShowArgs {
    /// A study name, or its spec file (default: list every study).
    pub study: Option<String>,
    #[command(flatten)]
    pub db: DbArgs,
    /// Output: table, json or csv (one row per cell; with no STUDY, per study).
    #[command(flatten)]
    pub output: OutputArgs<TableJsonCsv, JsonSwitch>,
    /// Same as --format csv (older spelling).
    #[arg(long, hide = true, conflicts_with_all = ["format", "json"])]
    pub csv: bool,
}

/// `qpslab report RUN|STUDY ... --out FILE`.
#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Runs (ids; repeats of one setup as ids joined by commas) or studies (names); with
    /// --history, series (keys, names or workloads, as `qpslab history` takes them).
    #[arg(required = true, value_name = "RUN|STUDY|SERIES")]
    pub items: Vec<String>,
    /// Draw the history of the series named: each run's throughput in order, the levels
    /// between the change points found and the changes marked (docs/history.md).
    #[arg(long)]
    pub history: bool,
    /// Where to write the report (default: standard output).
    #[arg(long, short, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Output: html, md or json (default: from the --out extension, else html).
    #[command(flatten)]
    pub output: OutputArgs<HtmlMdJson>,
    /// Also write every chart as DIR/<chart>.png.
    #[arg(long, value_name = "DIR")]
    pub png: Option<PathBuf>,
    #[command(flatten)]
    pub db: DbArgs,
}

/// `qpslab compare A B`.
#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Baseline: a run id, repeats as ids joined by commas (1,3,5), or STUDY/VARIANT.
    pub a: String,
    /// Candidate: a run id, repeats as ids joined by commas, or STUDY/VARIANT.
    pub b: String,
    /// Output: table, json (per setting, per metric a, b, change_pct, ci_low, ci_high,
    /// significant) or md.
    #[command(flatten)]
    pub output: OutputArgs<TableJsonMd>,
    #[command(flatten)]
    pub db: DbArgs,
}
