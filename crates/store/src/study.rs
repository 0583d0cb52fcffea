//! Studies.
//!
//! A study is a spec file expanded into cells ([`crate::cell`]); each cell is one measured run
//! (one run with one phase, recorded by [`Store::record_phase`] with `RunMeta.study_id` = the
//! study's name and `cell_label` = the cell's label), measured again when unstable
//! ([`crate::attempt`]). The study row keeps the spec text and its hash, so a resume can tell
//! whether the spec changed, and the environment the study ran in.

use crate::cell::insert_cells;
use crate::error::Error;
use crate::model::{unix_now, StudyId, UnixSeconds};
use crate::status::{corrupt, status_words};
use crate::Store;
use qpslab_core::cell::Cell;
use rusqlite::{params, OptionalExtension, Row, TransactionBehavior};
use serde::{Deserialize, Serialize};

/// Where a study stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StudyStatus {
    /// Cells are being executed (or the process died: `resume` continues it).
    Running,
    /// Every cell ran (some may have failed: see the cells).
    Done,
    /// The study stopped on an error that was not a cell's own.
    Failed,
    /// The user stopped it (Ctrl-C); `resume` continues it.
    Interrupted,
}

status_words!(
    StudyStatus,
    Running = "running",
    Done = "done",
    Failed = "failed",
    Interrupted = "interrupted"
);

/// A named factor of a factorial study and its level names, in spec order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Factor {
    /// The factor's name, e.g. `jemalloc`.
    pub name: String,
    /// Its level names, e.g. `["off", "on"]`.
    pub levels: Vec<String>,
}

/// A study as stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StudyRecord {
    /// Its id.
    pub id: StudyId,
    /// Its unique name (the spec's `name`).
    pub name: String,
    /// The spec file's text as it was when the study was created.
    pub spec_toml: String,
    /// A hash of the normalized spec, to tell whether a resumed spec changed.
    pub spec_hash: String,
    /// When the study was created.
    pub created_at: UnixSeconds,
    /// When it last stopped (done, failed or interrupted); `None` while running.
    pub finished_at: Option<UnixSeconds>,
    /// Where it stands.
    pub status: StudyStatus,
    /// The environment: host facts, OS settings, servers' versions and variables.
    pub env: serde_json::Value,
    /// The factors of a factorial study (empty otherwise).
    pub factors: Vec<Factor>,
}

/// A study to create.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NewStudy {
    /// Unique name.
    pub name: String,
    /// The spec's text.
    pub spec_toml: String,
    /// Hash of the normalized spec.
    pub spec_hash: String,
    /// The environment at creation.
    pub env: serde_json::Value,
    /// Factors (empty unless factorial).
    pub factors: Vec<Factor>,
}

fn study_row(r: &Row<'_>) -> rusqlite::Result<[Option<String>; 6]> {
    Ok([
        r.get(1)?,
        r.get(2)?,
        r.get(3)?,
        r.get(6)?,
        r.get(7)?,
        r.get(8)?,
    ])
}

impl Store {
    /// Creates `study` with all its `cells` (status `pending`, study status `running`) in one
    /// transaction. Fails with [`Error::StudyExists`] if a study of that name exists.
    pub fn create_study<'a>(
        &mut self,
        study: &NewStudy,
        cells: impl IntoIterator<Item = &'a Cell>,
    ) -> Result<StudyId, Error> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let exists: Option<i64> = tx
            .query_row(
                "SELECT id FROM studies WHERE name = ?1",
                [&study.name],
                |r| r.get(0),
            )
            .optional()?;
        if exists.is_some() {
            return Err(Error::StudyExists(study.name.clone()));
        }
        tx.execute(
            "INSERT INTO studies (name, spec_toml, spec_hash, created_at, status, env_json,
                                  factors_json)
             VALUES (?1, ?2, ?3, ?4, 'running', ?5, ?6)",
            params![
                study.name,
                study.spec_toml,
                study.spec_hash,
                unix_now(),
                serde_json::to_string(&study.env)?,
                serde_json::to_string(&study.factors)?,
            ],
        )?;
        let id = tx.last_insert_rowid();
        insert_cells(&tx, id, cells)?;
        tx.commit()?;
        Ok(StudyId(id))
    }

    /// Every study, oldest first.
    pub fn list_studies(&self) -> Result<Vec<StudyRecord>, Error> {
        let mut st = self.conn.prepare(
            "SELECT id, name, spec_toml, spec_hash, created_at, finished_at, status, env_json,
                    factors_json FROM studies ORDER BY created_at, id",
        )?;
        let rows = st.query_map([], |r| {
            Ok((r.get::<_, i64>(0)?, r.get(4)?, r.get(5)?, study_row(r)?))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (id, created_at, finished_at, s) = row?;
            out.push(study_record(id, created_at, finished_at, s)?);
        }
        Ok(out)
    }

    /// The study named `name`, or [`Error::StudyNotFound`].
    pub fn study_by_name(&self, name: &str) -> Result<StudyRecord, Error> {
        let row = self
            .conn
            .query_row(
                "SELECT id, name, spec_toml, spec_hash, created_at, finished_at, status, env_json,
                        factors_json FROM studies WHERE name = ?1",
                [name],
                |r| Ok((r.get::<_, i64>(0)?, r.get(4)?, r.get(5)?, study_row(r)?)),
            )
            .optional()?
            .ok_or_else(|| Error::StudyNotFound(name.to_string()))?;
        let (id, created_at, finished_at, s) = row;
        study_record(id, created_at, finished_at, s)
    }

    /// Sets the study's status; `finished_at` is set for any status but `running` and cleared
    /// for `running`.
    pub fn set_study_status(&mut self, study: StudyId, status: StudyStatus) -> Result<(), Error> {
        let finished = (status != StudyStatus::Running).then(unix_now);
        self.conn.execute(
            "UPDATE studies SET status = ?1, finished_at = ?2 WHERE id = ?3",
            params![status.as_str(), finished, study.0],
        )?;
        Ok(())
    }

    /// Replaces the study's environment (servers are added to it as they start).
    pub fn set_study_env(&mut self, study: StudyId, env: &serde_json::Value) -> Result<(), Error> {
        self.conn.execute(
            "UPDATE studies SET env_json = ?1 WHERE id = ?2",
            params![serde_json::to_string(env)?, study.0],
        )?;
        Ok(())
    }

    /// Puts every `running` cell of `study` back to `pending` (their process died or was
    /// interrupted) and deletes the study's runs that no cell claims (a cell killed between
    /// recording its phase and being marked done). Returns how many cells were reset.
    pub fn discard_unfinished_cells(&mut self, study: StudyId) -> Result<usize, Error> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute(
            "DELETE FROM cell_attempts WHERE cell_id IN
               (SELECT id FROM cells WHERE study_id = ?1 AND status = 'running')",
            [study.0],
        )?;
        let n = tx.execute(
            "UPDATE cells SET status = 'pending', started_at = NULL, finished_at = NULL,
                              run_id = NULL
             WHERE study_id = ?1 AND status = 'running'",
            [study.0],
        )?;
        tx.execute(
            "DELETE FROM runs WHERE study_id = (SELECT name FROM studies WHERE id = ?1)
               AND id NOT IN (SELECT run_id FROM cells WHERE study_id = ?1
                                                     AND run_id IS NOT NULL)
               AND id NOT IN (SELECT a.run_id FROM cell_attempts a
                              JOIN cells c ON c.id = a.cell_id
                              WHERE c.study_id = ?1 AND a.run_id IS NOT NULL)",
            [study.0],
        )?;
        tx.commit()?;
        Ok(n)
    }
}

fn study_record(
    id: i64,
    created_at: f64,
    finished_at: Option<f64>,
    s: [Option<String>; 6],
) -> Result<StudyRecord, Error> {
    let [name, spec_toml, spec_hash, status, env, factors] = s.map(|v| v.unwrap_or_default());
    Ok(StudyRecord {
        id: StudyId(id),
        name,
        spec_toml,
        spec_hash,
        created_at,
        finished_at,
        status: status.parse().map_err(corrupt)?,
        env: serde_json::from_str(&env)?,
        factors: serde_json::from_str(&factors)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::CellStatus;

    fn cell(seq: u32, label: &str) -> Cell {
        Cell {
            seq,
            label: label.into(),
            variant: "stock".into(),
            levels: Default::default(),
            params: [("threads".to_string(), serde_json::json!(seq))].into(),
            repeat: 1,
        }
    }

    #[test]
    fn study_and_cells_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("s.db")).unwrap();
        let new = NewStudy {
            name: "s1".into(),
            spec_toml: "name = \"s1\"".into(),
            spec_hash: "abc".into(),
            env: serde_json::json!({"host": {"cores": 2}}),
            factors: vec![Factor {
                name: "je".into(),
                levels: vec!["off".into(), "on".into()],
            }],
        };
        let id = store
            .create_study(&new, &[cell(2, "b"), cell(1, "a")])
            .unwrap();
        assert!(matches!(
            store.create_study(&new, &[]),
            Err(Error::StudyExists(_))
        ));
        let s = store.study_by_name("s1").unwrap();
        assert_eq!(s.id, id);
        assert_eq!(s.status, StudyStatus::Running);
        assert_eq!(s.factors, new.factors);
        assert_eq!(s.env["host"]["cores"], 2);
        assert!(matches!(
            store.study_by_name("nope"),
            Err(Error::StudyNotFound(_))
        ));
        let cells = store.study_cells(id).unwrap();
        assert_eq!(
            cells
                .iter()
                .map(|c| c.cell.label.as_str())
                .collect::<Vec<_>>(),
            ["a", "b"]
        );
        assert_eq!(cells[0].cell.params["threads"], 1);
        store.cell_running(cells[0].id).unwrap();
        store
            .cell_failed(cells[0].id, "boom", Some("tail"))
            .unwrap();
        store.cell_running(cells[1].id).unwrap();
        assert_eq!(store.discard_unfinished_cells(id).unwrap(), 1);
        let cells = store.study_cells(id).unwrap();
        assert_eq!(cells[0].status, CellStatus::Failed);
        assert_eq!(cells[0].log_tail.as_deref(), Some("tail"));
        assert_eq!(cells[1].status, CellStatus::Pending);
        store.set_study_status(id, StudyStatus::Done).unwrap();
        let all = store.list_studies().unwrap();
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].status, StudyStatus::Done);
        assert!(all[0].finished_at.is_some());
    }

    #[test]
    fn status_words_round_trip() {
        for s in ["running", "done", "failed", "interrupted"] {
            assert_eq!(s.parse::<StudyStatus>().unwrap().as_str(), s);
        }
        assert!("completed".parse::<StudyStatus>().is_err());
    }
}
