//! The one output convention of every command, declared once: `--format` for what goes to
//! standard output, `--export-json/-csv/-md PATH` for files (as hyperfine does). Which formats a
//! command can write is its own business (`crate::out::Output::new` refuses the others).
//!
//! The spellings of older versions stay as hidden aliases, through the `L` parameter of
//! [`OutputArgs`]: a `--json` switch ([`JsonSwitch`]: `--format json`), a `--json PATH`
//! ([`JsonPath`]: `--export-json PATH`), or neither ([`NoLegacy`]).

use clap::{Args, FromArgMatches, ValueEnum};
use std::path::{Path, PathBuf};

/// Every output format; each command writes some of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Aligned text for a terminal.
    Table,
    /// JSON (the same document as --export-json writes).
    Json,
    /// CSV with a header line, where the output is a table of rows.
    Csv,
    /// Markdown.
    Md,
    /// One self-contained HTML file.
    Html,
}

impl Format {
    /// The name the user types.
    pub fn name(self) -> &'static str {
        match self {
            Format::Table => "table",
            Format::Json => "json",
            Format::Csv => "csv",
            Format::Md => "md",
            Format::Html => "html",
        }
    }
}

/// `--format` and the `--export-*` files.
#[derive(Args, Debug, Clone, Default)]
pub struct OutputArgs<L: Args + FromArgMatches + Legacy = NoLegacy> {
    /// What to print on standard output: table, json, csv, md or html; each command writes
    /// some of them and names those when asked for another (docs/output.md).
    #[arg(
        long,
        value_enum,
        value_name = "FORMAT",
        hide_possible_values = true,
        help_heading = "Output"
    )]
    pub format: Option<Format>,
    /// Also write the JSON document (the one --format json prints) to PATH, atomically.
    #[arg(long, value_name = "PATH", help_heading = "Output")]
    pub export_json: Option<PathBuf>,
    /// Also write the CSV table to PATH, atomically (commands whose output is rows).
    #[arg(long, value_name = "PATH", help_heading = "Output")]
    pub export_csv: Option<PathBuf>,
    /// Also write the Markdown form to PATH, atomically (commands that have one).
    #[arg(long, value_name = "PATH", help_heading = "Output")]
    pub export_md: Option<PathBuf>,
    #[command(flatten)]
    pub legacy: L,
}

/// An older spelling kept as a hidden alias.
pub trait Legacy {
    /// The format it asks for on standard output.
    fn format(&self) -> Option<Format> {
        None
    }
    /// The JSON file it asks for.
    fn export_json(&self) -> Option<&Path> {
        None
    }
}

/// No older spelling.
#[derive(Args, Debug, Clone, Default)]
pub struct NoLegacy {}

impl Legacy for NoLegacy {}

/// `--json` as a switch: `--format json`.
#[derive(Args, Debug, Clone, Default)]
pub struct JsonSwitch {
    /// Same as --format json (older spelling).
    #[arg(long = "json", hide = true, conflicts_with = "format")]
    pub json: bool,
}

impl Legacy for JsonSwitch {
    fn format(&self) -> Option<Format> {
        self.json.then_some(Format::Json)
    }
}

/// `--json PATH`: `--export-json PATH`.
#[derive(Args, Debug, Clone, Default)]
pub struct JsonPath {
    /// Same as --export-json PATH (older spelling).
    #[arg(
        long = "json",
        value_name = "PATH",
        hide = true,
        conflicts_with = "export_json"
    )]
    pub json: Option<PathBuf>,
}

impl Legacy for JsonPath {
    fn export_json(&self) -> Option<&Path> {
        self.json.as_deref()
    }
}

/// What the user asked for, older spellings resolved: all `crate::out::Output` needs to know
/// of the flags (so that clap stays in `args`).
pub trait Asked {
    /// The format asked for, if any.
    fn format(&self) -> Option<Format>;
    /// Each file asked for, with the flag that named it and its format.
    fn exports(&self) -> Vec<(&'static str, Format, &Path)>;
}

impl<L: Args + FromArgMatches + Legacy> Asked for OutputArgs<L> {
    fn format(&self) -> Option<Format> {
        self.format.or(self.legacy.format())
    }

    fn exports(&self) -> Vec<(&'static str, Format, &Path)> {
        let json = self.export_json.as_deref().map(|p| ("--export-json", p));
        let legacy = self.legacy.export_json().map(|p| ("--json", p));
        [
            json.or(legacy).map(|(flag, p)| (flag, Format::Json, p)),
            self.export_csv
                .as_deref()
                .map(|p| ("--export-csv", Format::Csv, p)),
            self.export_md
                .as_deref()
                .map(|p| ("--export-md", Format::Md, p)),
        ]
        .into_iter()
        .flatten()
        .collect()
    }
}
