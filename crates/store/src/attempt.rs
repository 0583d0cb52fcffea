//! A cell's attempts: a study measures an unstable cell again and keeps every measurement, each
//! a run of its own with its verdict.

use crate::cell::CellId;
use crate::db::{params, Tx};
use crate::error::Error;
use crate::model::StudyId;
use crate::model::{unix_now, RunId};
use crate::status::{corrupt, status_words};
use crate::Store;
use serde::{Deserialize, Serialize};

/// How one measurement of a cell came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttemptStatus {
    /// Stable: the cell uses it.
    Done,
    /// Unfit to compare (its `reason`); the cell was measured again, or uses it for want of a
    /// stable one.
    Unstable,
    /// Cut short (Ctrl-C, a crash, `kill -9`) or never judged; kept with what it measured, and
    /// the cell measured again.
    Interrupted,
}
status_words!(
    AttemptStatus,
    Done = "done",
    Unstable = "unstable",
    Interrupted = "interrupted"
);

/// One measurement of a cell: a study measures an unstable cell again and keeps every attempt.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CellAttempt {
    /// The cell.
    pub cell_id: CellId,
    /// From 1, in the order measured.
    pub attempt: u32,
    /// Its run (none once the run was deleted).
    pub run_id: Option<RunId>,
    /// Stable or not.
    pub status: AttemptStatus,
    /// Why it is unstable.
    pub reason: Option<String>,
}

/// Records `run` as the next attempt of `cell` within `tx`; returns its number (from 1).
pub(crate) fn insert_attempt(
    tx: &Tx<'_>,
    cell: CellId,
    run: RunId,
    status: AttemptStatus,
    reason: Option<&str>,
) -> Result<u32, Error> {
    let n: u32 = tx.query_row(
        "SELECT coalesce(max(attempt), 0) + 1 FROM cell_attempts WHERE cell_id = ?1",
        [cell.0],
        |r| r.get(0),
    )?;
    tx.execute(
        "INSERT INTO cell_attempts (cell_id, attempt, run_id, status, reason, recorded_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![cell.0, n, run.0, status.as_str(), reason, unix_now()],
    )?;
    Ok(n)
}

impl Store {
    /// Records one measurement of `cell` as its next attempt: stable, or unstable for `reason`.
    /// Returns the attempt's number (from 1).
    pub fn record_attempt(
        &mut self,
        cell: CellId,
        run: RunId,
        reason: Option<&str>,
    ) -> Result<u32, Error> {
        let status = match reason {
            None => AttemptStatus::Done,
            Some(_) => AttemptStatus::Unstable,
        };
        let tx = self.conn.transaction()?;
        let n = insert_attempt(&tx, cell, run, status, reason)?;
        tx.commit()?;
        Ok(n)
    }

    /// Every attempt of every cell of `study`, by cell then attempt.
    pub fn cell_attempts(&self, study: StudyId) -> Result<Vec<CellAttempt>, Error> {
        let mut st = self.conn.prepare(
            "SELECT a.cell_id, a.attempt, a.run_id, a.status, a.reason
             FROM cell_attempts a JOIN cells c ON c.id = a.cell_id
             WHERE c.study_id = ?1 ORDER BY c.seq, a.attempt",
        )?;
        let rows = st.query_map([study.0], |r| {
            Ok((
                CellAttempt {
                    cell_id: CellId(r.get(0)?),
                    attempt: r.get(1)?,
                    run_id: r.get::<_, Option<i64>>(2)?.map(RunId),
                    status: AttemptStatus::Done,
                    reason: r.get(4)?,
                },
                r.get::<_, String>(3)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (mut a, status) = row?;
            a.status = status.parse().map_err(corrupt)?;
            out.push(a);
        }
        Ok(out)
    }
}
