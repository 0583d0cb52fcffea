//! The process behind a Unix socket, so a server of the user's on this machine can be profiled.

use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

/// The pid of the process listening on the Unix socket at `path` (the kernel's `SO_PEERCRED`
/// of a connection to it), when it can be connected to and still exists.
pub fn socket_peer_pid(path: &Path) -> Option<u32> {
    socket_pid(path).ok()
}

/// Why the process behind a Unix socket cannot be known.
#[derive(Debug, thiserror::Error)]
pub enum PeerError {
    /// Nothing accepts connections there.
    #[error("socket {}: {source}", .path.display())]
    Connect {
        /// The socket.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The listener is in another pid namespace (a container).
    #[error("socket {}: its server (pid {pid}) is not visible here", .path.display())]
    NotVisible {
        /// The socket.
        path: PathBuf,
        /// The pid the kernel gave.
        pid: u32,
    },
    /// The kernel did not say.
    #[error("socket {}: SO_PEERCRED: {source}", .path.display())]
    PeerCred {
        /// The socket.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// As [`socket_peer_pid`], saying why the pid cannot be known.
pub fn socket_pid(path: &Path) -> Result<u32, PeerError> {
    let stream = UnixStream::connect(path).map_err(|source| PeerError::Connect {
        path: path.to_path_buf(),
        source,
    })?;
    // SAFETY: ucred is plain integers, valid when zeroed.
    let mut cred: libc::ucred = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `cred`, which is that large; the
    // descriptor is open for the duration of the call (`stream` lives until the end).
    let rc = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    let pid = u32::try_from(cred.pid).ok().filter(|p| *p > 0 && rc == 0);
    match pid {
        Some(pid) if Path::new(&format!("/proc/{pid}")).exists() => Ok(pid),
        Some(pid) => Err(PeerError::NotVisible {
            path: path.to_path_buf(),
            pid,
        }),
        None => Err(PeerError::PeerCred {
            path: path.to_path_buf(),
            source: std::io::Error::last_os_error(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listener_of_a_socket_is_this_process() {
        let dir = std::env::temp_dir().join(format!("qpslab-peer-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        assert_eq!(socket_peer_pid(&path), Some(std::process::id()));
        assert_eq!(socket_peer_pid(&dir.join("none.sock")), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
