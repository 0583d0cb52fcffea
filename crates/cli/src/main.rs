//! The `qpslab` binary: parses arguments, dispatches to a command, maps errors to exit codes
//! (0 success, 1 runtime failure, 2 the user's mistake, 128 + N when stopped by signal N after
//! storing what was measured: 130 Ctrl-C, 143 SIGTERM, 129 SIGHUP) and prints each error as one
//! line.

#[macro_use]
mod out;
mod args;
mod arming;
mod cmd;
mod db;
mod error;
mod hosts;
mod metrics;
mod outfile;
mod plan;
mod printer;
mod profile;
mod progress;
mod render;
mod signals;
mod target;

use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = args::Cli::parse_args();
    if cli.sysbench {
        out::set_sysbench();
    }
    out::set_verbosity(match (cli.verbosity.quiet, cli.verbosity.verbose) {
        (true, _) => out::Verbosity::Quiet,
        (false, true) => out::Verbosity::Verbose,
        (false, false) => out::Verbosity::Normal,
    });
    detail!("qpslab {}", env!("QPSLAB_LONG_VERSION"));
    // The sandbox library's notes follow --quiet like every other note.
    qpslab_sandbox::set_note_sink(|note| eprintln!("qpslab: note: {note}"));
    if let Err(e) = signals::install() {
        let _ = writeln!(
            std::io::stderr(),
            "qpslab: warning: cannot handle signals ({e}); sandboxes may outlive an interrupt"
        );
    }
    let outcome = cmd::dispatch(cli.command);
    let mut code = match outcome {
        Ok(()) => 0,
        Err(err) => {
            // The servers were stopped under the command by a signal: the watcher thread exits.
            while signals::exiting() {
                std::thread::park();
            }
            qpslab_sandbox::registry::stop_all_started();
            out::write_error(format_args!("qpslab: error: {}\n", one_line(&err)));
            error::exit_code(&err)
        }
    };
    // Stopped by a signal: exit as a shell reports a process it killed, once everything is
    // stored and stopped.
    if let Some(sig) = signals::first() {
        qpslab_sandbox::registry::stop_all_started();
        code = signals::exit_code(sig);
    }
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

/// The error and its causes on one line, leaving out a cause whose text the message before it
/// already includes (library errors often print their source themselves).
fn one_line(err: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line.replace('\n', " ")
}
