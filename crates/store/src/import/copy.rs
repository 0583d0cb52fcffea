//! The copy itself: runs (recognised by uuid), studies (under their names here), tune trials
//! with their study, and every row owned by a copied row, in one transaction.

use super::plan::{chosen, plan_studies, unfinished};
use super::tables::{insert, rows, statements, tables, Ids, Table};
use super::{ImportError, Imported, ImportedRun, Pick};
use crate::model::{RunId, StudyId};
use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior};
use std::collections::HashSet;
use std::path::Path;

/// The import itself, in one transaction on `conn` with the other store attached as `src`.
pub(super) fn copy(
    conn: &mut Connection,
    other: &Path,
    picks: &[Pick],
    check: &dyn Fn(i64) -> Result<(), ImportError>,
) -> Result<Imported, ImportError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let (mut runs, studies) = chosen(&tx, other, picks)?;
    let tables = tables(&tx)?;
    let mut ids = Ids::default();
    let mut done = Imported {
        still_running: unfinished(&tx, &mut runs)?,
        ..Imported::default()
    };
    let renamed = plan_studies(&tx, &studies, &mut ids, &mut done)?;
    for table in &tables {
        match table.name.as_str() {
            "runs" => {
                let to = Copy {
                    other,
                    chosen: &runs,
                    renamed: &renamed,
                    check,
                };
                copy_runs(&tx, table, &to, &mut ids, &mut done)?
            }
            "studies" => copy_studies(&tx, other, table, &renamed, &mut ids)?,
            "tune_trials" => copy_trials(&tx, other, table, &renamed, &mut ids)?,
            _ => copy_owned(&tx, other, table, &mut ids)?,
        }
    }
    for s in &mut done.studies {
        if let Some(id) = ids.copied.get("studies").and_then(|m| m.get(&s.id.0)) {
            s.id = StudyId(*id);
        }
    }
    tx.commit()?;
    Ok(done)
}

/// Copies the chosen runs that are not here yet (by uuid), keeping their origin.
/// What `copy_runs` copies, and how it checks each run.
struct Copy<'a> {
    other: &'a Path,
    chosen: &'a [i64],
    renamed: &'a [(i64, String, String)],
    check: &'a dyn Fn(i64) -> Result<(), ImportError>,
}

fn copy_runs(
    tx: &Transaction<'_>,
    table: &Table,
    to: &Copy<'_>,
    ids: &mut Ids,
    done: &mut Imported,
) -> Result<(), ImportError> {
    let Copy {
        other,
        chosen,
        renamed,
        check,
    } = *to;
    let origin = other.display().to_string();
    let (select, insert_sql) = statements(table);
    let [id, uuid, study, original, from, host, workload] = [
        "id",
        "uuid",
        "study_id",
        "original_id",
        "imported_from",
        "host_json",
        "workload",
    ]
    .map(|c| table.col(c));
    let (id, uuid, study, original, from) = (id?, uuid?, study?, original?, from?);
    let (host, workload) = (host?, workload?);
    let chosen: HashSet<i64> = chosen.iter().copied().collect();
    for mut row in rows(tx, table, &format!("{select} ORDER BY id"))? {
        let Value::Integer(old) = row[id] else {
            continue;
        };
        if !chosen.contains(&old) {
            continue;
        }
        let text = |v: &Value| match v {
            Value::Text(s) => s.clone(),
            _ => String::new(),
        };
        let hostname = serde_json::from_str::<serde_json::Value>(&text(&row[host]))
            .ok()
            .and_then(|h| h.get("hostname")?.as_str().map(str::to_string))
            .unwrap_or_default();
        let here: Option<i64> = tx
            .query_row(
                "SELECT id FROM main.runs WHERE uuid = ?1",
                [text(&row[uuid])],
                |r| r.get(0),
            )
            .optional()?;
        let workload = text(&row[workload]);
        if let Some(here) = here {
            ids.found
                .entry("runs".into())
                .or_default()
                .insert(old, here);
            done.runs.push(ImportedRun {
                original: old,
                id: RunId(here),
                already: true,
                host: hostname,
                workload,
            });
            continue;
        }
        check(old)?;
        if let Value::Text(name) = &row[study] {
            if let Some((_, _, new)) = renamed.iter().find(|(_, n, _)| n == name) {
                row[study] = Value::Text(new.clone());
            }
        }
        // Measured elsewhere first: keep where it was measured, not where it passed through.
        if row[original] == Value::Null {
            row[original] = Value::Integer(old);
            row[from] = Value::Text(origin.clone());
        }
        let new = insert(tx, other, table, &insert_sql, row, ids)?;
        done.runs.push(ImportedRun {
            original: old,
            id: RunId(new),
            already: false,
            host: hostname,
            workload,
        });
    }
    Ok(())
}

/// Copies the studies `plan_studies` chose to copy, under their names here.
fn copy_studies(
    tx: &Transaction<'_>,
    other: &Path,
    table: &Table,
    renamed: &[(i64, String, String)],
    ids: &mut Ids,
) -> Result<(), ImportError> {
    let origin = other.display().to_string();
    let (select, insert_sql) = statements(table);
    let [id, name, original, from] =
        ["id", "name", "original_id", "imported_from"].map(|c| table.col(c));
    let (id, name, original, from) = (id?, name?, original?, from?);
    for mut row in rows(tx, table, &format!("{select} ORDER BY id"))? {
        let Value::Integer(old) = row[id] else {
            continue;
        };
        let Some((_, _, new)) = renamed.iter().find(|(o, _, _)| *o == old) else {
            continue;
        };
        row[name] = Value::Text(new.clone());
        if row[original] == Value::Null {
            row[original] = Value::Integer(old);
            row[from] = Value::Text(origin.clone());
        }
        insert(tx, other, table, &insert_sql, row, ids)?;
    }
    Ok(())
}

/// Copies the trials of each tune session whose proof study is copied (a session is named as
/// its study), under the study's name here, each pointed at its run here.
fn copy_trials(
    tx: &Transaction<'_>,
    other: &Path,
    table: &Table,
    renamed: &[(i64, String, String)],
    ids: &mut Ids,
) -> Result<(), ImportError> {
    let (select, insert_sql) = statements(table);
    let (session, run) = (table.col("session")?, table.col("run_id")?);
    for mut row in rows(tx, table, &format!("{select} ORDER BY id"))? {
        let Value::Text(name) = &row[session] else {
            continue;
        };
        let Some((_, _, new)) = renamed.iter().find(|(_, old, _)| old == name) else {
            continue;
        };
        row[session] = Value::Text(new.clone());
        if let Value::Integer(old) = row[run] {
            row[run] = ids.get("runs", old).map_or(Value::Null, Value::Integer);
        }
        insert(tx, other, table, &insert_sql, row, ids)?;
    }
    Ok(())
}

/// Copies the rows of `table` that belong to rows copied now (phases of a copied run, samples
/// of a copied phase, cells of a copied study...), their references pointed at the new ids. A
/// table whose rows belong to nothing is not copied.
fn copy_owned(
    tx: &Transaction<'_>,
    other: &Path,
    table: &Table,
    ids: &mut Ids,
) -> Result<(), ImportError> {
    if !table.refs.iter().any(|r| r.owner) {
        return Ok(());
    }
    let (select, insert_sql) = statements(table);
    'rows: for mut row in rows(tx, table, &select)? {
        for r in &table.refs {
            let Value::Integer(old) = row[r.col] else {
                if r.owner {
                    continue 'rows;
                }
                continue;
            };
            let new = if r.owner {
                ids.copied.get(&r.parent).and_then(|m| m.get(&old)).copied()
            } else {
                ids.get(&r.parent, old)
            };
            match new {
                Some(new) => row[r.col] = Value::Integer(new),
                None if r.owner => continue 'rows,
                None => row[r.col] = Value::Null,
            }
        }
        insert(tx, other, table, &insert_sql, row, ids)?;
    }
    Ok(())
}
