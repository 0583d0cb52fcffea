//! Reading a file the user names (a script, a study spec, an option file, a password file):
//! regular files only, and never more than a limit.
//!
//! A FIFO, a device or a directory where a file is expected is refused before a byte is read,
//! and the file is opened with `O_NONBLOCK`, so a FIFO swapped in after the check cannot block
//! the open either. At most `limit + 1` bytes are read: `/dev/zero` named as a script, or a
//! runaway generated file, ends in one clear line naming the file and the limit, not in a
//! process that grows until the kernel kills it. The limits below are far above any real
//! file of their kind.
//!
//! ```
//! use qpslab_core::input::{read_text, InputError, SCRIPT_LIMIT};
//! let e = read_text("/dev/null".as_ref(), "a script", SCRIPT_LIMIT).unwrap_err();
//! assert_eq!(e.to_string(), "/dev/null is a character device, not a regular file");
//! assert!(matches!(e, InputError::NotFile { .. }));
//! ```

use std::fs::{File, Metadata, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

const MIB: u64 = 1 << 20;

/// The largest script (`--script`, `--init-sql`) read.
pub const SCRIPT_LIMIT: u64 = 64 * MIB;
/// The largest study spec read.
pub const SPEC_LIMIT: u64 = 4 * MIB;
/// The largest single option file (`--defaults-file`, `~/.my.cnf`, a profile, an `!include`).
pub const OPTION_FILE_LIMIT: u64 = MIB;
/// The most bytes of option files one read takes, its `!include`s and `!includedir`s together.
pub const OPTION_FILES_TOTAL: u64 = 16 * MIB;
/// The largest password file read (only its first line is used).
pub const PASSWORD_FILE_LIMIT: u64 = 64 << 10;
/// The largest certificate file (`--ssl-ca`) read.
pub const PEM_LIMIT: u64 = 4 * MIB;

/// A file that cannot be read as one the user named.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// Opening or reading failed (missing, no permission, an I/O error).
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file as named.
        path: PathBuf,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// Not a regular file: a directory, a FIFO, a device or a socket.
    #[error("{} is {kind}, not a regular file", path.display())]
    NotFile {
        /// The file as named.
        path: PathBuf,
        /// What it is instead, with its article ("a FIFO (named pipe)").
        kind: &'static str,
    },
    /// Larger than the limit for its kind.
    #[error("{} is larger than {}, the limit for {what}", path.display(), size_text(*limit))]
    TooLarge {
        /// The file as named.
        path: PathBuf,
        /// What the file is for, with its article ("a script").
        what: &'static str,
        /// The limit, bytes.
        limit: u64,
    },
    /// Not UTF-8 text.
    #[error("{} is not UTF-8 text", path.display())]
    NotText {
        /// The file as named.
        path: PathBuf,
    },
}

/// Reads the regular file at `path` as UTF-8 text of at most `limit` bytes; `what` names its
/// kind in the error for a file too large ("a script").
pub fn read_text(path: &Path, what: &'static str, limit: u64) -> Result<String, InputError> {
    let bytes = read_bytes(path, what, limit)?;
    String::from_utf8(bytes).map_err(|_| InputError::NotText {
        path: path.to_path_buf(),
    })
}

/// Reads the regular file at `path` of at most `limit` bytes; `what` as for [`read_text`].
pub fn read_bytes(path: &Path, what: &'static str, limit: u64) -> Result<Vec<u8>, InputError> {
    let io = |source| InputError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = open_regular(path)?;
    let mut bytes = Vec::new();
    // One byte past the limit tells a file of exactly `limit` bytes from a larger one.
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > limit {
        return Err(InputError::TooLarge {
            path: path.to_path_buf(),
            what,
            limit,
        });
    }
    Ok(bytes)
}

/// Opens the regular file at `path` for reading; anything else is refused without blocking.
pub fn open_regular(path: &Path) -> Result<File, InputError> {
    let io = |source| InputError::Io {
        path: path.to_path_buf(),
        source,
    };
    // The path is looked at before it is opened: opening some devices has effects (a tape
    // rewinds), and opening a FIFO without a writer would wait for one.
    check_regular(path, &std::fs::metadata(path).map_err(io)?)?;
    // Should the path have changed since, O_NONBLOCK keeps a FIFO's open from blocking and
    // the second look refuses it; on a regular file the flag changes nothing.
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(io)?;
    check_regular(path, &file.metadata().map_err(io)?)?;
    Ok(file)
}

fn check_regular(path: &Path, meta: &Metadata) -> Result<(), InputError> {
    match not_a_file(meta) {
        None => Ok(()),
        Some(kind) => Err(InputError::NotFile {
            path: path.to_path_buf(),
            kind,
        }),
    }
}

/// What a path whose metadata is `meta` names when it is not a regular file (`a directory`,
/// `a FIFO (named pipe)`, `a character device`, ...); none for a regular file.
pub fn not_a_file(meta: &Metadata) -> Option<&'static str> {
    let t = meta.file_type();
    Some(if t.is_file() {
        return None;
    } else if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a file"
    })
}

/// The most characters of a statement or a line of input that an error message quotes.
pub const EXCERPT_CHARS: usize = 200;

/// `text` as an error message quotes it: whole when it has at most [`EXCERPT_CHARS`]
/// characters, else its first ones and `…`, so a 100 MB statement makes a short message.
pub fn excerpt(text: &str) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(EXCERPT_CHARS) {
        None => text.into(),
        Some((end, _)) => format!("{}…", &text[..end]).into(),
    }
}

/// `64 MiB`, `512 KiB`, `100 bytes`.
pub fn size_text(bytes: u64) -> String {
    match bytes {
        b if b >= MIB && b % MIB == 0 => format!("{} MiB", b / MIB),
        b if b >= 1024 && b % 1024 == 0 => format!("{} KiB", b / 1024),
        b => format!("{b} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn mkfifo(path: &Path) {
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    }

    #[test]
    fn a_file_within_the_limit_is_read_whole() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("a.sql");
        std::fs::write(&f, "SELECT 1;\n").unwrap();
        assert_eq!(read_text(&f, "a script", 10).unwrap(), "SELECT 1;\n");
        let e = read_text(&f, "a script", 9).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "{} is larger than 9 bytes, the limit for a script",
                f.display()
            )
        );
    }

    #[test]
    fn devices_fifos_and_directories_are_refused_at_once() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("my.cnf");
        mkfifo(&fifo);
        let started = Instant::now();
        let e = read_text(&fifo, "an option file", 10)
            .unwrap_err()
            .to_string();
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(
            e.ends_with("is a FIFO (named pipe), not a regular file"),
            "{e}"
        );
        let e = read_text(d.path(), "a spec", 10).unwrap_err().to_string();
        assert!(e.ends_with("is a directory, not a regular file"), "{e}");
        let e = read_bytes(Path::new("/dev/zero"), "a script", 10).unwrap_err();
        assert_eq!(
            e.to_string(),
            "/dev/zero is a character device, not a regular file"
        );
    }

    #[test]
    fn errors_name_the_file() {
        let e = read_text(Path::new("/nonexistent/x"), "a script", 10).unwrap_err();
        assert!(
            e.to_string().starts_with("cannot read /nonexistent/x: "),
            "{e}"
        );
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("bin");
        std::fs::write(&f, [0xff, 0xfe]).unwrap();
        let e = read_text(&f, "a script", 10).unwrap_err().to_string();
        assert!(e.ends_with("bin is not UTF-8 text"), "{e}");
    }

    #[test]
    fn excerpts_cut_long_text_on_a_character() {
        assert_eq!(excerpt("SELECT 1"), "SELECT 1");
        let long = "é".repeat(EXCERPT_CHARS + 1);
        let cut = excerpt(&long);
        assert_eq!(cut.chars().count(), EXCERPT_CHARS + 1);
        assert!(cut.ends_with("é…"));
        assert_eq!(
            excerpt(&long[..EXCERPT_CHARS * 2]),
            &long[..EXCERPT_CHARS * 2]
        );
    }

    #[test]
    fn sizes_read_in_the_largest_whole_unit() {
        assert_eq!(size_text(64 << 20), "64 MiB");
        assert_eq!(size_text(64 << 10), "64 KiB");
        assert_eq!(size_text(1000), "1000 bytes");
    }
}
