//! The test files of one run: laid out before the measured phase (sysbench's `prepare`) and
//! removed when the run ends, also on an error or a signal, unless they are to be kept.

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
