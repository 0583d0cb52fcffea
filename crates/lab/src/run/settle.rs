//! Settling a server before it is measured: after a bulk load or a (re)start InnoDB is still
//! flushing dirty pages and purging old row versions, and the buffer pool is cold, so the first
//! cells would measure the server's housekeeping, not the workload.
//!
//! [`settle`] waits (bounded) until `Innodb_buffer_pool_pages_dirty` and the purge backlog
//! (`trx_rseg_history_len` in `information_schema.INNODB_METRICS`) are drained, then reads the
//! dataset once (each table through its primary key and its `k` index, as much as the buffer
//! pool holds). On our sandboxes it lowers `innodb_max_dirty_pages_pct` to 0 and raises
//! `innodb_io_capacity` to `innodb_io_capacity_max` meanwhile so the page cleaner flushes at full
//! speed, and restores both; an external server is only checked once
//! and warned about, never waited for or changed.

use crate::run::ExecError;
use crate::server::restore::{restore_line, Saved};
use qpslab_core::{ConnectOptions, SettleReport, WorkloadOptions};
use qpslab_wire::Conn;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The settings settle changes on a sandbox, in the order it changes them; [`restore_line`] puts
/// them back last first (the low-water mark may not exceed `innodb_max_dirty_pages_pct`).
const FLUSHING: [&str; 3] = [
    "innodb_max_dirty_pages_pct_lwm",
    "innodb_max_dirty_pages_pct",
    "innodb_io_capacity",
];

/// A purge backlog at or below this counts as drained.
const HISTORY_FLOOR: u64 = 100;

/// Which kind of server is settled, so whose it is: ours may be tuned while it settles, the
/// user's is only read. (Not the process that owns a sandbox or a run: that is an `Owner`.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerKind {
    /// A sandbox qpslab started.
    Sandbox,
    /// The user's server.
    External,
}

/// Settles the server at `target` (its database set) for the dataset `w`, waiting at most
/// `max_s` seconds for the drain. Query failures become warnings in the report; only a lost
/// connection or Ctrl-C (`stop`) is an error.
pub fn settle(
    target: &ConnectOptions,
    w: &WorkloadOptions,
    max_s: f64,
    server: ServerKind,
    stop: &AtomicBool,
) -> Result<SettleReport, ExecError> {
    let started = Instant::now();
    let mut conn = Conn::connect(target).map_err(|source| ExecError::Connect {
        target: target.describe(),
        source,
    })?;
    let mut report = SettleReport::default();
    let before = (dirty_pages(&mut conn), history_len(&mut conn));
    report.dirty_pages.0 = before.0.unwrap_or(0);
    report.history_len.0 = before.1.unwrap_or(0);
    if before.1.is_none() {
        report
            .warnings
            .push("trx_rseg_history_len is not readable (INNODB_METRICS)".into());
    }
    let restore = match server {
        ServerKind::Sandbox => speed_up_flushing(&mut conn),
        ServerKind::External => None,
    };
    // The user's server is checked once: its housekeeping is theirs to wait for.
    let wait_s = match server {
        ServerKind::Sandbox => max_s,
        ServerKind::External => 0.0,
    };
    let deadline = started + Duration::from_secs_f64(wait_s);
    let drained = loop {
        let (d, h) = (dirty_pages(&mut conn), history_len(&mut conn));
        report.dirty_pages.1 = d.unwrap_or(0);
        report.history_len.1 = h.unwrap_or(0);
        if d.unwrap_or(0) == 0 && h.unwrap_or(0) <= HISTORY_FLOOR {
            break true;
        }
        if Instant::now() >= deadline || stop.load(Ordering::SeqCst) {
            break false;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    if let Some(sql) = restore {
        if let Err(e) = conn.execute(&sql) {
            report.warnings.push(format!("restoring flushing: {e}"));
        }
    }
    if stop.load(Ordering::SeqCst) {
        return Err(ExecError::Run(qpslab_engine::RunError::Interrupted));
    }
    report.drained = drained;
    if !drained {
        report.warnings.push(format!(
            "not drained after {wait_s:.0} s: {} dirty pages, history {}",
            report.dirty_pages.1, report.history_len.1
        ));
    }
    if server == ServerKind::Sandbox {
        report.tables_warmed = warm(&mut conn, w, &mut report.warnings, stop);
    }
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}

/// One line for the terminal: `settled in 3.2 s: dirty pages 1830 → 0, history 5200 → 12;
/// warmed 4 tables`.
pub fn describe(r: &SettleReport) -> String {
    let mut s = format!(
        "{} in {:.1} s: dirty pages {} → {}, history {} → {}; warmed {} table(s)",
        if r.drained { "settled" } else { "not settled" },
        r.seconds,
        r.dirty_pages.0,
        r.dirty_pages.1,
        r.history_len.0,
        r.history_len.1,
        r.tables_warmed
    );
    for w in &r.warnings {
        s.push_str("; warning: ");
        s.push_str(w);
    }
    s
}

fn number(conn: &mut Conn, sql: &str, column: usize) -> Option<u64> {
    let r = conn.query(sql).ok()?;
    r.rows.first()?.get(column)?.as_deref()?.parse().ok()
}

fn dirty_pages(conn: &mut Conn) -> Option<u64> {
    number(
        conn,
        "SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_pages_dirty'",
        1,
    )
}

fn history_len(conn: &mut Conn) -> Option<u64> {
    number(
        conn,
        "SELECT `COUNT` FROM information_schema.INNODB_METRICS WHERE NAME = 'trx_rseg_history_len'",
        0,
    )
}

/// Sets `innodb_max_dirty_pages_pct` (and its low-water mark) to 0 and `innodb_io_capacity` to
/// `innodb_io_capacity_max`, so the page cleaner flushes every dirty page at full speed; returns
/// the statement that restores them. (The dirty-page limits alone leave MariaDB 10.11 flushing at
/// its background rate: 3,340 dirty pages took 39 s at the default `innodb_io_capacity` of 200
/// and about 3 s with it raised, bench/RESULTS.md.)
fn speed_up_flushing(conn: &mut Conn) -> Option<String> {
    let columns: Vec<String> = FLUSHING.iter().map(|n| format!("@@GLOBAL.{n}")).collect();
    let r = conn.query(&format!("SELECT {}", columns.join(", "))).ok()?;
    let row = r.rows.first()?;
    let saved = FLUSHING
        .iter()
        .zip(row)
        .map(|(name, value)| {
            let value = value.clone()?;
            Some(Saved {
                name: name.to_string(),
                literal: qpslab_core::live::sql_literal(&value),
                value: Some(value),
            })
        })
        .collect::<Option<Vec<Saved>>>()
        .filter(|saved| saved.len() == FLUSHING.len())?;
    conn.execute(
        "SET GLOBAL innodb_max_dirty_pages_pct_lwm = 0, innodb_max_dirty_pages_pct = 0, \
         innodb_io_capacity = @@GLOBAL.innodb_io_capacity_max",
    )
    .ok()?;
    Some(restore_line(&saved))
}

/// Reads each table through its primary key and its `k` index, stopping once the buffer pool
/// would be full. Returns how many tables were read.
fn warm(
    conn: &mut Conn,
    w: &WorkloadOptions,
    warnings: &mut Vec<String>,
    stop: &AtomicBool,
) -> u32 {
    if !w.scripts.is_empty() || w.kind == qpslab_core::WorkloadKind::Tpcc {
        // A script workload or TPC-C has no sbtest tables to read.
        return 0;
    }
    let pool = number(conn, "SELECT @@GLOBAL.innodb_buffer_pool_size", 0).unwrap_or(u64::MAX);
    let mut read = 0u64;
    let mut warmed = 0;
    for t in 1..=w.tables {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        let size = number(
            conn,
            &format!(
                "SELECT DATA_LENGTH + INDEX_LENGTH FROM information_schema.TABLES
                 WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'sbtest{t}'"
            ),
            0,
        )
        .unwrap_or(0);
        if read + size > pool {
            warnings.push(format!(
                "warmed {warmed} of {} tables: the buffer pool holds no more",
                w.tables
            ));
            break;
        }
        let scans = [
            format!("SELECT COUNT(*), SUM(LENGTH(c)) FROM sbtest{t} FORCE INDEX (PRIMARY)"),
            format!("SELECT COUNT(k) FROM sbtest{t} FORCE INDEX (k_{t})"),
        ];
        for sql in &scans {
            if let Err(e) = conn.query(sql) {
                warnings.push(format!("warming sbtest{t}: {e}"));
            }
        }
        read += size;
        warmed += 1;
    }
    warmed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_in_one_line() {
        let r = SettleReport {
            seconds: 3.21,
            dirty_pages: (1830, 0),
            history_len: (5200, 12),
            drained: true,
            tables_warmed: 4,
            warnings: vec![],
        };
        assert_eq!(
            describe(&r),
            "settled in 3.2 s: dirty pages 1830 → 0, history 5200 → 12; warmed 4 table(s)"
        );
    }
}
