//! The server a command talks to, as plain data the caller resolved from its input
//! ([`TargetSpec`]: a named sandbox, a server the user named, or the embedded default), and
//! its resolution: the embedded sandbox started, the connection overrides applied
//! ([`Overrides`]), and the sandbox stopped (or kept) once the command is done
//! ([`Connected::finish`]). What it has to say (the sandbox starting, kept) goes to a `note`
//! callback, for the caller to print.

use crate::run::ready::{OurSandbox, Server};
use qpslab_core::fault::{Blame, Fault};
use qpslab_core::{ConnectOptions, Endpoint, SslMode, Timeouts};
use qpslab_sandbox::{Sandbox, SandboxHome, SandboxSpec};
use std::path::PathBuf;
use std::time::Duration;

/// The default schema for the sbtest tables, as sysbench's `--mysql-db`.
pub const DEFAULT_DATABASE: &str = "sbtest";

/// Which server, before anything starts or connects.
#[derive(Clone, Debug)]
pub enum TargetSpec {
    /// A sandbox of the lab started before this command (`--sandbox NAME`).
    Sandbox(String),
    /// A server the user named: its options resolved from the option files, the DSN and the
    /// flags (password included).
    Explicit(ConnectOptions),
    /// The embedded default: a sandbox started for this command, stopped at its end unless
    /// `keep`.
    Embedded {
        /// The sandbox to start.
        spec: SandboxSpec,
        /// `--keep`: left running at the end.
        keep: bool,
    },
}

impl TargetSpec {
    /// A sandbox of ours (named or embedded): its datasets and databases may be built on
    /// demand. Anything else is the user's server, which `run` never changes.
    pub fn ours(&self) -> bool {
        !matches!(self, TargetSpec::Explicit(_))
    }
}

/// The connection flags that apply to any server, as typed: `-S`, `-u`, `-D`, `--ssl-mode`,
/// `--ssl-ca`, `--connect-timeout`, `--read-timeout`, `--max-allowed-packet`.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    /// `-S`/`--socket`.
    pub socket: Option<PathBuf>,
    /// `-u`/`--user`.
    pub user: Option<String>,
    /// `-D`/`--database`.
    pub database: Option<String>,
    /// `--ssl-mode`.
    pub ssl_mode: Option<String>,
    /// `--ssl-ca`.
    pub ssl_ca: Option<PathBuf>,
    /// `--connect-timeout`, seconds.
    pub connect_timeout: Option<f64>,
    /// `--read-timeout`, seconds (0: none).
    pub read_timeout: Option<f64>,
    /// `--max-allowed-packet`.
    pub max_allowed_packet: Option<String>,
}

/// The server a command asks for: which, and the connection flags applied to it.
#[derive(Clone, Debug)]
pub struct TargetRequest {
    /// Which server.
    pub spec: TargetSpec,
    /// The connection flags that apply to any server.
    pub overrides: Overrides,
}

/// Why a target could not be resolved, or its sandbox not stopped.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    /// A value the user gave (a flag, a running sandbox in the way), in these words.
    #[error("{0}")]
    Input(String),
    /// The sandbox could not be found or started.
    #[error(transparent)]
    Sandbox(#[from] qpslab_sandbox::Error),
    /// The embedded sandbox could not be stopped.
    #[error("stopping the embedded sandbox")]
    Stop(#[source] qpslab_sandbox::Error),
}

impl Blame for TargetError {
    fn fault(&self) -> Fault {
        match self {
            TargetError::Input(_) => Fault::User,
            TargetError::Sandbox(e) | TargetError::Stop(e) => e.fault(),
        }
    }
}

/// A server reached for one command. Holds the sandbox started for it, if any, which is stopped
/// when this is dropped (unless kept, by [`Connected::finish`]).
pub struct Connected {
    /// How to open sessions (database set to the schema of the sbtest tables).
    pub options: ConnectOptions,
    /// The sandbox we started for this command, stopped on drop unless `--keep`.
    pub sandbox: Option<Sandbox>,
    /// The name of the sandbox of ours it is (embedded or `--sandbox NAME`).
    pub sandbox_name: Option<String>,
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

    /// The server as the lab readies it: a sandbox of ours (of the lab `home`) or the user's,
    /// with the target options as typed (`target_args`).
    pub fn server<'a>(&'a self, home: &'a SandboxHome, target_args: &'a [String]) -> Server<'a> {
        let sandbox = self
            .sandbox_name
            .as_deref()
            .filter(|_| self.home.is_some())
            .map(|name| OurSandbox {
                home,
                name,
                pid: self.server_pid,
                named: self.sandbox.is_none(),
            });
        Server {
            target: &self.options,
            sandbox,
            pid: self.server_pid,
            target_args,
        }
    }

    /// Stops the embedded sandbox (or leaves it running with `--keep`, saying so to `note`).
    pub fn finish(mut self, note: &mut dyn FnMut(&str)) -> Result<(), TargetError> {
        if let Some(sb) = self.sandbox.take() {
            if self.keep {
                let info = sb.keep();
                note(&format!(
                    "sandbox '{}' left running (socket {}); stop it with: qpslab server stop {}",
                    info.name,
                    info.socket.display(),
                    info.name
                ));
            } else {
                sb.stop().map_err(TargetError::Stop)?;
            }
        }
        Ok(())
    }
}

/// Resolves `req` in the lab `home`: finds the named sandbox or starts the embedded one, then
/// applies the overrides; what it has to say goes to `note`.
pub fn resolve(
    req: &TargetRequest,
    home: &SandboxHome,
    note: &mut dyn FnMut(&str),
) -> Result<Connected, TargetError> {
    let TargetRequest { spec, overrides } = req;
    let ours = spec.ours();
    let (mut options, sandbox, keep, server_pid, sandbox_name) = match spec {
        TargetSpec::Sandbox(name) => {
            let info = qpslab_sandbox::find(home, name)?;
            (
                info.connect_options(),
                None,
                false,
                Some(info.pid),
                Some(name.clone()),
            )
        }
        TargetSpec::Explicit(options) => (options.clone(), None, false, None, None),
        TargetSpec::Embedded { spec, keep } => {
            let sb = start_embedded(home, spec, note)?;
            let pid = sb.pid();
            let name = sb.name().to_string();
            (sb.connect_options(), Some(sb), *keep, Some(pid), Some(name))
        }
    };
    overrides.apply(&mut options)?;
    if options.database.is_none() {
        options.database = Some(DEFAULT_DATABASE.to_string());
    }
    Ok(Connected {
        options,
        sandbox,
        sandbox_name,
        ours,
        home: ours.then(|| home.path().to_path_buf()),
        server_pid,
        keep,
    })
}

fn start_embedded(
    home: &SandboxHome,
    spec: &SandboxSpec,
    note: &mut dyn FnMut(&str),
) -> Result<Sandbox, TargetError> {
    match qpslab_sandbox::find(home, &spec.name) {
        // Started by a qpslab that was killed before it could stop it: `start` stops it.
        Ok(info) if info.orphaned => note(&format!(
            "stopping the embedded sandbox left running by a qpslab that was killed (pid {})",
            info.pid
        )),
        Ok(info) => {
            return Err(TargetError::Input(format!(
                "the embedded sandbox is already running (pid {}): use --sandbox {} to run against it, or stop it with: qpslab server stop {}",
                info.pid, spec.name, spec.name
            )))
        }
        Err(_) => {}
    }
    note(&format!("starting embedded sandbox '{}' ...", spec.name));
    let sb = qpslab_sandbox::start(home, spec)?;
    note(&format!(
        "sandbox '{}': {} pid {} socket {}",
        sb.name(),
        sb.version(),
        sb.pid(),
        sb.socket().display()
    ));
    Ok(sb)
}

/// A `--max-allowed-packet` size (`64M`, `1G`, bytes), within the mysql client's bounds;
/// `what` names where it was given.
pub fn max_allowed_packet(what: &str, v: &str) -> Result<u64, TargetError> {
    qpslab_core::dsn::max_allowed_packet(v).ok_or_else(|| {
        TargetError::Input(format!(
            "{what} '{v}': give a size from 4K to 1G (e.g. 64M)"
        ))
    })
}

/// The waits `--connect-timeout` and `--read-timeout` ask for (a read timeout of 0: none).
pub fn timeouts(connect: Option<f64>, read: Option<f64>) -> Result<Timeouts, TargetError> {
    let secs = |flag: &str, v: f64, zero: bool| {
        if v.is_finite() && (v > 0.0 || (zero && v == 0.0)) && v <= 1e6 {
            Ok(Duration::from_secs_f64(v))
        } else {
            let least = if zero { "0 (no limit)" } else { "more than 0" };
            Err(TargetError::Input(format!(
                "{flag} {v}: give a number of seconds, {least} to 1000000"
            )))
        }
    };
    let mut t = Timeouts::default();
    if let Some(v) = connect {
        t.connect = secs("--connect-timeout", v, false)?;
    }
    if let Some(v) = read {
        t.read = Some(secs("--read-timeout", v, true)?).filter(|d| !d.is_zero());
    }
    Ok(t)
}

impl Overrides {
    /// Applies the flags to `o`, and checks what they make of it (the CA file, the database
    /// name).
    pub fn apply(&self, o: &mut ConnectOptions) -> Result<(), TargetError> {
        apply_overrides(self, o)
    }
}

fn apply_overrides(t: &Overrides, o: &mut ConnectOptions) -> Result<(), TargetError> {
    let input = TargetError::Input;
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
            .map_err(|e: qpslab_core::dsn::DsnError| input(format!("--ssl-mode: {e}")))?;
    }
    if let Some(ca) = &t.ssl_ca {
        o.ssl_ca = Some(ca.clone());
    }
    o.timeouts = timeouts(t.connect_timeout, t.read_timeout)?;
    if let Some(v) = &t.max_allowed_packet {
        o.max_allowed_packet = max_allowed_packet("--max-allowed-packet", v)?;
    }
    if let Some(ca) = &o.ssl_ca {
        // Opened without blocking and refused unless a regular file (a FIFO would hang).
        qpslab_core::input::open_regular(ca).map_err(|e| input(format!("--ssl-ca: {e}")))?;
    }
    if matches!(o.ssl_mode, SslMode::VerifyCa | SslMode::VerifyIdentity) && o.ssl_ca.is_none() {
        return Err(input(
            "--ssl-mode VERIFY_CA/VERIFY_IDENTITY needs --ssl-ca FILE".into(),
        ));
    }
    if let Some(db) = &o.database {
        if db.is_empty() || db.len() > 64 || db.contains('`') || db.contains('/') {
            return Err(input(format!(
                "database name '{db}' is not valid (1-64 characters, no ` or /)"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> ConnectOptions {
        ConnectOptions {
            endpoint: Endpoint::Tcp {
                host: "h".into(),
                port: 3306,
            },
            user: "root".into(),
            password: qpslab_core::Secret::new(String::new()),
            database: None,
            ssl_mode: SslMode::default(),
            ssl_ca: None,
            timeouts: Timeouts::default(),
            max_allowed_packet: ConnectOptions::DEFAULT_MAX_ALLOWED_PACKET,
        }
    }

    #[test]
    fn the_flags_apply_over_any_server_and_bad_ones_are_the_users() {
        let mut o = options();
        let flags = Overrides {
            user: Some("u".into()),
            database: Some("db".into()),
            read_timeout: Some(0.0),
            max_allowed_packet: Some("64M".into()),
            ..Overrides::default()
        };
        flags.apply(&mut o).unwrap();
        assert_eq!((o.user.as_str(), o.database.as_deref()), ("u", Some("db")));
        assert_eq!((o.timeouts.read, o.max_allowed_packet), (None, 64 << 20));
        let bad = Overrides {
            ssl_mode: Some("VERIFY_CA".into()),
            ..Overrides::default()
        };
        let e = bad.apply(&mut options()).unwrap_err();
        assert!(e.is_user_error());
        assert_eq!(
            e.to_string(),
            "--ssl-mode VERIFY_CA/VERIFY_IDENTITY needs --ssl-ca FILE"
        );
        let e = timeouts(Some(0.0), None).unwrap_err().to_string();
        assert_eq!(
            e,
            "--connect-timeout 0: give a number of seconds, more than 0 to 1000000"
        );
    }

    #[test]
    fn only_a_named_server_is_the_users() {
        assert!(!TargetSpec::Explicit(options()).ours());
        assert!(TargetSpec::Sandbox("s".into()).ours());
    }
}
