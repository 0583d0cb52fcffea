//! `qpslab_tpcc`: the record of a TPC-C load, one row per loaded warehouse (warehouse 0 is
//! ITEM), written in the same transaction as that warehouse's last rows, so a row means the
//! warehouse is complete and a missing row means it must be (re)loaded. The table exists before
//! any TPC-C table is created: its presence says that the nine tables are qpslab's.

use super::super::{quote_ident, Context, PrepareError};
use super::schema::TABLES;
use qpslab_wire::Conn;
use std::collections::BTreeMap;

/// The catalog's name.
pub const CATALOG: &str = "qpslab_tpcc";

/// The version of the generated data; a load with another version is not resumed.
pub const DATA_VERSION: u32 = 1;

/// A completed warehouse (0: ITEM) as recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loaded {
    /// The seed its rows came from.
    pub seed: u64,
    /// Whether the tables were created with foreign keys.
    pub foreign_keys: bool,
    /// Rows it put in ORDER-LINE.
    pub order_lines: u64,
}

/// Creates the catalog if missing.
pub fn create(conn: &mut Conn) -> Result<(), PrepareError> {
    conn.execute(&format!(
        "CREATE TABLE IF NOT EXISTS {CATALOG} (
  warehouse INT NOT NULL PRIMARY KEY,
  data_version INT NOT NULL,
  seed BIGINT UNSIGNED NOT NULL,
  foreign_keys TINYINT NOT NULL,
  order_lines BIGINT NOT NULL,
  loaded_at DATETIME NOT NULL,
  tool_version VARCHAR(32) NOT NULL
) ENGINE=InnoDB"
    ))
    .context(|| format!("creating {CATALOG}"))?;
    Ok(())
}

/// The statement recording warehouse `w` (0: ITEM) as complete; run it in the transaction of
/// the warehouse's last rows.
pub fn complete_sql(w: u32, seed: u64, foreign_keys: bool, order_lines: u64) -> String {
    format!(
        "REPLACE INTO {CATALOG} VALUES ({w}, {DATA_VERSION}, {seed}, {}, {order_lines}, NOW(), '{}')",
        u8::from(foreign_keys),
        env!("CARGO_PKG_VERSION")
    )
}

/// The TPC-C tables and the catalog present in `db`.
pub fn present_tables(conn: &mut Conn, db: &str) -> Result<Vec<String>, PrepareError> {
    let names: Vec<String> = TABLES
        .iter()
        .chain([&CATALOG])
        .map(|t| format!("'{t}'"))
        .collect();
    let r = conn
        .query(&format!(
            "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = '{}' AND TABLE_NAME IN ({})",
            db.replace('\\', "\\\\").replace('\'', "\\'"),
            names.join(",")
        ))
        .context(|| format!("listing the tables of {db}"))?;
    Ok(r.rows
        .into_iter()
        .filter_map(|row| row.into_iter().next().flatten())
        .collect())
}

/// The completed warehouses of `db`'s catalog (0: ITEM), of the current data version.
pub fn loaded(conn: &mut Conn, db: &str) -> Result<BTreeMap<u32, Loaded>, PrepareError> {
    let r = conn
        .query(&format!(
            "SELECT warehouse, seed, foreign_keys, order_lines, data_version FROM {}.{CATALOG}",
            quote_ident(db)
        ))
        .context(|| format!("reading {CATALOG}"))?;
    let mut out = BTreeMap::new();
    for row in r.rows {
        let f = |i: usize| row.get(i).cloned().flatten().unwrap_or_default();
        let (Ok(w), Ok(seed)) = (f(0).parse(), f(1).parse()) else {
            continue;
        };
        if f(4) != DATA_VERSION.to_string() {
            continue;
        }
        out.insert(
            w,
            Loaded {
                seed,
                foreign_keys: f(2) == "1",
                order_lines: f(3).parse().unwrap_or(0),
            },
        );
    }
    Ok(out)
}
