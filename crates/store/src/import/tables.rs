//! The schema as an import walks it: each table's columns, its `id` and its references, in
//! an order where every table comes after those it references; and the old-to-new id maps.

use super::ImportError;
use crate::error::Error;
use rusqlite::types::Value;
use rusqlite::Transaction;
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// A table of the schema, as its copy needs it.
pub(super) struct Table {
    pub(super) name: String,
    pub(super) cols: Vec<String>,
    /// The position of its `id INTEGER PRIMARY KEY`, if it has one (new rows get new ids).
    pub(super) id: Option<usize>,
    /// Its references to other tables.
    pub(super) refs: Vec<Ref>,
}

/// One foreign key column.
pub(super) struct Ref {
    pub(super) col: usize,
    pub(super) parent: String,
    /// `ON DELETE CASCADE`: the row belongs to the referenced row.
    pub(super) owner: bool,
}

impl Table {
    pub(super) fn col(&self, name: &str) -> Result<usize, Error> {
        self.cols
            .iter()
            .position(|c| c == name)
            .ok_or_else(|| Error::Corrupt(format!("table {} has no column {name}", self.name)))
    }
}

/// The tables of this store's schema, each after every table it references.
pub(super) fn tables(tx: &Transaction<'_>) -> Result<Vec<Table>, Error> {
    let names: Vec<String> = tx
        .prepare(
            "SELECT name FROM main.sqlite_master WHERE type = 'table'
               AND name NOT LIKE 'sqlite_%' ORDER BY rootpage",
        )?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let mut all = Vec::new();
    for name in names {
        let info: Vec<(String, String, i64)> = tx
            .prepare("SELECT name, type, pk FROM pragma_table_info(?1) ORDER BY cid")?
            .query_map([&name], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<Result<_, _>>()?;
        let pks = info.iter().filter(|c| c.2 > 0).count();
        let id = info.iter().position(|(n, t, pk)| {
            n == "id" && *pk == 1 && pks == 1 && t.eq_ignore_ascii_case("INTEGER")
        });
        let cols: Vec<String> = info.into_iter().map(|c| c.0).collect();
        let refs = tx
            .prepare("SELECT \"from\", \"table\", on_delete FROM pragma_foreign_key_list(?1)")?
            .query_map([&name], |r| {
                Ok((r.get::<_, String>(0)?, r.get(1)?, r.get::<_, String>(2)?))
            })?
            .collect::<Result<Vec<(String, String, String)>, _>>()?
            .into_iter()
            .filter_map(|(from, parent, on_delete)| {
                let col = cols.iter().position(|c| *c == from)?;
                Some(Ref {
                    col,
                    parent,
                    owner: on_delete.eq_ignore_ascii_case("CASCADE"),
                })
            })
            .collect();
        all.push(Table {
            name,
            cols,
            id,
            refs,
        });
    }
    // Parents first: each pass takes the tables whose references are all placed.
    let mut ordered: Vec<Table> = Vec::new();
    while !all.is_empty() {
        let placed: HashSet<String> = ordered.iter().map(|t| t.name.clone()).collect();
        let (ready, rest): (Vec<Table>, Vec<Table>) = all.into_iter().partition(|t| {
            t.refs
                .iter()
                .all(|r| r.parent == t.name || placed.contains(&r.parent))
        });
        if ready.is_empty() {
            return Err(Error::Corrupt(
                "the schema's tables reference each other in a cycle".into(),
            ));
        }
        ordered.extend(ready);
        all = rest;
    }
    Ok(ordered)
}

/// Old id to new id, per table: rows copied now, and rows found here already.
#[derive(Default)]
pub(super) struct Ids {
    pub(super) copied: HashMap<String, HashMap<i64, i64>>,
    pub(super) found: HashMap<String, HashMap<i64, i64>>,
}

impl Ids {
    pub(super) fn get(&self, table: &str, old: i64) -> Option<i64> {
        [&self.copied, &self.found]
            .into_iter()
            .find_map(|m| m.get(table).and_then(|m| m.get(&old)).copied())
    }
}

/// `SELECT` of every column of `table` in the other store, and the `INSERT` of one row here.
pub(super) fn statements(table: &Table) -> (String, String) {
    let cols = table
        .cols
        .iter()
        .map(|c| format!("\"{c}\""))
        .collect::<Vec<_>>()
        .join(", ");
    let marks = vec!["?"; table.cols.len()].join(", ");
    (
        format!("SELECT {cols} FROM src.\"{}\"", table.name),
        format!(
            "INSERT INTO main.\"{}\" ({cols}) VALUES ({marks})",
            table.name
        ),
    )
}

/// Inserts `row` of the store at `other` into `table` with a new id (when it has one),
/// recording old id to new; a row whose JSON or histogram columns do not read
/// ([`super::check::row`]) is refused instead.
pub(super) fn insert(
    tx: &Transaction<'_>,
    other: &Path,
    table: &Table,
    sql: &str,
    mut row: Vec<Value>,
    ids: &mut Ids,
) -> Result<i64, ImportError> {
    super::check::row(&table.name, &table.cols, &row).map_err(|what| ImportError::Damaged {
        path: other.to_path_buf(),
        what,
    })?;
    let old = table.id.and_then(|i| match row[i] {
        Value::Integer(v) => Some(v),
        _ => None,
    });
    if let Some(i) = table.id {
        row[i] = Value::Null;
    }
    tx.prepare_cached(sql)?
        .execute(rusqlite::params_from_iter(row))?;
    let new = tx.last_insert_rowid();
    if let Some(old) = old {
        ids.copied
            .entry(table.name.clone())
            .or_default()
            .insert(old, new);
    }
    Ok(new)
}

/// Reads every row of `table` in the other store.
pub(super) fn rows(
    tx: &Transaction<'_>,
    table: &Table,
    select: &str,
) -> Result<Vec<Vec<Value>>, Error> {
    let n = table.cols.len();
    let mut st = tx.prepare(select)?;
    let rows = st.query_map([], |r| (0..n).map(|i| r.get::<_, Value>(i)).collect())?;
    Ok(rows.collect::<Result<_, _>>()?)
}
