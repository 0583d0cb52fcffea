//! The results store as every command opens it: one message and one exit code per bad `--db`
//! (a directory, a device or a FIFO, a missing directory, another program's file, a read-only
//! store or `-shm`: exit 2; a full disk: exit 1), whether the command measures or only reads.

use anyhow::Result;
use qpslab_store::Store;
use std::path::Path;

/// What `--db-on-target` accepts, for the rest of the process: a results store on the server
/// being measured (the store warns once it was written to).
pub fn accept(a: &crate::args::OnTargetArgs) {
    if a.db_on_target {
        qpslab_store::allow_store_on_target();
    }
}

/// The warning of a store accepted on the server under test, once a run was written there.
pub fn warn_on_target(store: &Store) {
    if let Some(w) = store.on_target_warning() {
        eprintln!("warning: {w}");
    }
}

/// Checks `--db` before anything starts (a server, a measurement), so a bad path fails first.
pub fn check(path: &Path) -> Result<()> {
    Ok(Store::check_path(path)?)
}

/// The store a measuring command writes to, created when missing.
pub fn open_to_write(path: &Path) -> Result<Store> {
    Ok(Store::open(path)?)
}

/// The store a reading command reads: never created, read even where it cannot be written.
pub fn open_to_read(path: &Path) -> Result<Store> {
    Ok(Store::open_to_read(path)?)
}

/// Removes the store at `path` with the files SQLite keeps beside it: a command that created
/// it and then failed leaves nothing behind.
pub fn remove(path: &Path) {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        // Absent files are what is wanted.
        let _ = std::fs::remove_file(p);
    }
}
