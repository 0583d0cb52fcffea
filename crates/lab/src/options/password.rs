//! Passwords kept out of command lines and spec files: a password file holds the password on
//! its first line, as `--password-file` and a spec's `password_file` read it. It must be a
//! regular file of at most [`PASSWORD_FILE_LIMIT`] bytes (a FIFO or a device is refused).

use qpslab_core::input::{self, InputError, PASSWORD_FILE_LIMIT};
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

impl PasswordFileError {
    fn new(path: &Path, e: InputError) -> Self {
        let source = match e {
            InputError::Io { source, .. } => source,
            // The reason without the path, which the message names already.
            InputError::NotFile { kind, .. } => {
                std::io::Error::other(format!("is {kind}, not a regular file"))
            }
            InputError::TooLarge { limit, .. } => std::io::Error::other(format!(
                "is larger than {}, the limit for a password file",
                input::size_text(limit)
            )),
            InputError::NotText { .. } => std::io::Error::other("is not UTF-8 text"),
        };
        PasswordFileError {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// The first line of `path`, without its line ending. The file must not be readable by other
/// users when it holds a secret; that is the user's to arrange, as with `~/.my.cnf`.
pub fn read_password_file(path: &Path) -> Result<String, PasswordFileError> {
    let text = input::read_text(path, "a password file", PASSWORD_FILE_LIMIT)
        .map_err(|e| PasswordFileError::new(path, e))?;
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
        let e = read_password_file(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "password file /dev/zero: is a character device, not a regular file"
        );
    }
}
