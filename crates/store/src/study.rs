//! Studies.
//!
//! A study is a spec file expanded into cells ([`crate::cell`]); each cell is one measured run
//! (one run with one phase, recorded by [`Store::record_phase`] with `RunMeta.study_id` = the
//! study's name and `cell_label` = the cell's label), measured again when unstable
//! ([`crate::attempt`]). The study row keeps the spec text and its hash, so a resume can tell
//! whether the spec changed, and the environment the study ran in.

use crate::attempt::AttemptStatus;
use crate::cell::{insert_cells, CellId};
use crate::db::{params, Behavior, OptionalExtension, Row, Tx};
use crate::error::Error;
use crate::model::{unix_now, RunId, StudyId, UnixSeconds};
use crate::owner::Owner;
use crate::status::{corrupt, status_words};
use crate::Store;
use qpslab_core::cell::Cell;
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

fn study_row(r: &Row<'_>) -> Result<[Option<String>; 6], Error> {
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
        let tx = self.conn.transaction_with_behavior(Behavior::Immediate)?;
        let exists: Option<i64> = tx
            .query_row(
                "SELECT id FROM studies WHERE name = ?1",
                [&study.name],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(id) = exists {
            if let Some(pid) = driver(&tx, id)? {
                return Err(Error::StudyBusy {
                    name: study.name.clone(),
                    pid,
                });
            }
            return Err(Error::StudyExists(study.name.clone()));
        }
        let me = Owner::me();
        tx.execute(
            "INSERT INTO studies (name, spec_toml, spec_hash, created_at, status, env_json,
                                  factors_json, owner_pid, owner_boot_id, owner_started)
             VALUES (?1, ?2, ?3, ?4, 'running', ?5, ?6, ?7, ?8, ?9)",
            params![
                study.name,
                study.spec_toml,
                study.spec_hash,
                unix_now(),
                serde_json::to_string(&study.env)?,
                serde_json::to_string(&study.factors)?,
                me.pid,
                me.boot_id,
                me.started.map(|t| t as i64),
            ],
        )?;
        let id = tx.last_insert_rowid();
        crate::lease::own(&tx)?;
        insert_cells(&tx, id, cells)?;
        tx.commit()?;
        self.keep_alive()?;
        Ok(StudyId(id))
    }

    /// Makes this process the one driving the study named `name` (to resume it), unless
    /// another live process drives it ([`Error::StudyBusy`], naming its pid). The claim ends
    /// with the process, or when the study stops ([`Store::set_study_status`]).
    pub fn claim_study(&mut self, name: &str) -> Result<StudyRecord, Error> {
        let tx = self.conn.transaction_with_behavior(Behavior::Immediate)?;
        let id: i64 = tx
            .query_row("SELECT id FROM studies WHERE name = ?1", [name], |r| {
                r.get(0)
            })
            .optional()?
            .ok_or_else(|| Error::StudyNotFound(name.to_string()))?;
        if let Some(pid) = driver(&tx, id)? {
            return Err(Error::StudyBusy {
                name: name.to_string(),
                pid,
            });
        }
        let me = Owner::me();
        tx.execute(
            "UPDATE studies SET owner_pid = ?1, owner_boot_id = ?2, owner_started = ?3
             WHERE id = ?4",
            params![me.pid, me.boot_id, me.started.map(|t| t as i64), id],
        )?;
        crate::lease::own(&tx)?;
        tx.commit()?;
        self.keep_alive()?;
        self.study_by_name(name)
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
    /// for `running`. A study that stops is no longer driven by anyone.
    pub fn set_study_status(&mut self, study: StudyId, status: StudyStatus) -> Result<(), Error> {
        let finished = (status != StudyStatus::Running).then(unix_now);
        self.conn.execute(
            "UPDATE studies SET status = ?1, finished_at = ?2,
                                owner_pid = CASE WHEN ?1 = 'running' THEN owner_pid END
             WHERE id = ?3",
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
    /// interrupted) and keeps what they measured: each of their runs that no cell or attempt
    /// claims (an attempt cut short, or killed before it was judged) becomes an `interrupted`
    /// attempt of its cell. Nothing is deleted. Returns how many cells were reset.
    pub fn reopen_unfinished_cells(&mut self, study: StudyId) -> Result<usize, Error> {
        let tx = self.conn.transaction_with_behavior(Behavior::Immediate)?;
        let orphans: Vec<(i64, i64, String)> = tx
            .prepare(
                "SELECT c.id, r.id, r.status FROM runs r
                 JOIN studies s ON s.name = r.study_id
                 JOIN cells c ON c.study_id = s.id AND c.label = r.cell_label
                 WHERE s.id = ?1 AND c.status = 'running' AND r.status <> 'running'
                   AND r.id NOT IN (SELECT run_id FROM cells WHERE study_id = ?1
                                                         AND run_id IS NOT NULL)
                   AND r.id NOT IN (SELECT a.run_id FROM cell_attempts a
                                    JOIN cells c ON c.id = a.cell_id
                                    WHERE c.study_id = ?1 AND a.run_id IS NOT NULL)
                 ORDER BY r.id",
            )?
            .query_map([study.0], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<Result<_, _>>()?;
        for (cell, run, status) in orphans {
            let reason = match status.as_str() {
                "completed" => "the study stopped before this attempt was judged".to_string(),
                s => format!("the study stopped during this attempt (run {s})"),
            };
            crate::attempt::insert_attempt(
                &tx,
                CellId(cell),
                RunId(run),
                AttemptStatus::Interrupted,
                Some(&reason),
            )?;
        }
        let n = tx.execute(
            "UPDATE cells SET status = 'pending', started_at = NULL, finished_at = NULL,
                              run_id = NULL
             WHERE study_id = ?1 AND status = 'running'",
            [study.0],
        )?;
        tx.commit()?;
        Ok(n)
    }
}

/// The live process, other than this one, that drives study `id`, if any.
fn driver(tx: &Tx<'_>, id: i64) -> Result<Option<u32>, Error> {
    let owner: Option<(Owner, Option<f64>)> = tx.query_row(
        "SELECT owner_pid, owner_boot_id, owner_started, heartbeat_at FROM studies
         WHERE id = ?1",
        [id],
        |r| {
            let (pid, boot_id) = (r.get::<_, Option<u32>>(0)?, r.get(1)?);
            let started: Option<i64> = r.get(2)?;
            let beat: Option<f64> = r.get(3)?;
            Ok(pid.map(|pid| {
                let owner = Owner {
                    pid,
                    boot_id,
                    started: started.map(|t| t as u64),
                };
                (owner, beat)
            }))
        },
    )?;
    let (shared, now) = (tx.is_server(), crate::lease::now(tx)?);
    Ok(owner
        .filter(|(o, beat)| !o.is_me() && crate::lease::alive(o, shared, *beat, now))
        .map(|(o, _)| o.pid))
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
        assert_eq!(store.reopen_unfinished_cells(id).unwrap(), 1);
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
