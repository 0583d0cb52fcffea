//! The sandboxes this process started and has not kept, so that a Ctrl-C handler or an error
//! path can stop them all: no server outlives qpslab unless it was kept.
//!
//! [`stop_all_started`] may run on another thread while the main thread still holds its
//! [`crate::Sandbox`] values: it only takes entries out under the lock and signals pids that
//! still name their datadir; a `Sandbox` stopped afterwards finds its server already gone.

use crate::process;
use crate::state::STOP_GRACE;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

pub(crate) struct Entry {
    id: u64,
    pid: u32,
    datadir: PathBuf,
}

static STARTED: Mutex<Vec<Entry>> = Mutex::new(Vec::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn entries() -> MutexGuard<'static, Vec<Entry>> {
    // A panic while holding the lock leaves a Vec that is still valid: keep using it.
    STARTED.lock().unwrap_or_else(|p| p.into_inner())
}

/// Records a started server; returns its registry id.
pub(crate) fn add(pid: u32, datadir: PathBuf) -> u64 {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    entries().push(Entry { id, pid, datadir });
    id
}

/// Removes a server from the registry (it is being stopped or kept by its owner).
pub(crate) fn take(id: u64) {
    entries().retain(|e| e.id != id);
}

/// Whether this process has started a sandbox it has not stopped or kept (what
/// [`stop_all_started`] would stop).
pub fn any_started() -> bool {
    !entries().is_empty()
}

/// Stops every sandbox this process started and has not kept (SIGTERM, then SIGKILL after
/// 30 s). Safe to call from any thread, any number of times.
pub fn stop_all_started() {
    let taken: Vec<Entry> = std::mem::take(&mut *entries());
    // Signal all first so they shut down in parallel, then wait for each.
    for e in &taken {
        if process::is_ours(e.pid, &e.datadir) {
            // SAFETY: kill has no memory-safety preconditions; the pid was just checked.
            unsafe {
                libc::kill(e.pid as libc::pid_t, libc::SIGTERM);
            }
        }
    }
    for e in taken {
        // Best effort: there is nobody to report a failure to on this path.
        let _ = process::terminate(e.pid, &e.datadir, STOP_GRACE);
    }
}
