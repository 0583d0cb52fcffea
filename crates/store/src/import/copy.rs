//! The copy itself: runs (recognised by uuid), studies (under their names in the store
//! written), tune trials with their study, and every row owned by a copied row, read from one
//! store and written to the other in one transaction. Both stores are reached through the
//! store's one door (`db::Conn`), so a file and a server are copied the same way, either way.

use super::plan::{chosen, plan_studies, unfinished};
use super::tables::{insert, rows, rows_of, statements, tables, Ids, Ref, Table};
use super::{ImportError, Imported, ImportedRun, Pick};
use crate::db::{Behavior, Conn, OptionalExtension, Value};
use crate::error::Error;
use crate::model::{RunId, StudyId};
use crate::Store;
use std::collections::HashSet;
use std::path::Path;

/// Copies `picks` (every run and study when empty) of `from` (named `other` in messages and
/// in each copied row's origin) into `to`, in one transaction on `to`, with `from` read in one
/// snapshot.
pub(super) fn copy(
    from: &Store,
    other: &Path,
    to: &mut Conn,
    picks: &[Pick],
) -> Result<Imported, ImportError> {
    let snapshot = Snapshot::begin(&from.conn)?;
    let check = |id: i64| super::check::run(from, other, id);
    let src = &from.conn;
    let tx = to.transaction_with_behavior(Behavior::Immediate)?;
    let (mut runs, studies) = chosen(src, other, picks)?;
    let tables = tables(&tx)?;
    let mut ids = Ids::default();
    let mut done = Imported {
        still_running: unfinished(src, &mut runs)?,
        ..Imported::default()
    };
    let renamed = plan_studies(src, &tx, &studies, &mut ids, &mut done)?;
    let ends = Ends {
        from: src,
        other,
        to: &tx,
    };
    for table in &tables {
        match table.name.as_str() {
            "runs" => {
                let chosen = Chosen {
                    runs: &runs,
                    renamed: &renamed,
                    check: &check,
                };
                copy_runs(&ends, table, &chosen, &mut ids, &mut done)?
            }
            "studies" => copy_studies(&ends, table, &renamed, &mut ids)?,
            "tune_trials" => copy_trials(&ends, table, &renamed, &mut ids)?,
            _ => copy_owned(&ends, table, &mut ids)?,
        }
    }
    for s in &mut done.studies {
        if let Some(id) = ids.copied.get("studies").and_then(|m| m.get(&s.id.0)) {
            s.id = StudyId(*id);
        }
    }
    tx.commit()?;
    snapshot.end()?;
    Ok(done)
}

/// A read transaction on the store read, so that every table is read as it was at one moment
/// while other processes may write it (a server's store, a file being measured into); ended
/// (rolled back: nothing was written) when dropped.
struct Snapshot<'c>(&'c Conn);

impl<'c> Snapshot<'c> {
    fn begin(conn: &'c Conn) -> Result<Snapshot<'c>, Error> {
        // `BEGIN` is a deferred transaction in SQLite and `START TRANSACTION` on a server.
        conn.execute_batch("BEGIN")?;
        Ok(Snapshot(conn))
    }

    fn end(self) -> Result<(), Error> {
        let conn = self.0;
        std::mem::forget(self);
        conn.execute_batch("ROLLBACK")
    }
}

impl Drop for Snapshot<'_> {
    fn drop(&mut self) {
        // Nothing was written in it: a failed rollback loses nothing.
        let _ = self.0.execute_batch("ROLLBACK");
    }
}

/// The two stores of a copy: `from` (named `other`) and `to`.
struct Ends<'a> {
    from: &'a Conn,
    other: &'a Path,
    to: &'a Conn,
}

/// What `copy_runs` copies, and how it checks each run.
struct Chosen<'a> {
    runs: &'a [i64],
    renamed: &'a [(i64, String, String)],
    check: &'a dyn Fn(i64) -> Result<(), ImportError>,
}

/// Copies the chosen runs that are not in `to` yet (by uuid), keeping their origin.
fn copy_runs(
    ends: &Ends<'_>,
    table: &Table,
    chosen: &Chosen<'_>,
    ids: &mut Ids,
    done: &mut Imported,
) -> Result<(), ImportError> {
    let Ends { from, other, to } = *ends;
    let Chosen {
        runs: chosen,
        renamed,
        check,
    } = *chosen;
    let origin = other.display().to_string();
    let (select, insert_sql) = statements(table);
    let [id, uuid, study, original, imported, host, workload] = [
        "id",
        "uuid",
        "study_id",
        "original_id",
        "imported_from",
        "host_json",
        "workload",
    ]
    .map(|c| table.col(c));
    let (id, uuid, study, original, imported) = (id?, uuid?, study?, original?, imported?);
    let (host, workload) = (host?, workload?);
    let chosen: HashSet<i64> = chosen.iter().copied().collect();
    for mut row in rows(from, table, &format!("{select} ORDER BY id"))? {
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
        let hostname = super::hostname(&text(&row[host]));
        let here: Option<i64> = to
            .query_row(
                "SELECT id FROM runs WHERE uuid = ?1",
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
            row[imported] = Value::Text(origin.clone());
        }
        let new = insert(to, other, table, &insert_sql, row, ids)?;
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

/// Copies the studies `plan_studies` chose to copy, under their names in `to`.
fn copy_studies(
    ends: &Ends<'_>,
    table: &Table,
    renamed: &[(i64, String, String)],
    ids: &mut Ids,
) -> Result<(), ImportError> {
    let Ends { from, other, to } = *ends;
    let origin = other.display().to_string();
    let (select, insert_sql) = statements(table);
    let [id, name, original, imported] =
        ["id", "name", "original_id", "imported_from"].map(|c| table.col(c));
    let (id, name, original, imported) = (id?, name?, original?, imported?);
    for mut row in rows(from, table, &format!("{select} ORDER BY id"))? {
        let Value::Integer(old) = row[id] else {
            continue;
        };
        let Some((_, _, new)) = renamed.iter().find(|(o, _, _)| *o == old) else {
            continue;
        };
        row[name] = Value::Text(new.clone());
        if row[original] == Value::Null {
            row[original] = Value::Integer(old);
            row[imported] = Value::Text(origin.clone());
        }
        insert(to, other, table, &insert_sql, row, ids)?;
    }
    Ok(())
}

/// Copies the trials of each tune session whose proof study is copied (a session is named as
/// its study), under the study's name here, each pointed at its run here.
fn copy_trials(
    ends: &Ends<'_>,
    table: &Table,
    renamed: &[(i64, String, String)],
    ids: &mut Ids,
) -> Result<(), ImportError> {
    let Ends { from, other, to } = *ends;
    let (select, insert_sql) = statements(table);
    let (session, run) = (table.col("session")?, table.col("run_id")?);
    for mut row in rows(from, table, &format!("{select} ORDER BY id"))? {
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
        insert(to, other, table, &insert_sql, row, ids)?;
    }
    Ok(())
}

/// Copies the rows of `table` that belong to rows copied now (phases of a copied run, samples
/// of a copied phase, cells of a copied study...), their references pointed at the new ids. A
/// table whose rows belong to nothing is not copied.
///
/// A table with ids is read whole in the order of its ids, so that a copy into an empty store
/// numbers its rows as they were. The tables without (samples, histograms, telemetry: the
/// many rows, and the large ones) are read owner by owner, so that a copy of one run reads that
/// run's rows only, and holds one phase's at a time.
fn copy_owned(ends: &Ends<'_>, table: &Table, ids: &mut Ids) -> Result<(), ImportError> {
    let owners: Vec<&Ref> = table.refs.iter().filter(|r| r.owner).collect();
    let Ends { from, other, to } = *ends;
    let (select, insert_sql) = statements(table);
    let batches: Vec<(String, Option<i64>)> = match (table.id, owners.as_slice()) {
        (_, []) => return Ok(()),
        (None, [owner]) => {
            let col = &table.cols[owner.col];
            let seq = if table.cols.iter().any(|c| c == "seq") {
                " ORDER BY seq"
            } else {
                ""
            };
            let mut parents: Vec<i64> = ids
                .copied
                .get(&owner.parent)
                .map(|m| m.keys().copied().collect())
                .unwrap_or_default();
            parents.sort_unstable();
            let sql = format!("{select} WHERE \"{col}\" = ?1{seq}");
            parents
                .into_iter()
                .map(|p| (sql.clone(), Some(p)))
                .collect()
        }
        (Some(_), _) => vec![(format!("{select} ORDER BY id"), None)],
        (None, _) => vec![(select.clone(), None)],
    };
    for (sql, parent) in batches {
        let read = match parent {
            Some(p) => rows_of(from, table, &sql, p)?,
            None => rows(from, table, &sql)?,
        };
        for row in read {
            if let Some(row) = repointed(table, row, ids) {
                insert(to, other, table, &insert_sql, row, ids)?;
            }
        }
    }
    Ok(())
}

/// `row` with its references pointed at the new ids; `None` when a row it belongs to was not
/// copied now.
fn repointed(table: &Table, mut row: Vec<Value>, ids: &Ids) -> Option<Vec<Value>> {
    for r in &table.refs {
        let Value::Integer(old) = row[r.col] else {
            if r.owner {
                return None;
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
            None if r.owner => return None,
            None => row[r.col] = Value::Null,
        }
    }
    Some(row)
}
