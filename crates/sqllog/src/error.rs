//! The reader's one error type.

/// Why a log cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// The bytes are not a log of the requested type (the reason names the first line,
    /// shortened). The user's mistake: a wrong file or a wrong `--log-type`.
    #[error("{0}")]
    UnknownFormat(String),
    /// Reading failed (a runtime failure, not the user's).
    #[error("reading the log: {0}")]
    Io(#[from] std::io::Error),
    /// The log file could not be opened (missing, unreadable): the user's mistake.
    #[error("cannot open {path}: {source}")]
    Open {
        /// The path as given.
        path: String,
        /// The operating system's reason.
        source: std::io::Error,
    },
}

impl LogError {
    /// True when the user can fix it by naming another file or log type (exit 2); false
    /// for runtime failures (exit 1).
    pub fn is_user_error(&self) -> bool {
        !matches!(self, LogError::Io(_))
    }
}

/// The first line of unreadable input, shortened and made printable for an error message.
pub(crate) fn shorten(line: &[u8]) -> String {
    const MAX: usize = 60;
    let text = String::from_utf8_lossy(&line[..line.len().min(MAX * 4)]);
    let mut out: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(MAX)
        .collect();
    out = out.trim_end().to_string();
    if text.chars().count() > MAX {
        out.push('…');
    }
    out
}
