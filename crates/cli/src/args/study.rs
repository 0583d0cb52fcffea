//! The flags of `lab`, `report` and `compare`.

use super::{DbArgs, SandboxHomeArgs};
use clap::{Args, Subcommand, ValueEnum};
use std::path::PathBuf;

/// `qpslab lab` subcommands.
#[derive(Subcommand, Debug)]
pub enum LabCommand {
    /// Print the cells a study spec expands to, in the order they would run.
    Plan(LabSpecArgs),
    /// Create the study and execute all its cells.
    Run(LabRunArgs),
    /// Continue an interrupted study without rerunning its finished cells.
    Resume(LabRunArgs),
    /// List studies, or one study's cells with status and headline numbers.
    Show(LabShowArgs),
}

/// A study spec file.
#[derive(Args, Debug)]
pub struct LabSpecArgs {
    /// The study spec (TOML).
    pub spec: PathBuf,
    /// Print the cells as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `lab run` / `lab resume`.
#[derive(Args, Debug)]
pub struct LabRunArgs {
    /// The study spec (TOML).
    pub spec: PathBuf,
    #[command(flatten)]
    pub db: DbArgs,
    #[command(flatten)]
    pub home: SandboxHomeArgs,
    /// Serve the live interval figures for Prometheus at HOST:PORT (GET /metrics) while it
    /// runs (docs/metrics.md).
    #[arg(long, value_name = "HOST:PORT")]
    pub metrics_addr: Option<String>,
}

/// `lab show`.
#[derive(Args, Debug)]
pub struct LabShowArgs {
    /// A study name, or its spec file (default: list every study).
    pub study: Option<String>,
    #[command(flatten)]
    pub db: DbArgs,
    /// Print JSON.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print CSV (one line per cell).
    #[arg(long)]
    pub csv: bool,
}

/// Report formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// One self-contained HTML file with inline SVG charts.
    Html,
    /// Markdown, for pasting into a ticket.
    Md,
    /// The report's data as JSON.
    Json,
}

/// `qpslab report RUN|STUDY ... --out FILE`.
#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Runs (ids; repeats of one setup as ids joined by commas) or studies (names).
    #[arg(required = true, value_name = "RUN|STUDY")]
    pub items: Vec<String>,
    /// Where to write the report (default: standard output).
    #[arg(long, short, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Format (default: from the --out extension, else html).
    #[arg(long, value_enum)]
    pub format: Option<ReportFormat>,
    /// Also write every chart as DIR/<chart>.png.
    #[arg(long, value_name = "DIR")]
    pub png: Option<PathBuf>,
    #[command(flatten)]
    pub db: DbArgs,
}

/// Comparison output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CompareFormat {
    /// An aligned terminal table.
    Table,
    /// JSON: per setting, per metric a, b, change_pct, ci_low, ci_high, significant.
    Json,
    /// Markdown tables.
    Md,
}

/// `qpslab compare A B`.
#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Baseline: a run id, repeats as ids joined by commas (1,3,5), or STUDY/VARIANT.
    pub a: String,
    /// Candidate: a run id, repeats as ids joined by commas, or STUDY/VARIANT.
    pub b: String,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: CompareFormat,
    #[command(flatten)]
    pub db: DbArgs,
}
