//! A real server for integration tests (feature `testing`): one per test process, started on
//! first use in a temporary lab with no my.cnf fragment, stopped and deleted at process exit.
//!
//! Templates are shared by all test processes of a user (in `$TMPDIR/qpslab-test-<uid>/`), so
//! only the first test binary ever run pays for initialising a datadir. Labs left behind by a
//! killed test process are cleaned up (their server stopped) by the next one.

use crate::{registry, start, state, Sandbox, SandboxHome, SandboxSpec};
use std::path::Path;
use std::sync::OnceLock;

static SHARED: OnceLock<Sandbox> = OnceLock::new();
static HOME_DIR: OnceLock<SandboxHome> = OnceLock::new();

/// The process's shared test server; started on first call. Panics with the server's error
/// (including its log tail) if it cannot start: a test cannot proceed without it.
pub fn shared_server() -> &'static Sandbox {
    SHARED.get_or_init(|| {
        // SAFETY: getuid has no preconditions and cannot fail.
        let base = std::env::temp_dir().join(format!("qpslab-test-{}", unsafe { libc::getuid() }));
        sweep_stale(&base);
        let home_path = base.join(format!("lab-{}", std::process::id()));
        let home = SandboxHome::new(&home_path).with_templates(base.join("templates"));
        let _ = HOME_DIR.set(home.clone());
        let sandbox = start(&home, &SandboxSpec::new("shared"))
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
    if let Some(home) = HOME_DIR.get() {
        // Also deletes the runtime directory outside the lab (tests run as root).
        let _ = state::remove(home, "shared");
        let _ = std::fs::remove_dir_all(home.path());
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
        let home = SandboxHome::new(entry.path());
        for info in state::list(&home).unwrap_or_default() {
            let _ = state::remove(&home, &info.name);
        }
        let _ = std::fs::remove_dir_all(entry.path());
    }
}
