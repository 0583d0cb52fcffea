//! What an import takes from the other store, and what each study will be called here.

use super::tables::Ids;
use super::{ImportError, Imported, ImportedStudy, Pick};
use crate::error::Error;
use crate::model::StudyId;
use rusqlite::types::Value;
use rusqlite::{OptionalExtension, Transaction};
use std::path::Path;

/// The other store's run ids and study ids to import: every run and study when `picks` is
/// empty; otherwise the runs picked and each picked study with every run its cells measured.
pub(super) fn chosen(
    tx: &Transaction<'_>,
    other: &Path,
    picks: &[Pick],
) -> Result<(Vec<i64>, Vec<i64>), ImportError> {
    let ids = |sql: &str, arg: Value| -> Result<Vec<i64>, rusqlite::Error> {
        tx.prepare(sql)?
            .query_map([arg], |r| r.get(0))?
            .collect::<Result<_, _>>()
    };
    if picks.is_empty() {
        return Ok((
            ids(
                "SELECT id FROM src.runs WHERE ?1 IS NULL ORDER BY id",
                Value::Null,
            )?,
            ids(
                "SELECT id FROM src.studies WHERE ?1 IS NULL ORDER BY id",
                Value::Null,
            )?,
        ));
    }
    let (mut runs, mut studies) = (Vec::new(), Vec::new());
    for pick in picks {
        match pick {
            Pick::Run(id) => {
                if ids("SELECT id FROM src.runs WHERE id = ?1", Value::Integer(*id))?.is_empty() {
                    return Err(ImportError::NoRun {
                        path: other.to_path_buf(),
                        id: *id,
                    });
                }
                if !ids(
                    "SELECT id FROM src.runs WHERE id = ?1 AND status = 'running'",
                    Value::Integer(*id),
                )?
                .is_empty()
                {
                    return Err(ImportError::StillRunning {
                        path: other.to_path_buf(),
                        id: *id,
                    });
                }
                runs.push(*id);
            }
            Pick::Study(name) => {
                let Some(&id) = ids(
                    "SELECT id FROM src.studies WHERE name = ?1",
                    Value::Text(name.clone()),
                )?
                .first() else {
                    return Err(ImportError::NoStudy {
                        path: other.to_path_buf(),
                        name: name.clone(),
                    });
                };
                studies.push(id);
                runs.extend(ids(
                    "SELECT r.id FROM src.runs r JOIN src.studies s ON s.name = r.study_id
                       WHERE s.id = ?1
                     UNION SELECT run_id FROM src.cells WHERE study_id = ?1 AND run_id IS NOT NULL
                     UNION SELECT a.run_id FROM src.cell_attempts a
                       JOIN src.cells c ON c.id = a.cell_id
                       WHERE c.study_id = ?1 AND a.run_id IS NOT NULL",
                    Value::Integer(id),
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

/// Takes out of `runs` those still `running` in the other store (being measured, or left so
/// by a process that died: a copy now would stay partial, as a later import recognises it),
/// returning them.
pub(super) fn unfinished(tx: &Transaction<'_>, runs: &mut Vec<i64>) -> Result<Vec<i64>, Error> {
    let running: Vec<i64> = tx
        .prepare("SELECT id FROM src.runs WHERE status = 'running' ORDER BY id")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let (left, kept) = runs.iter().partition(|id| running.contains(id));
    *runs = kept;
    Ok(left)
}

/// Decides each study's fate before anything is copied (its runs must name it as it will be
/// named here): recognised (same creation time and spec hash as a study here), or copied under
/// its own name, or `NAME@HOST` when the name is taken. Returns old id to new name of those to
/// copy.
pub(super) fn plan_studies(
    tx: &Transaction<'_>,
    studies: &[i64],
    ids: &mut Ids,
    done: &mut Imported,
) -> Result<Vec<(i64, String, String)>, Error> {
    let mut renamed = Vec::new();
    for &old in studies {
        let (name, created, hash): (String, f64, String) = tx.query_row(
            "SELECT name, created_at, spec_hash FROM src.studies WHERE id = ?1",
            [old],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )?;
        let here: Option<(i64, String)> = tx
            .query_row(
                "SELECT id, name FROM main.studies WHERE created_at = ?1 AND spec_hash = ?2
                   AND (name = ?3 OR name LIKE ?3 || '@%')",
                rusqlite::params![created, hash, name],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
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
            Ok(tx
                .query_row(
                    "SELECT 1 FROM main.studies WHERE name = ?1",
                    [n],
                    |_| Ok(()),
                )
                .optional()?
                .is_some())
        };
        let mut new = name.clone();
        if taken(&new)? {
            let host = study_host(tx, old)?;
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

/// The host a study of the other store was measured on: its first run's, else `imported`.
fn study_host(tx: &Transaction<'_>, study: i64) -> Result<String, Error> {
    let host: Option<String> = tx
        .query_row(
            "SELECT json_extract(r.host_json, '$.hostname') FROM src.runs r
               JOIN src.studies s ON s.name = r.study_id WHERE s.id = ?1 ORDER BY r.id LIMIT 1",
            [study],
            |r| r.get(0),
        )
        .optional()?
        .flatten();
    Ok(host
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "imported".into()))
}
