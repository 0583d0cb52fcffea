//! The pid of a server on this machine, for reading its threads in `/proc`: the peer of its
//! Unix socket (`SO_PEERCRED`), else the pid in `@@pid_file` when that file is readable here.

use crate::error::Error;
use crate::profile::socket_pid;
use qpslab_core::{ConnectOptions, Endpoint};
use qpslab_wire::Conn;
use std::path::Path;

/// The pid of the server `opts` reaches over `conn`, or a user error saying why it cannot be
/// known (a remote server: its `/proc` is not ours to read).
pub fn local_pid(opts: &ConnectOptions, conn: &mut Conn) -> Result<u32, Error> {
    check_local(opts)?;
    if let Endpoint::Unix { path } = &opts.endpoint {
        return socket_pid(path).map_err(|e| Error::Refused(e.to_string()));
    }
    let r = conn.query("SELECT @@socket, @@pid_file")?;
    let row = r.rows.into_iter().next().unwrap_or_default();
    let cell = |i: usize| row.get(i).cloned().flatten().filter(|s| !s.is_empty());
    if let Some(pid) = cell(0).and_then(|s| socket_pid(Path::new(&s)).ok()) {
        return Ok(pid);
    }
    cell(1)
        .and_then(|f| std::fs::read_to_string(f).ok())
        .and_then(|s| s.trim().parse().ok())
        .filter(|pid| Path::new(&format!("/proc/{pid}")).exists())
        .ok_or_else(|| {
            Error::Refused(
                "cannot find the server's pid: neither its socket nor its pid_file can be read \
                 here (run as the server's user or root, or connect through its socket)"
                    .into(),
            )
        })
}

/// The CPUs the server `opts` reaches may run on, for placing the client beside it: the union
/// of its threads' affinity masks when its process is known (`pid`, else the peer of its Unix
/// socket); an empty list for a server on another machine (none of ours); none when it is on
/// this machine but its process cannot be found (TCP on loopback without a pid).
pub fn server_cpus(opts: &ConnectOptions, pid: Option<u32>) -> Option<Vec<usize>> {
    if !opts.endpoint.is_local() {
        return Some(Vec::new());
    }
    let pid = pid.or_else(|| match &opts.endpoint {
        Endpoint::Unix { path } => socket_pid(path).ok(),
        Endpoint::Tcp { .. } => None,
    })?;
    let mut cpus: Vec<usize> = crate::threads::tasks(pid)
        .ok()?
        .into_iter()
        .flat_map(|t| t.cpus)
        .collect();
    cpus.sort_unstable();
    cpus.dedup();
    (!cpus.is_empty()).then_some(cpus)
}

/// Refuses a server on another machine before connecting to it: its `/proc` is not ours.
pub fn check_local(opts: &ConnectOptions) -> Result<(), Error> {
    if opts.endpoint.is_local() {
        return Ok(());
    }
    Err(Error::Refused(format!(
        "{} is not this machine: server threads and --pin read and change the server's \
         threads in /proc, so the server must run here (use its socket or 127.0.0.1)",
        opts.endpoint
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use qpslab_core::Secret;

    fn opts(endpoint: Endpoint) -> ConnectOptions {
        ConnectOptions {
            endpoint,
            user: "root".into(),
            password: Secret::default(),
            database: None,
            ssl_mode: Default::default(),
            ssl_ca: None,
            timeouts: Default::default(),
            max_allowed_packet: ConnectOptions::DEFAULT_MAX_ALLOWED_PACKET,
        }
    }

    #[test]
    fn a_server_s_cpus_are_its_threads_masks_and_a_remote_one_has_none_of_ours() {
        let remote = opts(Endpoint::Tcp {
            host: "db1.example".into(),
            port: 3306,
        });
        assert_eq!(server_cpus(&remote, None), Some(Vec::new()));
        let local = opts(Endpoint::Tcp {
            host: "127.0.0.1".into(),
            port: 3306,
        });
        assert_eq!(server_cpus(&local, None), None, "no pid to read");
        // This process stands in for a local server: its threads may run where it may.
        let mine = server_cpus(&local, Some(std::process::id())).unwrap();
        assert!(!mine.is_empty());
        assert!(mine.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(server_cpus(&local, Some(u32::MAX)), None, "no such process");
    }
}
