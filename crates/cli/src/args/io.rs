//! `qpslab io MODE`: sysbench's fileio tests through fio. The fileio flags come from the option
//! table (`flags.rs`, [`IoFlags`]); only what is not a run option is declared here.

use super::flags::IoFlags;
use super::{DbArgs, JsonPath, OutputArgs, TableJsonCsv};
use clap::Args;
use std::path::PathBuf;

/// `qpslab io MODE [options]`.
#[derive(Args, Debug)]
pub struct IoArgs {
    #[command(flatten)]
    pub options: IoFlags,
    /// Directory of the test files (test_file.N).
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
    /// Output: table (the live lines), json (the stored run: iops, MiB/s, latency
    /// percentiles, samples, fio's version and command) or csv, printed at its end.
    #[command(flatten)]
    pub output: OutputArgs<TableJsonCsv, JsonPath>,
    /// Also write fio's own last json+ report, as fio wrote it, to this file.
    #[arg(long, value_name = "PATH")]
    pub fio_json: Option<PathBuf>,
    /// Leave the test files in --dir after the run.
    #[arg(long, conflicts_with_all = ["prepare", "prepared", "cleanup"])]
    pub keep_files: bool,
    /// Only lay the test files out in --dir and leave them (sysbench's `fileio prepare`);
    /// nothing is measured.
    #[arg(long, conflicts_with_all = ["prepared", "cleanup"])]
    pub prepare: bool,
    /// Measure the test files `--prepare` laid out in --dir, neither writing them first nor
    /// removing them (sysbench's `fileio run`).
    #[arg(long, conflicts_with = "cleanup")]
    pub prepared: bool,
    /// Only remove the test files of --file-num from --dir (sysbench's `fileio cleanup`).
    #[arg(long)]
    pub cleanup: bool,
    #[command(flatten)]
    pub db: DbArgs,
    /// The latency histogram after the summary, as sysbench's --histogram (on, off).
    #[arg(
        long,
        value_name = "on|off",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "on",
        value_parser = ["on", "off"],
        hide = true
    )]
    pub histogram: Option<String>,
    /// No interval lines (sysbench's --report-interval=0).
    #[arg(long, hide = true)]
    pub no_live_lines: bool,
}
