//! A replica seen from the outside: its replication state (`SHOW SLAVE STATUS`) and its lag
//! while a run loads the primary ([`LagMonitor`]).
//!
//! The monitor measures lag three ways, on one clock (this process's):
//! - **heartbeat**: a row `qpslab.heartbeat (id, ts DATETIME(6))` written on the primary every
//!   [`HEARTBEAT_EVERY`] and read on the replica every [`READ_EVERY`]. pt-heartbeat reports
//!   `now − newest ts seen`, which adds the time since the last write (up to a whole write
//!   interval) to the real lag. Here each heartbeat counts once, when a read first finds it:
//!   the time it took, to within the read interval; while heartbeats are missing, the age of
//!   the oldest one ([`heartbeat_lag_us`]);
//! - **GTIDs**: `@@gtid_binlog_pos` read on the primary at t0, then `MASTER_GTID_WAIT(pos)` on
//!   the replica; the time until it returns is the commit-to-apply lag of the last commit
//!   before t0. The next wait starts as soon as one returns (at most 20 a second); a wait still
//!   running at the end of an interval counts with its age so far;
//! - **`Seconds_Behind_Master`** as the server reports it (whole seconds; 0 while the replica
//!   waits for events it has not received).

mod lag;
mod monitor;

pub use lag::heartbeat_lag_us;
pub use monitor::{LagMonitor, HEARTBEAT_EVERY, READ_EVERY};

use crate::error::Error;
use qpslab_wire::Conn;
use serde::Serialize;

/// What `SHOW SLAVE STATUS` (`SHOW REPLICA STATUS` on MySQL) says about a replica.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ReplicaStatus {
    /// The primary's host and port.
    pub source: String,
    /// `Slave_IO_Running`: `Yes`, `No` or `Connecting`.
    pub io_running: String,
    /// `Slave_SQL_Running`: `Yes` or `No`.
    pub sql_running: String,
    /// `Gtid_IO_Pos` (MariaDB) or `Retrieved_Gtid_Set` (MySQL).
    pub gtid_io_pos: String,
    /// `Seconds_Behind_Master`, NULL when a thread is stopped.
    pub sbm_s: Option<u64>,
    /// The last SQL or IO error, if any.
    pub last_error: Option<String>,
}

impl ReplicaStatus {
    /// Both replication threads run.
    pub fn running(&self) -> bool {
        self.io_running == "Yes" && self.sql_running == "Yes"
    }

    /// `replica stopped: ERROR` when the SQL thread stopped (an apply error, `STOP SLAVE`).
    /// An IO thread that reconnects is not a stop: the primary may be restarting.
    pub fn stopped(&self) -> Option<String> {
        (self.sql_running != "Yes").then(|| {
            let why = self
                .last_error
                .as_deref()
                .unwrap_or("SQL thread not running");
            format!("replica stopped: {why}")
        })
    }
}

/// The replication state of the server behind `conn`, `None` when it is no replica.
pub fn replica_status(conn: &mut Conn) -> Result<Option<ReplicaStatus>, Error> {
    let sql = if conn.is_mariadb() {
        "SHOW SLAVE STATUS"
    } else {
        "SHOW REPLICA STATUS"
    };
    let r = conn.query(sql)?;
    let Some(row) = r.rows.first() else {
        return Ok(None);
    };
    let col = |names: &[&str]| -> Option<String> {
        names.iter().find_map(|n| {
            let i = r.columns.iter().position(|c| c == n)?;
            row.get(i).cloned().flatten()
        })
    };
    let text = |names: &[&str]| col(names).unwrap_or_default();
    let error = |names: &[&str]| col(names).filter(|e| !e.is_empty());
    Ok(Some(ReplicaStatus {
        source: format!(
            "{}:{}",
            text(&["Master_Host", "Source_Host"]),
            text(&["Master_Port", "Source_Port"])
        ),
        io_running: text(&["Slave_IO_Running", "Replica_IO_Running"]),
        sql_running: text(&["Slave_SQL_Running", "Replica_SQL_Running"]),
        gtid_io_pos: text(&["Gtid_IO_Pos", "Retrieved_Gtid_Set"]),
        sbm_s: col(&["Seconds_Behind_Master", "Seconds_Behind_Source"])
            .and_then(|v| v.parse().ok()),
        last_error: error(&["Last_SQL_Error"]).or_else(|| error(&["Last_IO_Error"])),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stopped_sql_thread_is_a_stop_and_a_reconnecting_io_thread_is_not() {
        let mut s = ReplicaStatus {
            io_running: "Connecting".into(),
            sql_running: "Yes".into(),
            ..ReplicaStatus::default()
        };
        assert!(!s.running() && s.stopped().is_none());
        s.sql_running = "No".into();
        s.last_error = Some("Duplicate entry '1' for key 'PRIMARY'".into());
        assert_eq!(
            s.stopped().unwrap(),
            "replica stopped: Duplicate entry '1' for key 'PRIMARY'"
        );
    }
}
