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

/// Why a measured cell (or `qpslab run`'s phase) could not be executed.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// The server could not be reached.
    #[error("connecting to {target}: {source}")]
    Connect {
        /// The redacted target.
        target: String,
        /// The client's error.
        source: qpslab_wire::Error,
    },
    /// Checking, loading or dropping the dataset failed.
    #[error("dataset: {0}")]
    Dataset(#[from] qpslab_engine::prepare::PrepareError),
    /// The user's server lacks the dataset (or its database) and may not be changed by a run;
    /// the text names the command that prepares it.
    #[error("{0}")]
    Unprepared(String),
    /// The dataset would not fit on the sandbox's filesystem.
    #[error("{0}")]
    NoSpace(String),
    /// The workload options are invalid.
    #[error(transparent)]
    Workload(#[from] qpslab_engine::workload::WorkloadError),
    /// The phase failed or was interrupted.
    #[error(transparent)]
    Run(#[from] qpslab_engine::RunError),
    /// The settings a cell's actions change could not be recorded, or the server still holds
    /// those a killed process changed.
    #[error(transparent)]
    Restore(#[from] crate::server::restore::RestoreError),
    /// A log that cannot be replayed, or a database it needs that the target lacks.
    #[error("{0}")]
    Replay(String),
    /// A log that could not be read (a runtime failure).
    #[error("{0}")]
    Log(String),
    /// The server stopped answering within the statement timeout, or stayed gone past the
    /// reconnection limit (a runtime failure).
    #[error("{0}")]
    Stalled(String),
    /// Telemetry could not be read before or after the phase.
    #[error("telemetry: {0}")]
    Probe(#[from] qpslab_probe::Error),
    /// The results store failed.
    #[error(transparent)]
    Store(#[from] qpslab_store::Error),
    /// A phase was measured but the store could not keep it (a full disk): the phase is here,
    /// to be printed and written elsewhere (`crate::run::unstored::keep`).
    #[error("{source}")]
    Unstored {
        /// The phase as measured.
        measured: Box<crate::run::measured::Measured>,
        /// Why the store did not take it.
        source: qpslab_store::Error,
    },
    /// A cell ended without a measured attempt (cannot happen: at least one is made).
    #[error("no attempt of the cell was measured")]
    NoAttempt,
}

impl ExecError {
    /// True when the user stopped the phase (Ctrl-C).
    pub fn is_interrupted(&self) -> bool {
        matches!(self, ExecError::Run(qpslab_engine::RunError::Interrupted))
    }

    /// How a run that this error ended is closed: interrupted by the user, else failed.
    pub fn run_status(&self) -> qpslab_store::RunStatus {
        if self.is_interrupted() {
            qpslab_store::RunStatus::Interrupted
        } else {
            qpslab_store::RunStatus::Failed
        }
    }
}

impl Blame for ExecError {
    /// True when the user has to act (exit code 2): a dataset to prepare, tables in the way,
    /// options that cannot work.
    fn fault(&self) -> Fault {
        user_if(match self {
            ExecError::Unprepared(_)
            | ExecError::NoSpace(_)
            | ExecError::Workload(_)
            | ExecError::Replay(_) => true,
            ExecError::Dataset(e) => e.is_user_error(),
            ExecError::Store(e) => e.is_user_error(),
            ExecError::Probe(qpslab_probe::Error::Profile(e)) => e.is_user_error(),
            ExecError::Restore(e) => e.is_user_error(),
            _ => false,
        })
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
