//! Bounded, interruptible waits for the blocking session.
//!
//! A blocking socket of a [`crate::Conn`] carries a short kernel timeout, [`TICK`]: a read or
//! write that makes no progress for a tick returns, and the caller asks its [`Wait`] whether
//! to go on. The wait ends with a timeout once its limit has passed, or with
//! [`Error::Interrupted`] once [`interrupt`] was called after it began (a first Ctrl-C or
//! SIGTERM), so no session holds a stopping process for more than a tick.

use crate::error::Error;
use qpslab_core::units::timeout_text;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The longest a blocking call sleeps in the kernel before its wait is checked again.
pub(crate) const TICK: Duration = Duration::from_millis(250);

/// How many times [`interrupt`] was called.
static INTERRUPTS: AtomicU64 = AtomicU64::new(0);

/// Ends every wait of a blocking session that is in progress now (connecting, the handshake,
/// a read or a write) with [`Error::Interrupted`] within [`TICK`]; waits that begin later are
/// not affected, so a command can still put things back on its way out. One atomic add: safe
/// in a signal handler.
pub fn interrupt() {
    INTERRUPTS.fetch_add(1, Ordering::SeqCst);
}

/// How many times [`interrupt`] was called so far: a wait of the caller's own (polling the
/// server) ends when this changes.
pub fn interrupts() -> u64 {
    INTERRUPTS.load(Ordering::SeqCst)
}

/// One wait for the server: since when, for how long at most, and which interrupts it saw.
pub(crate) struct Wait {
    limit: Option<Duration>,
    since: Option<Instant>,
    interrupts: u64,
}

impl Wait {
    /// A wait that may last `limit` (`None`: until interrupted).
    pub(crate) fn new(limit: Option<Duration>) -> Wait {
        Wait {
            limit,
            since: None,
            interrupts: INTERRUPTS.load(Ordering::SeqCst),
        }
    }

    /// Called when a blocking call returned after a tick without progress: `Ok` to try again,
    /// else why the wait is over (a timed-out `Error::Io`, or `Error::Interrupted`).
    pub(crate) fn tick(&mut self) -> Result<(), Error> {
        if INTERRUPTS.load(Ordering::SeqCst) != self.interrupts {
            return Err(Error::Interrupted);
        }
        // The clock is read only once the server is slow: the call before this already
        // waited about a tick.
        let since = *self.since.get_or_insert_with(|| {
            Instant::now()
                .checked_sub(TICK)
                .unwrap_or_else(Instant::now)
        });
        match self.limit {
            Some(limit) if since.elapsed() >= limit => Err(Error::Io(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("the server sent no reply within {}", timeout_text(limit)),
            ))),
            _ => Ok(()),
        }
    }

    /// How long the kernel may block the next call: a tick, or less when the limit is near.
    pub(crate) fn slice(&self) -> Duration {
        match (self.limit, self.since) {
            (Some(limit), Some(since)) => limit
                .saturating_sub(since.elapsed())
                .clamp(Duration::from_millis(1), TICK),
            (Some(limit), None) => limit.clamp(Duration::from_millis(1), TICK),
            _ => TICK,
        }
    }
}

/// True for the error a blocking socket call returns when its kernel timeout passed.
pub(crate) fn is_tick(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_ends_at_its_limit_or_at_an_interrupt_that_came_after_it_began() {
        let mut w = Wait::new(Some(Duration::from_millis(300)));
        assert!(w.tick().is_ok(), "one tick of 300 ms has not passed");
        std::thread::sleep(Duration::from_millis(100));
        let e = w.tick().unwrap_err();
        assert!(e.to_string().contains("within 300 ms"), "{e}");
        let mut unbounded = Wait::new(None);
        assert!(unbounded.tick().is_ok());
        interrupt();
        assert!(matches!(unbounded.tick(), Err(Error::Interrupted)));
        let mut later = Wait::new(None);
        assert!(later.tick().is_ok(), "an interrupt before the wait began");
    }
}
