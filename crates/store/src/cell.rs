//! A study's cells as stored: each [`Cell`] with where it stands and, once measured, its run.
//! Cells are written all at once when their study is created (status `pending`) and then move
//! through `running` to `done` or `failed`, each change in its own small transaction.

use crate::db::{params, Row, Tx};
use crate::error::Error;
use crate::model::StudyId;
use crate::model::{unix_now, RunId, UnixSeconds};
use crate::status::{corrupt, status_words};
use crate::Store;
use qpslab_core::cell::Cell;
use serde::{Deserialize, Serialize};

/// The store's id of a cell (its `cells.id`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CellId(pub i64);

/// Where a cell stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CellStatus {
    /// Not run yet (or discarded when interrupted).
    Pending,
    /// Being measured now (or its process died: a resume runs it again).
    Running,
    /// Measured; its run is `run_id`.
    Done,
    /// Could not be measured; `error` and `log_tail` say why.
    Failed,
}
status_words!(
    CellStatus,
    Pending = "pending",
    Running = "running",
    Done = "done",
    Failed = "failed"
);

/// A cell as stored: its place in the study (serialized flat, beside the other fields) and
/// how its measurement went.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CellRecord {
    /// Its id.
    pub id: CellId,
    /// The study it belongs to.
    pub study_id: StudyId,
    /// The cell itself: order, label, variant, levels, swept settings, repeat.
    #[serde(flatten)]
    pub cell: Cell,
    /// Where it stands.
    pub status: CellStatus,
    /// Its run (one run with one measured phase) once done.
    pub run_id: Option<RunId>,
    /// Why it failed.
    pub error: Option<String>,
    /// The tail of the server's error log when it failed.
    pub log_tail: Option<String>,
    /// When it last started.
    pub started_at: Option<UnixSeconds>,
    /// When it last finished (done or failed).
    pub finished_at: Option<UnixSeconds>,
}

const CELL_COLUMNS: &str = "id, study_id, seq, label, variant, levels_json, params_json, repeat,
    status, run_id, error, log_tail, started_at, finished_at";

/// Writes `cells` as `pending` cells of study `study` within `tx`.
pub(crate) fn insert_cells<'a>(
    tx: &Tx<'_>,
    study: i64,
    cells: impl IntoIterator<Item = &'a Cell>,
) -> Result<(), Error> {
    let mut st = tx.prepare(
        "INSERT INTO cells (study_id, seq, label, variant, levels_json, params_json,
                            repeat, status)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'pending')",
    )?;
    for c in cells {
        st.execute(params![
            study,
            c.seq,
            c.label,
            c.variant,
            serde_json::to_string(&c.levels)?,
            serde_json::to_string(&c.params)?,
            c.repeat,
        ])?;
    }
    Ok(())
}

/// The columns of [`CELL_COLUMNS`] as they come out of SQLite; JSON and status words are
/// decoded by [`RawCell::decode`], whose errors are the store's own.
struct RawCell {
    record: CellRecord,
    levels: String,
    params: String,
    status: String,
}

impl RawCell {
    fn read(r: &Row<'_>) -> Result<RawCell, Error> {
        Ok(RawCell {
            record: CellRecord {
                id: CellId(r.get(0)?),
                study_id: StudyId(r.get(1)?),
                cell: Cell {
                    seq: r.get(2)?,
                    label: r.get(3)?,
                    variant: r.get(4)?,
                    levels: Default::default(),
                    params: Default::default(),
                    repeat: r.get(7)?,
                },
                status: CellStatus::Pending,
                run_id: r.get::<_, Option<i64>>(9)?.map(RunId),
                error: r.get(10)?,
                log_tail: r.get(11)?,
                started_at: r.get(12)?,
                finished_at: r.get(13)?,
            },
            levels: r.get(5)?,
            params: r.get(6)?,
            status: r.get(8)?,
        })
    }

    fn decode(self) -> Result<CellRecord, Error> {
        let mut rec = self.record;
        rec.cell.levels = serde_json::from_str(&self.levels)?;
        rec.cell.params = serde_json::from_str(&self.params)?;
        rec.status = self.status.parse().map_err(corrupt)?;
        Ok(rec)
    }
}

impl Store {
    /// The cells of `study` in execution order.
    pub fn study_cells(&self, study: StudyId) -> Result<Vec<CellRecord>, Error> {
        let mut st = self.conn.prepare(&format!(
            "SELECT {CELL_COLUMNS} FROM cells WHERE study_id = ?1 ORDER BY seq"
        ))?;
        let rows = st.query_map([study.0], RawCell::read)?;
        let mut out = Vec::new();
        for row in rows {
            out.push(row?.decode()?);
        }
        Ok(out)
    }

    /// Marks a cell `running` now, clearing what an earlier attempt left.
    pub fn cell_running(&mut self, cell: CellId) -> Result<(), Error> {
        self.conn.execute(
            "UPDATE cells SET status = 'running', started_at = ?1, finished_at = NULL,
                              error = NULL, log_tail = NULL, run_id = NULL
             WHERE id = ?2",
            params![unix_now(), cell.0],
        )?;
        Ok(())
    }

    /// Marks a cell `done` with its run.
    pub fn cell_done(&mut self, cell: CellId, run: RunId) -> Result<(), Error> {
        self.conn.execute(
            "UPDATE cells SET status = 'done', run_id = ?1, finished_at = ?2 WHERE id = ?3",
            params![run.0, unix_now(), cell.0],
        )?;
        Ok(())
    }

    /// Removes `cells` that are still pending: rounds a study with a precision target did not
    /// need. Returns how many went.
    pub fn drop_pending_cells(&mut self, cells: &[CellId]) -> Result<usize, Error> {
        let tx = self.conn.transaction()?;
        let mut n = 0;
        {
            let mut st = tx.prepare("DELETE FROM cells WHERE id = ?1 AND status = 'pending'")?;
            for c in cells {
                n += st.execute([c.0])?;
            }
        }
        tx.commit()?;
        Ok(n)
    }

    /// Marks a cell `failed` with why and, when known, the server's error-log tail.
    pub fn cell_failed(
        &mut self,
        cell: CellId,
        error: &str,
        log_tail: Option<&str>,
    ) -> Result<(), Error> {
        self.conn.execute(
            "UPDATE cells SET status = 'failed', error = ?1, log_tail = ?2, finished_at = ?3
             WHERE id = ?4",
            params![error, log_tail, unix_now(), cell.0],
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_words_round_trip() {
        for s in ["pending", "running", "done", "failed"] {
            assert_eq!(s.parse::<CellStatus>().unwrap().as_str(), s);
        }
        assert!("completed".parse::<CellStatus>().is_err());
    }

    #[test]
    fn a_record_serializes_its_cell_flat() {
        let rec = CellRecord {
            id: CellId(3),
            study_id: StudyId(1),
            cell: Cell::lone("stock"),
            status: CellStatus::Done,
            run_id: Some(RunId(9)),
            error: None,
            log_tail: None,
            started_at: None,
            finished_at: None,
        };
        let v = serde_json::to_value(&rec).unwrap();
        assert_eq!(v["variant"], "stock");
        assert_eq!(v["repeat"], 1);
        assert_eq!(v["run_id"], 9);
        assert!(v.get("cell").is_none(), "{v}");
        let back: CellRecord = serde_json::from_value(v).unwrap();
        assert_eq!(back, rec);
    }
}
