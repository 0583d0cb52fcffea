//! The sampler's control connection, which outlives a server restart: a lost connection is
//! re-established with the sessions' backoff (first retry at once, then 10 ms doubling up to
//! 1 s), and a reading is attempted again on the new one. Every reading and reconnection is
//! bounded by [`TIMEOUT`], so a server that stops answering loses readings, not the phase.

use crate::error::Error;
use qpslab_core::ConnectOptions;
use qpslab_wire::Conn;
use std::time::{Duration, Instant};

/// First delay after a failed reconnection; doubles up to [`MAX_BACKOFF`] (as the sessions').
const FIRST_BACKOFF: Duration = Duration::from_millis(10);
const MAX_BACKOFF: Duration = Duration::from_secs(1);
/// The longest a reading or a reconnection may block: a server that stopped answering
/// (SIGSTOP, a hung host) costs a tick this much, not the phase its end.
const TIMEOUT: Duration = Duration::from_secs(1);

/// A control connection that reconnects when lost (when it knows its target).
pub(super) struct Link {
    conn: Option<Conn>,
    target: Option<ConnectOptions>,
    /// No reconnection before this instant.
    next_try: Instant,
    backoff: Duration,
    /// Why the connection is gone, for readings attempted before the next try.
    lost_because: String,
    /// Connections re-established since [`Link::reset_count`].
    pub reconnects: u64,
    /// A reconnection happened that the sampler has not looked at yet (the server may have
    /// been restarted: a new pid, counters from zero).
    pub fresh: bool,
}

impl Link {
    pub fn new(conn: Conn) -> Link {
        // Without a bound, a failure to set it only means a reading may wait longer.
        let _ = conn.set_timeout(Some(TIMEOUT));
        Link {
            conn: Some(conn),
            target: None,
            next_try: Instant::now(),
            backoff: FIRST_BACKOFF,
            lost_because: String::new(),
            reconnects: 0,
            fresh: false,
        }
    }

    /// Allows reconnecting to `target` once the connection is lost.
    pub fn set_target(&mut self, target: ConnectOptions) {
        self.target = Some(target);
    }

    pub fn conn(&mut self) -> Option<&mut Conn> {
        self.conn.as_mut()
    }

    /// Why the connection was last lost.
    pub fn lost_because(&self) -> &str {
        &self.lost_because
    }

    pub fn reset_count(&mut self) {
        self.reconnects = 0;
    }

    /// Runs `read` on the connection. A connection found lost is replaced at once when
    /// possible and `read` tried once more; otherwise the error says why no reading was taken.
    pub fn run<T>(
        &mut self,
        mut read: impl FnMut(&mut Conn) -> Result<T, Error>,
    ) -> Result<T, Error> {
        if self.conn.is_none() {
            self.reconnect()?;
        }
        let Some(conn) = self.conn.as_mut() else {
            return Err(self.gone());
        };
        match read(conn) {
            Err(Error::Wire(e)) if e.is_connection_lost() => {
                self.lose(&e.to_string());
                self.reconnect()?;
                let Some(conn) = self.conn.as_mut() else {
                    return Err(self.gone());
                };
                read(conn).inspect_err(|e| {
                    if let Error::Wire(w) = e {
                        if w.is_connection_lost() {
                            self.lose(&w.to_string());
                        }
                    }
                })
            }
            other => other,
        }
    }

    fn lose(&mut self, why: &str) {
        self.conn = None;
        self.lost_because = why.to_string();
        self.next_try = Instant::now();
        self.backoff = FIRST_BACKOFF;
    }

    /// Connects again when an attempt is due; else says why there is no connection.
    fn reconnect(&mut self) -> Result<(), Error> {
        let now = Instant::now();
        let Some(target) = self.target.as_ref() else {
            return Err(self.gone());
        };
        if now < self.next_try {
            return Err(self.gone());
        }
        match Conn::connect_timeout(target, TIMEOUT) {
            Ok(c) => {
                self.conn = Some(c);
                self.reconnects += 1;
                self.fresh = true;
                self.backoff = FIRST_BACKOFF;
                Ok(())
            }
            Err(e) => {
                self.lost_because = match self.lost_because.split_once("; reconnecting: ") {
                    Some((cause, _)) => format!("{cause}; reconnecting: {e}"),
                    None => format!("{}; reconnecting: {e}", self.lost_because),
                };
                self.next_try = now + self.backoff;
                self.backoff = (self.backoff * 2).min(MAX_BACKOFF);
                Err(Error::Wire(e))
            }
        }
    }

    /// The error of a reading that could not be attempted: no connection (yet).
    fn gone(&self) -> Error {
        let why = if self.lost_because.is_empty() {
            "the telemetry connection is closed"
        } else {
            &self.lost_because
        };
        Error::Wire(qpslab_wire::Error::Io(std::io::Error::new(
            std::io::ErrorKind::NotConnected,
            why.to_string(),
        )))
    }
}
