//! Reading replies: one read per readable edge in the common case, each complete reply moving
//! its session to the next call, the next event, or the error policy.

use super::EventLoop;
use crate::run::error::{RunError, LOST_CODES};
use crate::run::session::{err_message, State};
use crate::run::stats::record_us;
use crate::workload::StmtClass;
use qpslab_wire::codec::Reply;
use std::io::{self, Read};
use std::time::Instant;

impl EventLoop<'_> {
    pub(super) fn on_readable(&mut self, i: usize, now: Instant) -> Result<(), RunError> {
        let mut rbuf = std::mem::take(&mut self.rbuf);
        let r = self.read_replies(i, &mut rbuf, now);
        self.rbuf = rbuf;
        r
    }

    pub(super) fn read_replies(
        &mut self,
        i: usize,
        rbuf: &mut [u8],
        now: Instant,
    ) -> Result<(), RunError> {
        loop {
            let s = &mut self.sessions[i];
            if matches!(s.state, State::Reconnect { .. } | State::Done) {
                return Ok(());
            }
            let n = match s.stream.read(rbuf) {
                Ok(0) => {
                    let eof = io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "server closed the connection",
                    );
                    return self.lost(i, now, eof.into());
                }
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return self.lost(i, now, e.into()),
            };
            let drained = n < rbuf.len() && !s.stream.is_tls();
            if s.inbuf.is_empty() {
                let used = self.feed(i, &rbuf[..n], now)?;
                if used < n {
                    self.sessions[i].inbuf.extend_from_slice(&rbuf[used..n]);
                }
            } else {
                // Rare: the parser left bytes it needs more of. Feed from the session's buffer.
                let mut pending = std::mem::take(&mut self.sessions[i].inbuf);
                pending.extend_from_slice(&rbuf[..n]);
                let used = self.feed(i, &pending, now)?;
                pending.drain(..used);
                self.sessions[i].inbuf = pending;
            }
            if drained {
                return Ok(());
            }
        }
    }

    /// Feeds `bytes` to session `i`'s parser, acting on each complete reply. Returns how many
    /// bytes were consumed.
    pub(super) fn feed(&mut self, i: usize, bytes: &[u8], now: Instant) -> Result<usize, RunError> {
        let mut pos = 0;
        while pos < bytes.len() {
            let s = &mut self.sessions[i];
            match s.state {
                State::Call | State::Rollback => {}
                // The session was retired or lost while handling an earlier reply.
                State::Reconnect { .. } | State::Done => return Ok(bytes.len()),
                // Unsolicited bytes on an idle session: the server's farewell (an idle timeout
                // or a kill) before it closes.
                State::Idle | State::Sleep { .. } | State::Pause { .. } => {
                    let e = io::Error::new(io::ErrorKind::ConnectionAborted, "unsolicited reply");
                    self.lost(i, now, e.into())?;
                    return Ok(bytes.len());
                }
            }
            let (used, reply) = s
                .reader()
                .feed(&bytes[pos..])
                .map_err(|e| RunError::Protocol(e.to_string()))?;
            let start = pos;
            pos += used;
            match reply {
                Some(r) => self.on_reply(i, r, now, &bytes[start..pos])?,
                None if used == 0 => break,
                None => {}
            }
        }
        Ok(pos)
    }

    pub(super) fn on_reply(
        &mut self,
        i: usize,
        reply: Reply,
        now: Instant,
        raw: &[u8],
    ) -> Result<(), RunError> {
        let s = &mut self.sessions[i];
        if s.state == State::Rollback {
            if let Reply::Err { code } = reply {
                return Err(RunError::Server {
                    code,
                    message: err_message(raw, code),
                    statement: "ROLLBACK".into(),
                });
            }
            let warm = s.warm;
            if self.kept(warm) {
                self.stats.queries.other += 1;
            }
            let s = &mut self.sessions[i];
            s.call = 0;
            s.state = State::Call;
            return self.send(i, now);
        }
        let stmt = s.ev.calls[s.call].stmt as usize;
        if s.call + 1 < s.batch_end {
            // A pipeline's reply with more to come: record it (or its error, whose followers
            // are then read and dropped) and wait for the next. A statement's latency is the
            // time since the reply before it, the server's time for it.
            match reply {
                _ if s.failure.is_some() => {}
                Reply::Err { code } => s.failure = Some((stmt, code, err_message(raw, code))),
                _ => self.record(i, stmt, now),
            }
            let s = &mut self.sessions[i];
            s.call += 1;
            s.call_start = now;
            s.expect(s.call);
            return Ok(());
        }
        if let Some((stmt, code, message)) = s.failure.take() {
            return self.on_server_error(i, stmt, code, now, message);
        }
        if let Reply::Err { code } = reply {
            return self.on_server_error(i, stmt, code, now, err_message(raw, code));
        }
        self.record(i, stmt, now);
        self.next_call(i, now)
    }

    /// Records the reply to statement `stmt` of session `i`: its latency and class.
    fn record(&mut self, i: usize, stmt: usize, now: Instant) {
        let s = &self.sessions[i];
        if self.kept(s.warm) {
            let us = now.saturating_duration_since(s.call_start).as_micros();
            record_us(&mut self.stats.kinds[self.shared.kind_of[stmt]], us as u64);
            match self.shared.class_of[stmt] {
                StmtClass::Read => self.stats.queries.read += 1,
                StmtClass::Write => self.stats.queries.write += 1,
                StmtClass::Other => self.stats.queries.other += 1,
            }
        }
    }

    /// Moves session `i` to its event's next call, or ends the event and starts the next.
    pub(super) fn next_call(&mut self, i: usize, now: Instant) -> Result<(), RunError> {
        let s = &mut self.sessions[i];
        s.call += 1;
        if s.call < s.ev.calls.len() {
            return self.send(i, now);
        }
        let warm = s.warm;
        if self.kept(warm) {
            let s = &mut self.sessions[i];
            let us = now.saturating_duration_since(s.event_start).as_micros() as u64;
            record_us(&mut self.stats.events, us);
            if !warm {
                s.measured.0 += 1;
                s.measured.1 += us;
            }
            if let Some(Some(k)) =
                s.ev.calls
                    .last()
                    .map(|c| self.shared.event_kind_of[c.stmt as usize])
            {
                record_us(&mut self.stats.kinds[k], us);
            }
        }
        if self.arrivals.is_some() {
            self.sessions[i].state = State::Idle;
            self.make_idle(i, now);
            Ok(())
        } else {
            self.start_event(i, now, None)
        }
    }

    pub(super) fn on_server_error(
        &mut self,
        i: usize,
        stmt: usize,
        code: u16,
        now: Instant,
        message: String,
    ) -> Result<(), RunError> {
        // A lost session reconnects whatever the retried codes are (`all` too).
        if !LOST_CODES.contains(&code) && self.shared.plan.ignore_errors.retries(code) {
            let s = &self.sessions[i];
            if self.kept(s.warm) {
                *self.stats.errors.entry(code).or_insert(0) += 1;
                // The type of the event retried, when events have types (TPC-C's).
                let last = s.ev.calls.last().map(|c| c.stmt as usize);
                if let Some(k) = last.and_then(|st| self.shared.event_kind_of[st]) {
                    *self.stats.type_retries.entry((k, code)).or_insert(0) += 1;
                }
            }
            self.sessions[i].state = State::Rollback;
            return self.send(i, now);
        }
        if LOST_CODES.contains(&code) {
            let e = qpslab_wire::Error::Server {
                code,
                sqlstate: String::new(),
                message,
            };
            return self.lost(i, now, e);
        }
        Err(RunError::Server {
            code,
            message,
            statement: self.shared.workload.statements()[stmt].sql.clone(),
        })
    }
}
