//! `qpslab digest LOG`: reads a slow or general log (streaming, in bounded memory) and prints
//! its statement classes, heaviest first, with what was folded beyond `--max-classes`.

use crate::render::digest as render;

use crate::args::{DigestArgs, Format, LogTypeArg};
use crate::error::{fail, user};
use crate::out::Output;
use anyhow::Result;
use qpslab_sqllog::digest::{digest_log, Bound, Report};
use qpslab_sqllog::{LogReader, LogType};
use std::fs::File;
use std::io::{BufRead, BufReader, IsTerminal};
use std::path::Path;
use std::time::{Duration, Instant};

/// The read buffer: large, so one read brings many entries.
const READ_BUFFER: usize = 1 << 20;
/// Classes the table and Markdown show without --limit.
const DEFAULT_SHOWN: usize = 20;
/// Logs smaller than this are read without a progress line.
const PROGRESS_FROM: u64 = 64 << 20;

/// The share of the memory free at the start that the classes may take: the rest is for the
/// report built from them (its JSON text included) and the sort of a fold.
const MEMORY_SHARE: u64 = 4;

/// The reader's log type for `--log-type` (digest and replay).
pub fn log_type(a: LogTypeArg) -> LogType {
    match a {
        LogTypeArg::Slow => LogType::Slow,
        LogTypeArg::General => LogType::General,
    }
}

/// Runs `qpslab digest`.
pub fn digest(a: DigestArgs) -> Result<()> {
    let kind = log_type(a.log_type);
    // The report keeps every class unless --limit is given (the JSON forms list them all);
    // the table and Markdown show the first 20 by default.
    let limit = a.limit;
    let shown = a.limit.unwrap_or(DEFAULT_SHOWN);
    let name = a.log.display().to_string();
    // Checked before the log is read, so a wrong path fails at once, not after a 10 GB log.
    let out = Output::new(&a.output, "digest")?;
    let (input, size) = open(&a.log, &name)?;
    let mut reader = LogReader::new(input, kind).map_err(|e| fail(e.digesting(&name)))?;
    let report = read(&mut reader, &name, size, limit, bound(a.max_classes))?;
    out.emit(|f| match f {
        Format::Json => crate::out::json(&report),
        Format::Md => Ok(render::markdown(&report, shown)),
        _ => Ok(render::table(&report, shown)),
    })
}

/// The log to read (`-`: standard input) and its size when it is a file.
fn open(path: &Path, name: &str) -> Result<(Box<dyn BufRead>, Option<u64>)> {
    if name == "-" {
        let stdin = std::io::stdin().lock();
        return Ok((Box::new(BufReader::with_capacity(READ_BUFFER, stdin)), None));
    }
    if path.is_dir() {
        return Err(user(format!("{name} is a directory, not a log file")));
    }
    let file = File::open(path).map_err(|e| user(format!("cannot open {name}: {e}")))?;
    let size = file.metadata().ok().map(|m| m.len());
    Ok((Box::new(BufReader::with_capacity(READ_BUFFER, file)), size))
}

/// Reads the whole log; `size` (None for standard input) drives the progress line.
fn read<R: BufRead>(
    reader: &mut LogReader<R>,
    name: &str,
    size: Option<u64>,
    limit: Option<usize>,
    bound: Bound,
) -> Result<Report> {
    let mut progress = Progress::new(size);
    let report = digest_log(reader, name, limit, bound, |bytes| progress.tick(bytes))
        .map_err(|e| fail(e.digesting(name)));
    progress.done();
    report
}

/// The classes' bound: [`MEMORY_SHARE`] of the memory this process may still take, in bytes
/// and in classes of [`qpslab_sqllog::digest::CLASS_BYTES`]; `--max-classes` lowers the
/// count (never the bytes: a bound past the memory would abort instead of folding).
fn bound(max_classes: Option<u64>) -> Bound {
    let mut b = Bound::for_memory(qpslab_probe::memory_left() / MEMORY_SHARE);
    if let Some(n) = max_classes {
        b.max_classes = usize::try_from(n).unwrap_or(usize::MAX);
    }
    b
}

/// A once-a-second progress line on a terminal's stderr, for big logs only.
struct Progress {
    size: Option<u64>,
    on: bool,
    started: Instant,
    last: Instant,
    shown: bool,
}

impl Progress {
    fn new(size: Option<u64>) -> Progress {
        let big = size.is_none_or(|s| s >= PROGRESS_FROM);
        let now = Instant::now();
        Progress {
            size,
            on: big && std::io::stderr().is_terminal(),
            started: now,
            last: now,
            shown: false,
        }
    }

    fn tick(&mut self, bytes: u64) {
        if !self.on || self.last.elapsed() < Duration::from_secs(1) {
            return;
        }
        self.last = Instant::now();
        let line = progress_line(bytes, self.size, self.started.elapsed());
        crate::out::status_line(&line);
        self.shown = true;
    }

    fn done(&self) {
        if self.shown {
            crate::out::clear_status_line();
        }
    }
}

/// `qpslab: digest: 120.0 MB of 1000.0 MB (12%), 240 MB/s, ETA 4s` (no size, no ETA).
fn progress_line(bytes: u64, size: Option<u64>, elapsed: Duration) -> String {
    let mb = bytes as f64 / 1e6;
    let rate = mb / elapsed.as_secs_f64().max(1e-3);
    let of = size.map_or(String::new(), |s| {
        let pct = bytes as f64 * 100.0 / s.max(1) as f64;
        format!(" of {:.1} MB ({pct:.0}%)", s as f64 / 1e6)
    });
    let eta = size.map_or(String::new(), |s| {
        crate::progress::eta_text(bytes as f64, s as f64, elapsed)
    });
    format!("qpslab: digest: {mb:.1} MB{of}, {rate:.0} MB/s{eta}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_progress_line() {
        let half_s = Duration::from_millis(500);
        assert_eq!(
            progress_line(120_000_000, Some(1_000_000_000), half_s),
            "qpslab: digest: 120.0 MB of 1000.0 MB (12%), 240 MB/s, ETA 4s"
        );
        assert_eq!(
            progress_line(5_000_000, None, half_s),
            "qpslab: digest: 5.0 MB, 10 MB/s"
        );
    }
}
