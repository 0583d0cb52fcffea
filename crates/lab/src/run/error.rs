//! Why a measured phase, a run's or a study cell's, could not be executed ([`ExecError`]).

use qpslab_core::fault::{user_if, Blame, Fault};

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
