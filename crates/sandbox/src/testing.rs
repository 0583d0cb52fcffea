//! A real server for integration tests (feature `testing`): one per test process, started on
//! first use in a temporary lab with the Default profile, stopped and deleted at process exit.
//!
//! Templates are shared by all test processes of a user (in `$TMPDIR/qpslab-test-<uid>/`), so
//! only the first test binary ever run pays for initialising a datadir. Labs left behind by a
//! killed test process are cleaned up (their server stopped) by the next one.

use crate::{registry, start, state, LabDir, Sandbox, SandboxSpec};
use std::path::Path;
use std::sync::OnceLock;

static SHARED: OnceLock<Sandbox> = OnceLock::new();
static LAB: OnceLock<LabDir> = OnceLock::new();

/// The process's shared test server; started on first call. Panics with the server's error
/// (including its log tail) if it cannot start: a test cannot proceed without it.
pub fn shared_server() -> &'static Sandbox {
    SHARED.get_or_init(|| {
        // SAFETY: getuid has no preconditions and cannot fail.
        let base = std::env::temp_dir().join(format!("qpslab-test-{}", unsafe { libc::getuid() }));
        sweep_stale(&base);
        let lab_path = base.join(format!("lab-{}", std::process::id()));
        let lab = LabDir::new(&lab_path).with_templates(base.join("templates"));
        let _ = LAB.set(lab.clone());
        let sandbox = start(&lab, &SandboxSpec::new("shared"))
            .unwrap_or_else(|e| panic!("the shared test server did not start: {e}"));
        // SAFETY: registering a plain extern "C" function that never unwinds.
        unsafe {
            libc::atexit(at_exit);
        }
        sandbox
    })
}

extern "C" fn at_exit() {
    registry::stop_all_started();
    if let Some(lab) = LAB.get() {
        // Also deletes the runtime directory outside the lab (tests run as root).
        let _ = state::remove(lab, "shared");
        let _ = std::fs::remove_dir_all(lab.path());
    }
}

/// Stops the servers of labs whose test process is gone, and deletes those labs.
fn sweep_stale(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix("lab-")) else {
            continue;
        };
        if Path::new("/proc").join(pid).exists() {
            continue;
        }
        let lab = LabDir::new(entry.path());
        for info in state::list(&lab).unwrap_or_default() {
            let _ = state::remove(&lab, &info.name);
        }
        let _ = std::fs::remove_dir_all(entry.path());
    }
}
