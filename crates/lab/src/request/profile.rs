//! `run --profile DIR`: what is checked before anything starts. The server's process must be
//! known (a sandbox of ours, or a server of the user's on this machine reached through its
//! Unix socket, whose peer is its process) and perf must be installed.

use crate::run::ready::Server;
use qpslab_core::Endpoint;
use std::path::Path;

/// Finds the process of a server of the user's reached through a Unix socket on this machine
/// (the socket's peer), so it can be profiled like a sandbox; its CPU is then sampled too.
pub fn find_server(server: &mut Server) {
    if let (None, Endpoint::Unix { path }) = (server.pid, &server.target.endpoint) {
        server.pid = qpslab_probe::profile::socket_peer_pid(path);
    }
}

/// Refuses `--profile dir` before the run starts when it cannot work, saying why (the user's
/// to fix).
pub fn check(dir: &Path, server: &Server) -> Result<(), String> {
    if server.pid.is_none() {
        return Err(unknown_pid(dir, &server.target.describe()));
    }
    qpslab_probe::profile::perf_available().map_err(|e| format!("--profile: {e}"))
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
        let why = check(Path::new("prof"), &server).unwrap_err();
        assert!(why.starts_with("--profile prof: the server's process is not known for "));
        assert!(why.contains("db.example"), "{why}");
    }
}
