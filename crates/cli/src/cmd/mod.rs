//! One module per subcommand. Each takes its parsed arguments and returns `anyhow::Result`.

mod advise;
mod capture;
mod check;
mod diff;
mod digest;
mod doctor;
mod export;
mod history;
mod import;
mod io;
mod lab;
mod merge;
mod meta;
mod prepare;
mod replay;
mod replica;
mod report;
mod restore;
mod run;
mod server;
mod show;
mod threads;
mod tune;

use crate::args::Command;

/// Runs the chosen subcommand.
pub fn dispatch(command: Command) -> anyhow::Result<()> {
    if matches!(
        command,
        Command::Run(_) | Command::Lab(_) | Command::Replay(_) | Command::Diff(_) | Command::Io(_)
    ) {
        crate::signals::polled();
    }
    if matches!(command, Command::Capture(_) | Command::Tune(_)) {
        crate::signals::undoing();
    }
    match command {
        Command::Run(a) => run::run(*a),
        Command::Prepare(a) => prepare::prepare(*a),
        Command::Cleanup(a) => prepare::cleanup(a),
        Command::Check(a) => check::check(a),
        Command::Show(a) => show::show(a),
        Command::Server(c) => server::server(c),
        Command::Lab(c) => lab::lab(c),
        Command::Report(a) => report::report(a),
        Command::Compare(a) => report::compare(a),
        Command::History(a) => history::history(a),
        Command::Import(a) => import::import(a),
        Command::Export(a) => export::export(a),
        Command::Merge(a) => merge::merge(a),
        Command::Replay(a) => replay::replay(*a),
        Command::Digest(a) => digest::digest(a),
        Command::Capture(a) => capture::capture(a),
        Command::Advise(a) => advise::advise(a),
        Command::Diff(a) => diff::diff(*a),
        Command::Io(a) => io::io(*a),
        Command::Tune(a) => tune::tune(*a),
        Command::Restore(a) => restore::restore(a),
        Command::Completions(a) => meta::completions(a),
        Command::Man(a) => meta::man(a),
        Command::Doctor(a) => doctor::doctor(a),
    }
}
