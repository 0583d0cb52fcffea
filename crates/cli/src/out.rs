//! Terminal output that survives a closed pipe: `qpslab show --json | head -1` is a normal end.
//!
//! Rust ignores SIGPIPE, so a write to a closed stdout fails with EPIPE, and std's `println!`
//! turns that into a panic. Resetting SIGPIPE to its default would instead kill qpslab at its
//! next line of output, in the middle of a run, leaving the embedded sandbox running and the
//! phase unstored. So the binary keeps SIGPIPE ignored and every `print!`/`println!` (and the
//! stderr ones) in this crate goes through [`write_out`]: once the reader is gone the rest of the
//! output is dropped and the command ends the normal way, stopping what it started and storing
//! what it measured. The macros below shadow std's for every module declared after them in
//! `main.rs`, so no call site needs to know.
//!
//! The same macros carry the one verbosity switch (`--quiet`, `--verbose`): everything written
//! to standard error through them is a note (progress, information, warnings) that `--quiet`
//! drops; [`detail!`] lines appear only with `--verbose`. Errors are printed by `main`, and
//! results go to standard output, so `--quiet` leaves both.

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

/// How much qpslab says besides its results and errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verbosity {
    /// Results and errors only (`--quiet`).
    Quiet = 0,
    /// Results, errors, progress and notes.
    Normal = 1,
    /// Also the detail lines (`--verbose`).
    Verbose = 2,
}

static VERBOSITY: AtomicU8 = AtomicU8::new(Verbosity::Normal as u8);

/// Sets the verbosity for the rest of the process (once, from the parsed flags).
pub fn set_verbosity(v: Verbosity) {
    VERBOSITY.store(v as u8, Ordering::Relaxed);
}

/// The verbosity in force.
pub fn verbosity() -> Verbosity {
    match VERBOSITY.load(Ordering::Relaxed) {
        0 => Verbosity::Quiet,
        1 => Verbosity::Normal,
        _ => Verbosity::Verbose,
    }
}

/// True under `--quiet`: progress and live lines, which go to standard output during a run,
/// are left out too.
pub fn quiet() -> bool {
    verbosity() == Verbosity::Quiet
}

static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);
static STDERR_CLOSED: AtomicBool = AtomicBool::new(false);

/// Which stream a macro writes to.
#[derive(Clone, Copy)]
pub enum Stream {
    /// Standard output.
    Out,
    /// Standard error.
    Err,
}

/// Writes formatted text to `stream`; a closed pipe (EPIPE) silences that stream from then on,
/// any other failure is ignored too (there is nowhere left to report it).
pub fn write_out(stream: Stream, args: std::fmt::Arguments<'_>) {
    let closed = match stream {
        Stream::Out => &STDOUT_CLOSED,
        Stream::Err => &STDERR_CLOSED,
    };
    if closed.load(Ordering::Relaxed) || matches!(stream, Stream::Err) && quiet() {
        return;
    }
    let result = match stream {
        Stream::Out => std::io::stdout().lock().write_fmt(args),
        Stream::Err => std::io::stderr().lock().write_fmt(args),
    };
    if let Err(e) = result {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            closed.store(true, Ordering::Relaxed);
        }
    }
}

macro_rules! print {
    ($($arg:tt)*) => { $crate::out::write_out($crate::out::Stream::Out, format_args!($($arg)*)) };
}

macro_rules! println {
    () => { $crate::out::write_out($crate::out::Stream::Out, format_args!("\n")) };
    ($($arg:tt)*) => {
        $crate::out::write_out($crate::out::Stream::Out, format_args!("{}\n", format_args!($($arg)*)))
    };
}

macro_rules! eprint {
    ($($arg:tt)*) => { $crate::out::write_out($crate::out::Stream::Err, format_args!($($arg)*)) };
}

macro_rules! eprintln {
    () => { $crate::out::write_out($crate::out::Stream::Err, format_args!("\n")) };
    ($($arg:tt)*) => {
        $crate::out::write_out($crate::out::Stream::Err, format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// A detail line on standard error, printed only with `--verbose`.
macro_rules! detail {
    ($($arg:tt)*) => {
        if $crate::out::verbosity() == $crate::out::Verbosity::Verbose {
            eprintln!($($arg)*)
        }
    };
}
