//! `qpslab report` and `qpslab compare`: reports and comparisons from the results store.

use anyhow::Result;
use clap::Args;

/// `qpslab report RUN|STUDY ... --out FILE`.
#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Runs (ids) or studies (names) to report on.
    pub items: Vec<String>,
}

/// `qpslab compare A B`.
#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Baseline: a run id or STUDY/VARIANT.
    pub a: String,
    /// Candidate: a run id or STUDY/VARIANT.
    pub b: String,
}

/// Runs `qpslab report`.
pub fn report(_a: ReportArgs) -> Result<()> {
    Err(crate::error::user("reports are not available yet"))
}

/// Runs `qpslab compare`.
pub fn compare(_a: CompareArgs) -> Result<()> {
    Err(crate::error::user("comparisons are not available yet"))
}
