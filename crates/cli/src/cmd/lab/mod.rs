//! `qpslab lab run|plan|resume|show`: studies over servers, configs and workloads, from a spec
//! file (see `qpslab_lab::study::spec`). This module only parses, prints and maps errors; the lab crate
//! expands, orders, executes and resumes. One file per subcommand (`plan`, `run` for run and
//! resume, `show`); `study` prints a stored study for both `run` and `show`, `progress` what
//! `run` prints as cells end.

mod plan;
mod progress;
mod run;
mod show;
mod study;

use crate::args::LabCommand;
use anyhow::Result;
use qpslab_lab::study::Mode;

/// Runs a `lab` subcommand.
pub fn lab(c: LabCommand) -> Result<()> {
    match c {
        LabCommand::Plan(a) => plan::plan(&a),
        LabCommand::Run(a) => run::run(&a, Mode::Run),
        LabCommand::Resume(a) => run::run(&a, Mode::Resume),
        LabCommand::Show(a) => show::show(&a),
    }
}
