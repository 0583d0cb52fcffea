//! A script's `\sleep`, or the pause before an event (TPC-C spec mode's think and keying
//! times): the session is parked, with nothing on the wire, until a time.
//!
//! Parked sessions cost no CPU: the loop's `epoll_wait` timeout includes the earliest wake
//! time (as it includes the next fixed-rate arrival), its alarm fires at that time to the
//! microsecond (see [`super::alarm`]), and each wake-up resumes the sessions that are due. A
//! script's sleep is part of the event's latency, as pgbench counts it; a pause before an event
//! is not (the event starts when it ends). A timed phase that ends while sessions sleep
//! retires them on time; their events are not recorded.

use super::EventLoop;
use crate::run::error::RunError;
use crate::run::session::State;
use std::time::{Duration, Instant};

impl EventLoop<'_> {
    /// Parks session `i` for `us` microseconds from `now`.
    pub(super) fn park(&mut self, i: usize, now: Instant, us: u64) -> Result<(), RunError> {
        // A sleep beyond what `Instant` holds lasts a year: the phase ends long before.
        let until = now
            .checked_add(Duration::from_micros(us))
            .unwrap_or_else(|| now + Duration::from_secs(365 * 86_400));
        self.sessions[i].state = State::Sleep { until };
        self.sleeping.push(i);
        Ok(())
    }

    /// Parks session `i`, whose event is built, for `us` microseconds before its first call.
    pub(super) fn pause(&mut self, i: usize, now: Instant, us: u64) {
        let until = now
            .checked_add(Duration::from_micros(us))
            .unwrap_or_else(|| now + Duration::from_secs(365 * 86_400));
        self.sessions[i].state = State::Pause { until };
        self.sleeping.push(i);
    }

    /// Resumes the parked sessions that are due (or retires them when the phase is over).
    pub(super) fn wake_sleepers(&mut self, now: Instant) -> Result<(), RunError> {
        let mut n = 0;
        while n < self.sleeping.len() {
            let i = self.sleeping[n];
            // A session lost while parked left this list in spirit: it reconnects and restarts.
            let (until, paused) = match self.sessions[i].state {
                State::Sleep { until } => (until, false),
                State::Pause { until } => (until, true),
                _ => {
                    self.sleeping.swap_remove(n);
                    continue;
                }
            };
            if self.time_is_up(now) {
                self.sleeping.swap_remove(n);
                self.done(i);
                continue;
            }
            if until > now {
                n += 1;
                continue;
            }
            self.sleeping.swap_remove(n);
            if paused {
                // The event starts now: its latency counts from here, and it is measured if
                // measurement has begun.
                let warm = now < self.clock.bounds.measure_start;
                let s = &mut self.sessions[i];
                s.warm = warm;
                s.event_start = now;
                s.state = State::Call;
                self.send(i, now)?;
            } else {
                self.sessions[i].state = State::Call;
                self.next_call(i, now)?;
            }
        }
        Ok(())
    }

    /// The earliest time a parked session is due, if any sleeps.
    pub(super) fn next_sleeper(&self) -> Option<Instant> {
        self.sleeping
            .iter()
            .filter_map(|&i| match self.sessions[i].state {
                State::Sleep { until } | State::Pause { until } => Some(until),
                _ => None,
            })
            .min()
    }

    /// The earliest time a parked session is due, or the phase's end while any sleeps
    /// (never later than `until`).
    pub(super) fn next_wake(&self, until: Instant) -> Instant {
        let until = self.next_sleeper().map_or(until, |at| until.min(at));
        match self.clock.bounds.end {
            Some(end) if !self.sleeping.is_empty() => until.min(end),
            _ => until,
        }
    }
}
