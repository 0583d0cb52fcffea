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
    #[arg(long)]
    pub keep_files: bool,
    #[command(flatten)]
    pub db: DbArgs,
}
