//! The store's one door to its database: a session on an SQLite file (the default) or on a
//! MariaDB/MySQL server (`--db mysql://...`), with one small API in the shape the store's
//! modules already speak (`execute`, `query_row`, `prepare` + `query_map`, transactions,
//! `optional`). Every statement is written once, in the SQL both backends accept (numbered
//! `?N` placeholders, `INSERT OR IGNORE`); the server backend rewrites those two spellings
//! for MySQL ([`dialect`]).
//!
//! Values cross the door as [`Value`]s: parameters through [`ToValue`] (the [`params!`]
//! macro), columns back through [`FromValue`] (`row.get::<_, T>(i)`).

mod dialect;
mod lite;
pub(crate) mod server;
mod value;

pub(crate) use value::{FromValue, ToValue, Value};

use crate::error::Error;
use std::cell::Cell;

/// Parameters as the `params!` macro builds them: a slice of values to convert.
#[macro_export]
#[doc(hidden)]
macro_rules! store_params {
    () => { &[] as &[&dyn $crate::db::ToValue] };
    ($($p:expr),+ $(,)?) => { &[$(&$p as &dyn $crate::db::ToValue),+] as &[&dyn $crate::db::ToValue] };
}
pub(crate) use store_params as params;

/// What a statement's parameters can be given as: `params![..]`, an array of one type
/// (`[id]`, `[&name]`), or `[]`.
pub(crate) trait Params {
    /// The parameters as values, in order.
    fn values(self) -> Result<Vec<Value>, Error>;
}

impl Params for &[&dyn ToValue] {
    fn values(self) -> Result<Vec<Value>, Error> {
        self.iter().map(|p| p.to_value()).collect()
    }
}

impl Params for [&dyn ToValue; 0] {
    fn values(self) -> Result<Vec<Value>, Error> {
        Ok(Vec::new())
    }
}

macro_rules! array_params {
    ($($n:literal),*) => {$(
        impl<T: ToValue> Params for [T; $n] {
            fn values(self) -> Result<Vec<Value>, Error> {
                self.iter().map(ToValue::to_value).collect()
            }
        }
    )*};
}
array_params!(1, 2, 3, 4, 5, 6, 7, 8);

impl Params for Vec<Value> {
    fn values(self) -> Result<Vec<Value>, Error> {
        Ok(self)
    }
}

/// How a column is named in [`Row::get`]: by its position.
pub(crate) trait RowIndex {
    /// The position.
    fn index(self) -> usize;
}

impl RowIndex for usize {
    fn index(self) -> usize {
        self
    }
}

/// One row of a result, its values in column order.
pub(crate) struct Row<'a> {
    values: &'a [Value],
}

impl<'a> Row<'a> {
    /// Column `idx`, converted to `T` (an `Option` for a column that may be NULL). The
    /// first type parameter is the index's, as rusqlite spells it: `r.get::<_, f64>(2)`.
    pub fn get<I: RowIndex, T: FromValue>(&self, idx: I) -> Result<T, Error> {
        let idx = idx.index();
        let v = self
            .values
            .get(idx)
            .ok_or_else(|| Error::Corrupt(format!("no column {idx} in a result row")))?;
        T::from_value(v).map_err(|why| Error::Corrupt(format!("column {idx}: {why}")))
    }
}

/// A query that found no row: [`OptionalExtension::optional`] turns it into `None`.
pub(crate) use crate::error::Error::NoRows;

/// `.optional()` on a one-row query, as rusqlite's extension of the same name.
pub(crate) trait OptionalExtension<T> {
    /// `Ok(None)` where the query found no row.
    fn optional(self) -> Result<Option<T>, Error>;
}

impl<T> OptionalExtension<T> for Result<T, Error> {
    fn optional(self) -> Result<Option<T>, Error> {
        match self {
            Ok(v) => Ok(Some(v)),
            Err(NoRows) => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// How a transaction begins: `Immediate` takes the store's write lock at once (two writers
/// then never both read a next number and collide on it), `Deferred` when it first writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Behavior {
    /// Locks when it first writes.
    Deferred,
    /// Locks at once.
    Immediate,
}

/// A session on the store's database.
pub(crate) enum Conn {
    /// An SQLite file.
    Lite(rusqlite::Connection),
    /// A schema on a MariaDB or MySQL server.
    Server(Box<server::Session>),
}

impl Conn {
    /// Runs one statement; returns the rows it changed.
    pub fn execute<P: Params>(&self, sql: &str, params: P) -> Result<usize, Error> {
        let values = params.values()?;
        match self {
            Conn::Lite(c) => lite::execute(c, sql, &values),
            Conn::Server(s) => s.execute(sql, &values),
        }
    }

    /// Runs statements separated by `;`, without parameters.
    pub fn execute_batch(&self, sql: &str) -> Result<(), Error> {
        match self {
            Conn::Lite(c) => Ok(c.execute_batch(sql)?),
            Conn::Server(s) => s.plain(sql),
        }
    }

    /// The first row of a query, through `f`; [`NoRows`] where there is none.
    pub fn query_row<T, P: Params, F>(&self, sql: &str, params: P, f: F) -> Result<T, Error>
    where
        F: FnOnce(&Row<'_>) -> Result<T, Error>,
    {
        let rows = self.rows(sql, params.values()?, Some(1))?;
        match rows.first() {
            Some(values) => f(&Row { values }),
            None => Err(NoRows),
        }
    }

    /// A statement to run once or many times (cached by the backend).
    pub fn prepare<'c>(&'c self, sql: &str) -> Result<Stmt<'c>, Error> {
        Ok(Stmt {
            conn: self,
            sql: sql.to_string(),
        })
    }

    /// As [`Conn::prepare`]; the backend caches every statement anyway.
    pub fn prepare_cached<'c>(&'c self, sql: &str) -> Result<Stmt<'c>, Error> {
        self.prepare(sql)
    }

    /// The id the last INSERT of this session gave its row.
    pub fn last_insert_rowid(&self) -> i64 {
        match self {
            Conn::Lite(c) => c.last_insert_rowid(),
            Conn::Server(s) => s.last_insert_id(),
        }
    }

    /// Begins a transaction; it rolls back when dropped uncommitted.
    pub fn transaction_with_behavior(&mut self, how: Behavior) -> Result<Tx<'_>, Error> {
        match self {
            Conn::Lite(c) => lite::begin(c, how)?,
            Conn::Server(s) => s.begin(how)?,
        }
        Ok(Tx {
            conn: self,
            open: Cell::new(true),
        })
    }

    /// Begins a deferred transaction.
    pub fn transaction(&mut self) -> Result<Tx<'_>, Error> {
        self.transaction_with_behavior(Behavior::Deferred)
    }

    /// The rows of a query, at most `limit`.
    fn rows(
        &self,
        sql: &str,
        values: Vec<Value>,
        limit: Option<usize>,
    ) -> Result<Vec<Vec<Value>>, Error> {
        match self {
            Conn::Lite(c) => lite::rows(c, sql, &values, limit),
            Conn::Server(s) => s.rows(sql, &values, limit),
        }
    }

    /// Whether this is a server's store.
    pub fn is_server(&self) -> bool {
        matches!(self, Conn::Server(_))
    }
}

/// A statement of a session, run with parameters as rusqlite's prepared statements are.
pub(crate) struct Stmt<'c> {
    conn: &'c Conn,
    sql: String,
}

impl Stmt<'_> {
    /// Runs it; returns the rows changed.
    pub fn execute<P: Params>(&mut self, params: P) -> Result<usize, Error> {
        self.conn.execute(&self.sql, params)
    }

    /// Every row, each through `f`, as results to iterate (`for row in rows { row? }`).
    pub fn query_map<T, P: Params, F>(
        &mut self,
        params: P,
        mut f: F,
    ) -> Result<std::vec::IntoIter<Result<T, Error>>, Error>
    where
        F: FnMut(&Row<'_>) -> Result<T, Error>,
    {
        let rows = self.conn.rows(&self.sql, params.values()?, None)?;
        Ok(rows
            .iter()
            .map(|values| f(&Row { values }))
            .collect::<Vec<_>>()
            .into_iter())
    }

    /// The first row through `f`; [`NoRows`] where there is none.
    pub fn query_row<T, P: Params, F>(&mut self, params: P, f: F) -> Result<T, Error>
    where
        F: FnOnce(&Row<'_>) -> Result<T, Error>,
    {
        self.conn.query_row(&self.sql, params, f)
    }
}

/// A transaction: the session's API, committed by [`Tx::commit`] or rolled back when dropped.
pub(crate) struct Tx<'c> {
    conn: &'c mut Conn,
    open: Cell<bool>,
}

impl Tx<'_> {
    /// Makes its changes durable and visible.
    pub fn commit(self) -> Result<(), Error> {
        self.open.set(false);
        match &*self.conn {
            Conn::Lite(c) => Ok(c.execute_batch("COMMIT")?),
            Conn::Server(s) => s.end(true),
        }
    }
}

impl std::ops::Deref for Tx<'_> {
    type Target = Conn;
    fn deref(&self) -> &Conn {
        self.conn
    }
}

impl Drop for Tx<'_> {
    fn drop(&mut self) {
        if self.open.get() {
            match &*self.conn {
                Conn::Lite(c) => {
                    let _ = c.execute_batch("ROLLBACK");
                }
                Conn::Server(s) => {
                    let _ = s.end(false);
                }
            }
        }
    }
}
