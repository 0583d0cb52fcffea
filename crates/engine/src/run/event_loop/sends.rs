//! Writing requests: staging a session's next call and writing the staged requests of a
//! wake-up together (one io_uring submission, or one `write` each), with partial writes
//! finished when the socket becomes writable.

use super::{EventLoop, SEND_BATCH};
use crate::run::error::RunError;
use crate::run::session::State;
use crate::run::uring;
use mio::unix::SourceFd;
use mio::{Interest, Token};
use std::io;
use std::os::fd::AsRawFd;
use std::time::Instant;

impl EventLoop<'_> {
    /// Stages the current call of session `i` and writes it: with the ring, at the next
    /// [`EventLoop::flush_sends`] (before the loop sleeps); without, now.
    pub(super) fn send(&mut self, i: usize, now: Instant) -> Result<(), RunError> {
        let s = &mut self.sessions[i];
        s.call_start = now;
        let sleep = match s.state {
            State::Rollback => {
                s.stage_text(b"ROLLBACK");
                None
            }
            _ => {
                let end = self.shared.batch_end(&s.ev.calls, s.call);
                s.stage_call(self.shared.workload, &mut self.scratch, end)
            }
        };
        if let Some(us) = sleep {
            return self.park(i, now, us);
        }
        let s = &mut self.sessions[i];
        if self.ring.is_some() && s.ring_ok() {
            self.pending.push(i);
            if self.pending.len() >= SEND_BATCH {
                return self.flush_sends(now);
            }
            return Ok(());
        }
        match s.write_staged() {
            Ok(true) => Ok(()),
            Ok(false) => self.want_write(i, true),
            Err(e) => self.lost(i, now, e.into()),
        }
    }

    /// Writes every pending staged request with one io_uring submission.
    pub(super) fn flush_sends(&mut self, now: Instant) -> Result<(), RunError> {
        let Some(ring) = self.ring.as_mut() else {
            return Ok(());
        };
        if self.pending.is_empty() {
            return Ok(());
        }
        let sessions = &self.sessions;
        let sends = self.pending.iter().filter_map(|&i| {
            let s = &sessions[i];
            matches!(s.state, State::Call | State::Rollback).then(|| uring::Send {
                fd: s.stream.as_raw_fd(),
                buf: s.staged(),
                tag: i,
            })
        });
        let sent = &mut self.sent;
        let submitted = ring.send_all(sends, &mut |tag, r| sent.push((tag, r)));
        self.pending.clear();
        submitted?;
        let mut sent = std::mem::take(&mut self.sent);
        let mut result = Ok(());
        for (i, r) in sent.drain(..) {
            if result.is_err() {
                continue;
            }
            result = match r {
                Ok(n) if self.sessions[i].wrote(n) => Ok(()),
                Ok(_) => self.want_write(i, true),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.sessions[i].wrote(0);
                    self.want_write(i, true)
                }
                Err(e) => self.lost(i, now, e.into()),
            };
        }
        self.sent = sent;
        result
    }

    pub(super) fn want_write(&mut self, i: usize, on: bool) -> Result<(), RunError> {
        let s = &mut self.sessions[i];
        if s.want_write == on {
            return Ok(());
        }
        s.want_write = on;
        let interest = if on {
            Interest::READABLE | Interest::WRITABLE
        } else {
            Interest::READABLE
        };
        let fd = s.stream.as_raw_fd();
        self.poll
            .registry()
            .reregister(&mut SourceFd(&fd), Token(i), interest)?;
        Ok(())
    }

    pub(super) fn on_writable(&mut self, i: usize, now: Instant) -> Result<(), RunError> {
        match self.sessions[i].flush() {
            Ok(true) => self.want_write(i, false),
            Ok(false) => Ok(()),
            Err(e) => self.lost(i, now, e.into()),
        }
    }
}
