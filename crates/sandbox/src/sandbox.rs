//! Starting a sandbox and the handle to a running one.
//!
//! `start` validates everything it can before touching the disk (name, settings, CPUs,
//! allocator, port, binary), reuses the sandbox's datadir when it exists (data survives
//! restarts) or copies the version's template, renders my.cnf, launches the server and waits
//! until it greets on its socket.

use crate::binary::{self, Flavor};
use crate::config::{self, Paths};
use crate::error::{Error, Result};
use crate::process::{self, Launch, NotReady};
use crate::spec::{validate_name, LabDir, Profile, SandboxSpec};
use crate::state::{self, SandboxInfo, STOP_GRACE};
use crate::{registry, template};
use qpslab_core::ConnectOptions;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant, SystemTime};

/// Longest Unix socket path (`sun_path` is 108 bytes with the terminating NUL).
const MAX_SOCKET_PATH: usize = 107;
/// Lines of error log carried by start errors.
const TAIL_LINES: usize = 20;

/// Where the time of a start went.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StartTimings {
    /// Initialising the version's template datadir (only the first start per version).
    pub template_init: Option<Duration>,
    /// Copying the template into the sandbox (`None` when an existing datadir was reused).
    pub datadir_copy: Option<Duration>,
    /// From launching the server until it greeted on its socket.
    pub boot: Duration,
}

/// A running server this process started. Dropping it stops the server unless
/// [`Sandbox::keep`] was called.
#[derive(Debug)]
pub struct Sandbox {
    info: SandboxInfo,
    dir: PathBuf,
    child: Child,
    registry_id: u64,
    timings: StartTimings,
    done: bool,
}

impl Sandbox {
    /// The sandbox name.
    pub fn name(&self) -> &str {
        &self.info.name
    }
    /// The server pid.
    pub fn pid(&self) -> u32 {
        self.info.pid
    }
    /// The TCP port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.info.port
    }
    /// The Unix socket.
    pub fn socket(&self) -> &Path {
        &self.info.socket
    }
    /// The data directory.
    pub fn datadir(&self) -> &Path {
        &self.info.datadir
    }
    /// The error log.
    pub fn error_log(&self) -> &Path {
        &self.info.error_log
    }
    /// The rendered option file.
    pub fn defaults_file(&self) -> &Path {
        &self.info.defaults_file
    }
    /// The server version, e.g. `10.11.19-MariaDB-0+deb12u1`.
    pub fn version(&self) -> &str {
        &self.info.version
    }
    /// The recorded state (as `list` would show it).
    pub fn info(&self) -> &SandboxInfo {
        &self.info
    }
    /// Where the start time went.
    pub fn timings(&self) -> &StartTimings {
        &self.timings
    }
    /// Unix-socket options: user root, empty password, no database.
    pub fn connect_options(&self) -> ConnectOptions {
        self.info.connect_options()
    }
    /// TCP options: 127.0.0.1:port, user root, empty password, no database.
    pub fn tcp_options(&self) -> ConnectOptions {
        self.info.tcp_options()
    }

    /// Detaches: the server keeps running after this process ends (`server start`, `--keep`).
    pub fn keep(mut self) -> SandboxInfo {
        registry::take(self.registry_id);
        self.done = true;
        self.info.clone()
    }

    /// Stops the server (SIGTERM, then SIGKILL after 30 s) and clears its state file.
    pub fn stop(mut self) -> Result<()> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> Result<()> {
        self.done = true;
        registry::take(self.registry_id);
        let res = process::terminate(self.info.pid, &self.info.datadir, STOP_GRACE);
        // Reap it if terminate did not (std returns ECHILD when it already was).
        let _ = self.child.try_wait();
        state::forget(&self.dir);
        res.map_err(|detail| Error::StopFailed {
            name: self.info.name.clone(),
            pid: self.info.pid,
            detail,
        })
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        if !self.done {
            // Nobody to report to from drop; `stop` is the way to see errors.
            let _ = self.shutdown();
        }
    }
}

/// Checks the spec, then starts the sandbox and waits until it accepts connections.
pub fn start(lab: &LabDir, spec: &SandboxSpec) -> Result<Sandbox> {
    validate_name(&spec.name)?;
    let mut overrides = match &spec.profile {
        Profile::Default => Vec::new(),
        Profile::File(path) => {
            let text = std::fs::read_to_string(path).map_err(|source| Error::Profile {
                path: path.clone(),
                source,
            })?;
            config::parse_profile(&text)?
        }
    };
    for (n, v) in &spec.settings {
        overrides.push(config::check_setting(n, v)?);
    }
    if let Some(cpus) = &spec.cpus {
        process::check_cpus(cpus)?;
    }
    let preload = spec
        .malloc
        .as_ref()
        .map(binary::malloc_library)
        .transpose()?;
    if let Some(port) = spec.port {
        process::check_port(port)?;
    }
    let server = binary::locate(spec.basedir.as_deref())?;

    let dir = lab.sandbox_dir(&spec.name);
    std::fs::create_dir_all(dir.join("tmp"))
        .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
    // Two processes starting the same name would share a datadir.
    let _lock = process::lock(&dir.join(".lock"))?;
    if let Some(info) = state::read(&dir)? {
        if info.alive {
            return Err(Error::AlreadyRunning {
                name: spec.name.clone(),
                pid: info.pid,
            });
        }
    }

    let datadir = dir.join("data");
    let mut timings = StartTimings::default();
    if !datadir.join("mysql").is_dir() {
        let _ = std::fs::remove_dir_all(&datadir);
        let init = template::init_settings(&overrides);
        let (tpl, init_time) = template::ensure(&lab.templates_dir(), &server, &init)?;
        timings.template_init = init_time;
        let t0 = Instant::now();
        template::copy_tree(&tpl, &datadir)?;
        timings.datadir_copy = Some(t0.elapsed());
    }

    let socket = socket_path(lab, &dir, &spec.name)?;
    let mysql = server.flavor == Flavor::MySql;
    let mut attempts = 0;
    loop {
        attempts += 1;
        let port = match spec.port {
            Some(p) => p,
            None => process::free_port()?,
        };
        let paths = Paths {
            datadir: datadir.clone(),
            socket: socket.clone(),
            port,
            pid_file: dir.join("mysqld.pid"),
            log_error: dir.join("error.log"),
            tmpdir: dir.join("tmp"),
        };
        let lab_settings = config::lab_settings(&paths, mysql, process::running_as_root());
        let merged = config::merge(&[&lab_settings, &overrides]);
        let defaults_file = dir.join("my.cnf");
        write_file(&defaults_file, &config::render(&spec.name, &merged))?;
        // Each start gets a fresh log so a failure's tail is about this start only.
        let _ = std::fs::rename(&paths.log_error, dir.join("error.log.old"));
        let _ = std::fs::remove_file(&socket);

        let t0 = Instant::now();
        let mut child = process::spawn(&Launch {
            mysqld: &server.mysqld,
            defaults_file: &defaults_file,
            datadir: &datadir,
            cpus: spec.cpus.as_deref(),
            preload: preload.as_deref(),
            extra_args: &[],
        })?;
        let pid = child.id();
        match process::wait_ready(&mut child, &socket, spec.start_timeout) {
            Ok(()) => {
                timings.boot = t0.elapsed();
                let info = SandboxInfo {
                    name: spec.name.clone(),
                    pid,
                    port,
                    socket: socket.clone(),
                    datadir: datadir.clone(),
                    error_log: paths.log_error.clone(),
                    defaults_file,
                    version: server.version.clone(),
                    started_at: SystemTime::now()
                        .duration_since(SystemTime::UNIX_EPOCH)
                        .map(|d| d.as_secs())
                        .unwrap_or(0),
                    alive: true,
                    basedir: server.basedir.clone(),
                    cpus: spec.cpus.clone(),
                    malloc: spec.malloc.clone(),
                };
                let registry_id = registry::add(pid, datadir.clone(), dir.clone());
                let sandbox = Sandbox {
                    info,
                    dir: dir.clone(),
                    child,
                    registry_id,
                    timings,
                    done: false,
                };
                // On failure the sandbox is dropped, which stops the server.
                state::write(&dir, &sandbox.info)?;
                return Ok(sandbox);
            }
            Err(why) => {
                // Never child.kill(): terminate may already have reaped it, and the pid could
                // be someone else's by now. terminate checks the command line first.
                let _ = process::terminate(pid, &datadir, Duration::from_secs(10));
                let _ = child.try_wait();
                let log_tail = process::log_tail_of(&paths.log_error, TAIL_LINES);
                let port_clash = log_tail.contains("Address already in use")
                    || log_tail.contains("another mysqld server running on port");
                if port_clash && spec.port.is_none() && attempts < 3 {
                    // Another process took the free port between our check and the bind.
                    continue;
                }
                return Err(start_error(&spec.name, why, spec.start_timeout, log_tail));
            }
        }
    }
}

fn start_error(name: &str, why: NotReady, timeout: Duration, log_tail: String) -> Error {
    let unknown = log_tail.lines().find_map(|l| {
        ["unknown variable", "unknown option"]
            .iter()
            .find_map(|pat| l.find(pat).map(|i| l[i..].trim().to_string()))
    });
    if let Some(detail) = unknown {
        return Error::UnknownSetting {
            name: name.into(),
            detail,
            log_tail,
        };
    }
    let reason = match why {
        NotReady::Exited(s) => s,
        NotReady::Timeout => format!("no connection accepted within {} s", timeout.as_secs()),
    };
    Error::StartFailed {
        name: name.into(),
        reason,
        log_tail,
    }
}

/// `<sandbox>/mysqld.sock`, or `/tmp/qpslab-<uid>/<hash>-<name>.sock` when that is too long
/// for a Unix socket path.
fn socket_path(lab: &LabDir, dir: &Path, name: &str) -> Result<PathBuf> {
    let natural = dir.join("mysqld.sock");
    if natural.as_os_str().len() <= MAX_SOCKET_PATH {
        return Ok(natural);
    }
    let short = process::short_socket_dir();
    std::fs::create_dir_all(&short)
        .map_err(|e| Error::io(format!("creating {}", short.display()), e))?;
    Ok(short.join(short_socket_name(lab.path(), name)))
}

/// A socket file name unique to (lab, name), so two deep labs do not share one.
fn short_socket_name(lab: &Path, name: &str) -> String {
    let mut h: u32 = 0x811c9dc5;
    for b in lab.as_os_str().as_encoded_bytes() {
        h = (h ^ u32::from(*b)).wrapping_mul(0x01000193);
    }
    format!("{h:08x}-{name}.sock")
}

fn write_file(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).map_err(|e| Error::io(format!("writing {}", path.display()), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_labs_get_short_sockets() {
        let shallow = LabDir::new("/tmp/lab");
        let s = socket_path(&shallow, &shallow.sandbox_dir("a"), "a").unwrap();
        assert_eq!(s, PathBuf::from("/tmp/lab/sandboxes/a/mysqld.sock"));
        let deep = LabDir::new(format!("/tmp/{}", "d".repeat(120)));
        let name = "x".repeat(32);
        let s = socket_path(&deep, &deep.sandbox_dir(&name), &name).unwrap();
        assert!(s.as_os_str().len() <= MAX_SOCKET_PATH, "{}", s.display());
        assert!(s.starts_with(process::short_socket_dir()));
        let other = LabDir::new(format!("/tmp/{}", "e".repeat(120)));
        assert_ne!(
            s,
            socket_path(&other, &other.sandbox_dir(&name), &name).unwrap()
        );
    }

    #[test]
    fn unknown_variable_becomes_a_user_error() {
        let tail = "2026-01-01 0 [ERROR] /usr/sbin/mariadbd: unknown variable 'no_such=1'\n2026 [ERROR] Aborting";
        let e = start_error(
            "s",
            NotReady::Exited("exit 7".into()),
            Duration::from_secs(1),
            tail.into(),
        );
        assert!(e.is_user_error());
        assert!(
            e.to_string().contains("unknown variable 'no_such=1'"),
            "{e}"
        );
        let e = start_error(
            "s",
            NotReady::Timeout,
            Duration::from_secs(5),
            "boom".into(),
        );
        assert!(!e.is_user_error());
        assert!(
            e.to_string().contains("within 5 s") && e.to_string().contains("boom"),
            "{e}"
        );
    }
}
