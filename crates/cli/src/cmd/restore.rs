//! `qpslab restore`, and the checks other commands make before they measure or change a
//! server: settings left changed by a process that was killed (`kill -9`) before it put them
//! back. The records and the restoring are `qpslab_lab::server::restore`; this module maps them to
//! messages and exit codes.

use crate::args::{Format, RestoreArgs, TargetArgs};
use crate::error::user;
use crate::out::Output;
use crate::target::{command_args, connect, explicit, sandbox_home};
use anyhow::Result;
use qpslab_core::fault::Blame;
use qpslab_core::ConnectOptions;
use qpslab_lab::server::restore::{Ledger, RestoreError};
use qpslab_sandbox::SandboxHome;

/// Runs `qpslab restore`.
pub fn restore(a: RestoreArgs) -> Result<()> {
    let out = Output::new(&a.output, "restore")?;
    let home = sandbox_home(&a.home);
    let ledger = Ledger::for_store(home.path(), &a.db.db).map_err(|e| error(e, &a.target))?;
    if !explicit(&a.target) {
        let records = ledger.records().map_err(|e| error(e, &a.target))?;
        if records.is_empty() {
            return out.emit(|f| match f {
                Format::Json => crate::out::json(&serde_json::json!({ "restored": null })),
                _ => Ok("nothing to restore\n".into()),
            });
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
    let restored = ledger.restore(&options).map_err(|e| error(e, &a.target))?;
    out.emit(|f| match (f, &restored) {
        (Format::Json, r) => crate::out::json(&serde_json::json!({
            "server": options.describe(),
            "restored": r,
            "sql": r.as_ref().map(|r| r.restore_line()),
        })),
        (_, None) => Ok(format!("nothing to restore on {}\n", options.describe())),
        (_, Some(r)) => Ok(format!(
            "restored {} (left by `{}`, pid {}): {}\n",
            r.target,
            r.command,
            r.pid,
            r.restore_line()
        )),
    })?;
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
