//! Blocking packet I/O for the control-plane session: framing, sequence numbers, and
//! reassembly of payloads split at 16 MiB - 1. Every wait for the server is bounded by the
//! session's limit and ends at an interrupt (see [`crate::wait`]); every reassembled packet by
//! the session's largest packet (`--max-allowed-packet`), checked before its bytes are kept.

use crate::error::Error;
use crate::stream::Stream;
use crate::wait::{is_tick, Wait};
use std::cell::Cell;
use std::io::{Read, Write};
use std::time::Duration;

/// Largest payload of one physical packet; a payload of exactly this size is continued.
pub(crate) const MAX_PAYLOAD: usize = 0xFF_FFFF;

/// The largest logical packet a new [`PacketIo`] accepts: the mysql client's default
/// `max_allowed_packet`, 1 GiB.
const DEFAULT_MAX_PACKET: usize = 1 << 30;

/// A stream with packet framing and a read buffer.
#[derive(Debug)]
pub(crate) struct PacketIo {
    pub(crate) stream: Stream,
    rbuf: Vec<u8>,
    rpos: usize,
    seq: u8,
    wbuf: Vec<u8>,
    /// How long one read or write may wait for the server (`None`: until interrupted).
    limit: Cell<Option<Duration>>,
    /// The largest logical packet accepted: a longer one is a protocol error before its bytes
    /// are kept, so a server streaming continuations cannot grow the client without end.
    max_packet: usize,
}

impl PacketIo {
    /// Framing over `stream`, whose blocking calls must return after a tick at most (see
    /// [`crate::wait`]); each wait lasts `limit` at most.
    pub(crate) fn new(stream: Stream, limit: Option<Duration>) -> Self {
        PacketIo {
            stream,
            rbuf: Vec::with_capacity(16 * 1024),
            rpos: 0,
            seq: 0,
            wbuf: Vec::with_capacity(1024),
            limit: Cell::new(limit),
            max_packet: DEFAULT_MAX_PACKET,
        }
    }

    /// Refuses any later logical packet longer than `bytes` (at least one physical packet's
    /// header is always read, to tell why).
    pub(crate) fn set_max_packet(&mut self, bytes: u64) {
        self.max_packet = usize::try_from(bytes).unwrap_or(usize::MAX);
    }

    /// Bounds each later read and write by `limit` (`None`: until interrupted).
    pub(crate) fn set_limit(&self, limit: Option<Duration>) {
        self.limit.set(limit);
    }

    /// The bound on each read and write.
    pub(crate) fn limit(&self) -> Option<Duration> {
        self.limit.get()
    }

    /// Bytes read from the socket but not yet consumed (must be zero when handing the stream
    /// to someone else).
    pub(crate) fn buffered(&self) -> usize {
        self.rbuf.len() - self.rpos
    }

    /// Gives the socket back (any buffered bytes are dropped; callers check [`Self::buffered`]).
    pub(crate) fn into_stream(self) -> Stream {
        self.stream
    }

    /// Starts a new command: the next packet written carries sequence 0.
    pub(crate) fn reset_seq(&mut self) {
        self.seq = 0;
    }

    /// Sets the next sequence number (after a TLS switch the count continues).
    pub(crate) fn set_seq(&mut self, seq: u8) {
        self.seq = seq;
    }

    fn fill(&mut self, need: usize) -> Result<(), Error> {
        if self.rpos > 0 && self.rbuf.len() - self.rpos < need {
            self.rbuf.drain(..self.rpos);
            self.rpos = 0;
        }
        let mut wait = Wait::new(self.limit.get());
        while self.rbuf.len() - self.rpos < need {
            let old = self.rbuf.len();
            // Grow as bytes arrive, not by what a header claims: a hostile length costs no
            // memory until its bytes come.
            let want = (need - (old - self.rpos)).clamp(16 * 1024, 64 * 1024);
            self.rbuf.resize(old + want, 0);
            let n = match self.stream.read(&mut self.rbuf[old..]) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {
                    self.rbuf.truncate(old);
                    continue;
                }
                Err(e) if is_tick(&e) => {
                    self.rbuf.truncate(old);
                    wait.tick()?;
                    continue;
                }
                Err(e) => {
                    self.rbuf.truncate(old);
                    return Err(e.into());
                }
            };
            self.rbuf.truncate(old + n);
            if n == 0 {
                return Err(Error::Io(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "server closed the connection",
                )));
            }
        }
        Ok(())
    }

    /// Reads one logical packet (reassembling continuations) into `out`, replacing its content.
    pub(crate) fn read_into(&mut self, out: &mut Vec<u8>) -> Result<(), Error> {
        out.clear();
        loop {
            self.fill(4)?;
            let h = &self.rbuf[self.rpos..self.rpos + 4];
            let len = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
            let seq = h[3];
            if seq != self.seq {
                return Err(Error::Protocol(format!(
                    "packet out of order: expected sequence {}, got {seq}",
                    self.seq
                )));
            }
            self.seq = self.seq.wrapping_add(1);
            // Checked against the header, before the payload is read or kept.
            if out.len() + len > self.max_packet {
                return Err(Error::Protocol(format!(
                    "the server sent a packet larger than max_allowed_packet ({} bytes); \
                     raise --max-allowed-packet if such a reply is expected",
                    self.max_packet
                )));
            }
            self.fill(4 + len)?;
            out.extend_from_slice(&self.rbuf[self.rpos + 4..self.rpos + 4 + len]);
            self.rpos += 4 + len;
            if len < MAX_PAYLOAD {
                return Ok(());
            }
        }
    }

    /// Reads one logical packet into a new buffer.
    pub(crate) fn read(&mut self) -> Result<Vec<u8>, Error> {
        let mut v = Vec::new();
        self.read_into(&mut v)?;
        Ok(v)
    }

    /// Writes `payload` as one logical packet (split as needed) and flushes.
    pub(crate) fn write(&mut self, payload: &[u8]) -> Result<(), Error> {
        self.wbuf.clear();
        self.seq = frame(&mut self.wbuf, payload, self.seq);
        let mut wait = Wait::new(self.limit.get());
        let mut done = 0;
        while done < self.wbuf.len() {
            match self.stream.write(&self.wbuf[done..]) {
                Ok(0) => return Err(std::io::Error::from(std::io::ErrorKind::WriteZero).into()),
                Ok(n) => done += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if is_tick(&e) => wait.tick()?,
                Err(e) => return Err(e.into()),
            }
        }
        loop {
            match self.stream.flush() {
                Ok(()) => return Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if is_tick(&e) => wait.tick()?,
                Err(e) => return Err(e.into()),
            }
        }
    }
}

/// Appends `payload` framed as packets starting at sequence `seq`; returns the next sequence.
/// A payload that is a multiple of 16 MiB - 1 ends with an empty packet, as the protocol asks.
pub(crate) fn frame(buf: &mut Vec<u8>, payload: &[u8], mut seq: u8) -> u8 {
    let mut rest = payload;
    loop {
        let n = rest.len().min(MAX_PAYLOAD);
        buf.extend_from_slice(&(n as u32).to_le_bytes()[..3]);
        buf.push(seq);
        buf.extend_from_slice(&rest[..n]);
        seq = seq.wrapping_add(1);
        rest = &rest[n..];
        if n < MAX_PAYLOAD {
            return seq;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_large_payloads() {
        let payload = vec![7u8; MAX_PAYLOAD + 10];
        let mut b = Vec::new();
        assert_eq!(frame(&mut b, &payload, 0), 2);
        assert_eq!(&b[..4], &[0xFF, 0xFF, 0xFF, 0]);
        assert_eq!(&b[4 + MAX_PAYLOAD..8 + MAX_PAYLOAD], &[10, 0, 0, 1]);
        assert_eq!(b.len(), payload.len() + 8);
        let mut b = Vec::new();
        assert_eq!(frame(&mut b, &payload[..MAX_PAYLOAD], 3), 5);
        assert_eq!(&b[b.len() - 4..], &[0, 0, 0, 4]);
    }
}
