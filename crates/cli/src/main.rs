//! The `qpslab` binary: parses arguments, dispatches to a command, maps errors to exit codes
//! (0 success, 1 runtime failure, 2 the user's mistake, 128 + N when stopped by signal N after
//! storing what was measured: 130 Ctrl-C, 143 SIGTERM, 129 SIGHUP) and prints each error as one
//! line.
//!
//! Its parts, file by file (the crate map in docs/ARCHITECTURE.md points here): every clap
//! definition (`args/`; the run options' flags are generated from the option table in
//! `args/flags.rs`; sysbench's and mysql's command lines as typed, its word order, a binary called
//! `sysbench` and its options with no flag here, are rewritten before clap reads them in
//! `args/sysbench.rs`), from flags to plans, sandbox specs and output paths (`plan.rs`), targets:
//! the flags and option files read into the lab's `TargetRequest`, the password asked for
//! (`target.rs`; the lab's `request/target.rs` starts the embedded sandbox, applies the connection
//! flags and stops it), one module per subcommand (`cmd/`), progress and live lines
//! (`printer.rs`), the one output path of `--format`/`--export-*` (`out.rs`, flags in
//! `args/output.rs`; docs/output.md), the one ETA estimator and progress line (`progress.rs`),
//! `--metrics-addr` started and fed (`metrics.rs`), all terminal output, one module per command
//! named as in `args/` and `cmd/` (`render/`: the live line, phase summary, sweep table and
//! aligned tables several commands print in `render/mod.rs`; `run`'s phase header, client warning,
//! where a phase's profile and flame graph are and the rate-search table in `render/run.rs`; a
//! replay's live line and class table in `render/replay.rs`; `render/tune.rs`, `render/diff.rs`,
//! `render/advise.rs`, `render/digest.rs` and the others beside them), exit codes and error
//! mapping (`error.rs`), the hosts runs were measured on, for `compare` and `show` (`hosts.rs`),
//! signals (`signals.rs`, which owns the interrupt flag), output that survives a closed pipe and
//! the one `--quiet`/`--verbose` switch (`out.rs`), completions and man pages generated from the
//! clap definition (`args/meta.rs`; the values completions offer, added to a copy of the
//! definition only for the scripts, and the sandbox names looked up at TAB in
//! `args/meta/complete.rs`; the man pages' EXAMPLES from the docs' `sh` blocks, ENVIRONMENT, FILES
//! and EXIT STATUS in `args/meta/man_sections.rs`), `--version`'s commit and date (`build.rs`).

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
