//! Lost connections: a session leaves the poller, reconnects with backoff, and restarts the
//! event it was in.

use super::EventLoop;
use crate::run::error::RunError;
use crate::run::session::{open, State};
use mio::unix::SourceFd;
use mio::{Interest, Token};
use qpslab_core::dsn::Endpoint;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// First reconnection delay; doubles up to `MAX_BACKOFF`.
pub const FIRST_BACKOFF: Duration = Duration::from_millis(10);
/// The longest delay between two reconnection attempts.
pub const MAX_BACKOFF: Duration = Duration::from_secs(1);
/// How long a lost session keeps trying before the phase fails, when the phase has no time
/// limit (`--events`, a replay); a timed phase keeps trying until it ends, so a server that
/// stays down shows as intervals without events rather than a lost phase.
pub const RECONNECT_FOR: Duration = Duration::from_secs(30);
/// The client error numbers a failed reconnection is counted under (libmysqlclient's
/// CR_CONNECTION_ERROR and CR_CONN_HOST_ERROR), unless the server answered with its own.
const CR_CONNECTION_ERROR: u16 = 2002;
const CR_CONN_HOST_ERROR: u16 = 2003;

/// The error code a failed (re)connection to `endpoint` is counted under: the server's own
/// when it answered, else the client's for a socket or a TCP host.
pub fn connect_error_code(endpoint: &Endpoint, e: &qpslab_wire::Error) -> u16 {
    e.server_code().unwrap_or(match endpoint {
        Endpoint::Unix { .. } => CR_CONNECTION_ERROR,
        Endpoint::Tcp { .. } => CR_CONN_HOST_ERROR,
    })
}

impl EventLoop<'_> {
    /// Session `i` lost its connection: stop watching it and schedule a reconnection. The
    /// event in flight restarts from its first call once the session is back.
    pub(super) fn lost(
        &mut self,
        i: usize,
        now: Instant,
        _cause: qpslab_wire::Error,
    ) -> Result<(), RunError> {
        let s = &mut self.sessions[i];
        let fd = s.stream.as_raw_fd();
        // The socket is dead; failing to deregister it changes nothing.
        let _ = self.poll.registry().deregister(&mut SourceFd(&fd));
        if s.state == State::Idle {
            // No event in flight: after reconnecting, wait for the next arrival.
            self.idle.retain(|&j| j != i);
            s.ev.clear();
        }
        s.state = State::Reconnect {
            at: now,
            backoff: FIRST_BACKOFF,
            since: now,
        };
        self.reconnecting.push(i);
        Ok(())
    }

    /// Tries the reconnections that are due. Connecting blocks this loop for a few
    /// milliseconds; losses are rare, so the other sessions' short stall is accepted.
    pub(super) fn reconnect_due(&mut self, now: Instant) -> Result<(), RunError> {
        let mut n = 0;
        while n < self.reconnecting.len() {
            let i = self.reconnecting[n];
            let State::Reconnect { at, backoff, since } = self.sessions[i].state else {
                self.reconnecting.swap_remove(n);
                continue;
            };
            if self.exhausted || self.time_is_up(now) {
                self.reconnecting.swap_remove(n);
                self.done(i);
                continue;
            }
            if at > now {
                n += 1;
                continue;
            }
            match open(
                self.shared.target,
                self.shared.workload,
                self.shared.ps(),
                self.shared.pipeline(),
                self.shared.plan.isolation,
            ) {
                Ok(opened) => {
                    self.reconnecting.swap_remove(n);
                    let s = &mut self.sessions[i];
                    s.replace(opened);
                    let fd = s.stream.as_raw_fd();
                    self.poll.registry().register(
                        &mut SourceFd(&fd),
                        Token(i),
                        Interest::READABLE,
                    )?;
                    self.stats.reconnects += 1;
                    let after = Instant::now();
                    if self.arrivals.is_some() && s.ev.calls.is_empty() {
                        s.state = State::Idle;
                        self.make_idle(i, after);
                    } else {
                        s.call = 0;
                        s.state = State::Call;
                        self.send(i, after)?;
                    }
                }
                Err(RunError::Connect { source, .. }) if self.keeps_trying(now, since) => {
                    let code = connect_error_code(&self.shared.target.endpoint, &source);
                    *self.stats.errors.entry(code).or_insert(0) += 1;
                    self.sessions[i].state = State::Reconnect {
                        at: now + backoff,
                        backoff: (backoff * 2).min(MAX_BACKOFF),
                        since,
                    };
                    n += 1;
                }
                // A signal ended the attempt: the phase is stopping, let it end on its own.
                Err(RunError::Interrupted) => n += 1,
                Err(RunError::Connect { source, .. }) => {
                    return Err(RunError::Reconnect {
                        target: self.shared.target.describe(),
                        source,
                    })
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// A session lost at `since` tries again: always in a timed phase (it ends on time anyway),
    /// for [`RECONNECT_FOR`] otherwise.
    fn keeps_trying(&self, now: Instant, since: Instant) -> bool {
        self.clock.bounds.end.is_some() || now.duration_since(since) < RECONNECT_FOR
    }
}
