//! The server process: spawning it (own session, CPU affinity, preloaded allocator), waiting
//! until it greets clients, recognising it later by pid, and stopping it with signals.
//!
//! A pid is only ever signalled after `/proc/PID/cmdline` shows our datadir, so a recycled pid
//! belonging to someone else is never touched.

use crate::error::{Error, Result};
use std::io::Read;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How to launch one server.
pub(crate) struct Launch<'a> {
    pub mysqld: &'a Path,
    pub defaults_file: &'a Path,
    pub datadir: &'a Path,
    pub cpus: Option<&'a [usize]>,
    pub preload: Option<&'a Path>,
    pub extra_args: &'a [String],
    /// Where the server's stdout and stderr go: its error log, so that what it prints before
    /// it opens the log itself (a bad setting found early) is kept too.
    pub output: Option<std::fs::File>,
}

/// Checks the server's CPUs by the rules of [`qpslab_core::cpus`] (non-empty, each one this
/// machine has), and that each fits a `cpu_set_t`.
pub(crate) fn check_cpus(cpus: &[usize]) -> Result<()> {
    let invalid = |reason: String| Error::InvalidSetting {
        setting: "cpus".into(),
        reason,
    };
    qpslab_core::cpus::check_cpus(cpus).map_err(|e| invalid(e.to_string()))?;
    match cpus.iter().find(|c| **c >= libc::CPU_SETSIZE as usize) {
        Some(c) => Err(invalid(format!(
            "CPU {c} is beyond the {} CPUs an affinity mask holds",
            libc::CPU_SETSIZE
        ))),
        None => Ok(()),
    }
}

/// Starts the server in its own session (a Ctrl-C at the terminal reaches us, not it: we stop it
/// cleanly ourselves) with stdio detached; it writes to its error log.
pub(crate) fn spawn(l: Launch<'_>) -> Result<Child> {
    let mut cmd = Command::new(l.mysqld);
    cmd.arg(format!("--defaults-file={}", l.defaults_file.display()))
        // Repeated on the command line so /proc/PID/cmdline identifies the sandbox.
        .arg(format!("--datadir={}", l.datadir.display()))
        .args(l.extra_args)
        .stdin(Stdio::null());
    match &l.output {
        Some(f) => {
            let dup = |f: &std::fs::File| {
                f.try_clone()
                    .map_err(|e| Error::io("duplicating the error log descriptor", e))
            };
            cmd.stdout(dup(f)?).stderr(dup(f)?);
        }
        None => {
            cmd.stdout(Stdio::null()).stderr(Stdio::null());
        }
    }
    if let Some(lib) = l.preload {
        cmd.env("LD_PRELOAD", lib);
    }
    // Built before fork: the pre-exec hook may only make async-signal-safe system calls.
    // SAFETY: cpu_set_t is plain data, zero is a valid empty set; CPU_SET bounds were checked
    // by check_cpus (every CPU is below CPU_SETSIZE).
    let cpuset = l.cpus.map(|cpus| unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for c in cpus {
            libc::CPU_SET(*c, &mut set);
        }
        set
    });
    // SAFETY: the hook only calls setsid, setrlimit and sched_setaffinity, which are plain
    // system calls (async-signal-safe) and touch no memory shared with the parent.
    unsafe {
        cmd.pre_exec(move || {
            libc::setsid();
            raise_nofile_limit();
            if let Some(set) = &cpuset {
                if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    cmd.spawn()
        .map_err(|e| Error::io(format!("starting {}", l.mysqld.display()), e))
}

/// Raises the soft fd limit to the hard one: an unprivileged server cannot do it for itself
/// and would otherwise shrink max_connections and table_open_cache.
fn raise_nofile_limit() {
    // SAFETY: rlimit is plain data; getrlimit/setrlimit are async-signal-safe system calls.
    unsafe {
        let mut lim: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && lim.rlim_cur < lim.rlim_max {
            lim.rlim_cur = lim.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
}

/// True when the server behind `socket` sends a protocol-10 handshake.
pub(crate) fn greets(socket: &Path) -> bool {
    let Ok(mut s) = UnixStream::connect(socket) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    let mut head = [0u8; 5];
    // 3-byte length, sequence id, then the protocol version byte.
    s.read_exact(&mut head).is_ok() && head[4] == 10
}

/// Why waiting for a server failed.
pub(crate) enum NotReady {
    Exited(String),
    Timeout,
}

/// Polls until the server greets on `socket`, exits, or `timeout` passes.
pub(crate) fn wait_ready(
    child: &mut Child,
    socket: &Path,
    timeout: Duration,
) -> Result<(), NotReady> {
    let deadline = Instant::now() + timeout;
    let mut pause = Duration::from_millis(10);
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(NotReady::Exited(format!("the server exited ({status})")));
        }
        if greets(socket) {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(NotReady::Timeout);
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(100));
    }
}

/// True when `pid` is a live process whose command line names `datadir`.
pub(crate) fn is_ours(pid: u32, datadir: &Path) -> bool {
    let Ok(raw) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
        return false;
    };
    // A zombie has an empty command line: it is gone for our purposes.
    let needle = datadir.as_os_str().as_encoded_bytes();
    raw.split(|b| *b == 0)
        .any(|arg| arg.windows(needle.len()).any(|w| w == needle))
}

/// Reaps `pid` if it is our exited child, so it stops showing up as a zombie.
fn reap(pid: u32) {
    let mut status = 0;
    // SAFETY: waitpid with WNOHANG on a pid that is not our child just returns ECHILD.
    unsafe {
        libc::waitpid(pid as libc::pid_t, &mut status, libc::WNOHANG);
    }
}

fn signal(pid: u32, datadir: &Path, sig: libc::c_int) {
    if is_ours(pid, datadir) {
        // SAFETY: kill has no memory-safety preconditions; the pid was checked just above.
        unsafe {
            libc::kill(pid as libc::pid_t, sig);
        }
    }
}

/// True when `pid` has exited: no such process, or a zombie (whose parent may never reap it).
fn exited(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name, which is in parentheses and may hold spaces.
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z') || rest.starts_with('X')),
        Err(_) => true,
    }
}

fn wait_gone(pid: u32, datadir: &Path, timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        reap(pid);
        if !is_ours(pid, datadir) {
            // An exiting process loses its command line before it is gone: wait for the exit
            // itself too, but only briefly, in case the pid was already reused.
            let until = Instant::now() + Duration::from_secs(2);
            while !exited(pid) && Instant::now() < until {
                reap(pid);
                std::thread::sleep(Duration::from_millis(5));
            }
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Stops the server: SIGTERM (a clean shutdown for mariadbd/mysqld), up to `grace` to finish,
/// then SIGKILL. Returns an error text when even SIGKILL did not end it.
pub(crate) fn terminate(pid: u32, datadir: &Path, grace: Duration) -> Result<(), String> {
    if !is_ours(pid, datadir) {
        reap(pid);
        return Ok(());
    }
    signal(pid, datadir, libc::SIGTERM);
    if wait_gone(pid, datadir, grace) {
        return Ok(());
    }
    signal(pid, datadir, libc::SIGKILL);
    if wait_gone(pid, datadir, Duration::from_secs(10)) {
        Ok(())
    } else {
        Err("still running 10 s after SIGKILL".into())
    }
}

/// The last `lines` lines of a log file (empty when it does not exist).
pub fn log_tail_of(path: &Path, lines: usize) -> String {
    let Ok(bytes) = std::fs::read(path) else {
        return String::new();
    };
    let text = String::from_utf8_lossy(&bytes);
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// A port that is free on 127.0.0.1 right now.
pub(crate) fn free_port() -> Result<u16> {
    std::net::TcpListener::bind(("127.0.0.1", 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| Error::io("finding a free TCP port", e))
}

/// Fails with `PortInUse` when `port` cannot be bound on 127.0.0.1.
pub(crate) fn check_port(port: u16) -> Result<()> {
    match std::net::TcpListener::bind(("127.0.0.1", port)) {
        Ok(_) => Ok(()),
        Err(_) => Err(Error::PortInUse { port }),
    }
}

/// An exclusive advisory lock held until the returned file is dropped.
pub(crate) fn lock(path: &Path) -> Result<std::fs::File> {
    use std::os::fd::AsRawFd;
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|e| Error::io(format!("opening lock {}", path.display()), e))?;
    // SAFETY: flock on a descriptor we own; blocks until the lock is free.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } != 0 {
        return Err(Error::io(
            format!("locking {}", path.display()),
            std::io::Error::last_os_error(),
        ));
    }
    Ok(f)
}

/// The effective uid is 0 (the server then needs `--user=root`).
pub(crate) fn running_as_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// A directory for sockets when the lab path is too deep for `sun_path`.
pub(crate) fn short_socket_dir() -> PathBuf {
    // SAFETY: getuid has no preconditions and cannot fail.
    PathBuf::from(format!("/tmp/qpslab-{}", unsafe { libc::getuid() }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use qpslab_core::fault::Blame;

    #[test]
    fn port_in_use_is_detected() {
        let l = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let port = l.local_addr().unwrap().port();
        assert!(matches!(check_port(port), Err(Error::PortInUse { .. })));
        drop(l);
        assert!(check_port(port).is_ok());
        assert_ne!(free_port().unwrap(), 0);
    }

    #[test]
    fn own_pid_is_recognised_by_cmdline() {
        let me = std::process::id();
        let exe = std::env::current_exe().unwrap();
        assert!(is_ours(me, &exe));
        assert!(!is_ours(me, Path::new("/no/such/datadir")));
    }

    #[test]
    fn log_tail_takes_last_lines() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("log");
        std::fs::write(&p, "a\nb\nc\nd\n").unwrap();
        assert_eq!(log_tail_of(&p, 2), "c\nd");
        assert_eq!(log_tail_of(&p, 10), "a\nb\nc\nd");
        assert_eq!(log_tail_of(&dir.path().join("none"), 3), "");
    }

    #[test]
    fn impossible_cpu_is_rejected() {
        assert!(check_cpus(&[0]).is_ok());
        assert!(check_cpus(&[100_000]).unwrap_err().is_user_error());
        assert!(check_cpus(&[]).is_err());
    }
}
