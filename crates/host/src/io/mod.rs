//! sysbench's fileio workloads run through fio (`qpslab io MODE`, and study cells with
//! `workload = "fileio"`): the options mapped to one fio job ([`job`]), the files laid out
//! first and removed after ([`files`]), fio run with `json+` status reports every interval
//! ([`spawn`]), and its reports read into the same [`PhaseResult`] and [`Sample`]s as an OLTP
//! phase ([`report`]): events are I/O operations, latency is fio's completion latency with the
//! percentiles fio computed from its full histograms. [`stored`] stores a run as it is
//! measured (`qpslab io`).
//!
//! ```text
//! FileIoOptions + Timing ─job::run_args─▶ fio --output-format=json+ --status-interval=1
//!                                          │ one cumulative report per interval
//!                          report::Snapshot ┴▶ report::sample (histogram differences) ─▶ on_sample
//!                          last report ─────▶ report::phase (fio's own figures) ─▶ PhaseResult
//! ```
//!
//! [`stored::measure_stored`] writes the phase to the results store as it is measured (each
//! interval as fio reports it), the way every measured phase is stored.

use qpslab_core::fault::{user_if, Blame, Fault};

pub mod check;
pub mod files;
pub mod job;
pub mod report;
pub mod spawn;
pub mod stored;

use qpslab_core::fileio::{FileIoMode, FileIoOptions};
use qpslab_core::result::{PhaseResult, Sample};
use report::Snapshot;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// Why an I/O run could not run or finish.
#[derive(Debug, thiserror::Error)]
pub enum IoError {
    /// fio is not installed (a runtime failure: the machine lacks a package).
    #[error("fio not found: install the fio package (apt-get install fio)")]
    FioMissing,
    /// The user's input cannot be used (directory, free space).
    #[error("{0}")]
    User(String),
    /// fio failed or wrote a report that cannot be read.
    #[error("{0}")]
    Fio(String),
    /// A signal stopped the run (fio was killed, the files removed).
    #[error("interrupted")]
    Interrupted,
    /// Whoever took the samples failed (e.g. the results store).
    #[error("{0}")]
    Sink(String),
    /// The results store could not begin, finish or close the phase.
    #[error(transparent)]
    Store(#[from] qpslab_store::Error),
}

impl Blame for IoError {
    /// Whether the error is the user's (exit 2) rather than a runtime failure.
    fn fault(&self) -> Fault {
        user_if(match self {
            IoError::User(_) => true,
            IoError::Store(e) => e.is_user_error(),
            _ => false,
        })
    }
}

/// The directory the files of a study's fileio cell go to: `io/STUDY/SETUP` under the lab
/// directory. The one seam a mounted filesystem replaces.
pub fn cell_dir(lab_dir: &Path, study: &str, setup: &str) -> PathBuf {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    lab_dir.join("io").join(clean(study)).join(clean(setup))
}

/// One I/O phase to run.
#[derive(Clone, Debug)]
pub struct IoRun<'a> {
    /// sysbench's fileio options.
    pub options: &'a FileIoOptions,
    /// Threads, time and report interval.
    pub timing: job::Timing,
    /// Where the test files go.
    pub dir: &'a Path,
    /// Where the test files come from and whether they stay.
    pub files: Files,
}

/// The life of a run's test files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Files {
    /// Laid out before the phase, removed after it (`qpslab io`).
    Temporary,
    /// Laid out before the phase and left after it (`qpslab io --keep-files`).
    Kept,
    /// Laid out by an earlier prepare and left as they are (sysbench's fileio `run`).
    Prepared,
}

/// A measured I/O phase.
#[derive(Clone, Debug)]
pub struct FioMeasured {
    /// The phase as stored (with fio's version and command in `io`).
    pub phase: PhaseResult,
    /// fio's last report as it wrote it.
    pub fio_report: Value,
}

/// Checks what can be checked before anything runs: fio, the directory, free space.
/// Returns fio's version.
pub fn preflight(run: &IoRun<'_>) -> Result<String, IoError> {
    if run.options.io_mode == FileIoMode::Mmap && run.timing.threads > 1 {
        // fio 3.33 dies (SIGFPE, heap corruption) when several jobs map the same files.
        return Err(IoError::User(
            "--file-io-mode mmap: fio's mmap engine crashes when several threads share the \
             files; use --threads 1"
                .into(),
        ));
    }
    let version = check::fio_version()?;
    match run.files {
        Files::Prepared => drop(files::TestFiles::prepared(run.options, run.dir)?),
        Files::Temporary | Files::Kept => check::check_dir(run.dir, run.options)?,
    }
    Ok(version)
}

/// Lays out the files of `o` in `dir` and leaves them (sysbench's fileio `prepare`), after the
/// checks of [`preflight`] but fio's version; the bytes each file had before, to say which
/// were created, extended or reused.
pub fn prepare(o: &FileIoOptions, dir: &Path, stop: &AtomicBool) -> Result<Vec<u64>, IoError> {
    check::fio_version()?;
    check::check_dir(dir, o)?;
    let before = (0..o.num)
        .map(|i| std::fs::metadata(dir.join(job::file_name(i))).map_or(0, |m| m.len()))
        .collect();
    drop(files::TestFiles::lay_out(o, dir, true, stop)?);
    Ok(before)
}

/// Lays out the files, runs the measured phase (each interval handed to `on_sample` as fio
/// reports it) and removes the files (also on an error or when `stop` is raised).
pub fn measure(
    run: &IoRun<'_>,
    stop: &AtomicBool,
    mut on_sample: impl FnMut(&Sample) -> Result<(), IoError>,
) -> Result<FioMeasured, IoError> {
    preflight(run)?;
    let files = match run.files {
        Files::Prepared => files::TestFiles::prepared(run.options, run.dir)?,
        Files::Temporary | Files::Kept => {
            let keep = run.files == Files::Kept;
            files::TestFiles::lay_out(run.options, run.dir, keep, stop)?
        }
    };
    let args = job::run_args(run.options, &run.timing, run.dir);
    let mut snaps: Vec<Snapshot> = Vec::new();
    let mut last = Value::Null;
    spawn::run_reporting(&args, stop, |v| {
        let s = Snapshot::parse(&v).map_err(|e| IoError::Fio(format!("fio's report: {e}")))?;
        let prev = snaps.last().cloned().unwrap_or_default();
        on_sample(&report::sample(&prev, &s))?;
        snaps.push(s);
        last = v;
        Ok(())
    })?;
    drop(files);
    let end = snaps
        .last()
        .ok_or_else(|| IoError::Fio("fio wrote no report".into()))?;
    let command = std::iter::once("fio".to_string()).chain(args).collect();
    let samples = report::samples(&snaps, run.timing.interval_s);
    let mut phase = report::phase(run.timing.threads, end, samples, command);
    let facts = qpslab_core::stability::Facts {
        client_cpus: std::thread::available_parallelism().map_or(1.0, |n| n.get() as f64),
        others_cpu_share: None,
        paced_by_input: false,
    };
    phase.stability = Some(qpslab_core::stability::judge(&phase, &facts));
    Ok(FioMeasured {
        phase,
        fio_report: last,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cell_dirs_are_under_the_lab_and_safe() {
        let d = cell_dir(Path::new("/lab"), "my study", "ext4/noatime");
        assert_eq!(d, Path::new("/lab/io/my_study/ext4_noatime"));
    }
}
