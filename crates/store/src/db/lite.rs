//! The SQLite backend: statements through rusqlite's statement cache.

use super::{Behavior, Value};
use crate::error::Error;
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, ToSql};

impl ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            Value::Null => ToSqlOutput::Borrowed(ValueRef::Null),
            Value::Integer(i) => ToSqlOutput::Borrowed(ValueRef::Integer(*i)),
            Value::Real(f) => ToSqlOutput::Borrowed(ValueRef::Real(*f)),
            Value::Text(s) => ToSqlOutput::Borrowed(ValueRef::Text(s.as_bytes())),
            Value::Blob(b) => ToSqlOutput::Borrowed(ValueRef::Blob(b)),
        })
    }
}

fn value(v: ValueRef<'_>) -> Result<Value, Error> {
    Ok(match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Integer(i),
        ValueRef::Real(f) => Value::Real(f),
        ValueRef::Text(t) => Value::Text(
            std::str::from_utf8(t)
                .map_err(|e| Error::Corrupt(format!("text that is not UTF-8: {e}")))?
                .to_string(),
        ),
        ValueRef::Blob(b) => Value::Blob(b.to_vec()),
    })
}

pub(super) fn execute(c: &Connection, sql: &str, values: &[Value]) -> Result<usize, Error> {
    let mut st = c.prepare_cached(sql)?;
    Ok(st.execute(rusqlite::params_from_iter(values))?)
}

pub(super) fn rows(
    c: &Connection,
    sql: &str,
    values: &[Value],
    limit: Option<usize>,
) -> Result<Vec<Vec<Value>>, Error> {
    let mut st = c.prepare_cached(sql)?;
    let n = st.column_count();
    let mut rows = st.query(rusqlite::params_from_iter(values))?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let row = (0..n)
            .map(|i| value(r.get_ref(i)?))
            .collect::<Result<Vec<_>, Error>>()?;
        out.push(row);
        if limit.is_some_and(|l| out.len() >= l) {
            break;
        }
    }
    Ok(out)
}

pub(super) fn begin(c: &Connection, how: Behavior) -> Result<(), Error> {
    c.execute_batch(match how {
        Behavior::Deferred => "BEGIN DEFERRED",
        Behavior::Immediate => "BEGIN IMMEDIATE",
    })?;
    Ok(())
}
