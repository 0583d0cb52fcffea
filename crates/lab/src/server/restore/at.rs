//! Where one record of the restore trail lives: its JSON file and the lock a living owner
//! holds. A server's settings have one record (`KEY.json`); each account a command creates for
//! itself has its own (`KEY~USER.json`), so a read-only replay's account never makes the server
//! look busy to `tune` or `capture`, and two replays never wait for each other.

use super::{Record, RestoreError, Server, START_SLACK};
use std::fs::File;
use std::path::{Path, PathBuf};

/// The record and lock files of one server.
pub(super) struct At {
    pub(super) record: PathBuf,
    pub(super) lock: PathBuf,
}

impl At {
    /// The server's lock, when no living process holds it. The lock file is never removed
    /// (removing it would let two processes lock two different files of one name).
    pub(super) fn try_lock(&self) -> Result<Option<File>, RestoreError> {
        use std::os::fd::AsRawFd;
        let io = |source| RestoreError::Io {
            path: self.lock.clone(),
            source,
        };
        if let Some(dir) = self.lock.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&self.lock)
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

    pub(super) fn read(&self) -> Result<Option<Record>, RestoreError> {
        Record::read(&self.record).map_err(|source| RestoreError::Io {
            path: self.record.clone(),
            source,
        })
    }

    pub(super) fn clear(&self) -> Result<(), RestoreError> {
        match std::fs::remove_file(&self.record) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(RestoreError::Io {
                path: self.record.clone(),
                source: e,
            }),
            _ => Ok(()),
        }
    }

    /// With the lock held: the record of a dead process whose settings are still changed on
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

/// The settings record of the server keyed `key` in `dir`.
pub(super) fn settings(dir: &Path, key: &str) -> At {
    At {
        record: dir.join(format!("{key}.json")),
        lock: dir.join(format!("{key}.lock")),
    }
}

/// The record of the accounts named after `user` on the server keyed `key` in `dir`.
pub(super) fn accounts(dir: &Path, key: &str, user: &str) -> At {
    let user: String = user
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    At {
        record: dir.join(format!("{key}~{user}.json")),
        lock: dir.join(format!("{key}~{user}.lock")),
    }
}

/// Every account record of the server keyed `key` in `dir`.
pub(super) fn all_accounts(dir: &Path, key: &str) -> Vec<At> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let prefix = format!("{key}~");
    let mut out: Vec<At> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let user = name
                .strip_prefix(&prefix)?
                .strip_suffix(".json")?
                .to_string();
            Some(accounts(dir, key, &user))
        })
        .collect();
    out.sort_by(|a, b| a.record.cmp(&b.record));
    out
}
