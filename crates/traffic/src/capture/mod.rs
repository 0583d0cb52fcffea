//! Capturing a server's statements: the slow log switched on with `long_query_time=0` for a
//! window, every variable changed for it restored afterwards, the window's log handed over.
//!
//! Read first, then change, then restore: [`Capture::open`] reads the variables it will change
//! (only those the server has, [`settings`]) and plans a fresh log file in the server's datadir;
//! [`Capture::enable`] applies the changes; [`Running::finish`] restores them (switching the log
//! off first) and returns the [`Window`], whose file holds exactly the statements logged in
//! between. Dropping a [`Running`] capture restores too, so no path through the caller
//! leaves the server changed; [`Capture::restore_line`] is the one statement that restores by
//! hand after a `kill -9`. [`take`] is the whole of `qpslab capture` in one call: the restore
//! ledger, the baseline, the window and the log written out.
//!
//! The log is read from the server's own file, so the server must be on this host with its
//! datadir readable by us (a sandbox, or a local server run by root). The control connection
//! raises its own `long_query_time`, so the capture's queries are not in the log.
//!
//! ```no_run
//! # fn demo(target: &qpslab_core::ConnectOptions) -> Result<(), qpslab_traffic::capture::CaptureError> {
//! use qpslab_traffic::capture::Capture;
//! let stop = std::sync::atomic::AtomicBool::new(false);
//! let cap = Capture::open(target)?;
//! eprintln!("to restore by hand: {}", cap.restore_line());
//! let running = cap.enable()?;
//! running.wait(std::time::Duration::from_secs(60), &stop);
//! let window = running.finish()?;
//! let mut out = std::io::stdout();
//! let copied = window.copy_to(&mut out)?;
//! println!("{} entries", copied.entries);
//! # Ok(()) }
//! ```

use qpslab_core::fault::{user_if, Blame, Fault};

mod settings;
mod take;

pub use settings::{Change, Changes};
pub use take::{take, LogOut, Logged, Request, Step, Taken, BASELINE};

use qpslab_core::ConnectOptions;
use qpslab_lab::server::control::{self, ControlError};
use qpslab_lab::server::restore::RestoreError;
use qpslab_wire::Conn;
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The start of a capture's log file name.
const FILE_PREFIX: &str = "qpslab-capture-";

/// Why a capture could not be taken or restored.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    /// The server could not be reached, or a statement of the capture failed (reading or
    /// setting a variable).
    #[error(transparent)]
    Control(#[from] ControlError),
    /// The server's log file is not readable here: the server is on another host, or its
    /// datadir is closed to us. The user's mistake: point qpslab at a local server.
    #[error("{0}")]
    NotLocal(String),
    /// Another capture has the server's slow log (or one was killed before it restored it).
    #[error("{0}")]
    Busy(String),
    /// Reading or removing the server's log file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Some variables could not be put back; the text holds the statement that does it.
    #[error("could not restore {failed}; run by hand: {line}")]
    Restore {
        /// The variables and their errors.
        failed: String,
        /// The statement restoring every variable.
        line: String,
    },
    /// The restore ledger refused the server (a killed process's settings are on it) or
    /// could not record the capture's settings.
    #[error(transparent)]
    Ledger(#[from] RestoreError),
    /// Writing the log out failed.
    #[error("writing {}", path.display())]
    Write {
        /// The file written.
        path: PathBuf,
        /// Why.
        #[source]
        source: Box<CaptureError>,
    },
    /// The output file appeared while the capture ran, and replacing was not allowed.
    #[error("{}: exists", .0.display())]
    Exists(PathBuf),
    /// Writing, syncing or renaming the output failed.
    #[error(transparent)]
    Out(std::io::Error),
}

impl Blame for CaptureError {
    /// Whether the user can fix it: a server elsewhere, or an account without the privilege to
    /// set global variables (1227) or to log in (1045).
    fn fault(&self) -> Fault {
        user_if(match self {
            CaptureError::NotLocal(_) | CaptureError::Busy(_) | CaptureError::Exists(_) => true,
            CaptureError::Control(e) => e.is_user_error(),
            CaptureError::Ledger(e) => e.is_user_error(),
            CaptureError::Write { source, .. } => source.is_user_error(),
            _ => false,
        })
    }
}

/// The control connection of a capture: reopened when lost, its own statements counted so that
/// they can be left out of the server's.
struct Session {
    target: ConnectOptions,
    conn: Option<Conn>,
    /// Statements of ours so far.
    own: u64,
}

impl Session {
    fn query(&mut self, sql: &str) -> Result<qpslab_wire::QueryResult, CaptureError> {
        let conn = match &mut self.conn {
            Some(c) => c,
            None => {
                let mut c = control::connect(&self.target)?;
                self.own += 1;
                // This session's statements stay out of the log whatever the global value is.
                run(&mut c, "SET SESSION long_query_time=31536000")?;
                self.conn.insert(c)
            }
        };
        self.own += 1;
        Ok(control::query(conn, sql)?)
    }

    fn statement(&mut self, sql: &str) -> Result<(), CaptureError> {
        self.query(sql).map(drop)
    }

    /// The statements the server has run and our own statement count right after reading it.
    /// `Questions` would count every COM_QUIT too; the `Com_*` counters count each statement
    /// once, with the prepared-statement protocol's commands (whose executions count under the
    /// statement's own `Com_*`) and pings left out, as the slow log has one entry each.
    fn statements(&mut self) -> Result<(u64, u64), CaptureError> {
        let r = self.query("SHOW GLOBAL STATUS LIKE 'Com\\_%'")?;
        let n = r
            .rows
            .iter()
            .filter_map(|row| match row.as_slice() {
                [Some(k), Some(v)] if counts_as_statement(k) => v.parse::<u64>().ok(),
                _ => None,
            })
            .sum();
        Ok((n, self.own))
    }
}

/// Whether a `Com_*` counter counts statements the slow log has an entry for.
fn counts_as_statement(name: &str) -> bool {
    !(name.starts_with("Com_stmt_") || name == "Com_admin_commands")
}

/// A capture planned on a server: the variables read, nothing changed yet.
pub struct Capture {
    session: Session,
    changes: Changes,
    /// The log file, as the server names it (under its datadir) and as we read it.
    file: PathBuf,
}

/// What the server did during a window: its statements (the `Com_*` counters, the capture's
/// own left out) and how long the window was.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Activity {
    /// Seconds.
    pub seconds: f64,
    /// Statements the server ran, the capture's own left out.
    pub statements: u64,
}

impl Activity {
    fn between(before: (u64, u64), after: (u64, u64), took: Duration) -> Activity {
        let own = after.1 - before.1;
        Activity {
            seconds: took.as_secs_f64(),
            statements: after.0.saturating_sub(before.0).saturating_sub(own),
        }
    }

    /// Statements per second.
    pub fn per_second(&self) -> f64 {
        if self.seconds > 0.0 {
            self.statements as f64 / self.seconds
        } else {
            0.0
        }
    }
}

impl Capture {
    /// Connects, reads the variables a capture changes and plans a fresh log file in the
    /// server's datadir. Changes nothing.
    pub fn open(target: &ConnectOptions) -> Result<Capture, CaptureError> {
        let mut session = Session {
            target: target.clone(),
            conn: None,
            own: 0,
        };
        let r = session.query("SELECT @@datadir")?;
        let datadir = PathBuf::from(r.first_value().unwrap_or_default());
        if !datadir.is_dir() {
            return Err(CaptureError::NotLocal(format!(
                "the server's datadir {} is not on this host: capture reads the slow log \
                 from the server's own file, so the server must run here (capturing a remote \
                 server through mysql.slow_log is not supported yet)",
                datadir.display()
            )));
        }
        let vars = variables(&mut session)?;
        if let Some(file) = vars
            .get("slow_query_log_file")
            .filter(|f| f.contains(FILE_PREFIX))
        {
            // Its "old" values would be another capture's: restoring them would leave the
            // server changed.
            return Err(CaptureError::Busy(format!(
                "the server is logging to {file}: another qpslab capture is running, or one was \
                 killed; restore with the SET GLOBAL it printed at its start"
            )));
        }
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let file = datadir.join(format!("qpslab-capture-{}-{stamp}.log", std::process::id()));
        let changes = Changes::plan(&vars, &file.display().to_string());
        Ok(Capture {
            session,
            changes,
            file,
        })
    }

    /// The variables this capture changes, with their old values and values during the window.
    pub fn changes(&self) -> &Changes {
        &self.changes
    }

    /// The one statement that restores every variable by hand.
    pub fn restore_line(&self) -> String {
        self.changes.restore_line()
    }

    /// Measures the server's statements per second over `window` before the log goes on (the
    /// baseline of the capture's cost); `stop` ends it early.
    pub fn baseline(
        &mut self,
        window: Duration,
        stop: &AtomicBool,
    ) -> Result<Activity, CaptureError> {
        let (before, t0) = (self.session.statements()?, Instant::now());
        wait(window, stop);
        let after = self.session.statements()?;
        Ok(Activity::between(before, after, t0.elapsed()))
    }

    /// Switches the slow log on for every statement. On an error, whatever was set is restored
    /// before the error reaches the caller.
    pub fn enable(self) -> Result<Running, CaptureError> {
        let mut session = self.session;
        let before = session.statements()?;
        let mut running = Running {
            session,
            changes: self.changes,
            file: self.file,
            at: Instant::now(),
            before,
            done: false,
        };
        for sql in running.changes.apply_sql() {
            running.session.statement(&sql)?;
        }
        // The server opens its log file as the log goes on: not seeing it means it is not ours.
        if let Err(e) = std::fs::File::open(&running.file) {
            return Err(CaptureError::NotLocal(format!(
                "the server's slow log {} is not readable here ({e}): capture needs a server on \
                 this host whose datadir we can read",
                running.file.display()
            )));
        }
        Ok(running)
    }
}

/// A capture whose log is on. Dropping it without [`Running::finish`] (an error, a signal
/// unwinding the caller) restores every variable and removes the log file.
pub struct Running {
    session: Session,
    changes: Changes,
    file: PathBuf,
    at: Instant,
    before: (u64, u64),
    done: bool,
}

impl Running {
    /// The one statement that restores every variable by hand.
    pub fn restore_line(&self) -> String {
        self.changes.restore_line()
    }

    /// Waits out the window, polling `stop` (Ctrl-C) every 100 ms.
    pub fn wait(&self, window: Duration, stop: &AtomicBool) {
        wait(window, stop)
    }

    /// Restores every variable and returns the window: its log file and what the server ran.
    pub fn finish(mut self) -> Result<Window, CaptureError> {
        let took = self.at.elapsed();
        self.done = true;
        let window = Window {
            file: std::mem::take(&mut self.file),
            activity: Activity {
                seconds: took.as_secs_f64(),
                statements: 0,
            },
        };
        // On an error the window is dropped, removing the file.
        self.restore()?;
        let after = self.session.statements()?;
        let mut window = window;
        window.activity = Activity::between(self.before, after, took);
        Ok(window)
    }

    /// Puts every variable back, one statement each so that one failure does not keep the
    /// others changed; a lost connection is reopened once per statement.
    fn restore(&mut self) -> Result<(), CaptureError> {
        let mut failed = Vec::new();
        for sql in self.changes.restore_sql() {
            if let Err(e) = self.session.statement(&sql) {
                self.session.conn = None;
                if let Err(e2) = self.session.statement(&sql) {
                    failed.push(format!("{sql} ({e}; again: {e2})"));
                }
            }
        }
        if failed.is_empty() {
            return Ok(());
        }
        Err(CaptureError::Restore {
            failed: failed.join(", "),
            line: self.restore_line(),
        })
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if !self.done {
            let _ = self.restore();
            let _ = std::fs::remove_file(&self.file);
        }
    }
}

/// A finished capture window: the server's log file holding its entries.
#[derive(Debug)]
pub struct Window {
    file: PathBuf,
    /// What the server ran during the window.
    pub activity: Activity,
}

/// What was copied out of a window's log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Copied {
    /// Log entries (one `# User@Host:` line each).
    pub entries: u64,
    /// Bytes of log.
    pub bytes: u64,
}

impl Window {
    /// The server's log file.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// Copies the log to `out` as it is, counting its entries.
    pub fn copy_to(&self, out: &mut dyn Write) -> Result<Copied, CaptureError> {
        let io = |source| CaptureError::Io {
            path: self.file.clone(),
            source,
        };
        let f = std::fs::File::open(&self.file).map_err(io)?;
        let mut reader = std::io::BufReader::with_capacity(1 << 20, f);
        let mut line = Vec::new();
        let mut copied = Copied {
            entries: 0,
            bytes: 0,
        };
        while reader.read_until(b'\n', &mut line).map_err(io)? > 0 {
            if line.starts_with(b"# User@Host:") {
                copied.entries += 1;
            }
            copied.bytes += line.len() as u64;
            out.write_all(&line).map_err(io)?;
            line.clear();
        }
        Ok(copied)
    }
}

impl Drop for Window {
    /// The server's copy of the log is temporary: removed once the window is done with.
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.file);
    }
}

fn wait(window: Duration, stop: &AtomicBool) {
    let end = Instant::now() + window;
    while !stop.load(Ordering::SeqCst) {
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        std::thread::sleep(left.min(Duration::from_millis(100)));
    }
}

fn run(conn: &mut Conn, sql: &str) -> Result<(), CaptureError> {
    Ok(control::query(conn, sql).map(drop)?)
}

/// The current global values of the variables a capture may change (those the server has).
fn variables(session: &mut Session) -> Result<BTreeMap<String, String>, CaptureError> {
    let list: Vec<String> = settings::names().iter().map(|n| format!("'{n}'")).collect();
    let sql = format!(
        "SHOW GLOBAL VARIABLES WHERE Variable_name IN ({})",
        list.join(",")
    );
    let r = session.query(&sql)?;
    Ok(r.rows
        .into_iter()
        .filter_map(|row| match row.as_slice() {
            [Some(k), v] => Some((k.clone(), v.clone().unwrap_or_default())),
            _ => None,
        })
        .collect())
}
