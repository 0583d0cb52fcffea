//! The test files of one run: laid out before the measured phase (sysbench's `prepare`) and
//! removed when the run ends, also on an error or a signal, unless they are to be kept; or
//! laid out by an earlier `prepare` ([`TestFiles::prepared`]) and left as they are, as
//! sysbench's fileio `prepare`, `run` and `cleanup` share them.

use super::job::{file_name, layout_args};
use super::{spawn, IoError};
use qpslab_core::fileio::FileIoOptions;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// The laid-out files; dropping it removes them (only `test_file.N`, never anything else).
#[derive(Debug)]
pub struct TestFiles {
    dir: PathBuf,
    num: u32,
    keep: bool,
}

impl TestFiles {
    /// Lays out the files of `o` in `dir` with fio; `stop` ends it early.
    pub fn lay_out(
        o: &FileIoOptions,
        dir: &Path,
        keep: bool,
        stop: &AtomicBool,
    ) -> Result<TestFiles, IoError> {
        let files = TestFiles {
            dir: dir.to_path_buf(),
            num: o.num,
            keep,
        };
        spawn::run_quiet(&layout_args(o, dir), stop)?;
        Ok(files)
    }

    /// The files of `o` in `dir` as an earlier prepare left them: each there, at least its
    /// size; they are neither written first nor removed after. A user error names the first
    /// missing or short one.
    pub fn prepared(o: &FileIoOptions, dir: &Path) -> Result<TestFiles, IoError> {
        let files = TestFiles {
            dir: dir.to_path_buf(),
            num: o.num,
            keep: true,
        };
        for p in files.paths() {
            let len = std::fs::metadata(&p).map(|m| m.len()).unwrap_or(0);
            if len < o.file_size() {
                return Err(IoError::User(format!(
                    "{}: {} (the files are {} bytes each): lay them out first with fileio's \
                     prepare and the same --file-num and --file-total-size",
                    p.display(),
                    if p.exists() {
                        format!("{len} bytes")
                    } else {
                        "not there".into()
                    },
                    o.file_size()
                )));
            }
        }
        Ok(files)
    }

    /// Removes the files of `o` in `dir` (sysbench's fileio `cleanup`: `test_file.0` to
    /// `test_file.N-1`, nothing else); how many there were.
    pub fn remove(o: &FileIoOptions, dir: &Path) -> Result<u32, IoError> {
        let files = TestFiles {
            dir: dir.to_path_buf(),
            num: o.num,
            keep: true,
        };
        let mut removed = 0;
        for p in files.paths() {
            match std::fs::remove_file(&p) {
                Ok(()) => removed += 1,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(IoError::User(format!("{}: {e}", p.display()))),
            }
        }
        Ok(removed)
    }

    /// The paths of the files.
    pub fn paths(&self) -> impl Iterator<Item = PathBuf> + '_ {
        (0..self.num).map(|i| self.dir.join(file_name(i)))
    }
}

impl Drop for TestFiles {
    fn drop(&mut self) {
        if self.keep {
            return;
        }
        for p in self.paths() {
            let _ = std::fs::remove_file(p);
        }
    }
}
