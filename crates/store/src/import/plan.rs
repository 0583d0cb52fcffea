//! What a copy takes from the store read, and what each study will be called in the store
//! written.

use super::tables::Ids;
use super::{ImportError, Imported, ImportedStudy, Pick};
use crate::db::{params, Conn, OptionalExtension, Value};
use crate::error::Error;
use crate::model::StudyId;
use std::path::Path;

/// The ids of a query's first column.
fn ids(conn: &Conn, sql: &str, arg: Option<Value>) -> Result<Vec<i64>, Error> {
    let mut st = conn.prepare(sql)?;
    let rows = match arg {
        Some(arg) => st.query_map([arg], |r| r.get(0))?,
        None => st.query_map([], |r| r.get(0))?,
    };
    rows.collect()
}

/// The run ids and study ids of the store read (`from`, at `other`) to copy: every run and
/// study when `picks` is empty; otherwise the runs picked and each picked study with every
/// run its cells measured.
pub(super) fn chosen(
    from: &Conn,
    other: &Path,
    picks: &[Pick],
) -> Result<(Vec<i64>, Vec<i64>), ImportError> {
    if picks.is_empty() {
        return Ok((
            ids(from, "SELECT id FROM runs ORDER BY id", None)?,
            ids(from, "SELECT id FROM studies ORDER BY id", None)?,
        ));
    }
    let (mut runs, mut studies) = (Vec::new(), Vec::new());
    for pick in picks {
        match pick {
            Pick::Run(id) => {
                let arg = || Some(Value::Integer(*id));
                if ids(from, "SELECT id FROM runs WHERE id = ?1", arg())?.is_empty() {
                    return Err(ImportError::NoRun {
                        path: other.to_path_buf(),
                        id: *id,
                    });
                }
                let sql = "SELECT id FROM runs WHERE id = ?1 AND status = 'running'";
                if !ids(from, sql, arg())?.is_empty() {
                    return Err(ImportError::StillRunning {
                        path: other.to_path_buf(),
                        id: *id,
                    });
                }
                runs.push(*id);
            }
            Pick::Study(name) => {
                let named = Some(Value::Text(name.clone()));
                let Some(&id) = ids(from, "SELECT id FROM studies WHERE name = ?1", named)?.first()
                else {
                    return Err(ImportError::NoStudy {
                        path: other.to_path_buf(),
                        name: name.clone(),
                    });
                };
                studies.push(id);
                runs.extend(ids(
                    from,
                    "SELECT r.id FROM runs r JOIN studies s ON s.name = r.study_id
                       WHERE s.id = ?1
                     UNION SELECT run_id FROM cells WHERE study_id = ?1 AND run_id IS NOT NULL
                     UNION SELECT a.run_id FROM cell_attempts a
                       JOIN cells c ON c.id = a.cell_id
                       WHERE c.study_id = ?1 AND a.run_id IS NOT NULL",
                    Some(Value::Integer(id)),
                )?);
            }
        }
    }
    runs.sort_unstable();
    runs.dedup();
    studies.sort_unstable();
    studies.dedup();
    Ok((runs, studies))
}

/// Takes out of `runs` those still `running` in the store read (being measured, or left so
/// by a process that died: a copy now would stay partial, as a later import recognises it),
/// returning them.
pub(super) fn unfinished(from: &Conn, runs: &mut Vec<i64>) -> Result<Vec<i64>, Error> {
    let running = ids(
        from,
        "SELECT id FROM runs WHERE status = 'running' ORDER BY id",
        None,
    )?;
    let (left, kept) = runs.iter().partition(|id| running.contains(id));
    *runs = kept;
    Ok(left)
}

/// Decides each study's fate before anything is copied (its runs must name it as it will be
/// named in `to`): recognised (same creation time and spec hash as a study there), or copied
/// under its own name, or `NAME@HOST` when the name is taken. Returns old id, old name and new
/// name of those to copy.
pub(super) fn plan_studies(
    from: &Conn,
    to: &Conn,
    studies: &[i64],
    ids: &mut Ids,
    done: &mut Imported,
) -> Result<Vec<(i64, String, String)>, Error> {
    let mut renamed = Vec::new();
    for &old in studies {
        let (name, created, hash): (String, f64, String) = from.query_row(
            "SELECT name, created_at, spec_hash FROM studies WHERE id = ?1",
            [old],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )?;
        // `name@...` is matched here rather than by LIKE, whose `_` and `%` a name may hold.
        let recognised: Vec<(i64, String)> = to
            .prepare("SELECT id, name FROM studies WHERE created_at = ?1 AND spec_hash = ?2")?
            .query_map(params![created, hash], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        let here = recognised.into_iter().find(|(_, n)| {
            *n == name
                || n.strip_prefix(name.as_str())
                    .is_some_and(|rest| rest.starts_with('@'))
        });
        if let Some((id, here_name)) = here {
            ids.found
                .entry("studies".into())
                .or_default()
                .insert(old, id);
            done.studies.push(ImportedStudy {
                original_name: name,
                name: here_name,
                id: StudyId(id),
                already: true,
            });
            continue;
        }
        let taken = |n: &str| -> Result<bool, Error> {
            Ok(to
                .query_row("SELECT 1 FROM studies WHERE name = ?1", [n], |_| Ok(()))
                .optional()?
                .is_some())
        };
        let mut new = name.clone();
        if taken(&new)? {
            let host = study_host(from, old)?;
            new = format!("{name}@{host}");
            let mut n = 2;
            while taken(&new)? {
                new = format!("{name}@{host}-{n}");
                n += 1;
            }
        }
        done.studies.push(ImportedStudy {
            original_name: name.clone(),
            name: new.clone(),
            // The old id until copied (see `copy`).
            id: StudyId(old),
            already: false,
        });
        renamed.push((old, name, new));
    }
    Ok(renamed)
}

/// The host a study of the store read was measured on: its first run's, else `imported`.
fn study_host(from: &Conn, study: i64) -> Result<String, Error> {
    let host: Option<String> = from
        .query_row(
            "SELECT r.host_json FROM runs r
               JOIN studies s ON s.name = r.study_id WHERE s.id = ?1 ORDER BY r.id LIMIT 1",
            [study],
            |r| r.get(0),
        )
        .optional()?;
    Ok(host
        .as_deref()
        .map(super::hostname)
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "imported".into()))
}
