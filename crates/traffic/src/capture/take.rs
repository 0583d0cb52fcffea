//! One capture from start to end ([`take`]): the restore ledger checked and written, the
//! baseline, the window with the log on, every setting put back, and the log written out.
//!
//! What the caller shows along the way comes through [`Step`]s; the result is a [`Taken`]:
//! the server's activity before and during the window and what the log held.

use super::{Activity, Capture, CaptureError, Changes, Copied, Window};
use qpslab_core::ConnectOptions;
use qpslab_lab::server::restore::{Ledger, RestoreError};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The window before the log goes on that gives the server's usual rate.
pub const BASELINE: Duration = Duration::from_secs(2);

/// Where the window's log goes.
pub enum LogOut<'a> {
    /// A stream (standard output), flushed at the end.
    Writer(&'a mut dyn Write),
    /// A file written through a temporary file beside it and renamed over it once complete;
    /// `replace` allows an existing file to be replaced.
    File {
        /// The file.
        path: &'a Path,
        /// Whether an existing file may be replaced.
        replace: bool,
    },
}

/// What one capture needs.
pub struct Request<'a> {
    /// The server (on this host).
    pub target: &'a ConnectOptions,
    /// The lab directory whose restore ledger records the changed settings.
    pub lab: &'a Path,
    /// How long the log stays on.
    pub time: Duration,
    /// Ends the baseline or the window early (Ctrl-C).
    pub stop: &'a AtomicBool,
    /// Where the log goes.
    pub out: LogOut<'a>,
}

/// What happened, as it happens.
pub enum Step<'a> {
    /// The settings are read and recorded; the statement restoring them by hand.
    Planned {
        /// The one statement that restores every variable.
        restore_line: &'a str,
    },
    /// The slow log is on.
    LogOn,
    /// Every setting is back.
    Restored,
    /// The ledger record could not be cleared (the settings are back all the same).
    LedgerWarning(&'a RestoreError),
}

/// What a capture saw.
pub struct Taken {
    /// The server's statements in the seconds before the log went on.
    pub before: Activity,
    /// The window and its log; `None` when stopped before the log went on (nothing changed,
    /// nothing written).
    pub logged: Option<Logged>,
    /// The variables changed, with their old values.
    pub changes: Changes,
    /// The one statement that restores every variable by hand.
    pub restore_sql: String,
}

/// The window with the log on, and what was written of it.
#[derive(Clone, Copy, Debug)]
pub struct Logged {
    /// The server's statements while the log was on.
    pub during: Activity,
    /// What the log held.
    pub copied: Copied,
}

/// Takes one capture: refuses a server holding a killed process's settings, plans the capture,
/// records its settings in the lab's restore ledger, measures the baseline, switches the log
/// on for `time`, restores, clears the record and writes the log to `out`. The server is
/// restored on every path out of here.
pub fn take(req: Request, on: &mut dyn FnMut(Step)) -> Result<Taken, CaptureError> {
    let ledger = Ledger::in_lab(req.lab);
    // A killed capture's (or tune's) settings would be taken as the server's own.
    ledger.refuse_leftovers(req.target)?;
    let cap = Capture::open(req.target)?;
    let guard = ledger.begin_logging(req.target, "capture", cap.changes().saved())?;
    let (changes, restore_sql) = (cap.changes().clone(), cap.restore_line());
    on(Step::Planned {
        restore_line: &restore_sql,
    });
    let taken = window(cap, req.time, req.stop, on);
    if let Err(e) = guard.finish() {
        on(Step::LedgerWarning(&e));
    }
    let (window, before) = taken?;
    let logged = match window {
        None => None,
        Some(w) => Some(Logged {
            during: w.activity,
            copied: write_log(req.out, &w)?,
        }),
    };
    Ok(Taken {
        before,
        logged,
        changes,
        restore_sql,
    })
}

/// The baseline, then the window with the log on; `None` when a signal came before the log
/// went on. The server is restored on every path out of here (by `Running`'s drop on errors).
fn window(
    mut cap: Capture,
    time: Duration,
    stop: &AtomicBool,
    on: &mut dyn FnMut(Step),
) -> Result<(Option<Window>, Activity), CaptureError> {
    let before = cap.baseline(BASELINE, stop)?;
    if stop.load(Ordering::SeqCst) {
        return Ok((None, before));
    }
    let running = cap.enable()?;
    on(Step::LogOn);
    running.wait(time, stop);
    let window = running.finish()?;
    on(Step::Restored);
    Ok((Some(window), before))
}

/// Copies the window's log to `out`.
fn write_log(out: LogOut, window: &Window) -> Result<Copied, CaptureError> {
    let (path, replace) = match out {
        LogOut::Writer(w) => {
            let copied = window.copy_to(w)?;
            w.flush().map_err(CaptureError::Out)?;
            return Ok(copied);
        }
        LogOut::File { path, replace } => (path, replace),
    };
    let tmp = qpslab_core::files::temp_beside(path);
    let write = || -> Result<Copied, CaptureError> {
        use std::os::unix::fs::OpenOptionsExt;
        // Statements may hold data: readable by us only, as the server's own file.
        let f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(CaptureError::Out)?;
        let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
        let copied = window.copy_to(&mut w)?;
        let f = w
            .into_inner()
            .map_err(|e| CaptureError::Out(e.into_error()))?;
        f.sync_all().map_err(CaptureError::Out)?;
        if !replace && path.exists() {
            return Err(CaptureError::Exists(path.to_path_buf()));
        }
        std::fs::rename(&tmp, path).map_err(CaptureError::Out)?;
        Ok(copied)
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        CaptureError::Write {
            path: path.to_path_buf(),
            source: Box::new(e),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use qpslab_core::fault::Blame;

    #[test]
    fn a_log_is_not_written_over_an_existing_file_unless_replacing() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let log = dir.join("server.log");
        std::fs::write(&log, "# User@Host: a\nSELECT 1;\n").unwrap();
        let out = dir.join("out.log");
        std::fs::write(&out, "old").unwrap();
        let window = |file: &Path| Window {
            file: {
                std::fs::copy(&log, file).unwrap();
                file.to_path_buf()
            },
            activity: Activity {
                seconds: 1.0,
                statements: 1,
            },
        };
        let w = window(&dir.join("a.log"));
        let e = write_log(
            LogOut::File {
                path: &out,
                replace: false,
            },
            &w,
        )
        .unwrap_err();
        assert!(e.is_user_error(), "{e}");
        assert!(
            matches!(&e, CaptureError::Write { source, .. } if matches!(**source, CaptureError::Exists(_)))
        );
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "old");
        let copied = write_log(
            LogOut::File {
                path: &out,
                replace: true,
            },
            &w,
        )
        .unwrap();
        assert_eq!((copied.entries, copied.bytes), (1, 25));
        assert!(std::fs::read_to_string(&out)
            .unwrap()
            .ends_with("SELECT 1;\n"));
        let mut buf = Vec::new();
        write_log(LogOut::Writer(&mut buf), &w).unwrap();
        assert_eq!(buf.len(), 25);
        drop(w);
        // The server's copy goes with the window.
        assert!(!dir.join("a.log").exists());
    }
}
