//! Settings changed on a server, put back even after `kill -9`.
//!
//! Every command that changes a server's global settings (`tune`, `run --at '...:set ...'`,
//! `capture`) takes a [`Guard`] before its first change: [`Ledger::begin`] reads the original
//! values, writes them durably to a small [`Record`] (keyed by the server's own identity,
//! `@@hostname` and `@@datadir`, so a socket and a TCP target name the same server, and a
//! sandbox restarted on another port is still itself) and holds it while it lives. The record
//! is a file in the lab directory, held by a lock that dies with the process
//! ([`Ledger::in_lab`]); for a command whose results store is a server's, a row of that store,
//! held by this process and its lease ([`Ledger::for_store`]), so that a command on any host
//! sharing the store finds what another host left. The command prints
//! [`Guard::restore_line`], puts its settings back as before, and [`Guard::finish`] removes the
//! record once the server holds its original values again.
//!
//! A process killed before that leaves the record behind, held by nobody (on another host: once
//! its lease has run out, `qpslab_store`'s `lease.rs`): the next command
//! against that server finds it with [`Ledger::look`] ([`Look::Leftover`], with the statement
//! that restores it), and [`Ledger::restore`] puts the values back and clears it. A record is
//! dropped without a word when it no longer matters: the server restarted since (a restart
//! forgets `SET GLOBAL`), or every setting already holds its original value.
//!
//! A command may also create accounts for its own use (a read-only replay's account,
//! [`Ledger::begin_accounts`]): they are recorded before they are created and dropped by the
//! command at its end, or by [`Ledger::restore`] after a kill; a restart does not drop them.
//! Their sessions are killed first ([`end_sessions`]), so nothing they ran outlives them.
//!
//! ```no_run
//! # fn demo(target: &qpslab_core::ConnectOptions) -> Result<(), qpslab_lab::server::restore::RestoreError> {
//! use qpslab_lab::server::restore::Ledger;
//! let ledger = Ledger::in_lab(std::path::Path::new("/var/lib/qpslab"));
//! let guard = ledger.begin(target, "tune", &["table_open_cache".to_string()])?;
//! eprintln!("if qpslab is killed, restore with: {}", guard.restore_line());
//! // ... SET GLOBAL table_open_cache = ..., measure, SET GLOBAL it back ...
//! guard.finish()?;
//! # Ok(()) }
//! ```

mod at;
mod record;
mod server;
mod sessions;

use record::Owner;
pub use record::{restore_line, same, Account, Record, Saved, ServerId};
pub use sessions::end_sessions;

use crate::server::control::ControlError;
use at::{At, Hold, Trail};
use qpslab_core::fault::{Blame, Fault};
use qpslab_core::ConnectOptions;
use server::Server;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Seconds two readings of the server's start time may differ by and still be one start.
const START_SLACK: u64 = 5;

/// Why an unfinished change could not be looked at, recorded or restored.
#[derive(Debug, thiserror::Error)]
pub enum RestoreError {
    /// The server could not be reached, or a statement failed.
    #[error(transparent)]
    Control(#[from] ControlError),
    /// The results store keeping the records (a server's) failed.
    #[error(transparent)]
    Store(#[from] qpslab_store::Error),
    /// The record or its lock could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A process that is still running is changing this server's settings.
    #[error("{} (pid {}) is changing the settings of {} now; wait for it to finish", .0.command, .0.pid, .0.target)]
    Busy(Box<Record>),
    /// A process killed before it put its settings back left them on the server.
    #[error("{}", leftover_text(.0))]
    Leftover(Box<Record>),
    /// Some settings could not be put back; the record stays.
    #[error("could not restore {failed}; run by hand: {line}")]
    Failed {
        /// The variables and why.
        failed: String,
        /// The statement restoring every variable.
        line: String,
    },
}

/// The user's when the user can act on it: another process at work, leftovers to restore,
/// or an account that may not log in or set globals.
impl Blame for RestoreError {
    fn fault(&self) -> Fault {
        match self {
            RestoreError::Busy(_) | RestoreError::Leftover(_) => Fault::User,
            RestoreError::Control(e) => e.fault(),
            RestoreError::Store(e) => e.fault(),
            _ => Fault::Runtime,
        }
    }
}

fn leftover_text(r: &Record) -> String {
    format!(
        "{} still holds settings changed by `{}` (pid {}, which ended before putting them back); \
         restore them with: {}",
        r.target,
        r.command,
        r.pid,
        r.restore_line()
    )
}

/// What is recorded for a server.
#[derive(Debug)]
pub enum Look {
    /// Nothing unfinished.
    Nothing,
    /// A running process is changing its settings.
    Busy(Record),
    /// A process that is gone left settings changed.
    Leftover(Record),
}

/// The records of unfinished changes: in one lab directory (`LAB/restore/`), or in a
/// server's results store.
#[derive(Clone, Debug)]
pub struct Ledger {
    trail: Trail,
    /// Beside a server store's trail: the lab directory's files, where the commands given no
    /// store (`capture`, `diff`, a study's cells) record what they change on this host. They
    /// are looked at and restored too, never written.
    local: Option<Trail>,
}

impl Ledger {
    /// The ledger of the lab directory `lab`.
    pub fn in_lab(lab: &Path) -> Ledger {
        Ledger {
            trail: Trail::Files(lab.join("restore")),
            local: None,
        }
    }

    /// The ledger of a command whose results store is `db` (its `--db`): that store, on a
    /// session of the ledger's own, when it is a server's (shared by hosts: a change one host
    /// leaves is found by the others); the lab directory `lab`'s files otherwise.
    pub fn for_store(lab: &Path, db: &Path) -> Result<Ledger, RestoreError> {
        if !qpslab_store::Store::names_server(db) {
            return Ok(Ledger::in_lab(lab));
        }
        let store = qpslab_store::Store::open(db)?;
        Ok(Ledger {
            trail: Trail::Store(Arc::new(Mutex::new(store))),
            local: Some(Ledger::in_lab(lab).trail),
        })
    }

    /// The lab directory's ledger kept beside a server store's, if this is one.
    fn local(&self) -> Option<Ledger> {
        self.local
            .clone()
            .map(|trail| Ledger { trail, local: None })
    }

    /// Every record in the ledger, whoever owns it.
    pub fn records(&self) -> Result<Vec<Record>, RestoreError> {
        let mut all = self.trail.records()?;
        if let Some(local) = self.local() {
            all.extend(local.records()?);
        }
        Ok(all)
    }

    /// What is unfinished on the server at `target`. Connects only when the ledger holds a
    /// record at all; drops a record that no longer matters.
    pub fn look(&self, target: &ConnectOptions) -> Result<Look, RestoreError> {
        if let Some(local) = self.local() {
            match local.look(target)? {
                Look::Nothing => {}
                found => return Ok(found),
            }
        }
        if self.trail.records()?.is_empty() {
            return Ok(Look::Nothing);
        }
        let mut s = Server::connect(target)?;
        let at = self.at(&s.id);
        let Some(lock) = at.try_lock()? else {
            return Ok(match at.read()? {
                Some(r) => Look::Busy(r),
                None => Look::Nothing,
            });
        };
        let mut look = match at.leftover(&mut s)? {
            Some(r) => Look::Leftover(r),
            None => Look::Nothing,
        };
        drop(lock);
        if matches!(look, Look::Nothing) {
            if let Some(r) = self.dead_accounts(&mut s)?.into_iter().next() {
                look = Look::Leftover(r.1);
            }
        }
        Ok(look)
    }

    /// [`Ledger::look`] as an error: refuses a server holding a dead process's settings (a
    /// command would take them as its baseline) or one whose settings another process is
    /// changing now.
    pub fn refuse_leftovers(&self, target: &ConnectOptions) -> Result<(), RestoreError> {
        match self.look(target)? {
            Look::Nothing => Ok(()),
            Look::Busy(r) => Err(RestoreError::Busy(Box::new(r))),
            Look::Leftover(r) => Err(RestoreError::Leftover(Box::new(r))),
        }
    }

    /// As [`Ledger::refuse_leftovers`] for a command that only reads the server's settings and
    /// changes none (`run` without `--at set`): a process changing nothing but how the server
    /// logs (`capture`) shares the server with it, and is returned so that the caller can say
    /// its statements are being logged.
    pub fn refuse_leftovers_sharing_logs(
        &self,
        target: &ConnectOptions,
    ) -> Result<Option<Record>, RestoreError> {
        match self.look(target)? {
            Look::Nothing => Ok(None),
            Look::Busy(r) if r.logging_only => Ok(Some(r)),
            Look::Busy(r) => Err(RestoreError::Busy(Box::new(r))),
            Look::Leftover(r) => Err(RestoreError::Leftover(Box::new(r))),
        }
    }

    /// Before changing the global variables `names` on the server at `target` for `command`:
    /// refuses while another process changes its settings or a dead one's are still there,
    /// then records the original values (variables the server lacks are left out).
    pub fn begin(
        &self,
        target: &ConnectOptions,
        command: &str,
        names: &[String],
    ) -> Result<Guard, RestoreError> {
        self.begin_with(target, Owner::changing(command), Vec::new(), |s| {
            s.values(names)
        })
    }

    /// [`Ledger::begin`] for the variables the `set` actions of a phase change (`run --at`, a
    /// study cell's `at`); `None` when there are none.
    pub fn begin_live(
        &self,
        target: &ConnectOptions,
        command: &str,
        actions: &[qpslab_core::live::LiveAction],
    ) -> Result<Option<Guard>, RestoreError> {
        let names: Vec<String> = actions
            .iter()
            .filter_map(|l| match &l.action {
                qpslab_core::live::Action::Set { name, .. } => Some(name.clone()),
                _ => None,
            })
            .collect();
        if names.is_empty() {
            return Ok(None);
        }
        self.begin(target, command, &names).map(Some)
    }

    /// Before creating `accounts` on the server at `target` for `command`: records them (no
    /// setting) in a record of their own, named after the first account, so that
    /// [`Ledger::restore`] drops them if the command is killed before it drops them itself. It
    /// takes no server-wide lock: settings changes and other commands' accounts go on beside it.
    pub fn begin_accounts(
        &self,
        target: &ConnectOptions,
        command: &str,
        accounts: Vec<Account>,
    ) -> Result<Guard, RestoreError> {
        self.begin_with(target, Owner::changing(command), accounts, |_| {
            Ok(Vec::new())
        })
    }

    /// As [`Ledger::begin`], with the original values given (read by the caller, who writes
    /// their literals its own way).
    pub fn begin_saved(
        &self,
        target: &ConnectOptions,
        command: &str,
        saved: Vec<Saved>,
    ) -> Result<Guard, RestoreError> {
        self.begin_with(target, Owner::changing(command), Vec::new(), |_| Ok(saved))
    }

    /// As [`Ledger::begin_saved`] for settings that change only how the server logs
    /// (`capture`'s): the record says so, and runs that change nothing share the server
    /// ([`Ledger::refuse_leftovers_sharing_logs`]). The lock is the same exclusive one, so a
    /// second capture, a tune or a `run --at set` is still refused while it is held.
    pub fn begin_logging(
        &self,
        target: &ConnectOptions,
        command: &str,
        saved: Vec<Saved>,
    ) -> Result<Guard, RestoreError> {
        let command = Owner {
            command,
            logging_only: true,
        };
        self.begin_with(target, command, Vec::new(), |_| Ok(saved))
    }

    /// Records settings (`saved`, under the server's own lock, refusing a dead process's
    /// leftovers) or a command's `accounts` (under a lock of their own, named after the first).
    fn begin_with(
        &self,
        target: &ConnectOptions,
        owner: Owner<'_>,
        accounts: Vec<Account>,
        saved: impl FnOnce(&mut Server) -> Result<Vec<Saved>, RestoreError>,
    ) -> Result<Guard, RestoreError> {
        // A change recorded in this host's files (a capture at work, a killed study cell's
        // settings) refuses a settings change as one recorded in the store does.
        if let (Some(local), true) = (self.local(), accounts.is_empty()) {
            local.refuse_leftovers(target)?;
        }
        let mut s = Server::connect(target)?;
        let at = match accounts.first() {
            Some(a) => self.trail.accounts(&s.id.key(), &a.user),
            None => self.at(&s.id),
        };
        let Some(lock) = at.try_lock()? else {
            let r = at
                .read()?
                .unwrap_or_else(|| s.record(target, owner.command, Vec::new()));
            return Err(RestoreError::Busy(Box::new(r)));
        };
        if accounts.is_empty() {
            if let Some(r) = at.leftover(&mut s)? {
                return Err(RestoreError::Leftover(Box::new(r)));
            }
        }
        let settings = saved(&mut s)?;
        let mut record = s.record(target, owner.command, settings);
        record.logging_only = owner.logging_only;
        record.accounts = accounts;
        at.write(&record)?;
        Ok(Guard {
            at,
            target: target.clone(),
            record,
            _lock: lock,
            done: false,
        })
    }

    /// Puts back what a dead process left changed on the server at `target` and clears its
    /// record. `Ok(None)`: nothing to restore.
    pub fn restore(&self, target: &ConnectOptions) -> Result<Option<Record>, RestoreError> {
        let here = match self.local() {
            Some(local) => local.restore(target)?,
            None => None,
        };
        Ok(match (self.restore_trail(target)?, here) {
            (Some(mut a), Some(b)) => {
                a.settings.extend(b.settings);
                a.accounts.extend(b.accounts);
                Some(a)
            }
            (a, b) => a.or(b),
        })
    }

    /// [`Ledger::restore`] in this ledger's own trail.
    fn restore_trail(&self, target: &ConnectOptions) -> Result<Option<Record>, RestoreError> {
        let mut s = Server::connect(target)?;
        let at = self.at(&s.id);
        let Some(_lock) = at.try_lock()? else {
            return match at.read()? {
                Some(r) => Err(RestoreError::Busy(Box::new(r))),
                None => Ok(None),
            };
        };
        let mut restored = self.restore_accounts(&mut s)?;
        let Some(r) = at.leftover(&mut s)? else {
            return Ok(restored);
        };
        let mut failed = s.drop_accounts(&r);
        for saved in r.settings.iter().rev() {
            if let Err(e) = crate::server::control::put_back(target, &saved.name, &saved.literal) {
                failed.push(format!("{} ({e})", saved.name));
            }
        }
        if !failed.is_empty() || !s.left(&r)?.is_empty() {
            return Err(RestoreError::Failed {
                failed: failed.join(", "),
                line: r.restore_line(),
            });
        }
        at.clear()?;
        if let Some(accounts) = restored.take() {
            let mut r = r;
            r.accounts.extend(accounts.accounts);
            return Ok(Some(r));
        }
        Ok(Some(r))
    }

    /// The account records of `s` whose owner is gone and whose accounts still exist (a record
    /// whose accounts are gone is removed).
    fn dead_accounts(&self, s: &mut Server) -> Result<Vec<(At, Record)>, RestoreError> {
        let mut out = Vec::new();
        for at in self.trail.all_accounts(&s.id.key())? {
            let Some(lock) = at.try_lock()? else {
                continue;
            };
            if let Some(r) = at.leftover(s)? {
                out.push((at, r));
            }
            drop(lock);
        }
        Ok(out)
    }

    /// Drops the accounts that dead processes left on `s`; one record naming them all, or
    /// `None` when there were none.
    fn restore_accounts(&self, s: &mut Server) -> Result<Option<Record>, RestoreError> {
        let mut merged: Option<Record> = None;
        for (at, r) in self.dead_accounts(s)? {
            let failed = s.drop_accounts(&r);
            if !failed.is_empty() || !s.left(&r)?.is_empty() {
                return Err(RestoreError::Failed {
                    failed: failed.join(", "),
                    line: r.restore_line(),
                });
            }
            at.clear()?;
            match &mut merged {
                Some(m) => m.accounts.extend(r.accounts),
                None => merged = Some(r),
            }
        }
        Ok(merged)
    }

    fn at(&self, id: &ServerId) -> At {
        self.trail.settings(&id.key())
    }
}

/// An unfinished change of this process: its record stays until the settings are back.
pub struct Guard {
    at: At,
    target: ConnectOptions,
    record: Record,
    _lock: Hold,
    done: bool,
}

impl Guard {
    /// The statement that restores every recorded setting by hand.
    pub fn restore_line(&self) -> String {
        self.record.restore_line()
    }

    /// What to do if this process is killed: `if qpslab is killed (kill -9), restore the
    /// server with:` and the statement on the next line; `None` when nothing is recorded.
    pub fn killed_hint(&self) -> Option<String> {
        (!self.record.settings.is_empty() || !self.record.accounts.is_empty()).then(|| {
            format!(
                "if qpslab is killed (kill -9), restore the server with:\n  {}",
                self.restore_line()
            )
        })
    }

    /// The recorded settings.
    pub fn record(&self) -> &Record {
        &self.record
    }

    /// Called once the command has put its settings back: clears the record when the server
    /// holds every original value again, keeps it (and says what is left) otherwise.
    pub fn finish(mut self) -> Result<(), RestoreError> {
        self.done = true;
        self.check()
    }

    fn check(&self) -> Result<(), RestoreError> {
        let mut s = Server::connect(&self.target)?;
        let left = s.left(&self.record)?;
        if left.is_empty() {
            return self.at.clear();
        }
        Err(RestoreError::Failed {
            failed: left.join(", "),
            line: self.record.restore_line(),
        })
    }
}

impl Drop for Guard {
    /// An error or a panic after the command's own restore still clears a record that no
    /// longer matters; one whose settings are still changed stays for the next command.
    fn drop(&mut self) {
        if !self.done {
            let _ = self.check();
        }
    }
}
