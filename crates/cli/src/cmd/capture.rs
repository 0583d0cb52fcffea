//! `qpslab capture`: log every statement a server on this host runs for a while, then put its
//! settings back. The whole sequence (the restore ledger, the baseline, the window, restoring,
//! writing FILE through a temporary file) is `qpslab_traffic::capture::take`; this module checks
//! the arguments, prints the restore statement first and each step as it happens, and reports
//! what the capture saw and cost. Ctrl-C/SIGTERM/SIGHUP end the window early.
//!
//! `--ready-file` exists from the moment the log is on until the capture ends, for scripts that
//! start their workload once every new connection is logged.
//!
//! An interrupted capture still restores the server and writes what it captured until the
//! signal (whole entries: the log is switched off before it is copied); interrupted before the
//! log went on, it writes nothing.

use crate::args::{CaptureArgs, Format, TargetArgs};
use crate::error::user;
use crate::out::Output;
use crate::outfile::Sink;
use crate::signals::INTERRUPTED;
use crate::target::{connect, sandbox_home};
use anyhow::Result;
use qpslab_core::fault::Blame;
use qpslab_core::Endpoint;
use qpslab_traffic::capture::{Activity, CaptureError, Changes, LogOut, Request, Step};
use serde::Serialize;
use std::path::Path;
use std::sync::atomic::Ordering;

/// What `--format json` prints and `--export-json` holds.
#[derive(Serialize)]
struct CaptureDoc<'a> {
    target: String,
    out: String,
    interrupted: bool,
    entries: u64,
    bytes: u64,
    bytes_per_s: f64,
    /// The server's statements in the seconds before the log went on.
    before: Activity,
    /// The server's statements while the log was on.
    during: Activity,
    /// Statements the server ran in the window that are not in the log.
    missed: u64,
    changes: &'a Changes,
    restore_sql: String,
}

/// Runs `qpslab capture`.
pub fn capture(a: CaptureArgs) -> Result<()> {
    check_out(&a.out, a.force)?;
    let output = Output::new(&a.output, "capture")?;
    let sink = crate::outfile::sink("--out", &a.out)?;
    if output.format() != Format::Table && sink == Sink::Stdout {
        return Err(user(
            "--out - writes the log to standard output: write the --format document with \
             --export-json PATH instead",
        ));
    }
    let t = &a.target;
    if !crate::target::explicit(t) {
        return Err(user(
            "capture needs a server to capture: --target, --host/--port, --socket or --sandbox NAME",
        ));
    }
    if let Some(ready) = &a.ready_file {
        ready_gone(ready)?;
    }
    let home = sandbox_home(&a.home);
    let connected = connect(t, None, &home)?;
    let options = connected.server_options();
    check_local(&options.endpoint)?;
    let target = options.describe();
    // A FIFO or a device is written into as standard output is, never replaced.
    let mut stream: Box<dyn std::io::Write>;
    let out = match &sink {
        Sink::Stdout => {
            stream = Box::new(std::io::BufWriter::new(std::io::stdout().lock()));
            LogOut::Writer(&mut *stream)
        }
        Sink::Into(path) => {
            let f = crate::outfile::into(path)
                .map_err(|e| user(format!("--out {}: {e}", a.out.display())))?;
            stream = Box::new(std::io::BufWriter::with_capacity(1 << 20, f));
            LogOut::Writer(&mut *stream)
        }
        Sink::Whole(path) => LogOut::File {
            path,
            replace: a.force,
        },
    };
    // Until the log is on, a run on this server is told that the capture will miss it.
    let mut arming = crate::arming::Arming::begin_or_warn(home.path(), &options.endpoint);
    let request = Request {
        target: &options,
        lab: home.path(),
        time: a.time,
        stop: &INTERRUPTED,
        out,
    };
    let taken = qpslab_traffic::capture::take(request, &mut |step| match step {
        Step::Planned { restore_line } => eprintln!(
            "capturing {target} for {:.0} s; if qpslab is killed (kill -9), restore the server with:\n  {restore_line}",
            a.time.as_secs_f64(),
        ),
        Step::LogOn => {
            arming = None;
            if let Some(ready) = &a.ready_file {
                if let Err(e) = std::fs::write(ready, "slow log on\n") {
                    eprintln!("warning: --ready-file {}: {e}", ready.display());
                }
            }
            eprintln!("slow log on: every statement from connections opened from now on is logged")
        }
        Step::Restored => {
            if let Some(ready) = &a.ready_file {
                let _ = std::fs::remove_file(ready);
            }
            eprintln!("settings restored")
        }
        Step::LedgerWarning(e) => eprintln!("warning: {e}"),
    })
    .map_err(|e| capture_error(e, t));
    if let Some(ready) = &a.ready_file {
        let _ = std::fs::remove_file(ready);
    }
    drop(arming);
    let taken = taken?;
    let Some(logged) = taken.logged else {
        eprintln!("stopped before the log was switched on: nothing changed, nothing written");
        return Ok(());
    };
    let (copied, during) = (logged.copied, logged.during);
    let doc = CaptureDoc {
        target,
        out: a.out.display().to_string(),
        interrupted: INTERRUPTED.load(Ordering::SeqCst),
        entries: copied.entries,
        bytes: copied.bytes,
        bytes_per_s: copied.bytes as f64 / during.seconds.max(1e-9),
        before: taken.before,
        during,
        missed: during.statements.saturating_sub(copied.entries),
        changes: &taken.changes,
        restore_sql: taken.restore_sql,
    };
    eprint!("{}", summary(&doc));
    output.emit(|f| match f {
        Format::Json => crate::out::json(&doc),
        // The summary above is the table: standard error, as the log may be on standard output.
        _ => Ok(String::new()),
    })
}

/// What the user sees at the end: the log's size, the server's rate before and during, and
/// the statements the log misses with the reason.
fn summary(d: &CaptureDoc) -> String {
    let mb = d.bytes as f64 / 1e6;
    let mut s = format!(
        "captured {} entries, {mb:.1} MB in {:.1} s ({:.2} MB/s){} -> {}\n",
        d.entries,
        d.during.seconds,
        d.bytes_per_s / 1e6,
        if d.interrupted { ", interrupted" } else { "" },
        d.out
    );
    let (b, r) = (d.before.per_second(), d.during.per_second());
    s += &format!("server: {b:.0} statements/s before the capture, {r:.0}/s during it");
    if b > 0.0 {
        s += &format!(" ({:+.0}%)", 100.0 * (r / b - 1.0));
    }
    s += "\nnote: logging every statement costs throughput (point selects: -26% at 4 sessions, \
          -38% at 16 on a 2-core machine; bench/RESULTS.md)\n";
    if d.missed > 2 && d.missed * 100 > d.during.statements {
        s += &format!(
            "warning: the server ran {} statements in the window but the log has {} ({} missing): \
             connections opened before the capture keep their own long_query_time and log nothing \
             (reconnect pools to capture them)\n",
            d.during.statements, d.entries, d.missed
        );
    }
    s
}

/// FILE must be new (or `--force`) in a directory that exists; `-` is standard output.
fn check_out(out: &Path, force: bool) -> Result<()> {
    crate::outfile::check("--out", out, force)
}

/// `--ready-file` made ready to say when the log is on: a file left from an earlier capture is
/// removed (a waiting script must not start early), anything but a file is refused, and the
/// directory must take it.
fn ready_gone(ready: &Path) -> Result<()> {
    let refuse = |why: String| user(format!("--ready-file {}: {why}", ready.display()));
    match std::fs::symlink_metadata(ready) {
        Ok(m) if m.is_file() => {
            std::fs::remove_file(ready).map_err(|e| refuse(format!("cannot remove it ({e})")))?
        }
        Ok(_) => return Err(refuse("not a regular file".into())),
        Err(_) => {}
    }
    std::fs::write(ready, "")
        .and_then(|()| std::fs::remove_file(ready))
        .map_err(|e| refuse(format!("cannot be created ({e})")))
}

/// The slow log is read from the server's own file: only a server on this host will do.
fn check_local(endpoint: &Endpoint) -> Result<()> {
    if endpoint.is_local() {
        return Ok(());
    }
    Err(user(format!(
        "capture reads the server's slow log file, so the server must run on this host \
         (--socket, --sandbox, or a localhost target), not on {endpoint}; capturing a remote \
         server through mysql.slow_log is not supported yet"
    )))
}

/// The library's error, with the ledger's in the words of `qpslab restore` and the output
/// file's in the words of `--out`.
fn capture_error(e: CaptureError, t: &TargetArgs) -> anyhow::Error {
    match e {
        CaptureError::Ledger(e) => super::restore::error(e, t),
        CaptureError::Write { path, source } => {
            let inner = match *source {
                CaptureError::Exists(p) => user(format!(
                    "--out {}: exists; use --force to replace it",
                    p.display()
                )),
                CaptureError::Out(e) => e.into(),
                other => capture_error(other, t),
            };
            inner.context(format!("writing {}", path.display()))
        }
        CaptureError::Out(e) => e.into(),
        e if e.is_user_error() => user(e.to_string()),
        e => e.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(changes: &Changes, statements: u64, entries: u64) -> CaptureDoc<'_> {
        CaptureDoc {
            target: "root@localhost/".into(),
            out: "cap.log".into(),
            interrupted: false,
            entries,
            bytes: 2_000_000,
            bytes_per_s: 500_000.0,
            before: Activity {
                seconds: 2.0,
                statements: 20_000,
            },
            during: Activity {
                seconds: 4.0,
                statements,
            },
            missed: statements.saturating_sub(entries),
            changes,
            restore_sql: String::new(),
        }
    }

    #[test]
    fn the_summary_gives_the_cost_and_warns_only_when_the_log_misses_statements() {
        let none = Changes(Vec::new());
        let full = summary(&doc(&none, 30_000, 30_000));
        assert!(full.starts_with("captured 30000 entries, 2.0 MB in 4.0 s (0.50 MB/s)"));
        assert!(full.contains("10000 statements/s before the capture, 7500/s during it (-25%)"));
        assert!(!full.contains("warning"), "{full}");
        // Statements in flight at the window's edges are not a miss.
        assert!(!summary(&doc(&none, 30_002, 30_000)).contains("warning"));
        let pooled = summary(&doc(&none, 30_000, 1_000));
        assert!(
            pooled.contains("30000 statements in the window but the log has 1000 (29000 missing)")
        );
        assert!(
            pooled.contains("keep their own long_query_time"),
            "{pooled}"
        );
    }

    #[test]
    fn standard_output_is_always_accepted() {
        assert!(check_out(Path::new("-"), false).is_ok());
        assert!(check_local(&Endpoint::Unix { path: "/s".into() }).is_ok());
        let remote = Endpoint::Tcp {
            host: "db.example.com".into(),
            port: 3306,
        };
        assert!(check_local(&remote)
            .unwrap_err()
            .to_string()
            .contains("db.example.com:3306"));
    }
}
