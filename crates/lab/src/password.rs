//! Passwords kept out of command lines and spec files: a password file holds the password on
//! its first line, as `--password-file` and a spec's `password_file` read it.

use std::path::{Path, PathBuf};

/// A password file that cannot be read (the user's to fix).
#[derive(Debug, thiserror::Error)]
#[error("password file {}: {source}", .path.display())]
pub struct PasswordFileError {
    /// The file.
    pub path: PathBuf,
    /// Why.
    pub source: std::io::Error,
}

/// The first line of `path`, without its line ending. The file must not be readable by other
/// users when it holds a secret; that is the user's to arrange, as with `~/.my.cnf`.
pub fn read_password_file(path: &Path) -> Result<String, PasswordFileError> {
    let text = std::fs::read_to_string(path).map_err(|source| PasswordFileError {
        path: path.to_path_buf(),
        source,
    })?;
    let first = text.lines().next().unwrap_or("");
    Ok(first.trim_end_matches('\r').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_line_only() {
        let dir = std::env::temp_dir().join(format!("qpslab-pw-{}", std::process::id()));
        std::fs::write(&dir, "p@ss word\r\nsecond\n").unwrap();
        assert_eq!(read_password_file(&dir).unwrap(), "p@ss word");
        std::fs::remove_file(&dir).unwrap();
        let e = read_password_file(Path::new("/nonexistent/pw"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("/nonexistent/pw"), "{e}");
    }
}
