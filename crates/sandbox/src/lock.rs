//! Who uses a sandbox's server: a `flock(2)` on `LAB/locks/NAME.lock`, so the lock dies with
//! its process (a `kill -9` frees it). Runs that only read the dataset share the sandbox
//! ([`SandboxUse::share`]); building or rebuilding its dataset, `prepare`, `cleanup` and a study
//! that starts and restarts the server need it alone ([`SandboxUse::exclusive`],
//! [`SandboxUse::upgrade`]). Nothing waits: a conflict is [`Error::InUse`] at once, naming the
//! processes that hold the lock (read from `/proc/locks`), so no command ever drops tables
//! another one is measuring.
//!
//! The lock file lives outside the sandbox's directory, which `server stop --rm` removes and a
//! new start recreates: a lock on a deleted file would guard nothing.

use crate::error::{Error, Result};
use crate::spec::SandboxHome;
use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::AsRawFd;
use std::path::PathBuf;

/// How a sandbox is held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hold {
    /// Read only: other readers may measure at the same time.
    Shared,
    /// Alone: its dataset or server may change.
    Exclusive,
}

/// A held lock on a sandbox; released when dropped (or when the process ends).
#[derive(Debug)]
pub struct SandboxUse {
    name: String,
    file: File,
    hold: Hold,
}

impl SandboxUse {
    /// Shares sandbox `name` with other readers; [`Error::InUse`] while a process holds it
    /// alone.
    pub fn share(home: &SandboxHome, name: &str) -> Result<SandboxUse> {
        Self::take(home, name, Hold::Shared)
    }

    /// Holds sandbox `name` alone; [`Error::InUse`] while any other process holds it.
    pub fn exclusive(home: &SandboxHome, name: &str) -> Result<SandboxUse> {
        Self::take(home, name, Hold::Exclusive)
    }

    fn take(home: &SandboxHome, name: &str, hold: Hold) -> Result<SandboxUse> {
        crate::spec::validate_name(name)?;
        let path = lock_path(home, name);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
        }
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| Error::io(format!("opening {}", path.display()), e))?;
        let mut u = SandboxUse {
            name: name.to_string(),
            file,
            hold: Hold::Shared,
        };
        u.set(hold)?;
        Ok(u)
    }

    /// Holds the sandbox alone from now on; [`Error::InUse`] (and nothing held any more) while
    /// another process shares it.
    pub fn upgrade(&mut self) -> Result<()> {
        self.set(Hold::Exclusive)
    }

    /// Shares the sandbox again after [`SandboxUse::upgrade`] (never fails: nobody else can
    /// hold it while this process holds it alone).
    pub fn downgrade(&mut self) -> Result<()> {
        self.set(Hold::Shared)
    }

    /// How the sandbox is held now.
    pub fn hold(&self) -> Hold {
        self.hold
    }

    /// The sandbox's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The other processes that hold this sandbox now (from `/proc/locks`; empty when it cannot
    /// be read).
    pub fn others(&self) -> Vec<u32> {
        holders(&self.file)
            .into_iter()
            .filter(|&p| p != std::process::id())
            .collect()
    }

    fn set(&mut self, hold: Hold) -> Result<()> {
        let op = match hold {
            Hold::Shared => libc::LOCK_SH,
            Hold::Exclusive => libc::LOCK_EX,
        };
        // SAFETY: flock takes an open descriptor owned by `self.file` and plain flags.
        let rc = unsafe { libc::flock(self.file.as_raw_fd(), op | libc::LOCK_NB) };
        if rc == 0 {
            self.hold = hold;
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
            return Err(Error::InUse {
                name: self.name.clone(),
                pids: self.others(),
                wanted: hold == Hold::Exclusive,
            });
        }
        Err(Error::io(format!("locking sandbox '{}'", self.name), e))
    }
}

/// `LAB/locks/NAME.lock`.
fn lock_path(home: &SandboxHome, name: &str) -> PathBuf {
    home.path().join("locks").join(format!("{name}.lock"))
}

/// The pids holding (not waiting for) a lock on `file`, from `/proc/locks`, whose lines read
/// `1: FLOCK  ADVISORY  WRITE 4242 08:01:1234 0 EOF` (device as hex major:minor).
fn holders(file: &File) -> Vec<u32> {
    let (Ok(meta), Ok(table)) = (file.metadata(), std::fs::read_to_string("/proc/locks")) else {
        return Vec::new();
    };
    let dev = meta.dev();
    let id = format!(
        "{:02x}:{:02x}:{}",
        libc::major(dev),
        libc::minor(dev),
        meta.ino()
    );
    let mut pids: Vec<u32> = table
        .lines()
        .filter(|l| !l.contains("->"))
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.get(5) == Some(&id.as_str()))
                .then(|| f.get(4)?.parse().ok())
                .flatten()
        })
        .collect();
    pids.sort_unstable();
    pids.dedup();
    pids
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readers_share_a_writer_is_alone_and_the_lock_names_its_holders() {
        let dir = tempfile::tempdir().unwrap();
        let home = SandboxHome::new(dir.path());
        let a = SandboxUse::share(&home, "s").unwrap();
        let b = SandboxUse::share(&home, "s").unwrap();
        // One process here: /proc/locks lists this pid for both, which `others` leaves out.
        assert_eq!(holders(&a.file), vec![std::process::id()]);
        assert!(b.others().is_empty());
        let e = SandboxUse::exclusive(&home, "s").unwrap_err();
        assert!(matches!(e, Error::InUse { wanted: true, .. }), "{e}");
        let mut b = b;
        assert!(b.upgrade().is_err(), "a reader still shares it");
        drop(a);
        let mut w = SandboxUse::exclusive(&home, "s").unwrap();
        assert!(matches!(
            SandboxUse::share(&home, "s"),
            Err(Error::InUse { wanted: false, .. })
        ));
        w.downgrade().unwrap();
        assert_eq!(w.hold(), Hold::Shared);
        let _r = SandboxUse::share(&home, "s").unwrap();
        // Another sandbox is another lock.
        let _o = SandboxUse::exclusive(&home, "t").unwrap();
    }
}
