//! The report crate's error type.

use qpslab_core::fault::{user_if, Blame, Fault};
use std::path::PathBuf;

/// What can go wrong building or writing a report.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Encoding the report as JSON failed.
    #[error("report JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// An SVG chart could not be rendered to PNG.
    #[error("rendering a chart to PNG: {0}")]
    Png(String),
    /// A file or directory could not be written.
    #[error("writing {0}: {1}")]
    Write(PathBuf, std::io::Error),
    /// Runs of different workloads were put side by side (the user's mistake).
    #[error("{0}")]
    MixedWorkloads(String),
    /// A run or study that is not in the results store, or has nothing measured (the user's
    /// mistake).
    #[error("{0}")]
    Subject(String),
    /// The results store could not be read.
    #[error(transparent)]
    Store(#[from] qpslab_store::Error),
}

impl Blame for Error {
    /// Whether the user asked for something that cannot be done (exit 2), rather than a
    /// failure while doing it. The store's errors say it themselves.
    fn fault(&self) -> Fault {
        match self {
            Error::Store(e) => e.fault(),
            _ => user_if(matches!(self, Error::MixedWorkloads(_) | Error::Subject(_))),
        }
    }
}
