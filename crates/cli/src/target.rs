//! Which server a command talks to: a DSN, a host and port, a socket, a named sandbox, or the
//! embedded default (a sandbox started for this command). Options layer as the mysql client
//! layers them: the option files, then the DSN, then the flags (`--host`, `-P`, `-u`, `-p`,
//! `-S`, `-D`), a later one winning. The option files a client reads by default are read only
//! once a server is named ([`explicit`]), so they never turn the embedded default into another
//! server. Passwords come from `-p`/`--password`, the DSN, `--password-file`, the option files
//! or `MYSQL_PWD`, in that order, and never appear in anything we print.

mod prompt;
mod unused;

use crate::args::{EmbeddedArgs, SandboxHomeArgs, TargetArgs};
use crate::error::{fail, user};
use crate::plan::sandbox_spec;
use anyhow::Result;
use qpslab_core::{ConnectOptions, Dsn, Endpoint, Secret, SslMode, Timeouts};
use qpslab_lab::request::target::{self, Overrides, TargetRequest, TargetSpec};
use qpslab_sandbox::{SandboxHome, SandboxSpec};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The default schema for the sbtest tables, as sysbench's `--mysql-db`.
pub use qpslab_lab::request::target::DEFAULT_DATABASE;
/// The name of the sandbox started when no target is given.
pub const EMBEDDED_NAME: &str = "embedded";

/// A server reached for one command (the lab's [`target::Connected`]): holds the sandbox
/// started for it, if any, which is stopped when this is dropped (unless kept).
pub struct Connected(pub target::Connected);

impl std::ops::Deref for Connected {
    type Target = target::Connected;

    fn deref(&self) -> &target::Connected {
        &self.0
    }
}

impl std::ops::DerefMut for Connected {
    fn deref_mut(&mut self) -> &mut target::Connected {
        &mut self.0
    }
}

impl Connected {
    /// Stops the embedded sandbox (or leaves it running with `--keep`), reporting a failure.
    pub fn finish(self) -> Result<()> {
        self.0.finish(&mut |line| eprintln!("{line}")).map_err(fail)
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
    let req = request(t, embedded)?;
    let connected = target::resolve(&req, home, &mut |line| eprintln!("{line}")).map_err(fail)?;
    Ok(Connected(connected))
}

/// The target the flags name, checked, as the lab resolves it ([`target::resolve`]): the
/// option files read and the password asked for when a server is named; nothing started yet.
pub fn request(t: &TargetArgs, embedded: Option<&EmbeddedArgs>) -> Result<TargetRequest> {
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
                || e.instrument_waits
                || e.basedir.is_some())
        {
            return Err(user("--set, --server-cpus, --malloc, --instrument-waits, --basedir and --keep configure the embedded sandbox; they cannot be combined with a server named by --target, --host, --port, --socket, --sandbox, -u, -p, --password-file or an option file"));
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
    Ok(TargetRequest {
        spec: target_spec(t, embedded)?,
        overrides: overrides(t),
    })
}

/// The server the flags name, as the lab resolves it: `--sandbox NAME`, the options of a
/// server the user named (option files, DSN, flags, password), or the embedded default.
fn target_spec(t: &TargetArgs, embedded: Option<&EmbeddedArgs>) -> Result<TargetSpec> {
    Ok(if let Some(name) = &t.sandbox {
        TargetSpec::Sandbox(name.clone())
    } else if explicit(t) {
        TargetSpec::Explicit(explicit_options(t)?)
    } else {
        let e = embedded.cloned().unwrap_or_default();
        TargetSpec::Embedded {
            spec: embedded_spec(&e)?,
            keep: e.keep,
        }
    })
}

/// The connection flags that apply to any server, as typed.
fn overrides(t: &TargetArgs) -> Overrides {
    Overrides {
        socket: t.socket.clone(),
        user: t.user.clone(),
        database: t.database.clone(),
        ssl_mode: t.ssl_mode.clone(),
        ssl_ca: t.ssl_ca.clone(),
        connect_timeout: t.wait.connect_timeout,
        read_timeout: t.wait.read_timeout,
        max_allowed_packet: t.max_allowed_packet.clone(),
    }
}

/// The sandbox spec of the embedded default.
pub fn embedded_spec(e: &EmbeddedArgs) -> Result<SandboxSpec> {
    let mut spec = sandbox_spec(
        EMBEDDED_NAME,
        &e.settings,
        e.server_cpus.as_deref(),
        e.malloc.as_deref(),
        e.basedir.as_deref(),
    )?;
    if e.instrument_waits {
        spec.instrument_waits()?;
    }
    Ok(spec)
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
        Some(p) => p.parse().map_err(|_| {
            let p = qpslab_core::optfile::quoted(p);
            user(format!("option file: bad port {p}"))
        })?,
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
    target::max_allowed_packet(what, v).map_err(fail)
}

#[cfg(test)]
mod tests;
