//! Where one record of the restore trail lives, and the hold a living owner keeps on it: a
//! JSON file and its `flock` in the lab directory ([`Trail::Files`], a file store's commands),
//! or a row of a server's results store ([`Trail::Store`], `qpslab_store`'s `trail.rs`: shared
//! by every host writing that store, its holder judged by its process here and by its lease on
//! another host). Both answer the same four questions: may I hold it, what does it say, write
//! it, clear it; the ledger above never asks which.
//!
//! A server's settings have one record (`KEY.json`, account `""`); each account a command
//! creates for itself has its own (`KEY~USER.json`, account `USER`), so a read-only replay's
//! account never makes the server look busy to `tune` or `capture`, and two replays never wait
//! for each other.

use super::{Record, RestoreError, Server, START_SLACK};
use qpslab_store::Store;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

/// Where a ledger keeps its records.
#[derive(Clone)]
pub(super) enum Trail {
    /// Files in this directory (`LAB/restore/`), held by `flock`.
    Files(PathBuf),
    /// Rows of a server's results store, on a session of their own.
    Store(Arc<Mutex<Store>>),
}

impl std::fmt::Debug for Trail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Trail::Files(dir) => write!(f, "Files({})", dir.display()),
            Trail::Store(s) => write!(f, "Store({})", lock(s).path().display()),
        }
    }
}

/// The store, whoever panicked while holding it: its session stays usable.
fn lock(store: &Mutex<Store>) -> MutexGuard<'_, Store> {
    store.lock().unwrap_or_else(|e| e.into_inner())
}

impl Trail {
    /// The settings record of the server keyed `key`.
    pub(super) fn settings(&self, key: &str) -> At {
        self.at(key, "")
    }

    /// The record of the accounts named after `user` on the server keyed `key`.
    pub(super) fn accounts(&self, key: &str, user: &str) -> At {
        let user: String = user
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        self.at(key, &user)
    }

    fn at(&self, key: &str, account: &str) -> At {
        match self {
            Trail::Files(dir) => {
                let name = match account {
                    "" => key.to_string(),
                    user => format!("{key}~{user}"),
                };
                At::File {
                    record: dir.join(format!("{name}.json")),
                    lock: dir.join(format!("{name}.lock")),
                }
            }
            Trail::Store(store) => At::Row {
                store: store.clone(),
                server: key.to_string(),
                account: account.to_string(),
            },
        }
    }

    /// Every record, whoever owns it.
    pub(super) fn records(&self) -> Result<Vec<Record>, RestoreError> {
        match self {
            Trail::Files(dir) => {
                let Ok(entries) = std::fs::read_dir(dir) else {
                    return Ok(Vec::new());
                };
                Ok(entries
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "json"))
                    .filter_map(|p| Record::read(&p).ok().flatten())
                    .collect())
            }
            Trail::Store(store) => Ok(lock(store)
                .trail_records(None)?
                .iter()
                .filter_map(|r| serde_json::from_str(&r.json).ok())
                .collect()),
        }
    }

    /// Every account record of the server keyed `key`, in name order.
    pub(super) fn all_accounts(&self, key: &str) -> Result<Vec<At>, RestoreError> {
        let users: Vec<String> = match self {
            Trail::Files(dir) => {
                let Ok(entries) = std::fs::read_dir(dir) else {
                    return Ok(Vec::new());
                };
                let prefix = format!("{key}~");
                entries
                    .flatten()
                    .filter_map(|e| {
                        let name = e.file_name().to_string_lossy().into_owned();
                        Some(
                            name.strip_prefix(&prefix)?
                                .strip_suffix(".json")?
                                .to_string(),
                        )
                    })
                    .collect()
            }
            Trail::Store(store) => lock(store)
                .trail_records(Some(key))?
                .into_iter()
                .map(|r| r.account)
                .filter(|a| !a.is_empty())
                .collect(),
        };
        let mut out: Vec<At> = users.iter().map(|u| self.at(key, u)).collect();
        out.sort_by_key(At::name);
        Ok(out)
    }
}

/// One record and its hold.
pub(super) enum At {
    /// A file and its lock file.
    File { record: PathBuf, lock: PathBuf },
    /// A row of a server's store.
    Row {
        store: Arc<Mutex<Store>>,
        server: String,
        account: String,
    },
}

/// A living owner's hold on a record, let go when dropped (or when the process dies).
pub(super) enum Hold {
    /// The `flock` on the lock file.
    File(#[allow(dead_code)] File),
    /// This process as the row's holder, its heartbeat renewed by the store's lease thread.
    Row {
        store: Arc<Mutex<Store>>,
        server: String,
        account: String,
    },
}

impl Drop for Hold {
    fn drop(&mut self) {
        if let Hold::Row {
            store,
            server,
            account,
        } = self
        {
            // One that fails stays held until its lease runs out (another host) or this
            // process ends (this host): the record is kept either way.
            let _ = lock(store).trail_let_go(server, account);
        }
    }
}

impl At {
    /// Its name in messages and for ordering: the file, or `store:KEY~ACCOUNT`.
    fn name(&self) -> String {
        match self {
            At::File { record, .. } => record.display().to_string(),
            At::Row {
                server, account, ..
            } => format!("store:{server}~{account}"),
        }
    }

    fn io(&self, source: std::io::Error) -> RestoreError {
        RestoreError::Io {
            path: PathBuf::from(self.name()),
            source,
        }
    }

    /// The record's hold, when no living process has it. A lock file is never removed
    /// (removing it would let two processes lock two different files of one name).
    pub(super) fn try_lock(&self) -> Result<Option<Hold>, RestoreError> {
        match self {
            At::File { lock: path, .. } => lock_file(path).map(|f| f.map(Hold::File)),
            At::Row {
                store,
                server,
                account,
            } => {
                let held = lock(store).trail_hold(server, account)?;
                Ok(held.then(|| Hold::Row {
                    store: store.clone(),
                    server: server.clone(),
                    account: account.clone(),
                }))
            }
        }
    }

    pub(super) fn read(&self) -> Result<Option<Record>, RestoreError> {
        match self {
            At::File { record, .. } => Record::read(record).map_err(|e| self.io(e)),
            At::Row {
                store,
                server,
                account,
            } => Ok(lock(store)
                .trail_read(server, account)?
                .and_then(|json| serde_json::from_str(&json).ok())),
        }
    }

    /// Writes `r` whole, before the change it records.
    pub(super) fn write(&self, r: &Record) -> Result<(), RestoreError> {
        match self {
            At::File { record, .. } => r.write(record).map_err(|e| self.io(e)),
            At::Row {
                store,
                server,
                account,
            } => {
                let json = serde_json::to_string(r).map_err(|e| self.io(e.into()))?;
                Ok(lock(store).trail_write(server, account, &json)?)
            }
        }
    }

    pub(super) fn clear(&self) -> Result<(), RestoreError> {
        match self {
            At::File { record, .. } => match std::fs::remove_file(record) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(self.io(e)),
                _ => Ok(()),
            },
            At::Row {
                store,
                server,
                account,
            } => Ok(lock(store).trail_clear(server, account)?),
        }
    }

    /// With the hold: the record of a dead process whose settings are still changed on
    /// `s`; a record that no longer matters is removed.
    pub(super) fn leftover(&self, s: &mut Server) -> Result<Option<Record>, RestoreError> {
        let Some(r) = self.read()? else {
            return Ok(None);
        };
        let restarted = s.started.abs_diff(r.server_started) > START_SLACK;
        // A restart forgets settings, never accounts.
        let settings = if restarted {
            Vec::new()
        } else {
            s.differing(&r.settings)?
        };
        if settings.is_empty() && s.existing(&r.accounts)?.is_empty() {
            self.clear()?;
            return Ok(None);
        }
        Ok(Some(r))
    }
}

/// An exclusive `flock` on `path` (created, with its directory), when no living process holds
/// one.
fn lock_file(path: &Path) -> Result<Option<File>, RestoreError> {
    use std::os::fd::AsRawFd;
    let io = |source| RestoreError::Io {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(io)?;
    // SAFETY: flock on a descriptor we own; LOCK_NB never blocks.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        return Ok(Some(f));
    }
    let e = std::io::Error::last_os_error();
    if e.kind() == std::io::ErrorKind::WouldBlock {
        return Ok(None);
    }
    Err(io(e))
}
