//! TPC-C's dataset: `qpslab prepare tpcc --warehouses N` and `cleanup tpcc`.
//!
//! The nine tables of the spec ([`schema`]) are filled by a generator that depends only on the
//! seed and the warehouse ([`gen`]), so several machines can each load a slice
//! (`--warehouses A-B`) of one dataset. Loaders take one warehouse at a time ([`load`]) and
//! record it in `qpslab_tpcc` ([`catalog`]) in the transaction of its last rows: a prepare
//! that was killed, or lost its connection, is run again and loads only the warehouses not
//! recorded, after deleting their partial rows. Row counts are verified per table at the end.

mod batch;
mod catalog;
mod check;
mod gen;
mod load;
mod schema;

use super::{ensure_database, max_packet, quote_ident, resolve_method, Context};
use super::{CleanupReport, DatasetStatus, LoadMethod, PrepareConfig, PrepareError};
use super::{PrepareProgress, PrepareReport};
use batch::Encoding;
use catalog::CATALOG;
use gen::{CUSTOMERS, DISTRICTS, ITEMS, NEW_ORDERS};
use load::{LoadSpec, Unit};
use qpslab_core::workload::WorkloadOptions;
use qpslab_core::{ConnectOptions, Warehouses};
use qpslab_wire::Conn;
use std::time::Instant;

use schema::TABLES;

/// Checks TPC-C's consistency conditions 1 to 12 in the database of `opts` (default `sbtest`);
/// condition 11 is reported not applicable once a Delivery has run since the load. A load
/// not finished (a warehouse or ITEM with rows but no record of completion) is
/// [`PrepareError::Verify`], before any condition is checked.
pub fn check(
    opts: &ConnectOptions,
) -> Result<Vec<qpslab_core::ConsistencyCondition>, PrepareError> {
    let database = opts
        .database
        .clone()
        .unwrap_or_else(|| super::DEFAULT_DATABASE.to_string());
    let mut db_opts = opts.clone();
    db_opts.database = Some(database.clone());
    let mut conn = Conn::connect(&db_opts).context(|| format!("connecting to {database}"))?;
    let present = catalog::present_tables(&mut conn, &database)?;
    let missing: Vec<&str> = TABLES
        .iter()
        .copied()
        .filter(|t| !present.iter().any(|p| p == t))
        .collect();
    if !missing.is_empty() {
        return Err(PrepareError::Unsupported(format!(
            "{database} has no TPC-C dataset (missing {}): run `qpslab prepare tpcc` first",
            missing.join(", ")
        )));
    }
    // A load killed half way breaks conditions for want of rows, or passes them by chance:
    // either way the conditions say nothing until the load is finished.
    let units = check::units_with_rows(&mut conn)?;
    if let Some(why) = incomplete(&mut conn, &database, units)? {
        return Err(PrepareError::Verify(why));
    }
    check::check(&mut conn)
}

/// Prepares the TPC-C warehouses `w.warehouses` (ITEM too when the slice holds warehouse 1).
pub(super) fn prepare(
    opts: &ConnectOptions,
    w: &WorkloadOptions,
    cfg: &PrepareConfig,
    progress: &mut dyn FnMut(PrepareProgress),
) -> Result<PrepareReport, PrepareError> {
    let started = Instant::now();
    let (db_opts, database) = ensure_database(opts, cfg.create_database)?;
    let mut conn = Conn::connect(&db_opts).context(|| format!("connecting to {database}"))?;
    let present = catalog::present_tables(&mut conn, &database)?;
    let resumed = present.iter().any(|t| t == CATALOG);
    if !resumed && !present.is_empty() {
        return Err(PrepareError::Conflict(format!(
            "{database} already holds TPC-C tables not created by qpslab ({}); drop them yourself \
             or use another --database",
            present.join(", ")
        )));
    }
    catalog::create(&mut conn)?;
    let loaded = catalog::loaded(&mut conn, &database)?;
    // The seed only picks which spec-valid rows a warehouse gets (`run` resolves a seed from
    // the clock when it prepares), so warehouses of different seeds make one valid dataset;
    // the tables' foreign keys must agree.
    let seed = w.rand.seed;
    if let Some((n, l)) = loaded
        .iter()
        .find(|(_, l)| l.foreign_keys != w.foreign_keys)
    {
        return Err(PrepareError::Conflict(format!(
            "{database} holds a TPC-C dataset loaded with foreign keys {} (warehouse {n}); use \
             the same --foreign-keys, or run `qpslab cleanup tpcc` first",
            if l.foreign_keys { "on" } else { "off" }
        )));
    }
    // Tables may reference tables created after them.
    conn.execute("SET foreign_key_checks = 0")
        .context(|| "creating the TPC-C tables".into())?;
    let mut created = 0;
    for t in TABLES.iter().filter(|t| !present.iter().any(|p| p == *t)) {
        conn.execute(&schema::create_table_sql(
            t,
            &w.storage_engine,
            &w.create_table_options,
            w.foreign_keys,
        ))
        .context(|| format!("creating {t}"))?;
        created += 1;
    }
    let mut units = Vec::new();
    if w.warehouses.first == 1 && !loaded.contains_key(&0) {
        units.push(Unit::Items);
    }
    units.extend(
        w.warehouses
            .iter()
            .filter(|n| !loaded.contains_key(n))
            .map(Unit::Warehouse),
    );
    let method = match resolve_method(&mut conn, cfg.method)? {
        LoadMethod::Bulk => LoadMethod::Bulk,
        // TPC-C rows are not streamed as LOAD DATA: multi-row INSERTs on other servers.
        _ => LoadMethod::Insert,
    };
    let mut rows = 0;
    if !units.is_empty() {
        let now = conn
            .query("SELECT NOW()")
            .context(|| "reading the server's time".into())?
            .first_value()
            .unwrap_or("2000-01-01 00:00:00")
            .to_string();
        let spec = LoadSpec {
            db_opts: &db_opts,
            seed,
            foreign_keys: w.foreign_keys,
            encoding: if method == LoadMethod::Bulk {
                Encoding::Bulk
            } else {
                Encoding::Text
            },
            batch_bytes: super::load::batch_bytes(max_packet(&mut conn)?),
            now,
            resumed,
            units: units.clone(),
        };
        rows = load::load_units(&spec, cfg.threads, started, progress)?;
    }
    let fresh: Vec<u32> = units
        .iter()
        .filter(|u| **u != Unit::Items)
        .map(|u| u.id())
        .collect();
    verify(&mut conn, &database, w.warehouses, &fresh)?;
    Ok(PrepareReport {
        database,
        tables: created,
        rows,
        method,
        already_present: units.is_empty(),
        elapsed: started.elapsed(),
    })
}

/// Checks the row counts of warehouses `ws` against the spec's population: of the tables
/// whose row counts the transactions never change (WAREHOUSE, DISTRICT, CUSTOMER, STOCK, and
/// ITEM when `ws` holds warehouse 1) for every warehouse, and of the others (HISTORY, ORDERS,
/// NEW-ORDER, ORDER-LINE, which runs grow and shrink) for the warehouses `fresh` loaded now,
/// ORDER-LINE against the lines the loaders recorded.
fn verify(conn: &mut Conn, db: &str, ws: Warehouses, fresh: &[u32]) -> Result<(), PrepareError> {
    let loaded = catalog::loaded(conn, db)?;
    let missing: Vec<String> = ws
        .iter()
        .filter(|n| !loaded.contains_key(n))
        .map(|n| n.to_string())
        .collect();
    if !missing.is_empty() {
        return Err(PrepareError::Verify(format!(
            "warehouse(s) {} are not recorded as loaded",
            missing.join(", ")
        )));
    }
    let all = format!("BETWEEN {} AND {}", ws.first, ws.last);
    let list: Vec<String> = fresh.iter().map(|w| w.to_string()).collect();
    let new = format!("IN ({})", list.join(","));
    let (n, f) = (u64::from(ws.count()), fresh.len() as u64);
    let d = u64::from(DISTRICTS);
    let c = u64::from(CUSTOMERS);
    let lines: u64 = fresh.iter().map(|w| loaded[w].order_lines).sum();
    let mut want = vec![
        ("warehouse", &all, n),
        ("district", &all, d * n),
        ("customer", &all, d * c * n),
        ("stock", &all, n * u64::from(ITEMS)),
    ];
    if f > 0 {
        want.extend([
            ("history", &new, d * c * f),
            ("new_orders", &new, d * u64::from(NEW_ORDERS) * f),
            ("orders", &new, d * c * f),
            ("order_line", &new, lines),
        ]);
    }
    let mut wrong = Vec::new();
    for (t, which, expected) in want {
        let col = schema::warehouse_column(t).unwrap_or("w_id");
        let got = count(
            conn,
            &format!("SELECT COUNT(*) FROM {t} WHERE {col} {which}"),
        )?;
        if got != expected {
            wrong.push(format!("{t} has {got} rows, expected {expected}"));
        }
    }
    if ws.first == 1 {
        let got = count(conn, "SELECT COUNT(*) FROM item")?;
        if got != u64::from(ITEMS) {
            wrong.push(format!("item has {got} rows, expected {ITEMS}"));
        }
    }
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(PrepareError::Verify(format!(
            "row counts of warehouses {ws} do not match: {}",
            wrong.join("; ")
        )))
    }
}

/// The number a counting query returns (0 when the reply is not a number).
fn count(conn: &mut Conn, sql: &str) -> Result<u64, PrepareError> {
    Ok(conn
        .query(sql)
        .context(|| format!("verifying the row counts ({sql})"))?
        .first_value()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0))
}

/// Whether the connection's database holds the TPC-C warehouses `w.warehouses` complete.
pub(super) fn status(conn: &mut Conn, w: &WorkloadOptions) -> Result<DatasetStatus, PrepareError> {
    let db = super::current_database(conn)?;
    let present = catalog::present_tables(conn, &db)?;
    if present.is_empty() {
        return Ok(DatasetStatus::Missing);
    }
    if !present.iter().any(|t| t == CATALOG) {
        return Ok(DatasetStatus::Foreign);
    }
    let item = (w.warehouses.first == 1).then_some(0);
    let units = item.into_iter().chain(w.warehouses.iter());
    Ok(match incomplete(conn, &db, units)? {
        None => DatasetStatus::Matches,
        Some(why) => DatasetStatus::Different(why),
    })
}

/// Which of `units` (warehouse numbers, 0 for ITEM) the catalog of `db` does not record as
/// completely loaded, said in one line; `None` when all are. Used by `run` for the warehouses
/// it needs and by `check tpcc` for those that have rows.
fn incomplete(
    conn: &mut Conn,
    db: &str,
    units: impl IntoIterator<Item = u32>,
) -> Result<Option<String>, PrepareError> {
    let loaded = catalog::loaded(conn, db)?;
    let missing: Vec<String> = units
        .into_iter()
        .filter(|n| !loaded.contains_key(n))
        .map(|n| match n {
            0 => "item".to_string(),
            n => n.to_string(),
        })
        .collect();
    Ok((!missing.is_empty()).then(|| {
        format!(
            "TPC-C warehouse(s) {} not completely loaded (run prepare again to finish)",
            missing.join(", ")
        )
    }))
}

/// Drops the TPC-C tables and their catalog from the database of `opts` (default `sbtest`);
/// refuses, dropping nothing, when they exist without the catalog (not created by qpslab).
pub fn cleanup(opts: &ConnectOptions) -> Result<CleanupReport, PrepareError> {
    let database = opts
        .database
        .clone()
        .unwrap_or_else(|| super::DEFAULT_DATABASE.to_string());
    let mut admin = opts.clone();
    admin.database = None;
    let mut conn =
        Conn::connect(&admin).context(|| format!("connecting to {}", opts.describe()))?;
    let present = catalog::present_tables(&mut conn, &database)?;
    let mut report = CleanupReport {
        database: database.clone(),
        dropped: Vec::new(),
    };
    if present.is_empty() {
        return Ok(report);
    }
    if !present.iter().any(|t| t == CATALOG) {
        return Err(PrepareError::Conflict(format!(
            "refusing to drop {} in {database}: not created by qpslab (no {CATALOG}); drop \
             them yourself",
            present.join(", ")
        )));
    }
    conn.execute("SET foreign_key_checks = 0")
        .context(|| "cleaning up".into())?;
    let db = quote_ident(&database);
    // Referencing tables first, the catalog last: an interrupted cleanup can be run again.
    for t in TABLES.iter().rev().chain([&CATALOG]) {
        if present.iter().any(|p| p == t) {
            conn.execute(&format!("DROP TABLE IF EXISTS {db}.{t}"))
                .context(|| format!("dropping {t}"))?;
            report.dropped.push(t.to_string());
        }
    }
    Ok(report)
}
