//! The lab's error types.

use qpslab_core::fault::{user_if, Blame, Fault};
use std::path::PathBuf;

/// A study spec that cannot be used. Every variant is the user's mistake.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    /// The file could not be read.
    #[error("cannot read study spec {path}: {source}")]
    Read {
        /// The spec's path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a spec to read: not a regular file, too large, not text.
    #[error("study spec {0}")]
    Input(qpslab_core::input::InputError),
    /// A key the spec format does not know, with where it is and what was probably meant.
    #[error("{file}: line {line}: unknown key `{key}`{}{}", .section.as_ref().map_or(String::new(), |s| format!(" in {s}")), .suggestion.as_ref().map_or(String::new(), |s| format!("; did you mean `{s}`?")))]
    UnknownKey {
        /// The spec's file name.
        file: String,
        /// 1-based line.
        line: usize,
        /// The key as written.
        key: String,
        /// The table it is in, e.g. `[sweep]`, when known.
        section: Option<String>,
        /// The valid key nearest to it.
        suggestion: Option<String>,
    },
    /// TOML syntax or a value of the wrong type.
    #[error("{file}: line {line}: {message}")]
    Invalid {
        /// The spec's file name.
        file: String,
        /// 1-based line (0 when unknown).
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A value that has the right type but cannot be used.
    #[error("{file}: {message}")]
    Value {
        /// The spec's file name.
        file: String,
        /// What is wrong and where.
        message: String,
    },
    /// The spec expands to no cell at all.
    #[error("{file}: the study has no cells: {why}")]
    Empty {
        /// The spec's file name.
        file: String,
        /// Which list is empty.
        why: String,
    },
}

impl Blame for SpecError {
    /// Always the user's: the spec is theirs to fix.
    fn fault(&self) -> Fault {
        Fault::User
    }
}

/// A run option's value, or a combination of values, that cannot be used: always the user's
/// mistake (exit 2). The message names the option as it was given (`--table-size: ...` for a
/// flag, `table_size: ...` for a spec key), except for a value read on its own by
/// `options::value`, whose message is the tail of a sentence whose subject is the option
/// ("must be at least 1"); the option table names the option in front of it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct OptionError(pub String);

impl From<String> for OptionError {
    fn from(message: String) -> OptionError {
        OptionError(message)
    }
}

/// The message, for the option table's own checks, which compose messages as text.
impl From<OptionError> for String {
    fn from(e: OptionError) -> String {
        e.0
    }
}

/// Why a study stopped.
#[derive(Debug, thiserror::Error)]
pub enum StudyError {
    /// The spec is unusable.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// `resume` of a study whose spec changed since it was created.
    #[error("study '{name}' was created from a different spec: {changes}; rename the study (name = ...) to start a new one, or restore the old spec to resume")]
    SpecChanged {
        /// The study.
        name: String,
        /// What differs, e.g. `[sweep].threads, [[variant]] 2`.
        changes: String,
    },
    /// `resume` of a study that was never created, or `run` of one that exists.
    #[error(transparent)]
    Store(#[from] qpslab_store::Error),
    /// The user stopped the study (Ctrl-C); finished cells are kept.
    #[error("study '{0}' interrupted; finished cells are kept: continue with `qpslab lab resume`")]
    Interrupted(String),
    /// An OS-level toggle could not be applied.
    #[error("{0}")]
    Os(String),
}

impl Blame for StudyError {
    /// True when the user's input is at fault (exit code 2).
    fn fault(&self) -> Fault {
        user_if(match self {
            StudyError::Spec(_) | StudyError::SpecChanged { .. } | StudyError::Os(_) => true,
            StudyError::Store(e) => matches!(
                e,
                qpslab_store::Error::StudyNotFound(_)
                    | qpslab_store::Error::StudyExists(_)
                    | qpslab_store::Error::StudyBusy { .. }
            ),
            StudyError::Interrupted(_) => false,
        })
    }
}
