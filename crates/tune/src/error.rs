//! The tuner's error type.

use qpslab_core::fault::{user_if, Blame, Fault};
use qpslab_lab::server::restore::RestoreError;
use qpslab_lab::{ExecError, StudyError};

/// Why a tune session could not start or finish. Each variant keeps the error it wraps as its
/// source, so a caller can still read the client's or the store's error down the chain.
#[derive(Debug, thiserror::Error)]
pub enum TuneError {
    /// The target could not be resolved (the embedded sandbox not started, a bad flag).
    #[error(transparent)]
    Target(qpslab_lab::request::target::TargetError),
    /// A knob that cannot be tuned here, or no knob left (`--knobs`, `--durability`): the
    /// user's to fix.
    #[error("{0}")]
    Knobs(String),
    /// The server could not be reached.
    #[error("connecting to {target}: {source}")]
    Connect {
        /// The redacted target.
        target: String,
        /// The client's error.
        source: qpslab_wire::Error,
    },
    /// A statement of the control connection failed.
    #[error("{0}")]
    Wire(#[source] qpslab_wire::Error),
    /// The server's variables or status could not be read.
    #[error("{doing}: {source}")]
    Probe {
        /// What was being read.
        doing: &'static str,
        /// Why it failed.
        source: qpslab_probe::Error,
    },
    /// The dataset could not be built or checked.
    #[error(transparent)]
    Dataset(Box<qpslab_lab::run::ready::ReadyError>),
    /// A setting could not be changed with `SET GLOBAL`.
    #[error("SET GLOBAL {name} = {value}: {reason}")]
    Set {
        /// The variable.
        name: String,
        /// The value asked for.
        value: String,
        /// The server's answer.
        reason: qpslab_lab::run::live::SetRefused,
    },
    /// The buffer pool did not finish resizing in time.
    #[error("the buffer pool resize did not finish within {secs} s: {status}")]
    Resize {
        /// The seconds waited.
        secs: u64,
        /// `Innodb_buffer_pool_resize_status` when the wait ended.
        status: String,
    },
    /// The settings could not be recorded before the first change, or the server holds those
    /// of a killed process or one that is changing them now.
    #[error(transparent)]
    Restore(#[from] RestoreError),
    /// A trial's phase failed or was interrupted (boxed: the lab's error is large).
    #[error(transparent)]
    Exec(Box<ExecError>),
    /// A measurement of the proof study failed.
    #[error("measuring {label} of {study}: {source}")]
    Measure {
        /// The cell.
        label: String,
        /// The proof study.
        study: String,
        /// Why.
        source: Box<ExecError>,
    },
    /// The proof study could not be created.
    #[error("{0}")]
    Study(#[source] StudyError),
    /// The results store failed.
    #[error("{0}")]
    Store(#[source] qpslab_store::Error),
}

impl From<ExecError> for TuneError {
    fn from(e: ExecError) -> Self {
        TuneError::Exec(Box::new(e))
    }
}

impl From<qpslab_store::Error> for TuneError {
    fn from(e: qpslab_store::Error) -> Self {
        TuneError::Store(e)
    }
}

impl From<qpslab_wire::Error> for TuneError {
    fn from(e: qpslab_wire::Error) -> Self {
        TuneError::Wire(e)
    }
}

impl TuneError {
    /// True when the user stopped the session (Ctrl-C).
    pub fn is_interrupted(&self) -> bool {
        matches!(self, TuneError::Exec(e) if e.is_interrupted())
    }
}

impl Blame for TuneError {
    /// True when the user has to act (exit code 2): a knob that cannot be tuned, a server
    /// holding another process's settings, a dataset to prepare, a store that cannot be used.
    /// The client's errors are judged by the caller, which reads them down the chain.
    fn fault(&self) -> Fault {
        user_if(match self {
            TuneError::Target(e) => e.is_user_error(),
            TuneError::Knobs(_) => true,
            TuneError::Dataset(e) => match e.as_ref() {
                qpslab_lab::run::ready::ReadyError::Dataset(e) => e.is_user_error(),
                qpslab_lab::run::ready::ReadyError::Sandbox(e) => e.is_user_error(),
                _ => false,
            },
            TuneError::Restore(e) => e.is_user_error(),
            TuneError::Exec(e) | TuneError::Measure { source: e, .. } => e.is_user_error(),
            TuneError::Study(e) => e.is_user_error(),
            TuneError::Store(e) => e.is_user_error(),
            TuneError::Connect { .. }
            | TuneError::Wire(_)
            | TuneError::Probe { .. }
            | TuneError::Set { .. }
            | TuneError::Resize { .. } => false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knobs_are_the_users_and_a_failed_set_is_not() {
        assert!(TuneError::Knobs("--knobs: unknown knob 'x'".into()).is_user_error());
        let set = TuneError::Set {
            name: "table_open_cache".into(),
            value: "8000".into(),
            reason: qpslab_lab::run::live::SetRefused("denied".into()),
        };
        assert!(!set.is_user_error());
        assert_eq!(
            set.to_string(),
            "SET GLOBAL table_open_cache = 8000: denied"
        );
        let stopped = TuneError::from(ExecError::Run(qpslab_engine::RunError::Interrupted));
        assert!(stopped.is_interrupted() && !stopped.is_user_error());
    }
}
