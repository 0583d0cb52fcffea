//! `qpslab lab run|plan|resume|show SPEC.toml`: studies over servers, configs and workloads.

use anyhow::Result;
use clap::{Args, Subcommand};

/// `qpslab lab` subcommands.
#[derive(Subcommand, Debug)]
pub enum LabCommand {
    /// Print the cells a study spec expands to, in the order they would run.
    Plan(LabSpecArgs),
}

/// A study spec file.
#[derive(Args, Debug)]
pub struct LabSpecArgs {
    /// The study spec (TOML).
    pub spec: std::path::PathBuf,
}

/// Runs a `lab` subcommand.
pub fn lab(c: LabCommand) -> Result<()> {
    match c {
        LabCommand::Plan(a) => Err(crate::error::user(format!(
            "{}: studies are not available yet",
            a.spec.display()
        ))),
    }
}
