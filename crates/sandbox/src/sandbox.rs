//! Starting a sandbox and the handle to a running one.
//!
//! `start` validates everything it can before touching the disk (name, settings, CPUs,
//! allocator, port, binary), reuses the sandbox's datadir when it exists (data survives
//! restarts) or copies the version's template, renders my.cnf, launches the server and waits
//! until it greets on its socket.

use crate::binary::{self, Flavor, Installation};
use crate::config::{self, Paths};
use crate::error::{Error, Result};
use crate::failure::start_error;
use crate::process::{self, Launch};
use crate::spec::{validate_name, MyCnf, SandboxHome, SandboxSpec};
use crate::state::{self, SandboxInfo, STOP_GRACE};
use crate::{registry, runas, secure, template};
use qpslab_core::{ConnectOptions, Secret};
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant, SystemTime};

use runas::MAX_SOCKET_PATH;

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
        self.info.owner = None;
        // Without an owner it is not taken for an orphan; a failed write only leaves it one.
        let _ = state::write(&self.info.sandbox_dir, &self.info);
        self.info.clone()
    }

    /// Stops the server (SIGTERM, then SIGKILL after 30 s); its state and datadir stay.
    pub fn stop(mut self) -> Result<()> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> Result<()> {
        self.done = true;
        registry::take(self.registry_id);
        let res = process::terminate(self.info.pid, &self.info.datadir, STOP_GRACE);
        // Reap it if terminate did not (std returns ECHILD when it already was).
        let _ = self.child.try_wait();
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
pub fn start(home: &SandboxHome, spec: &SandboxSpec) -> Result<Sandbox> {
    let checked = check(spec)?;
    let account = checked.account.as_ref();
    let dir = home.sandbox_dir(&spec.name);
    make_dirs(home, &dir, account)?;
    // Two processes starting the same name would share a datadir.
    let _lock = process::lock(&dir.join(".lock"))?;
    clear_previous(&dir, &spec.name)?;
    if account.is_some() {
        runas::sweep_orphans(home.path());
    }
    let (run, note) = runas::placement(&dir, &spec.name, account);
    if let Some(note) = note.filter(|_| !run.exists() && home.is_named()) {
        // Said once: the next start finds the runtime directory where it is. Only for a lab
        // the user named: the default one under a private home never was to hold the data.
        crate::notes::note(&note);
    }
    runas::prepare_runtime(&run, &dir, account)?;
    let owner = account.map(runas::Account::ids);
    let datadir = datadir_of(spec, &run);
    let mut timings = StartTimings::default();
    (timings.template_init, timings.datadir_copy) =
        ensure_datadir(home, &checked, &dir, &datadir, owner)?;
    let (init_file, password) = write_init_file(&checked.server, &dir, &run, owner)?;
    let launched = launch(&Start {
        spec,
        server: &checked.server,
        account,
        overrides: &checked.overrides,
        preload: checked.preload.as_deref(),
        socket: socket_path(home, &run, &spec.name)?,
        dir: &dir,
        run: &run,
    });
    // The hash of the password is in the server's tables now; the file is not needed.
    let _ = std::fs::remove_file(&init_file);
    let (mut info, child, boot) = launched?;
    timings.boot = boot;
    info.password = password;
    adopt(&dir, info, child, datadir, timings)
}

/// What `start` finds out before it touches the disk.
struct Checked {
    overrides: Vec<(String, String)>,
    preload: Option<PathBuf>,
    server: Installation,
    /// The account the server runs as when we are root.
    account: Option<runas::Account>,
}

/// Validates the name, settings, CPUs, allocator and port, and finds the server binary.
fn check(spec: &SandboxSpec) -> Result<Checked> {
    validate_name(&spec.name)?;
    let overrides = overrides(spec)?;
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
    let account = runas::server_account()?;
    Ok(Checked {
        overrides,
        preload,
        server,
        account,
    })
}

/// Creates the sandbox home and the sandbox's own directory `dir`.
fn make_dirs(home: &SandboxHome, dir: &Path, account: Option<&runas::Account>) -> Result<()> {
    // A lab the user already has keeps its mode (it may be any directory they chose); what we
    // create under it is 0700. Run as root, the directories we make down to the lab are
    // root:mysql 0710 instead, so the server's account can reach its runtime directories in
    // the lab (`LAB/run`) and nobody else can.
    let missing: Vec<PathBuf> = home
        .path()
        .ancestors()
        .take_while(|p| !p.as_os_str().is_empty() && !p.exists())
        .map(Path::to_path_buf)
        .collect();
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(home.path())
        .map_err(|e| Error::io(format!("creating {}", home.path().display()), e))?;
    if let Some(a) = account {
        for made in &missing {
            runas::private_dir(made, 0o710, Some((0, a.gid)))?;
        }
    }
    for d in [home.sandboxes_dir(), dir.to_path_buf()] {
        runas::private_dir(&d, 0o700, None)?;
    }
    Ok(())
}

/// Makes way for a new start in `dir`: stops a server left orphaned there, refuses when one
/// is running.
fn clear_previous(dir: &Path, name: &str) -> Result<()> {
    let Some(info) = state::read(dir)? else {
        return Ok(());
    };
    if info.orphaned {
        // Its owner was killed before it could stop it: nobody else will.
        process::terminate(info.pid, &info.datadir, STOP_GRACE).map_err(|detail| {
            Error::StopFailed {
                name: info.name.clone(),
                pid: info.pid,
                detail,
            }
        })?;
    } else if info.alive {
        return Err(Error::AlreadyRunning {
            name: name.to_string(),
            pid: info.pid,
        });
    }
    Ok(())
}

/// Writes the SQL that sets up the accounts and the sandbox's root password into the runtime
/// directory `run`; returns the file and the password.
fn write_init_file(
    server: &Installation,
    dir: &Path,
    run: &Path,
    owner: Option<(u32, u32)>,
) -> Result<(PathBuf, Secret)> {
    let password = secure::ensure_password(dir)?;
    let init_sql = match server.flavor {
        Flavor::MariaDb => secure::init_sql_mariadb(&password, &runas::current_user()),
        Flavor::MySql => secure::init_sql_mysql(&password),
    };
    let init_file = run.join(secure::INIT_FILE);
    secure::write_private(&init_file, init_sql.as_bytes(), owner)?;
    Ok((init_file, password))
}

/// Takes charge of a launched server: registers it, then writes the client option file and
/// the state `list` reads.
fn adopt(
    dir: &Path,
    info: SandboxInfo,
    child: Child,
    datadir: PathBuf,
    timings: StartTimings,
) -> Result<Sandbox> {
    let client = secure::client_cnf(&info.password, &info.socket, info.port);
    let registry_id = registry::add(info.pid, datadir);
    let sandbox = Sandbox {
        info,
        child,
        registry_id,
        timings,
        done: false,
    };
    // On failure the sandbox is dropped, which stops the server.
    secure::write_private(&dir.join(secure::CLIENT_FILE), client.as_bytes(), None)?;
    state::write(dir, &sandbox.info)?;
    Ok(sandbox)
}

/// A fresh error log (0600, the server's account's), open for appending.
fn open_log(path: &Path, account: Option<&runas::Account>) -> Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| Error::io(format!("creating {}", path.display()), e))?;
    if let Some(a) = account {
        std::os::unix::fs::fchown(&f, Some(a.uid), Some(a.gid))
            .map_err(|e| Error::io(format!("creating {}", path.display()), e))?;
    }
    Ok(f)
}

/// Makes sure `datadir` holds an initialised datadir: the one the sandbox already has (moved
/// from the old layout if needed), else a copy of the version's template. Returns how long
/// making the template and copying it took, when they happened.
fn ensure_datadir(
    home: &SandboxHome,
    checked: &Checked,
    dir: &Path,
    datadir: &Path,
    owner: Option<(u32, u32)>,
) -> Result<(Option<Duration>, Option<Duration>)> {
    if let Some(owner) = owner {
        runas::adopt_old_datadir(&dir.join("data"), datadir, owner)?;
    }
    if datadir.join("mysql").is_dir() {
        return Ok((None, None));
    }
    let _ = std::fs::remove_dir_all(datadir);
    let init = template::init_settings(&checked.overrides);
    let (tpl, init_time) = template::ensure(&home.templates_dir(), &checked.server, &init)?;
    let t0 = Instant::now();
    template::copy_tree(&tpl, datadir, owner)?;
    Ok((init_time, Some(t0.elapsed())))
}

/// The role's settings, the my.cnf fragment's, then the `--set` overrides, checked.
fn overrides(spec: &SandboxSpec) -> Result<Vec<(String, String)>> {
    let mut overrides = spec.role.settings();
    if let MyCnf::File(path) = &spec.my_cnf {
        overrides.extend(config::read_my_cnf(path)?);
    }
    for (n, v) in &spec.settings {
        overrides.push(config::check_setting(n, v)?);
    }
    Ok(overrides)
}

/// Where the datadir of `spec` lives: `<datadir_root>/<name>`, else `<run>/data`.
fn datadir_of(spec: &SandboxSpec, run: &Path) -> PathBuf {
    match &spec.datadir_root {
        Some(root) => root.join(&spec.name),
        None => run.join("data"),
    }
}

/// Everything `launch` needs once the directories and the datadir are ready.
struct Start<'a> {
    spec: &'a SandboxSpec,
    server: &'a Installation,
    account: Option<&'a runas::Account>,
    overrides: &'a [(String, String)],
    preload: Option<&'a Path>,
    socket: PathBuf,
    dir: &'a Path,
    run: &'a Path,
}

/// Renders my.cnf and runs the server until it greets, retrying on another free port when a
/// port picked for it was taken meanwhile.
fn launch(s: &Start<'_>) -> Result<(SandboxInfo, Child, Duration)> {
    let spec = s.spec;
    let mut attempts = 0;
    loop {
        attempts += 1;
        let port = match spec.port {
            Some(p) => p,
            None => process::free_port()?,
        };
        let paths = s.paths(port);
        let defaults_file = s.write_defaults_file(&paths)?;
        // Each start gets a fresh log so a failure's tail is about this start only.
        let _ = std::fs::rename(&paths.log_error, s.run.join("error.log.old"));
        let _ = std::fs::remove_file(&s.socket);

        let output = open_log(&paths.log_error, s.account)?;
        let t0 = Instant::now();
        let mut child = process::spawn(Launch {
            mysqld: &s.server.mysqld,
            defaults_file: &defaults_file,
            datadir: &paths.datadir,
            cpus: spec.cpus.as_deref(),
            preload: s.preload,
            extra_args: &[],
            output: Some(output),
        })?;
        let pid = child.id();
        match process::wait_ready(&mut child, &s.socket, spec.start_timeout) {
            Ok(()) => return Ok((s.info(pid, paths, defaults_file), child, t0.elapsed())),
            Err(why) => {
                let log = stop_failed(pid, &mut child, &paths);
                if port_clash(&log) && spec.port.is_none() && attempts < 3 {
                    // Another process took the free port between our check and the bind.
                    continue;
                }
                return Err(start_error(&spec.name, why, spec.start_timeout, &log));
            }
        }
    }
}

impl Start<'_> {
    /// The sandbox's files in its runtime directory, listening on `port`.
    fn paths(&self, port: u16) -> Paths {
        Paths {
            datadir: datadir_of(self.spec, self.run),
            socket: self.socket.clone(),
            port,
            pid_file: self.run.join("mysqld.pid"),
            log_error: self.run.join("error.log"),
            tmpdir: self.run.join("tmp"),
            files: self.run.join("files"),
            init_file: self.run.join(secure::INIT_FILE),
        }
    }

    /// Renders my.cnf for `paths` and writes it; returns where.
    fn write_defaults_file(&self, paths: &Paths) -> Result<PathBuf> {
        let run_as = self.account.map(|a| a.name.as_str());
        let mysql = self.server.flavor == Flavor::MySql;
        let lab_settings = config::lab_settings(paths, mysql, run_as);
        let merged = config::merge(&[&lab_settings, self.overrides]);
        // In the runtime directory: the server reads it again after it dropped root (plugin
        // options on INSTALL SONAME). Rewritten before each launch.
        let defaults_file = self.run.join("my.cnf");
        let text = config::render(&self.spec.name, &merged);
        let owner = self.account.map(runas::Account::ids);
        secure::write_private(&defaults_file, text.as_bytes(), owner)?;
        Ok(defaults_file)
    }

    /// The state of the server `pid` that just greeted (its password is filled in later).
    fn info(&self, pid: u32, paths: Paths, defaults_file: PathBuf) -> SandboxInfo {
        let spec = self.spec;
        SandboxInfo {
            name: spec.name.clone(),
            pid,
            port: paths.port,
            socket: paths.socket,
            datadir: paths.datadir,
            error_log: paths.log_error,
            defaults_file,
            sandbox_dir: self.dir.to_path_buf(),
            version: self.server.version.clone(),
            started_at: SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
            alive: true,
            basedir: self.server.basedir.clone(),
            cpus: spec.cpus.clone(),
            malloc: spec.malloc.clone(),
            pin: spec.pin.clone(),
            role: spec.role.clone(),
            disk_bytes: None,
            owner: state::Owner::me(),
            orphaned: false,
            password: Default::default(),
        }
    }
}

/// Stops a server that did not come up and returns its error log.
fn stop_failed(pid: u32, child: &mut Child, paths: &Paths) -> String {
    // Never child.kill(): terminate may already have reaped it, and the pid could be someone
    // else's by now. terminate checks the command line first.
    let _ = process::terminate(pid, &paths.datadir, Duration::from_secs(10));
    let _ = child.try_wait();
    let log = std::fs::read(&paths.log_error).unwrap_or_default();
    String::from_utf8_lossy(&log).into_owned()
}

/// Whether a failed start's log says its port was taken.
fn port_clash(log: &str) -> bool {
    log.contains("Address already in use") || log.contains("another mysqld server running on port")
}

/// `<runtime dir>/mysqld.sock`, or `/tmp/qpslab-<uid>/<hash>-<name>.sock` (a 0700 directory)
/// when that is too long for a Unix socket path.
fn socket_path(home: &SandboxHome, run: &Path, name: &str) -> Result<PathBuf> {
    let natural = run.join(runas::SOCKET);
    if natural.as_os_str().len() <= MAX_SOCKET_PATH {
        return Ok(natural);
    }
    let short = process::short_socket_dir();
    runas::private_dir(&short, 0o700, None)?;
    Ok(short.join(short_socket_name(home.path(), name)))
}

/// A socket file name unique to (lab, name), so two deep labs do not share one.
fn short_socket_name(home: &Path, name: &str) -> String {
    let mut h: u32 = 0x811c9dc5;
    for b in home.as_os_str().as_encoded_bytes() {
        h = (h ^ u32::from(*b)).wrapping_mul(0x01000193);
    }
    format!("{h:08x}-{name}.sock")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_datadir_root_moves_only_the_datadir() {
        let mut spec = SandboxSpec::new("s1");
        let run = Path::new("/l/sandboxes/s1");
        assert_eq!(datadir_of(&spec, run), run.join("data"));
        spec.datadir_root = Some("/mnt/x".into());
        assert_eq!(datadir_of(&spec, run), PathBuf::from("/mnt/x/s1"));
    }

    #[test]
    fn deep_labs_get_short_sockets() {
        let shallow = SandboxHome::new("/tmp/lab");
        let a = shallow.sandbox_dir("a");
        let s = socket_path(&shallow, &a, "a").unwrap();
        assert_eq!(s, PathBuf::from("/tmp/lab/sandboxes/a/mysqld.sock"));
        let deep = SandboxHome::new(format!("/tmp/{}", "d".repeat(120)));
        let name = "x".repeat(32);
        let d = deep.sandbox_dir(&name);
        let s = socket_path(&deep, &d, &name).unwrap();
        assert!(s.as_os_str().len() <= MAX_SOCKET_PATH, "{}", s.display());
        assert!(s.starts_with(process::short_socket_dir()));
        let other = SandboxHome::new(format!("/tmp/{}", "e".repeat(120)));
        assert_ne!(
            s,
            socket_path(&other, &other.sandbox_dir(&name), &name).unwrap()
        );
    }
}
