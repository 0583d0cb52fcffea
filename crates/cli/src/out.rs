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
//! It is also the one path of a command's machine-readable output ([`Output`]): the format
//! on standard output and the `--export-*` files, each rendered once, the files written whole.
//! While standard output carries such a document, `print!`/`println!` go to standard error.
//! The same macros carry the one verbosity switch (`--quiet`, `--verbose`): everything written
//! to standard error through them is a note (progress, information, warnings) that `--quiet`
//! drops; [`detail!`] lines appear only with `--verbose`. Errors are printed by `main`, and
//! results go to standard output, so `--quiet` leaves both.

use crate::args::{Asked, Format};
use crate::error::user;
use anyhow::Result;
use std::borrow::Cow;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::OnceLock;

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

static SYSBENCH: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Says that the process was called as `sysbench` (a link of that name, or `qpslab sysbench`):
/// standard output is sysbench's lines, and qpslab's own go to standard error.
pub fn set_sysbench() {
    SYSBENCH.store(true, Ordering::Relaxed);
}

/// Whether standard output is sysbench's ([`set_sysbench`]).
pub fn sysbench() -> bool {
    SYSBENCH.load(Ordering::Relaxed)
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

/// Whether each stream is a terminal, looked at once.
static STDOUT_TTY: OnceLock<bool> = OnceLock::new();
static STDERR_TTY: OnceLock<bool> = OnceLock::new();

fn is_tty(stream: Stream) -> bool {
    match stream {
        Stream::Out => *STDOUT_TTY.get_or_init(|| std::io::stdout().is_terminal()),
        Stream::Err => *STDERR_TTY.get_or_init(|| std::io::stderr().is_terminal()),
    }
}

/// Writes formatted text to `stream`; a closed pipe (EPIPE) silences that stream from then on,
/// any other failure is ignored too (there is nowhere left to report it). On a terminal the
/// text's control characters are escaped ([`crate::render::escape_controls`]): logged SQL or
/// an imported name never sends the terminal an escape sequence. Pipes and files get the text
/// as it is.
pub fn write_out(stream: Stream, args: std::fmt::Arguments<'_>) {
    if matches!(stream, Stream::Err) && quiet() {
        return;
    }
    write_text(stream, args);
}

/// Writes the error line that ends a command to standard error, as [`write_out`] does but
/// under `--quiet` too.
pub fn write_error(args: std::fmt::Arguments<'_>) {
    write_text(Stream::Err, args);
}

fn write_text(stream: Stream, args: std::fmt::Arguments<'_>) {
    if is_tty(stream) {
        let text = args
            .as_str()
            .map_or_else(|| Cow::Owned(args.to_string()), Cow::Borrowed);
        write_to(stream, |w| {
            w.write_all(crate::render::escape_controls(&text).as_bytes())
        });
    } else {
        write_to(stream, |w| w.write_fmt(args));
    }
}

/// Writes `text` to `stream` as it is: only for qpslab's own control sequences.
fn write_raw(stream: Stream, text: &str) {
    if matches!(stream, Stream::Err) && quiet() {
        return;
    }
    write_to(stream, |w| w.write_all(text.as_bytes()));
}

fn write_to(stream: Stream, write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) {
    let closed = match stream {
        Stream::Out => &STDOUT_CLOSED,
        Stream::Err => &STDERR_CLOSED,
    };
    if closed.load(Ordering::Relaxed) {
        return;
    }
    let result = match stream {
        Stream::Out => write(&mut std::io::stdout().lock()),
        Stream::Err => write(&mut std::io::stderr().lock()),
    };
    if let Err(e) = result {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            closed.store(true, Ordering::Relaxed);
        }
    }
}

/// Rewrites the status line on standard error (a terminal's: progress): a carriage return,
/// `text` with its control characters escaped, the rest of the line cleared.
pub fn status_line(text: &str) {
    write_raw(Stream::Err, "\r");
    write_out(Stream::Err, format_args!("{text}"));
    write_raw(Stream::Err, "\x1b[K");
    let _ = std::io::stderr().flush();
}

/// Clears the status line [`status_line`] wrote.
pub fn clear_status_line() {
    write_raw(Stream::Err, "\r\x1b[K");
}

macro_rules! print {
    ($($arg:tt)*) => { $crate::out::write_out($crate::out::human(), format_args!($($arg)*)) };
}

macro_rules! println {
    () => { $crate::out::write_out($crate::out::human(), format_args!("\n")) };
    ($($arg:tt)*) => {
        $crate::out::write_out($crate::out::human(), format_args!("{}\n", format_args!($($arg)*)))
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

/// A line of qpslab's own, which is not sysbench's: on standard output, or on standard error
/// when called as sysbench ([`sysbench`]), so that sysbench's lines stay as scripts read them.
macro_rules! own {
    ($($arg:tt)*) => {
        if $crate::out::sysbench() {
            eprintln!($($arg)*)
        } else {
            println!($($arg)*)
        }
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

/// Set once a command's standard output carries a document (any `--format` but table): from
/// then on the human lines (`print!`, `println!`: progress, live figures) go to standard error,
/// so that `qpslab run --format json | jq` reads one JSON document.
static STDOUT_IS_DOCUMENT: AtomicBool = AtomicBool::new(false);

/// Where `print!`/`println!` write: standard output, or standard error while standard output
/// carries a document.
pub fn human() -> Stream {
    if STDOUT_IS_DOCUMENT.load(Ordering::Relaxed) {
        Stream::Err
    } else {
        Stream::Out
    }
}

/// What a command writes, and where: its `--format` on standard output and its `--export-*`
/// files, checked before any work starts. Built by [`Output::new`]; written by [`Output::emit`].
#[derive(Debug)]
pub struct Output {
    format: Format,
    exports: Vec<(&'static str, Format, PathBuf)>,
}

impl Output {
    /// The output `a` asks of `command` (as the user types it: `server list`), which writes
    /// `a.can()` (the first is its default): a format it cannot write is the user's error, one
    /// line naming the ones it can; each export's directory must exist. From here on, a
    /// standard output that carries a document gets no human line.
    pub fn new(a: &impl Asked, command: &'static str) -> Result<Output> {
        Output::with_default(a, command, None)
    }

    /// As [`Output::new`], with `default` instead of the first format when none is given.
    pub fn with_default(
        a: &impl Asked,
        command: &'static str,
        default: Option<Format>,
    ) -> Result<Output> {
        let can = a.can();
        // `--format md` or `--export-md FILE`, and what the command writes instead.
        let refuse = |asked: String| {
            let names: Vec<_> = can.iter().map(|f| f.name()).collect();
            user(format!(
                "{asked}: `qpslab {command}` writes {}",
                names.join(", ")
            ))
        };
        let format = a.format().or(default).unwrap_or(can[0]);
        if !can.contains(&format) {
            return Err(refuse(format!("--format {}", format.name())));
        }
        let mut exports = Vec::new();
        for (flag, f, path) in a.exports() {
            if !can.contains(&f) {
                return Err(refuse(format!("{flag} {}", path.display())));
            }
            crate::outfile::check(flag, path, true)?;
            exports.push((flag, f, path.to_path_buf()));
        }
        if format != Format::Table {
            STDOUT_IS_DOCUMENT.store(true, Ordering::Relaxed);
        }
        Ok(Output { format, exports })
    }

    /// The format of standard output.
    pub fn format(&self) -> Format {
        self.format
    }

    /// Writes each export, then standard output, each format rendered once by `render` (so
    /// `--format json` prints the very document `--export-json` holds).
    pub fn emit(&self, render: impl Fn(Format) -> Result<String>) -> Result<()> {
        self.emit_to(None, render)
    }

    /// As [`Output::emit`], the `--format` document written to `out` (the command's `--out
    /// FILE`, whole) instead of standard output when given.
    pub fn emit_to(
        &self,
        out: Option<&Path>,
        render: impl Fn(Format) -> Result<String>,
    ) -> Result<()> {
        let mut done: Vec<(Format, String)> = Vec::new();
        let mut text = |f: Format| -> Result<String> {
            if let Some((_, t)) = done.iter().find(|(d, _)| *d == f) {
                return Ok(t.clone());
            }
            let t = render(f)?;
            done.push((f, t.clone()));
            Ok(t)
        };
        for (flag, f, path) in &self.exports {
            crate::outfile::write(flag, path, &text(*f)?)?;
        }
        let main = text(self.format)?;
        match out {
            Some(path) => crate::outfile::write("--out", path, &main)?,
            None => write_out(Stream::Out, format_args!("{main}")),
        }
        Ok(())
    }
}

/// `value` as pretty JSON with a final newline: every JSON document qpslab writes.
pub fn json(value: &impl serde::Serialize) -> Result<String> {
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    Ok(text)
}

/// `rows` under `header` as CSV (RFC 4180).
pub fn csv<R, F>(header: &[&str], rows: R) -> Result<String>
where
    R: IntoIterator<Item = Vec<F>>,
    F: AsRef<[u8]>,
{
    let mut bytes = Vec::new();
    qpslab_store::write_csv(&mut bytes, header, rows)?;
    Ok(String::from_utf8(bytes)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::{JsonPath, JsonSwitch, OutputArgs, OutputFlags, TableJson};

    #[test]
    fn refuses_what_a_command_cannot_write_and_renders_each_format_once() {
        let dir = tempfile::tempdir().unwrap();
        let mut a = OutputArgs::<TableJson, JsonPath>::new(OutputFlags {
            export_md: Some(dir.path().join("x.md")),
            ..Default::default()
        });
        let e = Output::new(&a, "show").unwrap_err();
        let md = dir.path().join("x.md");
        let want = format!(
            "--export-md {}: `qpslab show` writes table, json",
            md.display()
        );
        assert_eq!(e.to_string(), want);
        a.flags.export_md = None;
        a.flags.format = Some(Format::Csv);
        let e = Output::new(&a, "show").unwrap_err();
        assert_eq!(
            e.to_string(),
            "--format csv: `qpslab show` writes table, json"
        );
        assert_eq!(crate::error::exit_code(&e), 2);

        // `--json PATH` is `--export-json PATH`; the default is the first format.
        a.flags.format = None;
        let old = dir.path().join("old.json");
        a.flags.legacy.json = Some(old.clone());
        let out = Output::new(&a, "show").unwrap();
        assert_eq!(out.format(), Format::Table);
        let calls = std::cell::Cell::new(0);
        let table = dir.path().join("t.txt");
        out.emit_to(Some(&table), |f| {
            calls.set(calls.get() + 1);
            Ok(f.name().to_string())
        })
        .unwrap();
        assert_eq!(std::fs::read_to_string(&old).unwrap(), "json");
        assert_eq!(std::fs::read_to_string(&table).unwrap(), "table");
        assert_eq!(calls.get(), 2);
        // An export into a missing directory is refused before any work.
        a.flags.legacy.json = Some(dir.path().join("no/x.json"));
        assert!(Output::new(&a, "show").is_err());

        // The `--json` switch is `--format json`.
        let switch = OutputArgs::<TableJson, JsonSwitch>::new(OutputFlags {
            legacy: JsonSwitch { json: true },
            ..Default::default()
        });
        assert_eq!(Asked::format(&switch), Some(Format::Json));
        assert_eq!(json(&[1]).unwrap(), "[\n  1\n]\n");
        assert_eq!(
            csv(&["a", "b"], [vec!["1", "x,y"]]).unwrap(),
            "a,b\n1,\"x,y\"\n"
        );
    }
}
