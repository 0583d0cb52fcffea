//! `qpslab import`: what the user typed.

use super::{DbArgs, OutputArgs, TableJson};
use clap::Args;
use std::path::PathBuf;

/// `qpslab import OTHER.db [RUN|STUDY...]`.
#[derive(Args, Debug)]
pub struct ImportArgs {
    /// The store to copy from (another host's qpslab.db); it is only read.
    #[arg(value_name = "OTHER.db")]
    pub from: PathBuf,
    /// Runs (by their id there) and studies (by name) to copy, with each study's runs (default:
    /// every run and study there).
    #[arg(value_name = "RUN|STUDY")]
    pub picks: Vec<String>,
    /// The store to copy into.
    #[command(flatten)]
    pub db: DbArgs,
    /// Output: table (a line per run and study) or json.
    #[command(flatten)]
    pub output: OutputArgs<TableJson>,
}
