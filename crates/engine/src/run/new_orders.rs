//! TPC-C's New-Orders as the server counts them: `sum(d_next_o_id)` of DISTRICT, read on a
//! connection of its own when measurement begins and once the phase's last event has ended, so
//! its change covers the window the client's counts cover. Each committed New-Order adds one
//! to its district's `d_next_o_id`; a rolled-back one (1%, spec clause 2.4.2.3) undoes its
//! increment with the rest of the transaction. HammerDB's NOPM is this change per minute.

use super::error::RunError;
use qpslab_core::ConnectOptions;
use qpslab_wire::Conn;
use std::time::Duration;

/// How long a read waits for the server.
const TIMEOUT: Duration = Duration::from_secs(30);

const SQL: &str = "SELECT SUM(d_next_o_id) FROM district";

/// The counter's connection and its reading at the start of measurement.
pub(crate) struct NewOrderCounter {
    conn: Conn,
    start: Option<u64>,
    /// The redacted target, for errors.
    target: String,
}

impl NewOrderCounter {
    /// Connects to `target` (its database holds the TPC-C tables).
    pub fn open(target: &ConnectOptions) -> Result<NewOrderCounter, RunError> {
        let conn = Conn::connect_timeout(target, TIMEOUT).map_err(|source| RunError::Connect {
            target: target.describe(),
            source,
        })?;
        Ok(NewOrderCounter {
            conn,
            start: None,
            target: target.describe(),
        })
    }

    /// The sum now.
    fn read(&mut self) -> Result<u64, RunError> {
        let r = self.conn.query(SQL).map_err(|source| match source {
            qpslab_wire::Error::Interrupted => RunError::Interrupted,
            source => RunError::Reading {
                what: "the server's New-Order count",
                sql: SQL,
                target: self.target.clone(),
                source,
            },
        })?;
        Ok(r.first_value().and_then(|v| v.parse().ok()).unwrap_or(0))
    }

    /// Takes the reading at the start of measurement (once; later calls do nothing).
    pub fn begin(&mut self) -> Result<(), RunError> {
        if self.start.is_none() {
            self.start = Some(self.read()?);
        }
        Ok(())
    }

    /// Whether the start reading was taken.
    pub fn begun(&self) -> bool {
        self.start.is_some()
    }

    /// New-Orders committed since [`NewOrderCounter::begin`].
    pub fn since_begin(&mut self) -> Result<u64, RunError> {
        let end = self.read()?;
        Ok(end.saturating_sub(self.start.unwrap_or(end)))
    }
}
