//! Which server a command talks to: a DSN, a host and port, a socket, a named sandbox, or the
//! embedded default (a sandbox started for this command). Options layer as the mysql client
//! layers them: the option files, then the DSN, then the flags (`--host`, `-P`, `-u`, `-p`,
//! `-S`, `-D`), a later one winning. The option files a client reads by default are read only
//! once a server is named ([`explicit`]), so they never turn the embedded default into another
//! server. Passwords come from `-p`/`--password`, the DSN, `--password-file`, the option files
//! or `MYSQL_PWD`, in that order, and never appear in anything we print.

mod prompt;
mod unused;

use crate::args::{EmbeddedArgs, SandboxHomeArgs, TargetArgs, WaitArgs};
use crate::error::user;
use crate::plan::sandbox_spec;
use anyhow::{Context, Result};
use qpslab_core::{ConnectOptions, Dsn, Endpoint, Secret, SslMode, Timeouts};
use qpslab_sandbox::{Sandbox, SandboxHome, SandboxSpec};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// The default schema for the sbtest tables, as sysbench's `--mysql-db`.
pub const DEFAULT_DATABASE: &str = "sbtest";
/// The name of the sandbox started when no target is given.
pub const EMBEDDED_NAME: &str = "embedded";

/// A server reached for one command. Holds the sandbox started for it, if any, which is stopped
/// when this is dropped (unless kept).
pub struct Connected {
    /// How to open sessions (database set to the schema of the sbtest tables).
    pub options: ConnectOptions,
    /// The sandbox we started for this command, stopped on drop unless `--keep`.
    pub sandbox: Option<Sandbox>,
    /// A sandbox of ours (embedded or `--sandbox NAME`): its datasets and databases may be
    /// built on demand. Anything else is the user's server, which `run` never changes.
    pub ours: bool,
    /// The lab directory holding our sandbox's data (for a sandbox of ours).
    pub home: Option<PathBuf>,
    /// The pid of our sandbox's server (embedded or `--sandbox NAME`), for its CPU and perf.
    pub server_pid: Option<u32>,
    keep: bool,
}

impl Connected {
    /// The options without a default schema, for creating it.
    pub fn server_options(&self) -> ConnectOptions {
        ConnectOptions {
            database: None,
            ..self.options.clone()
        }
    }

    /// Stops the embedded sandbox (or leaves it running with `--keep`), reporting a failure.
    pub fn finish(mut self) -> Result<()> {
        if let Some(sb) = self.sandbox.take() {
            if self.keep {
                let info = sb.keep();
                eprintln!(
                    "sandbox '{}' left running (socket {}); stop it with: qpslab server stop {}",
                    info.name,
                    info.socket.display(),
                    info.name
                );
            } else {
                sb.stop().context("stopping the embedded sandbox")?;
            }
        }
        Ok(())
    }
}

/// The lab directory from `--lab`, `QPSLAB_LAB` or the default; `QPSLAB_TEMPLATES` names a
/// datadir-template directory shared between labs (each lab keeps its own otherwise).
pub fn sandbox_home(l: &SandboxHomeArgs) -> SandboxHome {
    let home = match &l.home {
        Some(p) => SandboxHome::new(p.clone()),
        None => SandboxHome::default_location(),
    };
    match std::env::var_os("QPSLAB_TEMPLATES") {
        Some(t) if !t.is_empty() => home.with_templates(std::path::PathBuf::from(t)),
        _ => home,
    }
}

/// Whether the flags name a server (or how to reach one) rather than leave the command to its
/// embedded sandbox. `-u` and `-p` alone do, as for the mysql client (an account is for a
/// server: the option files' one, else localhost); `-D` alone does not, as it applies to either.
pub fn explicit(t: &TargetArgs) -> bool {
    t.user.is_some()
        || t.target.is_some()
        || t.host.is_some()
        || t.port.is_some()
        || t.socket.is_some()
        || t.sandbox.is_some()
        || t.password.is_some()
        || t.defaults_file.is_some()
        || t.defaults_extra_file.is_some()
        || t.password_file.is_some()
}

/// The target options as typed, for a command line shown to the user: URL passwords removed.
pub fn command_args(t: &TargetArgs) -> Vec<String> {
    let mut args = Vec::new();
    let mut push = |flag: &str, v: String| {
        args.push(flag.to_string());
        args.push(v);
    };
    if let Some(url) = &t.target {
        push("--target", qpslab_store::redact_url_passwords(url));
    }
    let path = |p: &PathBuf| p.display().to_string();
    if let Some(h) = &t.host {
        push("--host", h.clone());
    }
    if let Some(p) = t.port {
        push("--port", p.to_string());
    }
    if let Some(s) = &t.socket {
        push("--socket", path(s));
    }
    if let Some(s) = &t.sandbox {
        push("--sandbox", s.clone());
    }
    if let Some(u) = &t.user {
        push("--user", u.clone());
    }
    if let Some(d) = &t.database {
        push("--database", d.clone());
    }
    if let Some(f) = &t.defaults_file {
        push("--defaults-file", path(f));
    }
    if let Some(f) = &t.defaults_extra_file {
        push("--defaults-extra-file", path(f));
    }
    if let Some(f) = &t.password_file {
        push("--password-file", path(f));
    }
    if let Some(m) = &t.ssl_mode {
        push("--ssl-mode", m.clone());
    }
    if let Some(c) = &t.ssl_ca {
        push("--ssl-ca", path(c));
    }
    if let Some(s) = t.wait.connect_timeout {
        push("--connect-timeout", s.to_string());
    }
    if let Some(s) = t.wait.read_timeout {
        push("--read-timeout", s.to_string());
    }
    if let Some(s) = &t.max_allowed_packet {
        push("--max-allowed-packet", s.clone());
    }
    // Never the password itself: the command asks for it again.
    if t.password.is_some() {
        args.push("--password".into());
    }
    if t.no_defaults {
        args.push("--no-defaults".into());
    }
    args
}

/// The command line as typed, for a stored run: without the value of `-p`/`--password` or the
/// password of a URL.
pub fn command_line() -> String {
    shown_command(std::env::args_os())
}

fn shown_command(args: impl IntoIterator<Item = std::ffi::OsString>) -> String {
    let words: Vec<String> = crate::args::attached_password(args)
        .iter()
        .map(|a| {
            let a = a.to_string_lossy();
            match a.split_once('=') {
                Some((
                    flag @ ("-p" | "--password" | "--mysql-password" | "--mysql_password"),
                    _,
                )) => flag.to_string(),
                _ => qpslab_store::redact_url_passwords(&a),
            }
        })
        .collect();
    words.join(" ")
}

/// Resolves the target and, for the embedded default, starts its sandbox.
pub fn connect(
    t: &TargetArgs,
    embedded: Option<&EmbeddedArgs>,
    home: &SandboxHome,
) -> Result<Connected> {
    if t.socket.is_some() && t.host.as_deref().is_some_and(|h| h != "localhost") {
        return Err(user(
            "--socket and --host name two ways to the server: give one",
        ));
    }
    if let (Some(port), Some(_)) = (t.port, &t.socket) {
        // The mysql client connects to localhost through the socket and ignores the port.
        eprintln!(
            "note: -P {port} is ignored: -S names the socket, which the mysql client uses too"
        );
    }
    if let Some(e) = embedded {
        if explicit(t)
            && (e.keep
                || !e.settings.is_empty()
                || e.server_cpus.is_some()
                || e.malloc.is_some()
                || e.basedir.is_some())
        {
            return Err(user("--set, --server-cpus, --malloc, --basedir and --keep configure the embedded sandbox; they cannot be combined with a server named by --target, --host, --port, --socket, --sandbox, -u, -p, --password-file or an option file"));
        }
    }
    let ours = t.sandbox.is_some() || !explicit(t);
    if ours && !t.no_defaults {
        let why = match t.sandbox {
            Some(_) => unused::Unused::Sandbox,
            None => unused::Unused::Embedded,
        };
        let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        let home = env("HOME").map(PathBuf::from);
        let mysql_home = env("MARIADB_HOME")
            .or_else(|| env("MYSQL_HOME"))
            .map(PathBuf::from);
        if let Some(line) = unused::note(why, home.as_deref(), mysql_home.as_deref()) {
            eprintln!("{line}");
        }
    }
    let (mut options, sandbox, keep, server_pid) = if let Some(name) = &t.sandbox {
        let info = qpslab_sandbox::find(home, name)?;
        (info.connect_options(), None, false, Some(info.pid))
    } else if explicit(t) {
        (explicit_options(t)?, None, false, None)
    } else {
        let e = embedded.cloned().unwrap_or_default();
        let spec = embedded_spec(&e)?;
        let sb = start_embedded(home, &spec)?;
        let pid = sb.pid();
        (sb.connect_options(), Some(sb), e.keep, Some(pid))
    };
    apply_overrides(t, &mut options)?;
    if options.database.is_none() {
        options.database = Some(DEFAULT_DATABASE.to_string());
    }
    Ok(Connected {
        options,
        sandbox,
        ours,
        home: ours.then(|| home.path().to_path_buf()),
        server_pid,
        keep,
    })
}

fn start_embedded(home: &SandboxHome, spec: &SandboxSpec) -> Result<Sandbox> {
    match qpslab_sandbox::find(home, &spec.name) {
        // Started by a qpslab that was killed before it could stop it: `start` stops it.
        Ok(info) if info.orphaned => eprintln!(
            "stopping the embedded sandbox left running by a qpslab that was killed (pid {})",
            info.pid
        ),
        Ok(info) => {
            return Err(user(format!(
                "the embedded sandbox is already running (pid {}): use --sandbox {} to run against it, or stop it with: qpslab server stop {}",
                info.pid, spec.name, spec.name
            )))
        }
        Err(_) => {}
    }
    eprintln!("starting embedded sandbox '{}' ...", spec.name);
    let sb = qpslab_sandbox::start(home, spec)?;
    eprintln!(
        "sandbox '{}': {} pid {} socket {}",
        sb.name(),
        sb.version(),
        sb.pid(),
        sb.socket().display()
    );
    Ok(sb)
}

/// The sandbox spec of the embedded default.
pub fn embedded_spec(e: &EmbeddedArgs) -> Result<SandboxSpec> {
    sandbox_spec(
        EMBEDDED_NAME,
        &e.settings,
        e.server_cpus.as_deref(),
        e.malloc.as_deref(),
        e.basedir.as_deref(),
    )
}

/// The client options of the option files the flags call for: only `--defaults-file`, none
/// with `--no-defaults`, else the files a mysql client reads by default.
fn option_files(t: &TargetArgs) -> Result<BTreeMap<String, String>> {
    use qpslab_core::optfile::{default_client_files, read_client_files, read_client_options};
    if t.no_defaults {
        return Ok(BTreeMap::new());
    }
    if let Some(path) = &t.defaults_file {
        return read_client_options(path).map_err(|e| user(format!("--defaults-file: {e}")));
    }
    let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    let home = env("HOME").map(PathBuf::from);
    let mysql_home = env("MARIADB_HOME")
        .or_else(|| env("MYSQL_HOME"))
        .map(PathBuf::from);
    let mut files = default_client_files(
        home.as_deref(),
        mysql_home.as_deref(),
        t.defaults_extra_file.as_deref(),
    );
    // Anyone could write a server or an account into such a file: the clients skip it too.
    files.retain(|(path, _)| {
        use std::os::unix::fs::PermissionsExt;
        let writable = std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o002 != 0);
        if writable {
            eprintln!(
                "warning: option file {} is world-writable: ignored, as the mysql client ignores it",
                path.display()
            );
        }
        !writable
    });
    read_client_files(&files).map_err(|e| user(format!("option file {e}")))
}

fn explicit_options(t: &TargetArgs) -> Result<ConnectOptions> {
    let file = option_files(t)?;
    let file_port = match file.get("port") {
        Some(p) => p
            .parse()
            .map_err(|_| user(format!("option file: bad port '{p}'")))?,
        None => 3306,
    };
    let file_host = || {
        file.get("host")
            .cloned()
            .unwrap_or_else(|| "localhost".into())
    };
    let mut o = ConnectOptions {
        endpoint: Endpoint::Tcp {
            host: file_host(),
            port: file_port,
        },
        user: file.get("user").cloned().unwrap_or_else(|| "root".into()),
        password: Secret::new(file.get("password").cloned().unwrap_or_default()),
        database: file.get("database").cloned(),
        ssl_mode: match file.get("ssl-mode") {
            Some(m) => m
                .parse()
                .map_err(|e: qpslab_core::dsn::DsnError| user(e.to_string()))?,
            None => SslMode::default(),
        },
        ssl_ca: file.get("ssl-ca").map(PathBuf::from),
        timeouts: Timeouts::default(),
        max_allowed_packet: match file.get("max-allowed-packet") {
            Some(v) => max_allowed_packet("option file: max_allowed_packet", v)?,
            None => ConnectOptions::DEFAULT_MAX_ALLOWED_PACKET,
        },
    };
    if let Some(s) = file.get("socket") {
        if t.target.is_none() && file.get("host").is_none_or(|h| h == "localhost") {
            o.endpoint = Endpoint::Unix {
                path: PathBuf::from(s),
            };
        }
    }
    let mut url_password = false;
    if let Some(url) = &t.target {
        let dsn: Dsn = url
            .parse()
            .map_err(|e: qpslab_core::dsn::DsnError| user(format!("--target: {e}")))?;
        let d = dsn.0;
        url_password = !d.password.is_empty();
        if url_password {
            eprintln!(
                "warning: a password in --target is visible to other local users (ps); \
                 prefer -p (a prompt), --password-file, MYSQL_PWD or an option file"
            );
        }
        let password = if d.password.is_empty() {
            o.password
        } else {
            d.password
        };
        // A DSN has no packet limit of its own: the option files' stays.
        let max_allowed_packet = o.max_allowed_packet;
        o = ConnectOptions {
            password,
            max_allowed_packet,
            ..d
        };
    }
    // --host and --port win over the DSN and the files; `localhost` alone keeps a socket, as
    // the mysql client's does.
    if t.host.is_some() || t.port.is_some() {
        let keeps_socket = t.port.is_none()
            && t.host.as_deref() == Some("localhost")
            && matches!(o.endpoint, Endpoint::Unix { .. });
        if !keeps_socket {
            let (host, port) = match &o.endpoint {
                Endpoint::Tcp { host, port } => (host.clone(), *port),
                Endpoint::Unix { .. } => (file_host(), file_port),
            };
            o.endpoint = Endpoint::Tcp {
                host: t.host.clone().unwrap_or(host),
                port: t.port.unwrap_or(port),
            };
        }
    }
    // -p/--password, then the URL's password, then --password-file, then the option files',
    // then MYSQL_PWD (the mysql client's order, with the file in place of its --password).
    match &t.password {
        Some(given) => o.password = prompt::password(given.as_ref())?,
        None => {
            if let Some(path) = &t.password_file {
                if !url_password {
                    let pw = qpslab_lab::options::password::read_password_file(path)
                        .map_err(|e| user(e.to_string()))?;
                    o.password = Secret::new(pw);
                }
            }
        }
    }
    if o.password.is_empty() && t.password.is_none() {
        if let Ok(pw) = std::env::var("MYSQL_PWD") {
            o.password = Secret::new(pw);
        }
    }
    Ok(o)
}

/// A `--max-allowed-packet` size (`64M`, `1G`, bytes), within the mysql client's bounds.
fn max_allowed_packet(what: &str, v: &str) -> Result<u64> {
    const LEAST: u64 = 4 << 10;
    match qpslab_core::units::parse_size(v) {
        Ok(n) if (LEAST..=ConnectOptions::DEFAULT_MAX_ALLOWED_PACKET).contains(&n) => Ok(n),
        _ => Err(user(format!(
            "{what} '{v}': give a size from 4K to 1G (e.g. 64M)"
        ))),
    }
}

/// The waits `--connect-timeout` and `--read-timeout` ask for (a read timeout of 0: none).
pub fn timeouts(w: &WaitArgs) -> Result<Timeouts> {
    let secs = |flag: &str, v: f64, zero: bool| {
        if v.is_finite() && (v > 0.0 || (zero && v == 0.0)) && v <= 1e6 {
            Ok(Duration::from_secs_f64(v))
        } else {
            let least = if zero { "0 (no limit)" } else { "more than 0" };
            Err(user(format!(
                "{flag} {v}: give a number of seconds, {least} to 1000000"
            )))
        }
    };
    let mut t = Timeouts::default();
    if let Some(v) = w.connect_timeout {
        t.connect = secs("--connect-timeout", v, false)?;
    }
    if let Some(v) = w.read_timeout {
        t.read = Some(secs("--read-timeout", v, true)?).filter(|d| !d.is_zero());
    }
    Ok(t)
}

fn apply_overrides(t: &TargetArgs, o: &mut ConnectOptions) -> Result<()> {
    if let Some(s) = &t.socket {
        o.endpoint = Endpoint::Unix { path: s.clone() };
    }
    if let Some(u) = &t.user {
        o.user = u.clone();
    }
    if let Some(d) = &t.database {
        o.database = Some(d.clone());
    }
    if let Some(m) = &t.ssl_mode {
        o.ssl_mode = m
            .parse()
            .map_err(|e: qpslab_core::dsn::DsnError| user(format!("--ssl-mode: {e}")))?;
    }
    if let Some(ca) = &t.ssl_ca {
        o.ssl_ca = Some(ca.clone());
    }
    o.timeouts = timeouts(&t.wait)?;
    if let Some(v) = &t.max_allowed_packet {
        o.max_allowed_packet = max_allowed_packet("--max-allowed-packet", v)?;
    }
    if let Some(ca) = &o.ssl_ca {
        // Opened without blocking and refused unless a regular file (a FIFO would hang).
        qpslab_core::input::open_regular(ca).map_err(|e| user(format!("--ssl-ca: {e}")))?;
    }
    if matches!(o.ssl_mode, SslMode::VerifyCa | SslMode::VerifyIdentity) && o.ssl_ca.is_none() {
        return Err(user(
            "--ssl-mode VERIFY_CA/VERIFY_IDENTITY needs --ssl-ca FILE",
        ));
    }
    if let Some(db) = &o.database {
        if db.is_empty() || db.len() > 64 || db.contains('`') || db.contains('/') {
            return Err(user(format!(
                "database name '{db}' is not valid (1-64 characters, no ` or /)"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
