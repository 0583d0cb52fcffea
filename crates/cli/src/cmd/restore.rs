//! `qpslab restore`, and the checks other commands make before they measure or change a
//! server: settings left changed by a process that was killed (`kill -9`) before it put them
//! back. The records and the restoring are `qpslab_lab::restore`; this module maps them to
//! messages and exit codes.

use crate::args::{RestoreArgs, TargetArgs};
use crate::error::user;
use crate::target::{command_args, connect, explicit, sandbox_home};
use anyhow::Result;
use qpslab_core::ConnectOptions;
use qpslab_lab::restore::{Ledger, RestoreError};
use qpslab_sandbox::SandboxHome;

/// Runs `qpslab restore`.
pub fn restore(a: RestoreArgs) -> Result<()> {
    let home = sandbox_home(&a.home);
    let ledger = Ledger::in_lab(home.path());
    if !explicit(&a.target) {
        let records = ledger.records();
        if records.is_empty() {
            println!("nothing to restore");
            return Ok(());
        }
        for r in &records {
            eprintln!(
                "{}: settings of `{}` (pid {}): {}",
                r.target,
                r.command,
                r.pid,
                r.restore_line()
            );
        }
        return Err(user(
            "name the server to restore: --sandbox NAME, --socket PATH or --target DSN",
        ));
    }
    let connected = connect(&a.target, None, &home)?;
    let options = connected.server_options();
    match ledger.restore(&options).map_err(|e| error(e, &a.target))? {
        None => println!("nothing to restore on {}", options.describe()),
        Some(r) => println!(
            "restored {} (left by `{}`, pid {}): {}",
            r.target,
            r.command,
            r.pid,
            r.restore_line()
        ),
    }
    connected.finish()
}

/// Before `run` measures: refuses a server holding a dead process's settings (they
/// would be taken as its baseline) or one whose settings another process is changing now.
pub(crate) fn refuse_leftovers(
    home: &SandboxHome,
    server: &ConnectOptions,
    t: &TargetArgs,
) -> Result<()> {
    Ledger::in_lab(home.path())
        .refuse_leftovers(server)
        .map_err(|e| error(e, t))
}

/// Before `advise` or `capture` reads a server's settings: a warning on stderr when they are
/// a dead process's leftovers or another process is changing them.
pub(crate) fn warn_leftovers(home: &SandboxHome, server: &ConnectOptions, t: &TargetArgs) {
    if let Err(e) = refuse_leftovers(home, server, t) {
        eprintln!("warning: {e}");
    }
}

/// The library's error, with how to apply the restore where there is one to apply.
pub(crate) fn error(e: RestoreError, t: &TargetArgs) -> anyhow::Error {
    let text = match &e {
        RestoreError::Leftover(_) => {
            let flags = command_args(t).join(" ");
            format!("{e} (or run: qpslab restore {flags})")
        }
        _ => e.to_string(),
    };
    if e.is_user_error() {
        user(text)
    } else {
        anyhow::Error::new(e)
    }
}
