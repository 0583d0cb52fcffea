//! The schema as a copy walks it: each table's columns, its `id` and its references, in an
//! order where every table comes after those it references; and the old-to-new id maps.
//!
//! The description is read from the store being written, in its own catalogue (SQLite's
//! pragmas for a file, `information_schema` for a server), so tables and columns added by
//! later migrations come along without a change here; the store being read is at the same
//! schema version (an older file is migrated in a copy first), so it has every column named.

use super::ImportError;
use crate::db::{Conn, Value};
use crate::error::Error;
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// A table of the schema, as its copy needs it.
pub(super) struct Table {
    pub(super) name: String,
    pub(super) cols: Vec<String>,
    /// The position of its `id` (an SQLite `INTEGER PRIMARY KEY`, a server's
    /// `AUTO_INCREMENT`), if it has one: new rows get new ids.
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

/// One column as a catalogue describes it: its name, and whether the store gives its value
/// (a generated `id`).
struct Column {
    name: String,
    generated_id: bool,
}

/// The tables of the store behind `conn`, each after every table it references.
pub(super) fn tables(conn: &Conn) -> Result<Vec<Table>, Error> {
    let all = if conn.is_server() {
        server_tables(conn)?
    } else {
        file_tables(conn)?
    };
    ordered(all)
}

/// A catalogue's text: a server's `information_schema` may send it as bytes.
fn text(v: Value) -> String {
    match v {
        Value::Text(s) => s,
        Value::Blob(b) => String::from_utf8_lossy(&b).into_owned(),
        Value::Integer(i) => i.to_string(),
        _ => String::new(),
    }
}

/// A table from its columns and its `(column, parent, on delete)` references.
fn table(name: String, columns: Vec<Column>, refs: Vec<(String, String, String)>) -> Table {
    let ids = columns.iter().filter(|c| c.generated_id).count();
    let id = columns
        .iter()
        .position(|c| c.generated_id && c.name == "id" && ids == 1);
    let cols: Vec<String> = columns.into_iter().map(|c| c.name).collect();
    let refs = refs
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
    Table {
        name,
        cols,
        id,
        refs,
    }
}

/// An SQLite file's tables, from its pragmas.
fn file_tables(conn: &Conn) -> Result<Vec<Table>, Error> {
    let names: Vec<String> = conn
        .prepare(
            "SELECT name FROM sqlite_master WHERE type = 'table'
               AND name NOT LIKE 'sqlite_%' ORDER BY rootpage",
        )?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let mut all = Vec::new();
    for name in names {
        let info: Vec<(String, String, i64)> = conn
            .prepare("SELECT name, type, pk FROM pragma_table_info(?1) ORDER BY cid")?
            .query_map([&name], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<Result<_, _>>()?;
        let pks = info.iter().filter(|c| c.2 > 0).count();
        let columns = info
            .into_iter()
            .map(|(n, t, pk)| Column {
                // `INTEGER PRIMARY KEY` alone is SQLite's rowid: given when inserted as NULL.
                generated_id: pk == 1 && pks == 1 && t.eq_ignore_ascii_case("INTEGER"),
                name: n,
            })
            .collect();
        let refs = conn
            .prepare("SELECT \"from\", \"table\", on_delete FROM pragma_foreign_key_list(?1)")?
            .query_map([&name], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<Result<Vec<_>, _>>()?;
        all.push(table(name, columns, refs));
    }
    Ok(all)
}

/// A server schema's tables, from its `information_schema` (the store's mark, `qpslab_store`,
/// and its views left out).
fn server_tables(conn: &Conn) -> Result<Vec<Table>, Error> {
    let names: Vec<String> = conn
        .prepare(
            "SELECT table_name FROM information_schema.tables
              WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE'
                AND table_name <> 'qpslab_store' ORDER BY table_name",
        )?
        .query_map([], |r| r.get::<_, Value>(0).map(text))?
        .collect::<Result<_, _>>()?;
    let mut all = Vec::new();
    for name in names {
        let columns = conn
            .prepare(
                "SELECT column_name, extra FROM information_schema.columns
                  WHERE table_schema = DATABASE() AND table_name = ?1
                  ORDER BY ordinal_position",
            )?
            .query_map([&name], |r| {
                Ok(Column {
                    name: text(r.get(0)?),
                    generated_id: text(r.get(1)?)
                        .to_ascii_lowercase()
                        .contains("auto_increment"),
                })
            })?
            .collect::<Result<Vec<_>, _>>()?;
        let refs = conn
            .prepare(
                "SELECT k.column_name, k.referenced_table_name, c.delete_rule
                   FROM information_schema.key_column_usage k
                   JOIN information_schema.referential_constraints c
                     ON c.constraint_schema = k.constraint_schema
                    AND c.constraint_name = k.constraint_name
                    AND c.table_name = k.table_name
                  WHERE k.table_schema = DATABASE() AND k.table_name = ?1
                    AND k.referenced_table_name IS NOT NULL",
            )?
            .query_map([&name], |r| {
                Ok((text(r.get(0)?), text(r.get(1)?), text(r.get(2)?)))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        all.push(table(name, columns, refs));
    }
    Ok(all)
}

/// `all`, parents first: each pass takes the tables whose references are all placed.
fn ordered(mut all: Vec<Table>) -> Result<Vec<Table>, Error> {
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

/// `SELECT` of every column of `table` in the store read, and the `INSERT` of one row in the
/// store written (the same text for both backends: the server's session translates it).
pub(super) fn statements(table: &Table) -> (String, String) {
    let cols = table
        .cols
        .iter()
        .map(|c| format!("\"{c}\""))
        .collect::<Vec<_>>()
        .join(", ");
    let marks = vec!["?"; table.cols.len()].join(", ");
    (
        format!("SELECT {cols} FROM \"{}\"", table.name),
        format!("INSERT INTO \"{}\" ({cols}) VALUES ({marks})", table.name),
    )
}

/// Inserts `row` of the store at `other` into `table` with a new id (when it has one),
/// recording old id to new; a row whose JSON or histogram columns do not read
/// ([`super::check::row`]) is refused instead.
pub(super) fn insert(
    to: &Conn,
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
    to.prepare_cached(sql)?.execute(row)?;
    let new = to.last_insert_rowid();
    if let Some(old) = old {
        ids.copied
            .entry(table.name.clone())
            .or_default()
            .insert(old, new);
    }
    Ok(new)
}

/// Reads every row of `table` in the store read (`select`: its [`statements`], perhaps with
/// an `ORDER BY`).
pub(super) fn rows(from: &Conn, table: &Table, select: &str) -> Result<Vec<Vec<Value>>, Error> {
    let n = table.cols.len();
    let mut st = from.prepare(select)?;
    let rows = st.query_map([], |r| (0..n).map(|i| r.get::<_, Value>(i)).collect())?;
    rows.collect()
}

/// As [`rows`], for a `select` of one owner's rows (`?1`: the owner's id).
pub(super) fn rows_of(
    from: &Conn,
    table: &Table,
    select: &str,
    owner: i64,
) -> Result<Vec<Vec<Value>>, Error> {
    let n = table.cols.len();
    let mut st = from.prepare(select)?;
    let rows = st.query_map([owner], |r| (0..n).map(|i| r.get::<_, Value>(i)).collect())?;
    rows.collect()
}
