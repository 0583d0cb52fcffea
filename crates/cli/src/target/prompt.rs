//! `-p`/`--password` as the mysql client takes it: with a value, that password (and a warning
//! that `ps` shows it); alone, a prompt on the terminal with echo off. Without a terminal on
//! standard input there is nobody to ask: a user error, never a wait.
//!
//! The prompt runs at most once per process (a command that connects twice asks once), and
//! the terminal's echo is put back however the process ends: on return (Ctrl-C included), and,
//! for a signal that ends it from the watcher thread (`signals.rs`), at exit.

use crate::error::user;
use crate::signals::INTERRUPTED;
use anyhow::Result;
use qpslab_core::Secret;
use std::io::{BufRead, Write};
use std::sync::atomic::Ordering;
use std::sync::{Mutex, OnceLock};

/// The password typed at the prompt, once asked.
static TYPED: OnceLock<Secret> = OnceLock::new();
/// The terminal's settings while echo is off, to put back at exit.
static SAVED: Mutex<Option<libc::termios>> = Mutex::new(None);

/// The password `-p`/`--password` stands for: `given` (`-pVALUE`, `--password=VALUE`), else
/// one typed at a prompt.
pub fn password(given: Option<&Secret>) -> Result<Secret> {
    if let Some(pw) = given {
        eprintln!(
            "warning: a password on the command line is visible to other local users (ps); \
             prefer -p alone (a prompt), --password-file, MYSQL_PWD or an option file"
        );
        return Ok(pw.clone());
    }
    if let Some(pw) = TYPED.get() {
        return Ok(pw.clone());
    }
    // SAFETY: isatty only inspects the descriptor.
    if unsafe { libc::isatty(libc::STDIN_FILENO) } != 1 {
        return Err(user(
            "-p/--password without a value asks on a terminal, and standard input is not one: \
             give -pVALUE, --password-file FILE, MYSQL_PWD or an option file",
        ));
    }
    let typed = Secret::new(ask("Enter password: ")?);
    Ok(TYPED.get_or_init(|| typed).clone())
}

/// Prints `prompt` on standard error and reads one line from the terminal with echo off.
fn ask(prompt: &str) -> Result<String> {
    let fd = libc::STDIN_FILENO;
    // SAFETY: a zeroed termios is a valid buffer for tcgetattr to fill.
    let mut term: libc::termios = unsafe { std::mem::zeroed() };
    // SAFETY: `term` is a valid termios for the call to write into.
    if unsafe { libc::tcgetattr(fd, &mut term) } != 0 {
        let e = std::io::Error::last_os_error();
        return Err(anyhow::anyhow!("reading the terminal's settings: {e}"));
    }
    let mut quiet = term;
    quiet.c_lflag &= !libc::ECHO;
    quiet.c_lflag |= libc::ECHONL;
    *SAVED.lock().unwrap_or_else(|e| e.into_inner()) = Some(term);
    static AT_EXIT: std::sync::Once = std::sync::Once::new();
    // SAFETY: registering a plain extern "C" function that never unwinds.
    AT_EXIT.call_once(|| unsafe {
        libc::atexit(restore_at_exit);
    });
    // Echo goes off before the prompt shows, so nothing typed after it is ever echoed.
    // SAFETY: `quiet` is a valid termios; TCSANOW keeps what was typed ahead.
    if unsafe { libc::tcsetattr(fd, libc::TCSANOW, &quiet) } != 0 {
        let e = std::io::Error::last_os_error();
        return Err(anyhow::anyhow!("turning the terminal's echo off: {e}"));
    }
    let mut err = std::io::stderr();
    let _ = write!(err, "{prompt}");
    let _ = err.flush();
    let typed = read_line(fd);
    restore();
    typed
}

/// One line from the terminal `fd`, waiting in short polls so that Ctrl-C (which a command
/// that polls [`INTERRUPTED`] only records) ends the wait. In canonical mode the terminal
/// reads as ready only once a whole line is typed.
fn read_line(fd: libc::c_int) -> Result<String> {
    loop {
        if INTERRUPTED.load(Ordering::SeqCst) {
            return Err(anyhow::anyhow!("interrupted at the password prompt"));
        }
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        if unsafe { libc::poll(&mut p, 1, 200) } > 0 {
            break;
        }
    }
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| anyhow::anyhow!("reading the password from the terminal: {e}"))?;
    Ok(line.trim_end_matches(['\n', '\r']).to_string())
}

/// Puts the terminal's settings back, if the prompt changed them.
fn restore() {
    let saved = SAVED.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(term) = saved {
        // SAFETY: `term` is the valid termios tcgetattr returned.
        unsafe { libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, &term) };
    }
}

extern "C" fn restore_at_exit() {
    // At exit another thread may be stopped holding the lock: then it is left as it is.
    if let Ok(mut saved) = SAVED.try_lock() {
        if let Some(term) = saved.take() {
            // SAFETY: `term` is the valid termios tcgetattr returned.
            unsafe { libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, &term) };
        }
    }
}
