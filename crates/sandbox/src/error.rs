//! The sandbox error type. Every variant says what went wrong and, where the user can act, what
//! to do next; [`Error::is_user_error`] separates the user's mistakes (exit code 2) from runtime
//! failures (exit code 1).

use qpslab_core::fault::{user_if, Blame, Fault};
use std::path::PathBuf;

/// Everything that can go wrong while managing a sandbox.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The sandbox name is not `[A-Za-z0-9_-]{1,32}`.
    #[error("invalid sandbox name '{name}': {reason}")]
    InvalidName {
        /// The rejected name.
        name: String,
        /// Why it was rejected.
        reason: String,
    },
    /// A `--set` override or my.cnf fragment line is malformed or names a setting the lab owns.
    #[error("invalid setting '{setting}': {reason}")]
    InvalidSetting {
        /// The rejected setting as given.
        setting: String,
        /// Why it was rejected.
        reason: String,
    },
    /// The my.cnf fragment, or a file it includes, cannot be read or is not an option file.
    #[error("my.cnf fragment {0}")]
    MyCnf(qpslab_core::optfile::OptFileError),
    /// The explicitly requested TCP port is already taken on 127.0.0.1.
    #[error("port {port} is already in use on 127.0.0.1 (pick another port or leave it unset to get a free one)")]
    PortInUse {
        /// The requested port.
        port: u16,
    },
    /// No server binary was found.
    #[error("no MariaDB/MySQL server binary found (looked for {searched}); install mariadb-server or pass --basedir with an unpacked tarball")]
    NoServerBinary {
        /// Where we looked.
        searched: String,
    },
    /// The requested allocator library is not installed.
    #[error("{library} not found (looked in {searched}); install it (e.g. apt-get install {package}) or drop the malloc option")]
    NoMallocLibrary {
        /// The library file name we looked for.
        library: String,
        /// The directories searched.
        searched: String,
        /// The Debian package that provides it.
        package: String,
    },
    /// qpslab runs as root and there is no unprivileged account to run the server as.
    #[error("a sandbox started by root runs its server as the unprivileged user '{user}', which does not exist here (or is root); create it (useradd --system --no-create-home {user}), name another with QPSLAB_SERVER_USER, or run qpslab as a normal user")]
    NoServerUser {
        /// The account we looked for.
        user: String,
    },
    /// The sandbox is running and the operation needs it stopped.
    #[error("sandbox '{name}' is running (pid {pid}); stop it first, or use `qpslab server stop {name} --rm`")]
    Running {
        /// The sandbox name.
        name: String,
        /// Its server pid.
        pid: u32,
    },
    /// A sandbox with this name is already running.
    #[error("sandbox '{name}' is already running (pid {pid}); stop it first or pick another name")]
    AlreadyRunning {
        /// The sandbox name.
        name: String,
        /// Its server pid.
        pid: u32,
    },
    /// No sandbox with this name exists in the lab directory.
    #[error("no sandbox named '{name}' in {}", home.display())]
    NotFound {
        /// The sandbox name.
        name: String,
        /// The lab directory searched.
        home: PathBuf,
    },
    /// The sandbox exists but its server is not running.
    #[error("sandbox '{name}' is not running (start it with `qpslab server start {name}`)")]
    NotRunning {
        /// The sandbox name.
        name: String,
    },
    /// The server refused a setting it does not know (from the my.cnf fragment or `--set`).
    #[error("server rejected a setting of sandbox '{name}': {detail}\n--- last lines of the error log ---\n{log_tail}")]
    UnknownSetting {
        /// The sandbox name.
        name: String,
        /// The server's own complaint (e.g. `unknown variable 'foo=1'`).
        detail: String,
        /// The last lines of the error log.
        log_tail: String,
    },
    /// Initialising a data directory (the template) failed.
    #[error("initialising the data directory {} failed\n--- output ---\n{log_tail}", datadir.display())]
    InitFailed {
        /// The data directory being initialised.
        datadir: PathBuf,
        /// The last lines of the installer's output.
        log_tail: String,
    },
    /// The server exited or did not accept connections in time.
    #[error("sandbox '{name}' failed to start: {reason}\n--- last lines of the error log ---\n{log_tail}")]
    StartFailed {
        /// The sandbox name.
        name: String,
        /// What we observed (process exit status or timeout).
        reason: String,
        /// The last ~20 lines of the error log.
        log_tail: String,
    },
    /// The server did not stop even after SIGKILL.
    #[error("sandbox '{name}' (pid {pid}) did not stop: {detail}")]
    StopFailed {
        /// The sandbox name.
        name: String,
        /// Its server pid.
        pid: u32,
        /// What went wrong.
        detail: String,
    },
    /// A state file under the lab directory is unreadable or corrupt.
    #[error("bad state file {}: {detail}", path.display())]
    State {
        /// The state file.
        path: PathBuf,
        /// What is wrong with it.
        detail: String,
    },
    /// Another qpslab process holds the sandbox in a way that excludes what this one needs
    /// (see [`crate::SandboxUse`]).
    #[error("{}", in_use(name, pids, *wanted))]
    InUse {
        /// The sandbox name.
        name: String,
        /// The processes holding it (empty when `/proc/locks` could not tell).
        pids: Vec<u32>,
        /// This process wanted it alone (to build its dataset, prepare, clean up, restart it).
        wanted: bool,
    },
    /// An I/O operation failed.
    #[error("{context}: {source}")]
    Io {
        /// What we were doing.
        context: String,
        /// The underlying error.
        source: std::io::Error,
    },
}

impl Error {
    /// Wraps an I/O error with what we were doing.
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Error {
        Error::Io {
            context: context.into(),
            source,
        }
    }
}

impl Blame for Error {
    /// True for mistakes the user can fix by changing the command (bad name, port in use,
    /// unknown setting, missing binary or library, wrong sandbox); false for runtime failures.
    fn fault(&self) -> Fault {
        user_if(matches!(
            self,
            Error::InvalidName { .. }
                | Error::InvalidSetting { .. }
                | Error::MyCnf(_)
                | Error::PortInUse { .. }
                | Error::NoServerBinary { .. }
                | Error::NoMallocLibrary { .. }
                | Error::NoServerUser { .. }
                | Error::Running { .. }
                | Error::AlreadyRunning { .. }
                | Error::NotFound { .. }
                | Error::NotRunning { .. }
                | Error::UnknownSetting { .. }
                | Error::InUse { .. }
        ))
    }
}

fn in_use(name: &str, pids: &[u32], wanted: bool) -> String {
    let who = match pids {
        [] => "another qpslab".to_string(),
        [p] => format!("another qpslab (pid {p})"),
        _ => format!(
            "other qpslab processes (pids {})",
            pids.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    if wanted {
        format!("sandbox '{name}' is in use by {who}: its dataset and server cannot change while it measures; wait for it to end, or use another sandbox")
    } else {
        format!("sandbox '{name}' is being prepared or changed by {who}; wait for it to end, then run again")
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
