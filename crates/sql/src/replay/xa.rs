//! XA transactions a replay leaves prepared.
//!
//! A prepared XA transaction outlives the session that prepared it (a disconnect, a
//! COM_RESET_CONNECTION), holding its locks until someone commits or rolls it back. A replay
//! must leave none: [`prepared`] lists the server's before the replay, and [`roll_back_new`]
//! rolls back those that appeared during it (as the connecting account: the replay's own
//! read-only account may not see them), so `XA RECOVER` is as the replay found it.

use qpslab_wire::Conn;
use std::collections::BTreeSet;

/// The server's prepared XA transactions, each as the SQL that names it (`XA RECOVER
/// FORMAT='SQL'`, MariaDB; MySQL's `CONVERT XID` form otherwise).
pub fn prepared(conn: &mut Conn) -> Result<BTreeSet<String>, qpslab_wire::Error> {
    let sql = if conn.is_mariadb() {
        "XA RECOVER FORMAT='SQL'"
    } else {
        "XA RECOVER CONVERT XID"
    };
    let r = conn.query(sql)?;
    let data = r
        .columns
        .iter()
        .position(|c| c.eq_ignore_ascii_case("data"))
        .unwrap_or(3);
    let format = r
        .columns
        .iter()
        .position(|c| c.eq_ignore_ascii_case("formatID"));
    let gtrid = r
        .columns
        .iter()
        .position(|c| c.eq_ignore_ascii_case("gtrid_length"));
    Ok(r.rows
        .iter()
        .filter_map(|row| {
            let d = row.get(data)?.clone()?;
            if conn_is_sql_form(&d) {
                return Some(d);
            }
            // MySQL: 0x<hex of gtrid and bqual>, split by gtrid_length.
            let hex = d.strip_prefix("0x")?;
            let g = gtrid.and_then(|i| row.get(i)?.as_deref()?.parse::<usize>().ok())?;
            let f = format.and_then(|i| row.get(i)?.clone())?;
            let (a, b) = hex.split_at((2 * g).min(hex.len()));
            Some(format!("X'{a}',X'{b}',{f}"))
        })
        .collect())
}

/// Whether an `XA RECOVER` data field is already SQL (MariaDB's `FORMAT='SQL'`).
fn conn_is_sql_form(d: &str) -> bool {
    d.starts_with('\'') || d.starts_with("X'")
}

/// Rolls back the prepared XA transactions that are not in `before`; returns each one's xid
/// and, for those that could not be rolled back, why.
pub fn roll_back_new(
    conn: &mut Conn,
    before: &BTreeSet<String>,
) -> Result<Vec<(String, Option<String>)>, qpslab_wire::Error> {
    let mut out = Vec::new();
    for xid in prepared(conn)?.difference(before) {
        let failed = match conn.execute(&format!("XA ROLLBACK {xid}")) {
            // XA_RBROLLBACK: a read-only branch, rolled back all the same.
            Ok(_) => None,
            Err(e) if e.server_code() == Some(1402) => None,
            Err(e) => Some(e.to_string()),
        };
        out.push((xid.clone(), failed));
    }
    Ok(out)
}
