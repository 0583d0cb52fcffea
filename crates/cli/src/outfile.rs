//! Files the user names for output (`--out`, `--export-*`, `--json`, `--cnf`, `--hlog`,
//! `--fio-json`): checked before anything connects or runs, so a typo costs nothing, and
//! written here, the one place every such path goes through. What the path names decides how:
//!
//! - `-`, or a path that is this process's standard output (`/dev/stdout`): standard output;
//! - a FIFO or a character or block device (`/dev/stderr`, a terminal, `/dev/null`): written
//!   into, in place; it is never replaced, since it is not the user's file to replace;
//! - a regular file or a new path: written whole or not at all, through a temporary file beside
//!   it and a rename (`qpslab_core::files::write_atomically`); a symbolic link to a regular file
//!   is followed, so the file it names is replaced and the link stays.
//!
//! A directory, a socket and a link to nothing are refused, each with one line.

use crate::error::user;
use anyhow::Result;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// Where an output path sends what is written to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sink {
    /// Standard output (`-`, or a path naming it).
    Stdout,
    /// A FIFO or a device, written into in place.
    Into(PathBuf),
    /// A regular file (the link's target for a link) or a new path, replaced whole.
    Whole(PathBuf),
}

/// What `path` (given with `flag`) names, or the user's error saying why it cannot take
/// output.
pub fn sink(flag: &str, path: &Path) -> Result<Sink> {
    if path == Path::new("-") {
        return Ok(Sink::Stdout);
    }
    let why = |why: &str| user(format!("{flag} {}: {why}", path.display()));
    let bad = |w: &str| Err(why(w));
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if std::fs::symlink_metadata(path).is_ok() {
                return bad("is a symbolic link to nothing; name a file");
            }
            let dir = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            if !dir.is_dir() {
                return bad(&format!("directory {} does not exist", dir.display()));
            }
            return Ok(Sink::Whole(path.to_path_buf()));
        }
        Err(e) => return bad(&e.to_string()),
    };
    if is_stdout(&meta) {
        return Ok(Sink::Stdout);
    }
    let t = meta.file_type();
    if t.is_dir() {
        return bad("is a directory");
    }
    if t.is_fifo() || t.is_char_device() || t.is_block_device() {
        return Ok(Sink::Into(path.to_path_buf()));
    }
    if !t.is_file() {
        return bad("is a socket; name a file, a FIFO, a device or - (standard output)");
    }
    let linked = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if linked {
        let target = path
            .canonicalize()
            .map_err(|e| why(&format!("cannot follow the link: {e}")))?;
        return Ok(Sink::Whole(target));
    }
    Ok(Sink::Whole(path.to_path_buf()))
}

/// True when `meta` is the file this process's standard output is (the same device and
/// inode): `/dev/stdout`, `/proc/self/fd/1`, the pipe or terminal it is connected to.
fn is_stdout(meta: &std::fs::Metadata) -> bool {
    use std::os::fd::AsFd;
    use std::os::unix::fs::MetadataExt;
    let Ok(fd) = std::io::stdout().as_fd().try_clone_to_owned() else {
        return false;
    };
    File::from(fd)
        .metadata()
        .is_ok_and(|out| out.dev() == meta.dev() && out.ino() == meta.ino())
}

/// FILE (given with `flag`) must be able to take output (see the module docs); with `replace`
/// false, a file that exists is refused (a FIFO or a device is written into, not replaced).
pub fn check(flag: &str, path: &Path, replace: bool) -> Result<()> {
    match sink(flag, path)? {
        Sink::Whole(p) if !replace && p.exists() => Err(user(format!(
            "{flag} {}: exists; use --force to replace it",
            path.display()
        ))),
        _ => Ok(()),
    }
}

/// Writes `bytes` where `path` sends them (see the module docs); a failure names the flag (a
/// path the user chose: their error to fix, exit 2).
pub fn write(flag: &str, path: &Path, bytes: impl AsRef<[u8]>) -> Result<()> {
    let bytes = bytes.as_ref();
    let failed = |e: std::io::Error| user(format!("{flag} {}: {e}", path.display()));
    match sink(flag, path)? {
        Sink::Stdout => {
            let mut out = std::io::stdout().lock();
            out.write_all(bytes)
                .and_then(|()| out.flush())
                .map_err(failed)
        }
        Sink::Into(p) => into(&p)
            .and_then(|mut f| f.write_all(bytes))
            .map_err(failed),
        Sink::Whole(p) => qpslab_core::files::write_atomically(&p, bytes).map_err(failed),
    }
}

/// Opens a FIFO or a device to write into it: never created, never truncated.
pub fn into(path: &Path) -> std::io::Result<File> {
    std::fs::OpenOptions::new().write(true).open(path)
}

/// Says on standard error that `what` was written to `path`, unless it went to standard
/// output (where the document itself is the answer, and the line would only mislead).
pub fn tell(what: &str, path: &Path) {
    if matches!(sink("", path), Ok(Sink::Stdout)) {
        return;
    }
    eprintln!("{what} written to {}", path.display());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_file_in_an_existing_directory_is_accepted() {
        let dir = tempfile::tempdir().unwrap();
        let existing = dir.path().join("x.log");
        std::fs::write(&existing, "").unwrap();
        assert!(check("--out", &existing, false).is_err());
        assert!(check("--out", &existing, true).is_ok());
        assert!(check("--out", &dir.path().join("new.log"), false).is_ok());
        let e = check("--cnf", &dir.path().join("no/new.log"), true).unwrap_err();
        assert!(e.to_string().starts_with("--cnf "), "{e}");
        assert!(check("--out", dir.path(), true).is_err());
        write("--out", &existing, "two").unwrap();
        assert_eq!(std::fs::read_to_string(&existing).unwrap(), "two");
        assert!(write("--out", &dir.path().join("no/x"), "x").is_err());
    }

    #[test]
    fn a_device_is_written_into_and_a_link_keeps_its_place() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(sink("--out", Path::new("-")).unwrap(), Sink::Stdout);
        // /dev/null exists on every Linux: written into, never replaced, even with no --force.
        let null = Path::new("/dev/null");
        // (It is standard output itself when the tests run with their output thrown away.)
        let s = sink("--out", null).unwrap();
        assert!(s == Sink::Into(null.into()) || s == Sink::Stdout, "{s:?}");
        check("--out", null, false).unwrap();
        write("--out", null, "x").unwrap();
        assert!(std::fs::metadata(null)
            .unwrap()
            .file_type()
            .is_char_device());
        // A link to a file: the file is replaced, the link stays a link.
        let file = dir.path().join("real.txt");
        std::fs::write(&file, "old").unwrap();
        let link = dir.path().join("link.txt");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        write("--out", &link, "new").unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "new");
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        let dangling = dir.path().join("dangling");
        std::os::unix::fs::symlink(dir.path().join("none"), &dangling).unwrap();
        let e = sink("--out", &dangling).unwrap_err().to_string();
        assert!(
            e.ends_with("is a symbolic link to nothing; name a file"),
            "{e}"
        );
    }
}
