//! `qpslab import` and `qpslab export`: what the user typed.

use super::{DbArgs, OutputArgs, TableJson};
use clap::Args;
use std::path::PathBuf;

/// `qpslab import OTHER.db [RUN|STUDY...]`.
#[derive(Args, Debug)]
pub struct ImportArgs {
    /// The store to copy from (another host's qpslab.db, or a server's
    /// mysql://user@host:port/schema); it is only read.
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

/// `qpslab export --out NEW.db [RUN|STUDY...]`.
#[derive(Args, Debug)]
pub struct ExportArgs {
    /// Runs (by their id here) and studies (by name) to copy, with each study's runs (default:
    /// every run and study).
    #[arg(value_name = "RUN|STUDY")]
    pub picks: Vec<String>,
    /// The new SQLite store file to write (an existing file is refused).
    #[arg(long, value_name = "NEW.db")]
    pub out: PathBuf,
    /// The store to copy from: a file, or a server's (mysql://user@host:port/schema).
    #[command(flatten)]
    pub db: DbArgs,
    /// Output: table (a line per run and study) or json.
    #[command(flatten)]
    pub output: OutputArgs<TableJson>,
}
