//! Files the user names for output (`--out`, `--json`, `--cnf`): checked before anything
//! connects or runs, so a typo costs nothing, and written whole or not at all
//! (`qpslab_core::files::write_atomically`).

use crate::error::user;
use anyhow::Result;
use std::path::Path;

/// FILE (given with `flag`) must be in a directory that exists and not be a directory; with
/// `replace` false it must not exist either. `-` (standard output) is the caller's to handle.
pub fn check(flag: &str, path: &Path, replace: bool) -> Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(user(format!(
            "{flag} {}: directory {} does not exist",
            path.display(),
            dir.display()
        )));
    }
    if path.is_dir() {
        return Err(user(format!("{flag} {}: is a directory", path.display())));
    }
    if !replace && path.exists() {
        return Err(user(format!(
            "{flag} {}: exists; use --force to replace it",
            path.display()
        )));
    }
    Ok(())
}

/// Writes `text` to `path` whole (temporary file, sync, rename); a failure names the flag (a
/// path the user chose: their error to fix, exit 2).
pub fn write(flag: &str, path: &Path, text: &str) -> Result<()> {
    qpslab_core::files::write_atomically(path, text.as_bytes())
        .map_err(|e| user(format!("{flag} {}: {e}", path.display())))
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
}
