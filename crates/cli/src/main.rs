//! The `qpslab` binary: parses arguments, dispatches to a command, maps errors to exit codes
//! (0 success, 1 runtime failure, 2 the user's mistake) and prints each error as one line.

#[macro_use]
mod out;
mod args;
mod cmd;
mod error;
mod hiargs;
mod render;
mod target;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = args::Cli::parse();
    install_interrupt_handler();
    match cmd::dispatch(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            qpslab_sandbox::registry::stop_all_started();
            eprintln!("qpslab: error: {}", one_line(&err));
            ExitCode::from(error::exit_code(&err) as u8)
        }
    }
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

/// Ctrl-C: a first press asks the running phase to stop (it is discarded, finished phases are
/// already stored) and lets the command unwind, which stops the sandboxes it started; a second
/// press stops them at once and exits.
fn install_interrupt_handler() {
    let result = ctrlc::set_handler(|| {
        if cmd::INTERRUPTED.swap(true, std::sync::atomic::Ordering::SeqCst) {
            qpslab_sandbox::registry::stop_all_started();
            eprintln!("qpslab: interrupted");
            std::process::exit(130);
        }
        eprintln!("qpslab: interrupting (press Ctrl-C again to stop at once)");
    });
    if let Err(e) = result {
        eprintln!(
            "qpslab: warning: cannot handle Ctrl-C ({e}); sandboxes may outlive an interrupt"
        );
    }
}
