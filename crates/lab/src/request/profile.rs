//! `run --profile DIR`: what is checked before anything starts. The server's process must be
//! known (a sandbox of ours, or a server of the user's on this machine reached through its
//! Unix socket, whose peer is its process) and perf must be installed.

use crate::run::ready::Server;
use qpslab_core::fault::{Blame, Fault};
use qpslab_core::Endpoint;
use std::path::{Path, PathBuf};

/// Why `--profile DIR` cannot work for the server: always the user's to fix (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum ProfileCheckError {
    /// The server's process is not known, so it cannot be sampled.
    #[error("{}", unknown_pid(.dir, .what))]
    UnknownPid {
        /// The `--profile` folder as given.
        dir: PathBuf,
        /// The server, as its target describes it.
        what: String,
    },
    /// perf is not installed or does not run.
    #[error("--profile: {0}")]
    Perf(#[source] qpslab_probe::profile::ProfileError),
}

impl Blame for ProfileCheckError {
    /// The user's: another target, or perf installed.
    fn fault(&self) -> Fault {
        Fault::User
    }
}

/// Finds the process of a server of the user's reached through a Unix socket on this machine
/// (the socket's peer), so it can be profiled like a sandbox; its CPU is then sampled too.
pub fn find_server(server: &mut Server) {
    if let (None, Endpoint::Unix { path }) = (server.pid, &server.target.endpoint) {
        server.pid = qpslab_probe::profile::socket_peer_pid(path);
    }
}

/// Refuses `--profile dir` before the run starts when it cannot work, saying why (the user's
/// to fix).
pub fn check(dir: &Path, server: &Server) -> Result<(), ProfileCheckError> {
    if server.pid.is_none() {
        return Err(ProfileCheckError::UnknownPid {
            dir: dir.to_path_buf(),
            what: server.target.describe(),
        });
    }
    qpslab_probe::profile::perf_available().map_err(ProfileCheckError::Perf)
}

/// Why `--profile dir` cannot profile the server `what` names: its process is not known.
pub fn unknown_pid(dir: &Path, what: &str) -> String {
    format!(
        "--profile {}: the server's process is not known for {what} (only a server on this \
         machine reached through its Unix socket can be found): profile it through \
         --socket, or the embedded sandbox or --sandbox NAME",
        dir.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use qpslab_core::Dsn;

    #[test]
    fn a_server_whose_process_is_unknown_is_refused_before_perf_is_looked_for() {
        let options = "mysql://root@db.example:3306/sbtest"
            .parse::<Dsn>()
            .unwrap()
            .0;
        let mut server = Server {
            target: &options,
            sandbox: None,
            pid: None,
            target_args: &[],
        };
        // A TCP server's process is never looked for.
        find_server(&mut server);
        assert_eq!(server.pid, None);
        let why = check(Path::new("prof"), &server).unwrap_err().to_string();
        assert!(why.starts_with("--profile prof: the server's process is not known for "));
        assert!(why.contains("db.example"), "{why}");
    }
}
