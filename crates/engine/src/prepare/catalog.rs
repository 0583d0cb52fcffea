//! The `qpslab_datasets` record of what prepare built, and reading a dataset's shape back from
//! the server to decide whether it can serve a workload.

use super::{quote_ident, Context, PrepareError};
use crate::workload::dataset::{tables_used, TableShape, SCHEMA_VERSION};
use crate::workload::schema::table_name;
use qpslab_core::workload::WorkloadOptions;
use qpslab_wire::Conn;
use std::collections::{HashMap, HashSet};

/// Whether the dataset in the connection's current database can serve a workload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DatasetStatus {
    /// None of the workload's tables exist.
    Missing,
    /// qpslab built the tables, completely, with the shape the workload wants.
    Matches,
    /// Tables exist but cannot serve the workload as asked; the text says why.
    Different(String),
    /// sbtest tables not created by qpslab (e.g. by `sysbench prepare`) have the wanted shape:
    /// usable, but qpslab will not drop them.
    Foreign,
}

/// A table as `qpslab_datasets` records it.
pub(super) struct Record {
    shape: TableShape,
    complete: bool,
}

const CATALOG: &str = "qpslab_datasets";

/// A string literal for SQL, quotes and backslashes escaped.
fn quote_str(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// `sbtestN` -> N (0 for anything else).
pub(super) fn table_number(name: &str) -> u32 {
    name.strip_prefix("sbtest")
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

pub(super) fn create_catalog(conn: &mut Conn) -> Result<(), PrepareError> {
    conn.execute(
        "CREATE TABLE IF NOT EXISTS qpslab_datasets (
  table_name VARCHAR(64) NOT NULL PRIMARY KEY,
  schema_version INT NOT NULL,
  workload VARCHAR(64) NOT NULL,
  tables INT NOT NULL,
  table_size BIGINT NOT NULL,
  id_secondary TINYINT NOT NULL,
  auto_inc TINYINT NOT NULL,
  create_secondary TINYINT NOT NULL,
  engine VARCHAR(64) NOT NULL,
  create_table_options VARCHAR(1024) NOT NULL,
  complete TINYINT NOT NULL,
  created_at DATETIME NOT NULL,
  tool_version VARCHAR(32) NOT NULL
) ENGINE=InnoDB",
    )
    .context(|| format!("creating {CATALOG}"))?;
    Ok(())
}

/// Records table `t` as created by qpslab, not yet loaded.
pub(super) fn record(conn: &mut Conn, w: &WorkloadOptions, t: u32) -> Result<(), PrepareError> {
    let shape = TableShape::wanted(w);
    let sql = format!(
        "REPLACE INTO qpslab_datasets VALUES ({}, {SCHEMA_VERSION}, {}, {}, {}, {}, {}, {}, {}, {}, 0, NOW(), {})",
        quote_str(&table_name(t)),
        quote_str(w.kind.name()),
        tables_used(w),
        shape.rows,
        u8::from(shape.secondary),
        u8::from(shape.auto_inc),
        u8::from(shape.k_index),
        quote_str(&shape.engine),
        quote_str(&w.create_table_options),
        quote_str(env!("CARGO_PKG_VERSION")),
    );
    conn.execute(&sql)
        .context(|| format!("recording sbtest{t} in {CATALOG}"))?;
    Ok(())
}

pub(super) fn mark_complete(conn: &mut Conn, t: u32) -> Result<(), PrepareError> {
    conn.execute(&format!(
        "UPDATE qpslab_datasets SET complete = 1 WHERE table_name = 'sbtest{t}'"
    ))
    .context(|| format!("recording sbtest{t} as complete"))?;
    Ok(())
}

/// Names `sbtestN` present in `db`.
pub(super) fn sbtest_tables(conn: &mut Conn, db: &str) -> Result<HashSet<String>, PrepareError> {
    let r = conn
        .query(&format!(
            "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = {} AND TABLE_NAME LIKE 'sbtest%'",
            quote_str(db)
        ))
        .context(|| format!("listing tables of {db}"))?;
    Ok(r.rows
        .into_iter()
        .filter_map(|row| row.into_iter().next().flatten())
        .filter(|n| table_number(n) > 0 && table_name(table_number(n)) == *n)
        .collect())
}

pub(super) fn database_exists(conn: &mut Conn, db: &str) -> Result<bool, PrepareError> {
    let r = conn
        .query(&format!(
            "SELECT 1 FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = {}",
            quote_str(db)
        ))
        .context(|| format!("looking for database {db}"))?;
    Ok(!r.rows.is_empty())
}

pub(super) fn has_catalog(conn: &mut Conn, db: &str) -> Result<bool, PrepareError> {
    let r = conn
        .query(&format!(
            "SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = {} AND TABLE_NAME = '{CATALOG}'",
            quote_str(db)
        ))
        .context(|| format!("looking for {CATALOG}"))?;
    Ok(!r.rows.is_empty())
}

pub(super) fn records(conn: &mut Conn, db: &str) -> Result<HashMap<String, Record>, PrepareError> {
    let r = conn
        .query(&format!(
            "SELECT table_name, table_size, id_secondary, auto_inc, create_secondary, engine, complete FROM {}.{CATALOG}",
            quote_ident(db)
        ))
        .context(|| format!("reading {CATALOG}"))?;
    let mut out = HashMap::new();
    for row in r.rows {
        let f = |i: usize| field(&row, i);
        let flag = |i: usize| f(i) == "1";
        out.insert(
            f(0),
            Record {
                shape: TableShape {
                    rows: f(1).parse().unwrap_or(0),
                    secondary: flag(2),
                    auto_inc: flag(3),
                    k_index: flag(4),
                    engine: f(5).to_ascii_lowercase(),
                },
                complete: flag(6),
            },
        );
    }
    Ok(out)
}

pub(super) fn forget(conn: &mut Conn, db: &str, table: &str) -> Result<(), PrepareError> {
    conn.execute(&format!(
        "DELETE FROM {}.{CATALOG} WHERE table_name = {}",
        quote_ident(db),
        quote_str(table)
    ))
    .context(|| format!("removing {table} from {CATALOG}"))?;
    Ok(())
}

pub(super) fn drop_catalog_if_empty(conn: &mut Conn, db: &str) -> Result<(), PrepareError> {
    if records(conn, db)?.is_empty() {
        conn.execute(&format!("DROP TABLE {}.{CATALOG}", quote_ident(db)))
            .context(|| format!("dropping {CATALOG}"))?;
    }
    Ok(())
}

/// Checks the sbtest tables the workload needs in the connection's current database.
pub(super) fn dataset_status(
    conn: &mut Conn,
    w: &WorkloadOptions,
) -> Result<DatasetStatus, PrepareError> {
    let db = super::current_database(conn)?;
    let present = sbtest_tables(conn, &db)?;
    let records = if has_catalog(conn, &db)? {
        records(conn, &db)?
    } else {
        HashMap::new()
    };
    let need: Vec<String> = (1..=tables_used(w)).map(table_name).collect();
    if need
        .iter()
        .all(|t| !present.contains(t) && !records.contains_key(t))
    {
        return Ok(DatasetStatus::Missing);
    }
    let want = TableShape::wanted(w);
    let mut foreign = false;
    for t in &need {
        if let Some(rec) = records.get(t) {
            if !present.contains(t) {
                return Ok(DatasetStatus::Different(format!(
                    "{t} is recorded in {CATALOG} but missing"
                )));
            }
            if !rec.complete {
                return Ok(DatasetStatus::Different(format!(
                    "{t} was not completely prepared (interrupted?)"
                )));
            }
            if let Some(why) = rec.shape.mismatch(&want, t) {
                return Ok(DatasetStatus::Different(why));
            }
        } else if present.contains(t) {
            match read_shape(conn, &db, t, true)? {
                Ok(shape) => {
                    if let Some(why) = shape.mismatch(&want, t) {
                        return Ok(DatasetStatus::Different(format!(
                            "{why} (not created by qpslab)"
                        )));
                    }
                }
                Err(why) => return Ok(DatasetStatus::Different(why)),
            }
            foreign = true;
        } else {
            return Ok(DatasetStatus::Different(format!(
                "{t} is missing (the dataset has fewer tables than --tables)"
            )));
        }
    }
    Ok(if foreign {
        DatasetStatus::Foreign
    } else {
        DatasetStatus::Matches
    })
}

/// Why `table` in `db`, recorded as `rec`, is not the table qpslab created: its columns are
/// not sysbench's, or its keys or engine are not those recorded (someone replaced it). `None`
/// when it is ours. Row counts are not compared: workloads insert and delete rows.
pub(super) fn not_ours(
    conn: &mut Conn,
    db: &str,
    table: &str,
    rec: &Record,
) -> Result<Option<String>, PrepareError> {
    let shape = match read_shape(conn, db, table, false)? {
        Ok(shape) => shape,
        Err(why) => return Ok(Some(why)),
    };
    let want = TableShape {
        rows: shape.rows,
        // An interrupted prepare may not have built the k_N index yet.
        k_index: if rec.complete {
            rec.shape.k_index
        } else {
            shape.k_index
        },
        ..rec.shape.clone()
    };
    Ok(shape
        .mismatch(&want, table)
        .map(|why| format!("{why}, not what {CATALOG} recorded")))
}

/// Reads a table's shape in `db` (rows counted only if `count_rows`, else 0); `Err(why)` when
/// its columns are not sysbench's.
fn read_shape(
    conn: &mut Conn,
    db: &str,
    table: &str,
    count_rows: bool,
) -> Result<Result<TableShape, String>, PrepareError> {
    let at = TableRef {
        schema: quote_str(db),
        lit: quote_str(table),
        table,
    };
    let auto_inc = match read_columns(conn, &at)? {
        Ok(auto_inc) => auto_inc,
        Err(why) => return Ok(Err(why)),
    };
    let indexes = read_indexes(conn, &at)?;
    let k_name = format!("k_{}", table_number(table));
    let engine = read_engine(conn, &at)?;
    let rows = if count_rows {
        row_count(conn, db, table)?
    } else {
        0
    };
    Ok(Ok(TableShape {
        rows,
        secondary: !indexes.iter().any(|(n, c)| n == "PRIMARY" && c == "id"),
        auto_inc,
        k_index: indexes.iter().any(|(n, c)| *n == k_name && c == "k"),
        engine,
    }))
}

/// A table named as information_schema queries need it: schema and table as string literals.
struct TableRef<'a> {
    schema: String,
    lit: String,
    table: &'a str,
}

impl TableRef<'_> {
    fn reading(&self) -> String {
        format!("reading the definition of {}", self.table)
    }
}

/// Column `i` of a result row, `""` when absent or NULL.
fn field(row: &[Option<String>], i: usize) -> String {
    row.get(i).cloned().flatten().unwrap_or_default()
}

/// Whether the table's id is AUTO_INCREMENT; `Err(why)` when its columns are not sysbench's.
fn read_columns(conn: &mut Conn, at: &TableRef<'_>) -> Result<Result<bool, String>, PrepareError> {
    let TableRef { schema, lit, table } = at;
    let cols = conn
        .query(&format!(
            "SELECT COLUMN_NAME, DATA_TYPE, CHARACTER_MAXIMUM_LENGTH, EXTRA FROM information_schema.COLUMNS \
             WHERE TABLE_SCHEMA = {schema} AND TABLE_NAME = {lit} ORDER BY ORDINAL_POSITION"
        ))
        .context(|| at.reading())?;
    let got: Vec<(String, String, String)> = cols
        .rows
        .iter()
        .map(|r| {
            (
                field(r, 0).to_ascii_lowercase(),
                field(r, 1).to_ascii_lowercase(),
                field(r, 2),
            )
        })
        .collect();
    let want = [
        ("id", "int", ""),
        ("k", "int", ""),
        ("c", "char", "120"),
        ("pad", "char", "60"),
    ];
    let same = got.len() == want.len()
        && got
            .iter()
            .zip(want)
            .all(|(g, w)| g.0 == w.0 && g.1 == w.1 && (w.2.is_empty() || g.2 == w.2));
    if !same {
        return Ok(Err(format!(
            "{table} does not have sysbench's columns (id INTEGER, k INTEGER, c CHAR(120), pad CHAR(60))"
        )));
    }
    Ok(Ok(cols
        .rows
        .first()
        .and_then(|r| r.get(3).cloned().flatten())
        .is_some_and(|e| {
            e.to_ascii_lowercase().contains("auto_increment")
        })))
}

/// The table's (index name, column name) pairs, column names in lower case.
fn read_indexes(conn: &mut Conn, at: &TableRef<'_>) -> Result<Vec<(String, String)>, PrepareError> {
    let TableRef { schema, lit, .. } = at;
    let idx = conn
        .query(&format!(
            "SELECT INDEX_NAME, COLUMN_NAME FROM information_schema.STATISTICS \
             WHERE TABLE_SCHEMA = {schema} AND TABLE_NAME = {lit}"
        ))
        .context(|| at.reading())?;
    Ok(idx
        .rows
        .iter()
        .map(|r| (field(r, 0), field(r, 1).to_ascii_lowercase()))
        .collect())
}

/// The table's storage engine in lower case (`""` when unknown).
fn read_engine(conn: &mut Conn, at: &TableRef<'_>) -> Result<String, PrepareError> {
    let TableRef { schema, lit, .. } = at;
    Ok(conn
        .query(&format!(
            "SELECT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = {schema} AND TABLE_NAME = {lit}"
        ))
        .context(|| at.reading())?
        .first_value()
        .unwrap_or_default()
        .to_ascii_lowercase())
}

/// `SELECT COUNT(*)` of `db`.`table` (0 when the reply is not a number).
fn row_count(conn: &mut Conn, db: &str, table: &str) -> Result<u64, PrepareError> {
    Ok(conn
        .query(&format!(
            "SELECT COUNT(*) FROM {}.{}",
            quote_ident(db),
            quote_ident(table)
        ))
        .context(|| format!("counting rows of {table}"))?
        .first_value()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0))
}
