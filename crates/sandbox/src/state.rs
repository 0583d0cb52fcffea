//! What the lab remembers about each sandbox: `sandboxes/<name>/state.json`, written when the
//! server is up and kept after it stops (a stopped sandbox still holds its datadir). Listing,
//! finding and stopping by name work from these files, so they work from any process, and
//! liveness is always checked afresh by pid and command line. The root password is read from
//! the sandbox directory, never stored in the state file.

use crate::error::{Error, Result};
use crate::spec::{validate_name, Malloc, SandboxHome};
use crate::{process, runas, secure};
use qpslab_core::{ConnectOptions, Endpoint, Secret, SslMode, Timeouts};
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
    /// Its rendered option file (in the runtime directory: the server reads it again after
    /// dropping root, e.g. for `INSTALL SONAME`).
    pub defaults_file: PathBuf,
    /// The sandbox directory (password, client.cnf, state), set when read.
    #[serde(default)]
    pub sandbox_dir: PathBuf,
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
    /// The thread placement policy it was started with (`server start --pin`).
    #[serde(
        default,
        skip_serializing_if = "qpslab_core::placement::Policy::is_empty"
    )]
    pub pin: qpslab_core::placement::Policy,
    /// Its part in replication.
    #[serde(default, skip_serializing_if = "crate::spec::Role::is_standalone")]
    pub role: crate::spec::Role,
    /// Bytes on disk (datadir, logs), filled in by [`list`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_bytes: Option<u64>,
    /// The qpslab process that started the server and will stop it; none once kept
    /// (`server start`, `--keep`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<Owner>,
    /// Alive, but its owner is gone (killed before it could stop the server): nobody will stop
    /// it, so the next start of this name does (computed when read).
    #[serde(default)]
    pub orphaned: bool,
    /// root's password, read from the sandbox directory; never serialized.
    #[serde(skip)]
    pub(crate) password: Secret,
}

impl SandboxInfo {
    /// Unix-socket options: user root with the sandbox's password, no database.
    pub fn connect_options(&self) -> ConnectOptions {
        self.options(Endpoint::Unix {
            path: self.socket.clone(),
        })
    }

    /// TCP options: 127.0.0.1 and the sandbox port, user root with the sandbox's password, no
    /// database.
    pub fn tcp_options(&self) -> ConnectOptions {
        self.options(Endpoint::Tcp {
            host: "127.0.0.1".into(),
            port: self.port,
        })
    }

    /// The sandbox directory (password, client.cnf, state).
    pub fn dir(&self) -> &Path {
        &self.sandbox_dir
    }

    /// The mysql-client option file: `mariadb --defaults-file=<this>` logs in as root.
    pub fn client_file(&self) -> PathBuf {
        self.dir().join(secure::CLIENT_FILE)
    }

    /// The directory the server writes to (socket, logs, and the datadir unless it was put
    /// elsewhere): the sandbox directory, or one under /var/lib/qpslab when the server runs as
    /// another account. Its my.cnf is there.
    pub fn runtime_dir(&self) -> &Path {
        self.defaults_file.parent().unwrap_or(Path::new("/"))
    }

    fn options(&self, endpoint: Endpoint) -> ConnectOptions {
        ConnectOptions {
            endpoint,
            user: "root".into(),
            password: self.password.clone(),
            database: None,
            ssl_mode: SslMode::Disabled,
            ssl_ca: None,
            timeouts: Timeouts::default(),
            max_allowed_packet: ConnectOptions::DEFAULT_MAX_ALLOWED_PACKET,
        }
    }

    /// Re-checks `alive` and `orphaned` against the process table.
    pub(crate) fn refresh(mut self) -> Self {
        self.alive = process::is_ours(self.pid, &self.datadir);
        self.orphaned = self.alive && self.owner.is_some_and(|o| !o.alive());
        self
    }
}

/// The process that owns a sandbox (the qpslab that started it), told apart from a later one
/// that reuses its pid by its start time; the store's `Owner` of a run means the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    /// Its pid.
    pub pid: u32,
    /// Its start time since boot, in clock ticks (field 22 of `/proc/PID/stat`).
    pub started: u64,
}

impl Owner {
    /// This process.
    pub fn me() -> Option<Owner> {
        let pid = std::process::id();
        start_ticks(pid).map(|started| Owner { pid, started })
    }

    /// Whether that process still runs (a zombie or a reused pid does not count).
    pub fn alive(&self) -> bool {
        start_ticks(self.pid) == Some(self.started)
    }
}

/// Field 22 of `/proc/PID/stat` (start time), `None` for a missing process or a zombie.
fn start_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: count from its last ')'.
    let mut rest = stat.get(stat.rfind(')')? + 1..)?.split_whitespace();
    let state = rest.next()?;
    (state != "Z").then(|| rest.nth(18)?.parse().ok())?
}

pub(crate) fn state_file(dir: &Path) -> PathBuf {
    dir.join("state.json")
}

/// Writes the state file atomically (a reader never sees half of it), 0600.
pub(crate) fn write(dir: &Path, info: &SandboxInfo) -> Result<()> {
    let path = state_file(dir);
    let json = serde_json::to_vec_pretty(info).map_err(|e| Error::State {
        path: path.clone(),
        detail: e.to_string(),
    })?;
    secure::write_private(&path, &json, None)
}

/// Reads a state file; `None` when there is none.
pub(crate) fn read(dir: &Path) -> Result<Option<SandboxInfo>> {
    let path = state_file(dir);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(format!("reading {}", path.display()), e)),
    };
    let mut info: SandboxInfo = serde_json::from_slice(&bytes).map_err(|e| Error::State {
        path,
        detail: e.to_string(),
    })?;
    info.password = secure::read_password(dir).unwrap_or_default();
    info.sandbox_dir = dir.to_path_buf();
    Ok(Some(info.refresh()))
}

/// Every sandbox with a state file, by name, running or stopped, with its size on disk.
pub fn list(home: &SandboxHome) -> Result<Vec<SandboxInfo>> {
    let root = home.sandboxes_dir();
    let entries = match std::fs::read_dir(&root) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(format!("listing {}", root.display()), e)),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(format!("listing {}", root.display()), e))?;
        if let Some(mut info) = read(&entry.path())? {
            let mut bytes = runas::disk_usage(&entry.path());
            if info.runtime_dir() != entry.path() {
                bytes += runas::disk_usage(info.runtime_dir());
            }
            info.disk_bytes = Some(bytes);
            out.push(info);
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

fn existing_dir(home: &SandboxHome, name: &str) -> Result<PathBuf> {
    validate_name(name)?;
    let dir = home.sandbox_dir(name);
    if dir.is_dir() {
        Ok(dir)
    } else {
        Err(Error::NotFound {
            name: name.into(),
            home: home.path().to_path_buf(),
        })
    }
}

/// The running sandbox `name` (for `--sandbox NAME` targets).
pub fn find(home: &SandboxHome, name: &str) -> Result<SandboxInfo> {
    let dir = existing_dir(home, name)?;
    match read(&dir)? {
        Some(info) if info.alive => Ok(info),
        _ => Err(Error::NotRunning { name: name.into() }),
    }
}

/// Stops sandbox `name` (SIGTERM, then SIGKILL after 30 s); its datadir stays for the next
/// start.
pub fn stop_by_name(home: &SandboxHome, name: &str) -> Result<()> {
    let dir = existing_dir(home, name)?;
    let info = match read(&dir)? {
        Some(info) if info.alive => info,
        _ => return Err(Error::NotRunning { name: name.into() }),
    };
    process::terminate(info.pid, &info.datadir, STOP_GRACE).map_err(|detail| {
        Error::StopFailed {
            name: name.into(),
            pid: info.pid,
            detail,
        }
    })?;
    Ok(())
}

/// Stops sandbox `name` if it runs and deletes its directory and its runtime directory
/// (datadir included).
pub fn remove(home: &SandboxHome, name: &str) -> Result<()> {
    let dir = existing_dir(home, name)?;
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
    // A runtime directory elsewhere is found by name, so a lost state file leaks nothing.
    if let Ok(Some(server)) = runas::server_account() {
        let run = runas::runtime_dir(&dir, name, Some(&server));
        if run.exists() {
            std::fs::remove_dir_all(&run)
                .map_err(|e| Error::io(format!("removing {}", run.display()), e))?;
        }
    }
    std::fs::remove_dir_all(&dir).map_err(|e| Error::io(format!("removing {}", dir.display()), e))
}

/// The last `lines` lines of sandbox `name`'s error log.
pub fn log_tail(home: &SandboxHome, name: &str, lines: usize) -> Result<String> {
    let dir = existing_dir(home, name)?;
    let log = match read(&dir) {
        Ok(Some(info)) => info.error_log,
        _ => match runas::server_account() {
            Ok(server) => runas::runtime_dir(&dir, name, server.as_ref()).join("error.log"),
            Err(_) => dir.join("error.log"),
        },
    };
    Ok(process::log_tail_of(&log, lines))
}
