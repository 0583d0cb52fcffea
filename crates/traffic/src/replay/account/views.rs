//! The views a read-only account may read: a SQL SECURITY DEFINER view runs its query, and the
//! stored functions it calls, with its definer's rights, so SELECT on it lets the account do
//! what the definer may (a function that deletes, called from the view, deletes), stopped only
//! by a read-only transaction the session could undo. In a database that holds such a view the
//! account is granted SELECT table by table, on its tables, sequences and INVOKER views, and
//! the server refuses the DEFINER views (1142); elsewhere it keeps SELECT on the database.

use qpslab_lab::ExecError;
use qpslab_wire::Conn;
use std::collections::BTreeMap;

/// What the account may read of a database that holds DEFINER views.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Narrowed {
    /// Its tables, sequences and INVOKER views, as grant objects (`` `db`.`t` ``).
    pub readable: Vec<String>,
    /// Its DEFINER views, left out.
    pub definer_views: usize,
}

/// The databases among `dbs` (none: every database) that hold a SQL SECURITY DEFINER view,
/// with what the account may read there.
pub(super) fn narrowed(
    conn: &mut Conn,
    dbs: &[String],
) -> Result<BTreeMap<String, Narrowed>, ExecError> {
    let fail = |e: qpslab_wire::Error| ExecError::Replay(format!("listing the views: {e}"));
    let mut definer: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let rows = conn
        .query(
            "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.VIEWS \
             WHERE SECURITY_TYPE = 'DEFINER'",
        )
        .map_err(fail)?
        .rows;
    for row in rows {
        let mut row = row.into_iter().map(Option::unwrap_or_default);
        let (Some(db), Some(view)) = (row.next(), row.next()) else {
            continue;
        };
        if dbs.is_empty() || dbs.contains(&db) {
            definer.entry(db).or_default().push(view);
        }
    }
    let mut out = BTreeMap::new();
    for (db, views) in definer {
        let literal = db.replace('\\', "\\\\").replace('\'', "''");
        let tables = conn
            .query(&format!(
                "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = '{literal}'"
            ))
            .map_err(fail)?
            .rows;
        let readable = tables
            .into_iter()
            .filter_map(|r| r.into_iter().next().flatten())
            .filter(|t| !views.contains(t))
            .map(|t| object(&db, &t))
            .collect();
        let n = Narrowed {
            readable,
            definer_views: views.len(),
        };
        out.insert(db, n);
    }
    Ok(out)
}

/// `` `db`.`t` ``.
fn object(db: &str, table: &str) -> String {
    let q = |s: &str| format!("`{}`", s.replace('`', "``"));
    format!("{}.{}", q(db), q(table))
}

#[cfg(test)]
mod tests {
    #[test]
    fn objects_are_quoted_as_grants_write_them() {
        assert_eq!(super::object("a`b", "t"), "`a``b`.`t`");
    }
}
