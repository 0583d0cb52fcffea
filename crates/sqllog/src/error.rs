//! The reader's one error type.

use qpslab_core::fault::{user_if, Blame, Fault};

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
    /// A line, or an entry's statement or header, longer than the reader's bound
    /// ([`crate::MAX_STATEMENT`]): not a log, or not one the reader takes. The user's mistake.
    #[error("{}{line}: {what} longer than {} MiB, the limit of the log reader", .file.as_ref().map_or_else(|| "line ".to_string(), |f| format!("{f}:")), .limit >> 20)]
    TooLong {
        /// The log's name, when the reader knows it ([`LogError::in_file`]).
        file: Option<String>,
        /// The line (of the entry, for a statement or header), from 1.
        line: u64,
        /// What is too long: `a line`, `a statement`, `an entry's header`.
        what: &'static str,
        /// The bound, bytes.
        limit: usize,
    },
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
    /// The error with the log's name, for the errors that name a line of it.
    pub fn in_file(self, name: &str) -> LogError {
        match self {
            LogError::TooLong {
                file: None,
                line,
                what,
                limit,
            } => LogError::TooLong {
                file: Some(name.to_string()),
                line,
                what,
                limit,
            },
            e => e,
        }
    }
}

impl Blame for LogError {
    /// True when the user can fix it by naming another file or log type (exit 2); false
    /// for runtime failures (exit 1).
    fn fault(&self) -> Fault {
        user_if(!matches!(self, LogError::Io(_)))
    }
}

/// A [`LogError`] met while digesting the log `name`, in the words `qpslab digest` reports it:
/// the user's mistakes lead with the log's name (a line too long names it itself); a failure
/// to read says what was being done, with the reader's error as its source.
#[derive(Debug)]
pub struct Digesting {
    /// The log as named on the command line (`-`: standard input).
    pub name: String,
    /// What went wrong, with the log's name where it names a line.
    pub error: LogError,
}

impl LogError {
    /// This error, met digesting the log `name`.
    pub fn digesting(self, name: &str) -> Digesting {
        Digesting {
            name: name.to_string(),
            error: self.in_file(name),
        }
    }
}

impl std::fmt::Display for Digesting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.error {
            // It names the file and the line itself.
            e @ LogError::TooLong { .. } => write!(f, "{e}"),
            e if e.is_user_error() => write!(f, "{}: {e}", self.name),
            _ => write!(f, "digesting {}", self.name),
        }
    }
}

impl std::error::Error for Digesting {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        // The user's mistakes are one message; a failure to read keeps the reader's error.
        (!self.error.is_user_error()).then_some(&self.error as _)
    }
}

impl Blame for Digesting {
    fn fault(&self) -> Fault {
        self.error.fault()
    }
}

/// What the first line of unreadable input is, for an error message: `its first line is
/// "..."` (shortened), or `it starts with binary data`.
pub(crate) fn describe(line: &[u8]) -> String {
    match shorten(line) {
        Some(text) => format!("its first line is \"{text}\""),
        None => "it starts with binary data".into(),
    }
}

/// The line shortened for an error message, `None` when it is not text.
pub(crate) fn shorten(line: &[u8]) -> Option<String> {
    const MAX: usize = 60;
    let head = &line[..line.len().min(MAX * 4)];
    let text = match std::str::from_utf8(head) {
        Ok(t) => t,
        // a multi-byte character cut by the window is still text
        Err(e) if e.error_len().is_none() => {
            std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or("")
        }
        Err(_) => return None,
    };
    if text.chars().any(|c| c.is_control() && c != '\t') {
        return None;
    }
    let mut out: String = text
        .chars()
        .map(|c| if c == '\t' { ' ' } else { c })
        .take(MAX)
        .collect();
    out = out.trim_end().to_string();
    if line.len() > out.len() {
        out.push('…');
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn digesting_names_the_log_once_and_keeps_only_a_read_failures_source() {
        let user = LogError::UnknownFormat("not a slow log".into()).digesting("s.log");
        assert_eq!(user.to_string(), "s.log: not a slow log");
        assert!(user.source().is_none() && user.is_user_error());
        let long = LogError::TooLong {
            file: None,
            line: 3,
            what: "a line",
            limit: 1 << 20,
        };
        let long = long.digesting("s.log");
        assert!(
            long.to_string()
                .starts_with("s.log:3: a line longer than 1 MiB"),
            "{long}"
        );
        let io = LogError::Io(std::io::Error::other("disk gone")).digesting("s.log");
        assert_eq!(io.to_string(), "digesting s.log");
        let source = io.source().map(|s| s.to_string());
        assert_eq!(source.as_deref(), Some("reading the log: disk gone"));
        assert!(!io.is_user_error());
    }
}
