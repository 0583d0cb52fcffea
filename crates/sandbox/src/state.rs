//! What the lab remembers about each sandbox: `sandboxes/<name>/state.json`, written when the
//! server is up and removed when it is stopped. Listing, finding and stopping by name work from
//! these files, so they work from any process, and liveness is always checked afresh by pid
//! and command line.

use crate::error::{Error, Result};
use crate::process;
use crate::spec::{validate_name, LabDir, Malloc};
use qpslab_core::{ConnectOptions, Endpoint, Secret, SslMode};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a SIGTERM shutdown may take before SIGKILL.
pub(crate) const STOP_GRACE: Duration = Duration::from_secs(30);

/// A sandbox as recorded in the lab directory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxInfo {
    /// The sandbox name.
    pub name: String,
    /// The server's pid.
    pub pid: u32,
    /// Its TCP port on 127.0.0.1.
    pub port: u16,
    /// Its Unix socket.
    pub socket: PathBuf,
    /// Its data directory.
    pub datadir: PathBuf,
    /// Its error log.
    pub error_log: PathBuf,
    /// Its rendered option file.
    pub defaults_file: PathBuf,
    /// The server version, e.g. `10.11.19-MariaDB-0+deb12u1`.
    pub version: String,
    /// When it became ready, in seconds since the Unix epoch.
    pub started_at: u64,
    /// Whether the recorded pid is still this sandbox's server (computed when read).
    #[serde(default)]
    pub alive: bool,
    /// The tarball basedir it runs from, if any.
    pub basedir: Option<PathBuf>,
    /// Its CPU affinity, if restricted.
    pub cpus: Option<Vec<usize>>,
    /// The preloaded allocator, if any.
    pub malloc: Option<Malloc>,
}

impl SandboxInfo {
    /// Unix-socket options: user root, empty password, no database.
    pub fn connect_options(&self) -> ConnectOptions {
        options(Endpoint::Unix {
            path: self.socket.clone(),
        })
    }

    /// TCP options: 127.0.0.1 and the sandbox port, user root (created for 127.0.0.1 when the
    /// datadir was initialised), empty password, no database.
    pub fn tcp_options(&self) -> ConnectOptions {
        options(Endpoint::Tcp {
            host: "127.0.0.1".into(),
            port: self.port,
        })
    }

    /// Re-checks `alive` against the process table.
    pub(crate) fn refresh(mut self) -> Self {
        self.alive = process::is_ours(self.pid, &self.datadir);
        self
    }
}

fn options(endpoint: Endpoint) -> ConnectOptions {
    ConnectOptions {
        endpoint,
        user: "root".into(),
        password: Secret::default(),
        database: None,
        ssl_mode: SslMode::Disabled,
        ssl_ca: None,
    }
}

pub(crate) fn state_file(dir: &Path) -> PathBuf {
    dir.join("state.json")
}

/// Writes the state file atomically (a reader never sees half of it).
pub(crate) fn write(dir: &Path, info: &SandboxInfo) -> Result<()> {
    let path = state_file(dir);
    let tmp = dir.join("state.json.tmp");
    let json = serde_json::to_vec_pretty(info).map_err(|e| Error::State {
        path: path.clone(),
        detail: e.to_string(),
    })?;
    std::fs::write(&tmp, json)
        .and_then(|_| std::fs::rename(&tmp, &path))
        .map_err(|e| Error::io(format!("writing {}", path.display()), e))
}

/// Reads a state file; `None` when there is none.
pub(crate) fn read(dir: &Path) -> Result<Option<SandboxInfo>> {
    let path = state_file(dir);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(format!("reading {}", path.display()), e)),
    };
    let info: SandboxInfo = serde_json::from_slice(&bytes).map_err(|e| Error::State {
        path,
        detail: e.to_string(),
    })?;
    Ok(Some(info.refresh()))
}

pub(crate) fn forget(dir: &Path) {
    let _ = std::fs::remove_file(state_file(dir));
}

/// Every sandbox with a state file, by name; `alive` tells which still run.
pub fn list(lab: &LabDir) -> Result<Vec<SandboxInfo>> {
    let root = lab.sandboxes_dir();
    let entries = match std::fs::read_dir(&root) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(format!("listing {}", root.display()), e)),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(format!("listing {}", root.display()), e))?;
        if let Some(info) = read(&entry.path())? {
            out.push(info);
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

fn existing_dir(lab: &LabDir, name: &str) -> Result<PathBuf> {
    validate_name(name)?;
    let dir = lab.sandbox_dir(name);
    if dir.is_dir() {
        Ok(dir)
    } else {
        Err(Error::NotFound {
            name: name.into(),
            lab: lab.path().to_path_buf(),
        })
    }
}

/// The running sandbox `name` (for `--sandbox NAME` targets).
pub fn find(lab: &LabDir, name: &str) -> Result<SandboxInfo> {
    let dir = existing_dir(lab, name)?;
    match read(&dir)? {
        Some(info) if info.alive => Ok(info),
        _ => Err(Error::NotRunning { name: name.into() }),
    }
}

/// Stops sandbox `name` (SIGTERM, then SIGKILL after 30 s) and forgets its state; its datadir
/// stays for the next start. Stopping a sandbox that is not running only clears its state.
pub fn stop_by_name(lab: &LabDir, name: &str) -> Result<()> {
    let dir = existing_dir(lab, name)?;
    let Some(info) = read(&dir)? else {
        return Err(Error::NotRunning { name: name.into() });
    };
    process::terminate(info.pid, &info.datadir, STOP_GRACE).map_err(|detail| {
        Error::StopFailed {
            name: name.into(),
            pid: info.pid,
            detail,
        }
    })?;
    forget(&dir);
    Ok(())
}

/// Stops sandbox `name` if it runs and deletes its directory (datadir included).
pub fn remove(lab: &LabDir, name: &str) -> Result<()> {
    let dir = existing_dir(lab, name)?;
    if let Some(info) = read(&dir)? {
        process::terminate(info.pid, &info.datadir, STOP_GRACE).map_err(|detail| {
            Error::StopFailed {
                name: name.into(),
                pid: info.pid,
                detail,
            }
        })?;
        if !info.socket.starts_with(&dir) {
            let _ = std::fs::remove_file(&info.socket);
        }
    }
    std::fs::remove_dir_all(&dir).map_err(|e| Error::io(format!("removing {}", dir.display()), e))
}

/// The last `lines` lines of sandbox `name`'s error log.
pub fn log_tail(lab: &LabDir, name: &str, lines: usize) -> Result<String> {
    let dir = existing_dir(lab, name)?;
    let log = match read(&dir) {
        Ok(Some(info)) => info.error_log,
        _ => dir.join("error.log"),
    };
    Ok(process::log_tail_of(&log, lines))
}
