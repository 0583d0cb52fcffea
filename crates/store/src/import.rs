//! `qpslab import`: runs and studies copied from another store into this one, so results
//! measured on several hosts meet in one store to be compared.
//!
//! Every row is copied with a new id, in one transaction: a failure leaves this store as it
//! was. An imported run keeps its uuid, its host facts and, in `original_id` and
//! `imported_from`, the id it had where it was measured and the file it came from; a run whose
//! uuid is already here is recognised and not copied again. A study is recognised by its
//! creation time and spec hash; an imported study whose name is taken here by another study
//! is stored as `NAME@HOST` (HOST: where its runs were measured), and its runs name it so.
//!
//! The copy follows the schema's foreign keys rather than a list of tables: a row belongs to
//! what it references `ON DELETE CASCADE` (a phase to its run, a sample to its phase, a cell to
//! its study), so it is copied when that owner was copied, and tables added by later migrations
//! come along without a change here. A reference that does not own the row (a cell's run) is
//! pointed at the row's new id, or at the run already here with the same uuid.
//!
//! ```no_run
//! # fn demo() -> Result<(), qpslab_store::ImportError> {
//! use qpslab_store::{Pick, Store};
//! let mut store = Store::open("qpslab.db".as_ref())?;
//! let done = store.import("other-host.db".as_ref(), &[Pick::Run(3)])?;
//! for run in &done.runs {
//!     println!("run {} of {} is here as run {}", run.original, run.host, run.id.0);
//! }
//! # Ok(()) }
//! ```

use crate::error::Error;
use crate::model::{RunId, StudyId};
use crate::schema;
use crate::Store;
use rusqlite::types::Value;
use rusqlite::{Connection, OpenFlags, OptionalExtension, Transaction, TransactionBehavior};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// One thing to import, as the user named it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pick {
    /// A run, by its id in the other store.
    Run(i64),
    /// A study (with all its cells and their runs), by name.
    Study(String),
}

/// What import did with one run of the other store.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ImportedRun {
    /// Its id in the other store.
    pub original: i64,
    /// Its id here.
    pub id: RunId,
    /// It was here already (same uuid): nothing was copied.
    pub already: bool,
    /// The host it was measured on (`uname -n`).
    pub host: String,
    /// Its workload.
    pub workload: String,
}

/// What import did with one study of the other store.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ImportedStudy {
    /// Its name in the other store.
    pub original_name: String,
    /// Its name here: the same, or `NAME@HOST` when another study here has the name.
    pub name: String,
    /// Its id here.
    pub id: StudyId,
    /// It was here already (same creation time and spec): nothing was copied.
    pub already: bool,
}

/// Everything one import did, in the other store's id order.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Imported {
    /// The runs, each copied or recognised.
    pub runs: Vec<ImportedRun>,
    /// The studies, each copied or recognised.
    pub studies: Vec<ImportedStudy>,
}

/// Why an import did not happen (nothing was written).
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// Opening, reading or writing a store failed (its own message says which and why).
    #[error(transparent)]
    Store(#[from] Error),
    /// The other store has no run of that id.
    #[error("{path} has no run {id} (`qpslab show --db {path}` lists its runs)")]
    NoRun {
        /// The other store.
        path: PathBuf,
        /// The id asked for.
        id: i64,
    },
    /// The other store has no study of that name.
    #[error("{path} has no study named '{name}' (`qpslab lab show --db {path}` lists them)")]
    NoStudy {
        /// The other store.
        path: PathBuf,
        /// The name asked for.
        name: String,
    },
    /// The file to import from is not a qpslab results store (another program's file, or no
    /// SQLite database at all).
    #[error("{0} is not a qpslab results store; nothing imported")]
    NotAStore(PathBuf),
    /// The file to import from was written by a newer qpslab.
    #[error("{path} has results schema version {found}, newer than this qpslab reads ({supported}); import it with a newer qpslab")]
    Newer {
        /// The other store.
        path: PathBuf,
        /// Its schema version.
        found: i64,
        /// The newest this build reads.
        supported: i64,
    },
    /// The file to import from is this store itself.
    #[error("{0} is this results store itself; import from another store file")]
    SameStore(PathBuf),
}

impl ImportError {
    /// The user named the wrong file or something it does not hold: exit 2.
    pub fn is_user_error(&self) -> bool {
        match self {
            ImportError::Store(e) => e.is_user_error(),
            _ => true,
        }
    }
}

impl From<rusqlite::Error> for ImportError {
    fn from(e: rusqlite::Error) -> ImportError {
        ImportError::Store(Error::Sqlite(e))
    }
}

impl Store {
    /// Copies `picks` (every run and study when empty) from the store at `other` into this
    /// one, in one transaction. See the module docs for what is kept and recognised.
    pub fn import(&mut self, other: &Path, picks: &[Pick]) -> Result<Imported, ImportError> {
        if !other.exists() {
            return Err(Error::Missing {
                path: other.to_path_buf(),
            }
            .into());
        }
        if other.is_dir() {
            return Err(ImportError::NotAStore(other.to_path_buf()));
        }
        if same_file(other, &self.path) {
            return Err(ImportError::SameStore(other.to_path_buf()));
        }
        let source = Source::open(other)?;
        self.conn
            .execute("ATTACH DATABASE ?1 AS src", [source.uri()])?;
        let done = copy(&mut self.conn, other, picks);
        // Detached whatever happened, so this store is left as it was opened.
        let detached = self.conn.execute("DETACH DATABASE src", []);
        let done = done?;
        detached?;
        Ok(done)
    }
}

impl Store {
    /// The host each of `runs` was measured on (`uname -n`; empty when not recorded), in the
    /// order given: `show` names them when a store holds runs of several hosts.
    pub fn run_hosts(&self, runs: &[RunId]) -> Result<Vec<String>, Error> {
        let mut st = self.conn.prepare_cached(
            "SELECT coalesce(json_extract(host_json, '$.hostname'), '') FROM runs WHERE id = ?1",
        )?;
        runs.iter()
            .map(|id| {
                Ok(st
                    .query_row([id.0], |r| r.get::<_, String>(0))
                    .optional()?
                    .unwrap_or_default())
            })
            .collect()
    }
}

/// True when `a` and `b` are one file.
fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// The other store, checked, and brought to this build's schema in a private copy when it is
/// older (the user's file is only read).
struct Source {
    path: PathBuf,
    /// The migrated copy, removed on drop.
    copy: Option<PathBuf>,
}

impl Drop for Source {
    fn drop(&mut self) {
        if let Some(copy) = &self.copy {
            // A leftover copy in the temporary directory harms nothing.
            let _ = std::fs::remove_file(copy);
        }
    }
}

impl Source {
    fn open(path: &Path) -> Result<Source, ImportError> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI;
        let conn = Connection::open_with_flags(format!("file:{}", uri_path(path)), flags).map_err(
            |source| Error::Open {
                path: path.to_path_buf(),
                source,
            },
        )?;
        let version = match schema::version(&conn, path) {
            // An empty file: not a store anything was measured into.
            Ok(0) | Err(Error::NotADatabase { .. } | Error::NotQpslab { .. }) => {
                return Err(ImportError::NotAStore(path.to_path_buf()))
            }
            Err(Error::NewerSchema {
                found, supported, ..
            }) => {
                return Err(ImportError::Newer {
                    path: path.to_path_buf(),
                    found,
                    supported,
                })
            }
            other => other?,
        };
        if version == schema::SCHEMA_VERSION {
            return Ok(Source {
                path: path.to_path_buf(),
                copy: None,
            });
        }
        let copy = std::env::temp_dir().join(format!(
            "qpslab-import-{}-{}.db",
            std::process::id(),
            crate::model::unix_now().to_bits()
        ));
        let source = Source {
            path: copy.clone(),
            copy: Some(copy.clone()),
        };
        conn.execute("VACUUM INTO ?1", [copy.to_string_lossy()])?;
        drop(conn);
        let mut conn = Connection::open(&copy)?;
        schema::check_and_migrate(&mut conn, &copy)?;
        Ok(source)
    }

    /// The `ATTACH` URI that opens it read-only.
    fn uri(&self) -> String {
        format!("file:{}?mode=ro", uri_path(&self.path))
    }
}

/// `path` with the characters a URI would read as its own escaped.
fn uri_path(path: &Path) -> String {
    path.to_string_lossy()
        .replace('%', "%25")
        .replace('?', "%3f")
        .replace('#', "%23")
}

/// A table of the schema, as its copy needs it.
struct Table {
    name: String,
    cols: Vec<String>,
    /// The position of its `id INTEGER PRIMARY KEY`, if it has one (new rows get new ids).
    id: Option<usize>,
    /// Its references to other tables.
    refs: Vec<Ref>,
}

/// One foreign key column.
struct Ref {
    col: usize,
    parent: String,
    /// `ON DELETE CASCADE`: the row belongs to the referenced row.
    owner: bool,
}

impl Table {
    fn col(&self, name: &str) -> Result<usize, Error> {
        self.cols
            .iter()
            .position(|c| c == name)
            .ok_or_else(|| Error::Corrupt(format!("table {} has no column {name}", self.name)))
    }
}

/// The tables of this store's schema, each after every table it references.
fn tables(tx: &Transaction<'_>) -> Result<Vec<Table>, Error> {
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
struct Ids {
    copied: HashMap<String, HashMap<i64, i64>>,
    found: HashMap<String, HashMap<i64, i64>>,
}

impl Ids {
    fn get(&self, table: &str, old: i64) -> Option<i64> {
        [&self.copied, &self.found]
            .into_iter()
            .find_map(|m| m.get(table).and_then(|m| m.get(&old)).copied())
    }
}

/// The import itself, in one transaction on `conn` with the other store attached as `src`.
fn copy(conn: &mut Connection, other: &Path, picks: &[Pick]) -> Result<Imported, ImportError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let (runs, studies) = chosen(&tx, other, picks)?;
    let tables = tables(&tx)?;
    let mut ids = Ids::default();
    let mut done = Imported::default();
    let renamed = plan_studies(&tx, &studies, &mut ids, &mut done)?;
    let origin = other.display().to_string();
    for table in &tables {
        match table.name.as_str() {
            "runs" => copy_runs(&tx, table, &runs, &renamed, &origin, &mut ids, &mut done)?,
            "studies" => copy_studies(&tx, table, &renamed, &origin, &mut ids)?,
            "tune_trials" => copy_trials(&tx, table, &renamed, &mut ids)?,
            _ => copy_owned(&tx, table, &mut ids)?,
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

/// The other store's run ids and study ids to import: every run and study when `picks` is
/// empty; otherwise the runs picked and each picked study with every run its cells measured.
fn chosen(
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

/// Decides each study's fate before anything is copied (its runs must name it as it will be
/// named here): recognised (same creation time and spec hash as a study here), or copied under
/// its own name, or `NAME@HOST` when the name is taken. Returns old id to new name of those to
/// copy.
fn plan_studies(
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

/// `SELECT` of every column of `table` in the other store, and the `INSERT` of one row here.
fn statements(table: &Table) -> (String, String) {
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

/// Inserts `row` into `table` with a new id (when it has one), recording old id to new.
fn insert(
    tx: &Transaction<'_>,
    table: &Table,
    sql: &str,
    mut row: Vec<Value>,
    ids: &mut Ids,
) -> Result<i64, Error> {
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
fn rows(tx: &Transaction<'_>, table: &Table, select: &str) -> Result<Vec<Vec<Value>>, Error> {
    let n = table.cols.len();
    let mut st = tx.prepare(select)?;
    let rows = st.query_map([], |r| (0..n).map(|i| r.get::<_, Value>(i)).collect())?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Copies the chosen runs that are not here yet (by uuid), keeping their origin.
fn copy_runs(
    tx: &Transaction<'_>,
    table: &Table,
    chosen: &[i64],
    renamed: &[(i64, String, String)],
    origin: &str,
    ids: &mut Ids,
    done: &mut Imported,
) -> Result<(), Error> {
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
        if let Value::Text(name) = &row[study] {
            if let Some((_, _, new)) = renamed.iter().find(|(_, n, _)| n == name) {
                row[study] = Value::Text(new.clone());
            }
        }
        // Measured elsewhere first: keep where it was measured, not where it passed through.
        if row[original] == Value::Null {
            row[original] = Value::Integer(old);
            row[from] = Value::Text(origin.to_string());
        }
        let new = insert(tx, table, &insert_sql, row, ids)?;
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
    table: &Table,
    renamed: &[(i64, String, String)],
    origin: &str,
    ids: &mut Ids,
) -> Result<(), Error> {
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
            row[from] = Value::Text(origin.to_string());
        }
        insert(tx, table, &insert_sql, row, ids)?;
    }
    Ok(())
}

/// Copies the trials of each tune session whose proof study is copied (a session is named as
/// its study), under the study's name here, each pointed at its run here.
fn copy_trials(
    tx: &Transaction<'_>,
    table: &Table,
    renamed: &[(i64, String, String)],
    ids: &mut Ids,
) -> Result<(), Error> {
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
        insert(tx, table, &insert_sql, row, ids)?;
    }
    Ok(())
}

/// Copies the rows of `table` that belong to rows copied now (phases of a copied run, samples
/// of a copied phase, cells of a copied study...), their references pointed at the new ids. A
/// table whose rows belong to nothing is not copied.
fn copy_owned(tx: &Transaction<'_>, table: &Table, ids: &mut Ids) -> Result<(), Error> {
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
        insert(tx, table, &insert_sql, row, ids)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store at `path` holding one run (uuid `uuid`, host `host`) of study `study` with a
    /// phase, two samples, a histogram and a telemetry tick, and the study's one cell and
    /// attempt. Ids start at `first` so that copies can be told from originals.
    fn store_with_run(path: &Path, uuid: &str, host: &str, study: &str, first: i64) -> Store {
        let store = Store::open(path).unwrap();
        fill(&store.conn, uuid, host, study, first);
        store
    }

    /// The rows of [`store_with_run`], written through `conn`.
    fn fill(conn: &Connection, uuid: &str, host: &str, study: &str, first: i64) {
        conn.execute_batch(&format!(
                "INSERT INTO runs (id, uuid, started_at, finished_at, status, command, workload,
                                   plan_json, target, server_version, server_json, host_json,
                                   tool_version, study_id, cell_label)
                 VALUES ({first}, '{uuid}', 1.0, 2.0, 'completed', 'qpslab run', 'oltp_read_only',
                         '{{}}', 'root@h:3306/sbtest', '10.11', '{{}}',
                         '{{\"hostname\": \"{host}\", \"cpu_model\": \"cpu\"}}', '0.1', '{study}', 'c1');
                 INSERT INTO phases (id, run_id, seq, recorded_at, threads, duration_s, events,
                                     reads, writes, other, errors_json, reconnects, tps, qps,
                                     lat_min_ms, lat_avg_ms, lat_max_ms, percentiles_json,
                                     statements_json, client_cpu_user_s, client_cpu_sys_s,
                                     client_max_rss_kib, summary_json)
                 VALUES ({first}, {first}, 1, 1.0, 4, 1.0, 10, 0, 0, 0, '{{}}', 0, 10.0, 10.0, 1, 1,
                         1, '[]', '[]', 0, 0, 0, '{{}}');
                 INSERT INTO samples (phase_id, seq, elapsed_s, interval_s, events, reads, writes,
                                      other, errors, reconnects, lat_count, lat_min_ms, lat_avg_ms,
                                      lat_max_ms, p_json, client_cpu_user_s, client_cpu_sys_s,
                                      client_max_rss_kib, late_events, max_lag_ms)
                 VALUES ({first}, 1, 0.5, 0.5, 4, 0, 0, 0, 0, 0, 4, 1, 1, 1, '[]', 0, 0, 0, 0, 0),
                        ({first}, 2, 1.0, 0.5, 6, 0, 0, 0, 0, 0, 6, 1, 1, 1, '[]', 0, 0, 0, 0, 0);
                 INSERT INTO histograms (phase_id, seq, name, v2) VALUES ({first}, 0, 'event', x'1c84');
                 INSERT INTO telemetry (phase_id, seq, elapsed_s, source, json)
                 VALUES ({first}, 1, 0.5, 'server_status', '{{}}');
                 INSERT INTO studies (id, name, spec_toml, spec_hash, created_at, status, env_json,
                                      factors_json)
                 VALUES ({first}, '{study}', 'name = \"{study}\"', 'h-{uuid}', 1.0, 'done', '{{}}', '[]');
                 INSERT INTO cells (id, study_id, seq, label, variant, levels_json, params_json,
                                    repeat, status, run_id)
                 VALUES ({first}, {first}, 1, 'c1', 'v', '{{}}', '{{}}', 1, 'done', {first});
                 INSERT INTO cell_attempts (cell_id, attempt, run_id, status, recorded_at)
                 VALUES ({first}, 1, {first}, 'done', 1.0);
                 INSERT INTO tune_trials (session, seq, phase, settings_json, tps, duration_s,
                                          run_id, recorded_at)
                 VALUES ('{study}', 1, 'confirm tuned', '{{}}', 10.0, 1.0, {first}, 1.0);"
        ))
        .unwrap();
    }

    fn count(store: &Store, sql: &str) -> i64 {
        store.conn.query_row(sql, [], |r| r.get(0)).unwrap()
    }

    #[test]
    fn a_run_and_its_study_are_copied_with_new_ids_and_recognised_the_second_time() {
        let dir = tempfile::tempdir().unwrap();
        let (here, there) = (dir.path().join("here.db"), dir.path().join("there.db"));
        let mut store = store_with_run(&here, "u-here", "alpha", "s", 1);
        drop(store_with_run(&there, "u-there", "beta", "s", 7));

        let done = store.import(&there, &[]).unwrap();
        assert_eq!(done.runs.len(), 1);
        let run = &done.runs[0];
        assert_eq!(
            (run.original, run.already, run.host.as_str()),
            (7, false, "beta")
        );
        assert_ne!(run.id, RunId(7));
        let id = run.id.0;
        assert_eq!(
            count(
                &store,
                &format!("SELECT original_id FROM runs WHERE id = {id}")
            ),
            7
        );
        for (table, n) in [("samples", 2), ("histograms", 1), ("telemetry", 1)] {
            let sql = format!(
                "SELECT count(*) FROM {table} t JOIN phases p ON p.id = t.phase_id
                 WHERE p.run_id = {id}"
            );
            assert_eq!(count(&store, &sql), n, "{table}");
        }
        // The name `s` is taken here: the study comes as s@beta, its cell and run follow it.
        assert_eq!(done.studies.len(), 1);
        assert_eq!(done.studies[0].name, "s@beta");
        let sid = done.studies[0].id.0;
        assert_eq!(
            count(
                &store,
                &format!("SELECT run_id FROM cells WHERE study_id = {sid}")
            ),
            id
        );
        assert_eq!(
            count(
                &store,
                &format!(
                    "SELECT count(*) FROM cell_attempts a JOIN cells c ON c.id = a.cell_id
                     WHERE c.study_id = {sid} AND a.run_id = {id}"
                )
            ),
            1
        );
        assert_eq!(
            count(
                &store,
                &format!("SELECT count(*) FROM runs WHERE id = {id} AND study_id = 's@beta'")
            ),
            1
        );

        let trial = "SELECT run_id FROM tune_trials WHERE session = 's@beta'";
        assert_eq!(
            count(&store, trial),
            id,
            "the tune session follows its study"
        );

        let again = store.import(&there, &[]).unwrap();
        assert!(again.runs[0].already && again.runs[0].id == RunId(id));
        assert!(again.studies[0].already && again.studies[0].name == "s@beta");
        assert_eq!(count(&store, "SELECT count(*) FROM runs"), 2);
        assert_eq!(count(&store, "SELECT count(*) FROM samples"), 4);
        assert_eq!(count(&store, "SELECT count(*) FROM studies"), 2);
        assert_eq!(count(&store, "SELECT count(*) FROM tune_trials"), 2);
    }

    #[test]
    fn a_missing_id_or_a_foreign_file_imports_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let (here, there) = (dir.path().join("here.db"), dir.path().join("there.db"));
        let mut store = Store::open(&here).unwrap();
        drop(store_with_run(&there, "u-there", "beta", "s", 7));

        let e = store
            .import(&there, &[Pick::Run(7), Pick::Run(8)])
            .unwrap_err();
        assert!(matches!(e, ImportError::NoRun { id: 8, .. }), "{e}");
        assert!(e.is_user_error());
        let e = store
            .import(&there, &[Pick::Study("nope".into())])
            .unwrap_err();
        assert!(matches!(e, ImportError::NoStudy { .. }), "{e}");
        assert_eq!(count(&store, "SELECT count(*) FROM runs"), 0);

        let text = dir.path().join("notes.txt");
        std::fs::write(&text, "not a database at all, just some words").unwrap();
        let e = store.import(&text, &[]).unwrap_err();
        assert!(matches!(e, ImportError::NotAStore(_)), "{e}");
        let e = store.import(dir.path(), &[]).unwrap_err();
        assert!(matches!(e, ImportError::NotAStore(_)), "{e}");
        let other = dir.path().join("other.sqlite");
        Connection::open(&other)
            .unwrap()
            .execute_batch("CREATE TABLE t (x)")
            .unwrap();
        let e = store.import(&other, &[]).unwrap_err();
        assert!(
            e.is_user_error() && e.to_string().contains("not a qpslab"),
            "{e}"
        );
        let newer = Connection::open(&there).unwrap();
        newer
            .pragma_update(None, "user_version", schema::SCHEMA_VERSION + 1)
            .unwrap();
        drop(newer);
        let e = store.import(&there, &[]).unwrap_err();
        assert!(e.is_user_error() && e.to_string().contains("newer"), "{e}");
        let e = store.import(&here, &[]).unwrap_err();
        assert!(matches!(e, ImportError::SameStore(_)), "{e}");
        assert_eq!(count(&store, "SELECT count(*) FROM runs"), 0);
    }

    #[test]
    fn an_older_store_is_migrated_in_a_copy_and_left_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let (here, there) = (dir.path().join("here.db"), dir.path().join("there.db"));
        let mut store = Store::open(&here).unwrap();
        let mut old = Connection::open(&there).unwrap();
        schema::create_before_import(&mut old).unwrap();
        fill(&old, "u-there", "beta", "s", 7);
        let before: i64 = old
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap();
        drop(old);
        let done = store.import(&there, &[Pick::Run(7)]).unwrap();
        assert_eq!(done.runs.len(), 1);
        assert!(done.studies.is_empty());
        let version: i64 = Connection::open(&there)
            .unwrap()
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap();
        assert_eq!(version, before, "the other file is only read");
        let id = done.runs[0].id.0;
        let sql = format!("SELECT original_id FROM runs WHERE id = {id}");
        assert_eq!(count(&store, &sql), 7);
    }
}
