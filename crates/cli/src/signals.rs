//! SIGINT (Ctrl-C), SIGTERM (systemd, Kubernetes, `timeout`) and SIGHUP (a closed terminal) all
//! stop qpslab the same way: the first one sets [`INTERRUPTED`], so the running
//! phase stops at its next check, what it measured is stored as `interrupted`, and the command
//! unwinds, stopping the sandboxes it started; the process then exits with 128 + the signal's
//! number (130, 143, 129), as a shell reports a process killed by it. A second signal stops the
//! sandboxes at once and exits with the same code. A command that never polls the flag (a
//! prepare, a server start) stops the sandboxes it started and exits at the first signal.
//!
//! Each signal also ends the waits of blocking sessions in progress ([`qpslab_wire::interrupt`]),
//! so no connection to a silent server holds the process.
//!
//! The handler itself only records the signal and writes its number to a pipe; a watcher thread
//! does the rest, outside signal context.

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Mutex;

/// What a command that does not poll [`INTERRUPTED`] leaves behind if a signal stops it now
/// (`prepare` on a user's server: its partly loaded tables), said as the process exits.
static LEFT_BEHIND: Mutex<Option<String>> = Mutex::new(None);

/// The first signal received, 0 before any.
static FIRST: AtomicI32 = AtomicI32::new(0);
/// Set by the first SIGINT, SIGTERM or SIGHUP; long-running work polls it.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Set while a command that polls [`INTERRUPTED`] runs (`run`, `lab`, `capture`).
static POLLED: AtomicBool = AtomicBool::new(false);
/// Set by a command that must finish undoing its changes to a server (`capture`): a second
/// signal does not exit at once either.
static UNDOING: AtomicBool = AtomicBool::new(false);
/// The write end of the pipe the handler wakes the watcher through.
static PIPE: AtomicI32 = AtomicI32::new(-1);

const HANDLED: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

extern "C" fn on_signal(sig: libc::c_int) {
    // Async-signal-safe work only: atomics and write(2), with errno preserved.
    let _ = FIRST.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
    let fd = PIPE.load(Ordering::SeqCst);
    if fd >= 0 {
        let byte = sig as u8;
        // SAFETY: errno is thread-local; the buffer is one valid byte on this stack.
        unsafe {
            let errno = *libc::__errno_location();
            libc::write(fd, (&byte as *const u8).cast(), 1);
            *libc::__errno_location() = errno;
        }
    }
}

/// Installs the handlers and starts the watcher thread.
pub fn install() -> std::io::Result<()> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    PIPE.store(fds[1], Ordering::SeqCst);
    let read_end = fds[0];
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || watch(read_end))?;
    for sig in HANDLED {
        // SAFETY: a zeroed sigaction is valid; the handler only does async-signal-safe work.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            sa.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            if libc::sigaction(sig, &sa, std::ptr::null_mut()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
    }
    Ok(())
}

fn watch(fd: libc::c_int) {
    loop {
        let mut byte = 0u8;
        // SAFETY: reads one byte into a valid stack buffer.
        let n = unsafe { libc::read(fd, (&mut byte as *mut u8).cast(), 1) };
        if n == 1 {
            received(i32::from(byte));
        } else if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
        {
            continue;
        } else {
            return;
        }
    }
}

fn received(sig: i32) {
    // stderr may be a terminal that is gone (SIGHUP): never panic on writing to it.
    let mut err = std::io::stderr();
    let again = INTERRUPTED.swap(true, Ordering::SeqCst);
    // Every session waiting for a server gives up within a tick (a silent server, a handshake
    // that never comes); what starts after this, such as putting settings back, still runs.
    qpslab_wire::interrupt();
    if again && UNDOING.load(Ordering::SeqCst) {
        let _ = writeln!(
            err,
            "qpslab: {}: still putting the server's settings back (kill -9 would leave them changed)",
            name(sig)
        );
        return;
    }
    if again || !POLLED.load(Ordering::SeqCst) {
        let left = LEFT_BEHIND
            .lock()
            .ok()
            .and_then(|l| l.clone())
            .map_or(String::new(), |l| format!("; {l}"));
        let servers = if qpslab_sandbox::registry::any_started() {
            "stopping the servers it started"
        } else {
            "stopping"
        };
        let _ = writeln!(err, "qpslab: {}: {servers}{left}", name(sig));
        qpslab_sandbox::registry::stop_all_started();
        std::process::exit(exit_code(first().unwrap_or(sig)));
    }
    let rest = if UNDOING.load(Ordering::SeqCst) {
        "putting the server's settings back"
    } else {
        "what was measured is kept (send it again to stop at once)"
    };
    let _ = writeln!(err, "qpslab: {}: stopping; {rest}", name(sig));
}

/// Says what a signal would leave behind if it stopped the command now (`None`: nothing), for
/// the line printed as the process exits.
pub fn leaves_behind(what: Option<String>) {
    if let Ok(mut l) = LEFT_BEHIND.lock() {
        *l = what;
    }
}

/// Declares that the running command polls [`INTERRUPTED`], so a first signal lets it stop and
/// store what it measured instead of exiting at once.
pub fn polled() {
    POLLED.store(true, Ordering::SeqCst);
}

/// Declares that the running command polls [`INTERRUPTED`] and must not be stopped before it
/// puts a server's settings back: every signal only sets the flag (its waits are bounded).
pub fn undoing() {
    polled();
    UNDOING.store(true, Ordering::SeqCst);
}

/// True once a signal is stopping the process from the watcher thread (a command that does not
/// poll [`INTERRUPTED`]): the command's own errors from then on are consequences of it.
pub fn exiting() -> bool {
    first().is_some() && !POLLED.load(Ordering::SeqCst)
}

/// The first signal received, if any.
pub fn first() -> Option<i32> {
    match FIRST.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// The exit status of a process stopped by `sig`: 128 + its number.
pub fn exit_code(sig: i32) -> i32 {
    128 + sig
}

fn name(sig: i32) -> &'static str {
    match sig {
        libc::SIGINT => "interrupted (SIGINT)",
        libc::SIGTERM => "terminated (SIGTERM)",
        libc::SIGHUP => "hung up (SIGHUP)",
        _ => "signal",
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn exit_codes_follow_the_shell() {
        assert_eq!(super::exit_code(libc::SIGINT), 130);
        assert_eq!(super::exit_code(libc::SIGTERM), 143);
        assert_eq!(super::exit_code(libc::SIGHUP), 129);
    }
}
