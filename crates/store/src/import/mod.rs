//! `qpslab import` and `qpslab export`: runs and studies copied from one store into another,
//! so results measured on several hosts meet in one store to be compared, and a server's
//! results travel as a file. Either store may be a file or a server's: the copy reads one
//! store's rows and writes the other's through the store's one door (`db::Conn`), so a file
//! and a server are copied by the same code, in either direction.
//!
//! Every row is copied with a new id, in one transaction, and checked before it is written
//! (`check`: JSON columns parsed, histograms decoded, each run read back whole with its counts
//! against its contents): a failure leaves the store written as it was. A copied run keeps its
//! uuid, its host facts and, in `original_id` and `imported_from`, the id it had where it was
//! measured and the file (or the server's URL, without password) it came from; a run whose
//! uuid is already there is recognised and not copied again. A study is recognised by its
//! creation time and spec hash; a copied study whose name is taken there by another study is
//! stored as `NAME@HOST` (HOST: where its runs were measured), and its runs name it so.
//!
//! The copy follows the schema's foreign keys rather than a list of tables (as the store
//! written describes itself: `tables`): a row belongs to what it references `ON DELETE
//! CASCADE` (a phase to its run, a sample to its phase, a cell to its study), so it is copied
//! when that owner was copied, and tables added by later migrations come along without a
//! change here. A reference that does not own the row (a cell's run) is pointed at the row's
//! new id, or at the run already there with the same uuid.
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

use crate::db::OptionalExtension;
use crate::error::Error;
use crate::model::{RunId, StudyId};
use crate::schema;
use crate::Store;
use qpslab_core::fault::{user_if, Blame, Fault};
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};

mod check;
mod copy;
mod plan;
#[cfg(test)]
mod round_trip;
mod tables;
#[cfg(test)]
mod tests;

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
    /// Runs left out because they are still `running` in the other store (being measured, or
    /// their process died and nothing has opened that store since to close them).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub still_running: Vec<i64>,
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
    /// A run picked by id is still `running` in the other store.
    #[error("run {id} of {path} is still running there (or its process died: `qpslab show --db {path}` closes it); import it once it ended")]
    StillRunning {
        /// The other store.
        path: PathBuf,
        /// The run.
        id: i64,
    },
    /// The file to import from does not exist.
    #[error("{0} does not exist; name the qpslab store to import from")]
    NoFile(PathBuf),
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
    /// The other store holds something that does not read back (a JSON column that is not
    /// JSON, a histogram that does not decode, counts that disagree with what is stored).
    #[error("{path} is damaged ({what}); nothing imported")]
    Damaged {
        /// The other store.
        path: PathBuf,
        /// What does not read, and where.
        what: String,
    },
    /// The file to import from is this store itself.
    #[error("{0} is this results store itself; import from another store file")]
    SameStore(PathBuf),
    /// `export` names a file that exists: it writes a new store only.
    #[error("{0} exists; export writes a new store file only: name another --out (to add to {0}, run `qpslab import` with --db {0})")]
    Exists(PathBuf),
    /// `export` names a server's store: it writes an SQLite file.
    #[error("export writes an SQLite store file, not {0}; to copy into a server's store, run `qpslab import` with --db {0}")]
    ExportToServer(PathBuf),
}

impl Blame for ImportError {
    /// The user named the wrong file or something it does not hold: exit 2.
    fn fault(&self) -> Fault {
        user_if(match self {
            ImportError::Store(e) => e.is_user_error(),
            _ => true,
        })
    }
}

impl From<rusqlite::Error> for ImportError {
    fn from(e: rusqlite::Error) -> ImportError {
        ImportError::Store(Error::Sqlite(e))
    }
}

impl Store {
    /// Copies `picks` (every run and study when empty) from the store at `other` (a file, or
    /// a server's `mysql://` URL) into this one, in one transaction. See the module docs for
    /// what is kept and recognised.
    pub fn import(&mut self, other: &Path, picks: &[Pick]) -> Result<Imported, ImportError> {
        if crate::open_server::url(other).is_some() {
            let from = Store::open_to_read(other)?;
            if from.path == self.path {
                return Err(ImportError::SameStore(from.path.clone()));
            }
            return copy::copy(&from, &from.path, &mut self.conn, picks);
        }
        if !other.exists() {
            return Err(ImportError::NoFile(other.to_path_buf()));
        }
        if other.is_dir() {
            return Err(ImportError::NotAStore(other.to_path_buf()));
        }
        if same_file(other, &self.path) {
            return Err(ImportError::SameStore(other.to_path_buf()));
        }
        let source = Source::open(other)?;
        // The other store read as `show` reads it (its migrated copy when it is older).
        let from = Store::open_read_only(&source.path)?;
        copy::copy(&from, other, &mut self.conn, picks)
    }

    /// Copies `picks` (every run and study when empty) of this store into a new SQLite store
    /// file at `to`, as [`Store::import`] would copy them there; a file already at `to` is
    /// refused, and the new file is removed again when the copy fails.
    pub fn export(&self, to: &Path, picks: &[Pick]) -> Result<Imported, ImportError> {
        Store::check_export(to)?;
        let done = Store::open(to)
            .map_err(ImportError::from)
            .and_then(|mut new| copy::copy(self, &self.path, &mut new.conn, picks));
        if done.is_err() {
            for suffix in ["", "-wal", "-shm", "-journal"] {
                let mut p = to.as_os_str().to_owned();
                p.push(suffix);
                // Absent files are what is wanted.
                let _ = std::fs::remove_file(p);
            }
        }
        done
    }
}

impl Store {
    /// Refuses what [`Store::export`] cannot write to: a server's URL, a path where something
    /// already is (a file, a link, a directory), a file in a missing directory. Checked before
    /// the store to export is opened, so a bad `--out` fails first.
    pub fn check_export(to: &Path) -> Result<(), ImportError> {
        if crate::open_server::url(to).is_some() {
            return Err(ImportError::ExportToServer(PathBuf::from(
                crate::model::redact_url_passwords(&to.to_string_lossy()),
            )));
        }
        if to.symlink_metadata().is_ok() {
            return Err(ImportError::Exists(to.to_path_buf()));
        }
        Ok(Store::check_path(to)?)
    }
}

/// The `hostname` of a run's host facts (`host_json`), empty when not recorded.
fn hostname(host_json: &str) -> String {
    serde_json::from_str::<serde_json::Value>(host_json)
        .ok()
        .and_then(|h| h.get("hostname")?.as_str().map(str::to_string))
        .unwrap_or_default()
}

impl Store {
    /// The host each of `runs` was measured on (`uname -n`; empty when not recorded), in the
    /// order given: `show` names them when a store holds runs of several hosts.
    pub fn run_hosts(&self, runs: &[RunId]) -> Result<Vec<String>, Error> {
        let mut st = self
            .conn
            .prepare_cached("SELECT host_json FROM runs WHERE id = ?1")?;
        runs.iter()
            .map(|id| {
                let host = st.query_row([id.0], |r| r.get::<_, String>(0)).optional()?;
                Ok(host.as_deref().map(hostname).unwrap_or_default())
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
}

/// `path` with the characters a URI would read as its own escaped.
fn uri_path(path: &Path) -> String {
    path.to_string_lossy()
        .replace('%', "%25")
        .replace('?', "%3f")
        .replace('#', "%23")
}
