//! The server backend: the store's tables on a MariaDB or MySQL server, through qpslab's own
//! client, every statement prepared once per session (binary protocol: integers, doubles and
//! blobs cross exactly).
//!
//! SQLite serialises writers with one file lock; here an immediate transaction takes a named
//! lock of the schema (`GET_LOCK`) before it begins, so the store's read-then-write steps (the
//! next phase number, a study's driver) behave as on SQLite. The lock belongs to the session:
//! a writer killed mid-transaction loses its session, and the server rolls its work back and
//! frees the lock.
//!
//! A session lost outside a transaction (the store's server restarted, a proxy cut an idle
//! session) is opened again and the statement sent once more; one lost inside a transaction
//! fails that transaction, whose work the server rolled back, and the next opens a new
//! session: a writer that keeps what it measured writes it again (a phase's end rewrites
//! its intervals), so a short outage of the store loses nothing.

use super::dialect::{translate, Translated};
use super::{Behavior, Value};
use crate::error::Error;
use qpslab_wire::{Cell as Sent, Conn, Statement, Value as Param};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

/// How long an immediate transaction waits for the store's write lock (SQLite's busy wait).
pub(crate) const LOCK_WAIT: Duration = Duration::from_secs(30);

/// A session on the store's schema.
pub(crate) struct Session {
    conn: RefCell<Conn>,
    /// How to open the session again, when it was lost.
    reopen: Option<Box<dyn Fn() -> Result<Conn, qpslab_wire::Error> + Send>>,
    /// Whether a transaction is open (a lost session is then not reopened).
    in_tx: Cell<bool>,
    stmts: RefCell<HashMap<String, (Statement, Vec<usize>)>>,
    last_id: Cell<i64>,
    lock: String,
    locked: Cell<bool>,
}

impl Session {
    /// A session on `conn`, whose default schema is the store's.
    pub fn new(conn: Conn, schema: &str) -> Session {
        Session {
            conn: RefCell::new(conn),
            reopen: None,
            in_tx: Cell::new(false),
            stmts: RefCell::new(HashMap::new()),
            last_id: Cell::new(0),
            // GET_LOCK names are at most 64 characters.
            lock: format!(
                "qpslab-store:{}",
                schema.chars().take(50).collect::<String>()
            ),
            locked: Cell::new(false),
        }
    }

    /// Opens the session again with `reopen` when it is lost outside a transaction.
    pub fn reopening(
        mut self,
        reopen: impl Fn() -> Result<Conn, qpslab_wire::Error> + Send + 'static,
    ) -> Session {
        self.reopen = Some(Box::new(reopen));
        self
    }

    /// Runs `f` on the session; where the session was lost outside a transaction and can be
    /// opened again, opens it and runs `f` once more.
    fn retried<T>(
        &self,
        f: impl Fn(&Session) -> Result<T, qpslab_wire::Error>,
    ) -> Result<T, Error> {
        match f(self) {
            Err(e) if e.is_connection_lost() && !self.in_tx.get() => {
                let Some(reopen) = &self.reopen else {
                    return Err(server(e));
                };
                let fresh = reopen().map_err(server)?;
                *self.conn.borrow_mut() = fresh;
                // Prepared statements and named locks died with the old session.
                self.stmts.borrow_mut().clear();
                self.locked.set(false);
                f(self).map_err(server)
            }
            other => other.map_err(server),
        }
    }

    /// Runs a statement without parameters through the text protocol (DDL, transactions).
    pub fn plain(&self, sql: &str) -> Result<(), Error> {
        self.retried(|s| s.conn.borrow_mut().query(sql).map(|_| ()))
    }

    fn prepared(&self, sql: &str) -> Result<(Statement, Vec<usize>), qpslab_wire::Error> {
        if let Some(p) = self.stmts.borrow().get(sql) {
            return Ok(p.clone());
        }
        let Translated { sql: text, order } = translate(sql);
        let st = self.conn.borrow_mut().prepare(&text)?;
        self.stmts
            .borrow_mut()
            .insert(sql.to_string(), (st.clone(), order.clone()));
        Ok((st, order))
    }

    fn run(&self, sql: &str, values: &[Value]) -> Result<qpslab_wire::Typed, Error> {
        // Prepared (and translated) once; after a lost session, prepared again below.
        let (_, order) = self.retried(|s| s.prepared(sql))?;
        let params = order
            .iter()
            .map(|&i| {
                values.get(i).map(param).ok_or_else(|| {
                    Error::Corrupt(format!(
                        "statement takes parameter {} of {}",
                        i + 1,
                        values.len()
                    ))
                })
            })
            .collect::<Result<Vec<_>, Error>>()?;
        let r = self.retried(|s| {
            let (st, _) = s.prepared(sql)?;
            s.conn.borrow_mut().exec_typed(&st, &params)
        })?;
        if r.last_insert_id > 0 {
            self.last_id
                .set(i64::try_from(r.last_insert_id).unwrap_or(i64::MAX));
        }
        Ok(r)
    }

    /// Runs one statement; returns the rows it changed.
    pub fn execute(&self, sql: &str, values: &[Value]) -> Result<usize, Error> {
        Ok(self.run(sql, values)?.affected_rows as usize)
    }

    /// The rows of a query, at most `limit`.
    pub fn rows(
        &self,
        sql: &str,
        values: &[Value],
        limit: Option<usize>,
    ) -> Result<Vec<Vec<Value>>, Error> {
        let mut rows = self.run(sql, values)?.rows;
        if let Some(l) = limit {
            rows.truncate(l);
        }
        rows.into_iter()
            .map(|r| r.into_iter().map(value).collect())
            .collect()
    }

    /// The id the last INSERT of this session gave its row.
    pub fn last_insert_id(&self) -> i64 {
        self.last_id.get()
    }

    /// Begins a transaction, an immediate one holding the store's write lock.
    pub fn begin(&self, how: Behavior) -> Result<(), Error> {
        if how == Behavior::Immediate {
            let got = self.rows(
                "SELECT GET_LOCK(?1, ?2)",
                &[
                    Value::Text(self.lock.clone()),
                    Value::Integer(LOCK_WAIT.as_secs() as i64),
                ],
                Some(1),
            )?;
            if got.first().and_then(|r| r.first()) != Some(&Value::Integer(1)) {
                return Err(Error::Busy(format!(
                    "another qpslab held the store's write lock for {} s",
                    LOCK_WAIT.as_secs()
                )));
            }
            self.locked.set(true);
        }
        // Each writer writes rows of its own, and the named lock orders the steps that read
        // before they write: gap locks (REPEATABLE READ's) would only make two writers'
        // inserts and deletes in neighbouring ranges deadlock.
        let begun = self
            .plain("SET TRANSACTION ISOLATION LEVEL READ COMMITTED")
            .and_then(|()| self.plain("START TRANSACTION"));
        match begun {
            Ok(()) => self.in_tx.set(true),
            Err(_) => self.unlock(),
        }
        begun
    }

    /// Ends the transaction with `COMMIT` or `ROLLBACK`, and frees the write lock.
    pub fn end(&self, commit: bool) -> Result<(), Error> {
        let r = self.plain(if commit { "COMMIT" } else { "ROLLBACK" });
        self.in_tx.set(false);
        self.unlock();
        r
    }

    fn unlock(&self) {
        if self.locked.replace(false) {
            let _ = self.rows(
                "SELECT RELEASE_LOCK(?1)",
                &[Value::Text(self.lock.clone())],
                Some(1),
            );
        }
    }
}

/// What a server says of itself, enough to tell it from any other (`on_target.rs`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Identity {
    pub hostname: String,
    pub port: String,
    pub datadir: String,
}

impl Session {
    /// A session on the store's schema (created when missing, where `create`), set up as the
    /// store speaks (utf8mb4, strict), that opens itself again when lost. `shown` names the
    /// store in errors.
    pub fn connect(
        opts: &qpslab_core::ConnectOptions,
        shown: &Path,
        create: bool,
    ) -> Result<Session, Error> {
        let failed = |e: qpslab_wire::Error| Error::Server(format!("{}: {e}", shown.display()));
        let schema = opts.database.clone().unwrap_or_default();
        let mut conn = match Conn::connect(opts) {
            Err(qpslab_wire::Error::Server { code: 1049, .. }) if !create => {
                return Err(Error::Missing {
                    path: shown.to_path_buf(),
                })
            }
            Err(qpslab_wire::Error::Server { code: 1049, .. }) => {
                // No such schema yet: create it, as a new SQLite file would be.
                let mut bare = opts.clone();
                bare.database = None;
                let mut c = Conn::connect(&bare).map_err(failed)?;
                c.query(&format!(
                    "CREATE DATABASE IF NOT EXISTS `{}` CHARACTER SET utf8mb4",
                    schema.replace('`', "``")
                ))
                .map_err(failed)?;
                drop(c);
                Conn::connect(opts).map_err(failed)?
            }
            other => other.map_err(failed)?,
        };
        set_up(&mut conn).map_err(failed)?;
        let again = opts.clone();
        Ok(Session::new(conn, &schema).reopening(move || {
            let mut c = Conn::connect(&again)?;
            set_up(&mut c)?;
            Ok(c)
        }))
    }
}

/// A new session's settings: the store's text in utf8mb4, strict about what it stores.
fn set_up(conn: &mut Conn) -> Result<(), qpslab_wire::Error> {
    conn.query("SET NAMES utf8mb4")?;
    conn.query("SET SESSION sql_mode = 'STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION'")?;
    Ok(())
}

fn param(v: &Value) -> Param {
    match v {
        Value::Null => Param::Null,
        Value::Integer(i) => Param::Int(*i),
        Value::Real(f) => Param::Double(*f),
        Value::Text(s) => Param::Bytes(s.as_bytes().to_vec()),
        Value::Blob(b) => Param::Bytes(b.clone()),
    }
}

fn value(c: Sent) -> Result<Value, Error> {
    Ok(match c {
        Sent::Null => Value::Null,
        Sent::Int(i) => Value::Integer(i),
        Sent::UInt(u) => Value::Integer(
            i64::try_from(u).map_err(|_| Error::Corrupt(format!("{u} beyond 64-bit integers")))?,
        ),
        Sent::Double(f) => Value::Real(f),
        Sent::Bytes(b) => Value::Blob(b),
        Sent::Text(t) => Value::Text(t),
    })
}

fn server(e: qpslab_wire::Error) -> Error {
    Error::Server(e.to_string())
}
