//! sysbench's fileio workload (`qpslab io MODE`, `workload = "fileio"` in a study): its options
//! by sysbench's names and defaults, and what an I/O phase adds to a [`crate::PhaseResult`].
//!
//! The workload itself runs through fio; these types only say what was asked and what came out.

use crate::units::size_text;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// fileio options that cannot be used: every variant is the user's mistake.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FileIoError {
    /// A name that is not one of an option's values.
    #[error("must be one of {}, not '{given}'", .known.join(", "))]
    UnknownName {
        /// The names the option knows.
        known: &'static [&'static str],
        /// The name as given.
        given: String,
    },
    /// Each file would be smaller than one block.
    #[error(
        "file_total_size: {} over {files} files is {file_size} bytes per file, less than one \
         block of file_block_size {block_size}",
        size_text(*.total_size)
    )]
    FileSmallerThanBlock {
        /// `file_total_size` in bytes.
        total_size: u64,
        /// `file_num`.
        files: u32,
        /// Bytes per file.
        file_size: u64,
        /// `file_block_size`.
        block_size: u64,
    },
    /// `O_DIRECT` with a block size that is not a multiple of 512.
    #[error("file_block_size: {block_size} is not a multiple of 512, which direct I/O needs")]
    Unaligned {
        /// `file_block_size`.
        block_size: u64,
    },
}

/// Generates a string-named enum: its names, `Display`, `FromStr` and serde as the name.
macro_rules! named {
    ($(#[$m:meta])* $ty:ident { $($(#[$vm:meta])* $v:ident = $name:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
        pub enum $ty {
            $($(#[$vm])* #[serde(rename = $name)] $v),+
        }

        impl $ty {
            /// Every value, by its name.
            pub const NAMES: &'static [&'static str] = &[$($name),+];

            /// Its sysbench name.
            pub fn name(self) -> &'static str {
                match self { $($ty::$v => $name),+ }
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }

        impl FromStr for $ty {
            type Err = FileIoError;
            fn from_str(s: &str) -> Result<Self, FileIoError> {
                match s {
                    $($name => Ok($ty::$v),)+
                    _ => Err(FileIoError::UnknownName {
                        known: Self::NAMES,
                        given: s.to_string(),
                    }),
                }
            }
        }
    };
}

named!(
    /// `--file-test-mode`: what the threads do to the files.
    FileTestMode {
        /// Sequential write.
        SeqWr = "seqwr",
        /// Sequential rewrite.
        SeqRewr = "seqrewr",
        /// Sequential read.
        SeqRd = "seqrd",
        /// Random read.
        RndRd = "rndrd",
        /// Random write.
        RndWr = "rndwr",
        /// Random read and write (`--file-rw-ratio` reads per write).
        RndRw = "rndrw",
    }
);

named!(
    /// `--file-io-mode`: how requests are issued.
    FileIoMode {
        /// One blocking request at a time per thread.
        Sync = "sync",
        /// Linux native AIO, `--file-async-backlog` requests in flight per thread.
        Async = "async",
        /// Through a memory mapping of the file.
        Mmap = "mmap",
    }
);

named!(
    /// `--file-fsync-mode`: the call that flushes a file.
    FsyncMode {
        /// `fsync(2)`.
        Fsync = "fsync",
        /// `fdatasync(2)`.
        Fdatasync = "fdatasync",
    }
);

named!(
    /// `--file-extra-flags`: flags the files are opened with.
    ExtraFlag {
        /// `O_DIRECT`: bypass the page cache.
        Direct = "direct",
        /// `O_SYNC`.
        Sync = "sync",
        /// `O_DSYNC`.
        Dsync = "dsync",
    }
);

impl FileTestMode {
    /// Whether the mode reads.
    pub fn reads(self) -> bool {
        matches!(
            self,
            FileTestMode::SeqRd | FileTestMode::RndRd | FileTestMode::RndRw
        )
    }

    /// Whether the mode writes.
    pub fn writes(self) -> bool {
        !matches!(self, FileTestMode::SeqRd | FileTestMode::RndRd)
    }
}

/// sysbench fileio's options, with its defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FileIoOptions {
    /// `--file-test-mode` (the `MODE` of `qpslab io`).
    pub mode: FileTestMode,
    /// `--file-num`: files (128).
    pub num: u32,
    /// `--file-total-size`: bytes over all files (2 GiB).
    pub total_size: u64,
    /// `--file-block-size`: bytes per request (16384).
    pub block_size: u64,
    /// `--file-io-mode` (sync).
    pub io_mode: FileIoMode,
    /// `--file-async-backlog`: requests in flight per thread in async mode (128).
    pub async_backlog: u32,
    /// `--file-fsync-freq`: flush after this many writes, 0 never (100).
    pub fsync_freq: u32,
    /// `--file-fsync-all`: flush after every write (off).
    pub fsync_all: bool,
    /// `--file-fsync-end`: flush at the end of the test (on).
    pub fsync_end: bool,
    /// `--file-fsync-mode` (fsync).
    pub fsync_mode: FsyncMode,
    /// `--file-extra-flags` (none).
    pub extra_flags: Vec<ExtraFlag>,
    /// `--file-rw-ratio`: reads per write in rndrw (1.5).
    pub rw_ratio: f64,
}

impl Default for FileIoOptions {
    fn default() -> Self {
        FileIoOptions {
            mode: FileTestMode::RndRd,
            num: 128,
            total_size: 2 << 30,
            block_size: 16384,
            io_mode: FileIoMode::Sync,
            async_backlog: 128,
            fsync_freq: 100,
            fsync_all: false,
            fsync_end: true,
            fsync_mode: FsyncMode::Fsync,
            extra_flags: Vec::new(),
            rw_ratio: 1.5,
        }
    }
}

impl FileIoOptions {
    /// Bytes per file (the total split evenly, as sysbench does).
    pub fn file_size(&self) -> u64 {
        self.total_size / u64::from(self.num.max(1))
    }

    /// Checks the options together: at least a block per file, direct I/O's alignment.
    pub fn check(&self) -> Result<(), FileIoError> {
        if self.file_size() < self.block_size {
            return Err(FileIoError::FileSmallerThanBlock {
                total_size: self.total_size,
                files: self.num,
                file_size: self.file_size(),
                block_size: self.block_size,
            });
        }
        if self.extra_flags.contains(&ExtraFlag::Direct) && !self.block_size.is_multiple_of(512) {
            return Err(FileIoError::Unaligned {
                block_size: self.block_size,
            });
        }
        Ok(())
    }

    /// The label of the workload, `fileio rndrd`.
    pub fn label(&self) -> String {
        format!("fileio {}", self.mode)
    }
}

/// What an I/O phase measured besides events (I/O operations) and their latency.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct IoFigures {
    /// Read operations.
    pub read_ops: u64,
    /// Write operations.
    pub write_ops: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// MiB/s read over the phase.
    pub read_mib_s: f64,
    /// MiB/s written over the phase.
    pub write_mib_s: f64,
    /// Flushes (fsync/fdatasync) issued.
    pub fsyncs: u64,
    /// fio's version, `fio-3.33`.
    pub fio_version: String,
    /// The fio command that ran, one argument per item.
    pub fio_command: Vec<String>,
}

/// Bytes per MiB.
pub const MIB: f64 = 1024.0 * 1024.0;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_defaults_are_sysbenchs() {
        for n in FileTestMode::NAMES {
            assert_eq!(n.parse::<FileTestMode>().unwrap().name(), *n);
        }
        assert_eq!(
            "rndrw2".parse::<FileTestMode>().unwrap_err().to_string(),
            "must be one of seqwr, seqrewr, seqrd, rndrd, rndwr, rndrw, not 'rndrw2'"
        );
        let small = FileIoOptions {
            num: 4,
            total_size: 8 << 10,
            block_size: 16 << 10,
            ..FileIoOptions::default()
        };
        assert_eq!(
            small.check().unwrap_err().to_string(),
            "file_total_size: 8K over 4 files is 2048 bytes per file, less than one block of \
             file_block_size 16384"
        );
        let d = FileIoOptions::default();
        assert_eq!(d.file_size(), 16 << 20);
        assert_eq!(d.label(), "fileio rndrd");
        let json = serde_json::to_string(&d).unwrap();
        assert!(json.contains("\"rndrd\""), "{json}");
        assert_eq!(serde_json::from_str::<FileIoOptions>(&json).unwrap(), d);
        assert!(FileTestMode::RndRw.reads() && FileTestMode::RndRw.writes());
        assert!(!FileTestMode::SeqRd.writes() && !FileTestMode::SeqRewr.reads());
    }
}
