//! One session of a phase: its socket, its statement generator and its pre-encoded packets.
//!
//! A session is opened with the blocking client (connect, authenticate, prepare every statement
//! the workload may run), then its socket is switched to non-blocking mode and driven by an event
//! loop. Per call it patches the statement's COM_STMT_EXECUTE packet in place (or renders a
//! COM_QUERY with the text protocol) and stages it; the loop writes the staged bytes of all its
//! sessions at once (one io_uring submission) or one `write` each. A partial write is the only
//! case that copies bytes, but for a pipeline: with `--pipeline on` the calls of a transaction
//! up to its COMMIT are staged back to back in one buffer, their replies parsed in order as
//! they come, and the COMMIT staged alone once every reply is in.

use super::error::RunError;
use crate::workload::script::SLEEP_CALL;
use crate::workload::{Arg, Call, EventBuf, ParamKind, SessionGen, Workload};
use qpslab_core::plan::Isolation;
use qpslab_core::ConnectOptions;
use qpslab_wire::codec::{write_com_query, ExecPacket, ParamType, ReplyReader};
use qpslab_wire::{Capabilities, Conn, Stream};
use std::io::{self, Write};
use std::time::{Duration, Instant};

/// Where a session is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum State {
    /// Waiting for a fixed-rate arrival.
    Idle,
    /// A call of the current event is on the wire.
    Call,
    /// A ROLLBACK after a retryable error is on the wire; the event restarts when it returns.
    Rollback,
    /// The connection was lost; the next attempt is due at `at`.
    Reconnect {
        /// When to try again.
        at: Instant,
        /// The delay before the attempt after this one.
        backoff: Duration,
        /// When the connection was lost.
        since: Instant,
    },
    /// Parked by a script's `\\sleep` until `until`; no request is on the wire.
    Sleep {
        /// When the event goes on.
        until: Instant,
    },
    /// Waiting until `until` before its event's first call (TPC-C spec mode's think and
    /// keying times); nothing is on the wire and the wait is in no latency.
    Pause {
        /// When the event's first call is sent.
        until: Instant,
    },
    /// No more events for this session.
    Done,
}

/// A connected session.
pub(crate) struct Session {
    pub stream: Stream,
    /// Parser for COM_STMT_EXECUTE replies (binary rows).
    bin: ReplyReader,
    /// Parser for COM_QUERY replies (text rows).
    text: ReplyReader,
    /// True when the command on the wire gets a binary reply.
    binary: bool,
    pub gen: SessionGen,
    pub ev: EventBuf,
    /// One execute packet per statement index; `None` for text-only statements or with `--ps off`.
    execs: Vec<Option<ExecPacket>>,
    /// Bytes not yet written (a partial write, or a whole COM_QUERY).
    out: Vec<u8>,
    /// The staged request is this statement's execute packet (else it is in `out`).
    staged_exec: Option<usize>,
    out_pos: usize,
    /// Bytes read but not yet consumed by the reply parser (a parser that wants more first).
    pub inbuf: Vec<u8>,
    pub state: State,
    /// Index of the call whose reply comes next within `ev.calls`.
    pub call: usize,
    /// The calls before this index are on the wire (`call + 1`, but in a pipeline).
    pub batch_end: usize,
    /// The first error of a pipeline whose later replies are still to come: its statement
    /// index, code and message. The rest are read and dropped, then the error is acted on.
    pub failure: Option<(usize, u16, String)>,
    /// Start of the current event (its intended start under a fixed rate).
    pub event_start: Instant,
    /// When the current call was written.
    pub call_start: Instant,
    /// The current event began during warm-up: it is not recorded.
    pub warm: bool,
    /// The socket is also registered for writability (a write is pending).
    pub want_write: bool,
    /// Measured events this session completed, and the µs they took (sysbench's threads
    /// fairness): two additions per event, read once at the phase's end.
    pub measured: (u64, u64),
}

/// "This command is not supported in the prepared statement protocol yet".
const ER_UNSUPPORTED_PS: u16 = 1295;

/// A freshly opened, non-blocking socket with its prepared statements.
pub(crate) struct Opened {
    stream: Stream,
    caps: Capabilities,
    execs: Vec<Option<ExecPacket>>,
}

/// Connects, sets the session's isolation level (when given), prepares every statement (when
/// `ps`), and switches the socket to non-blocking.
///
/// A `pipeline` session runs with `autocommit = 0`: when a statement of a pipeline fails with
/// a deadlock, the server has rolled its transaction back and runs the statements already
/// sent after it; with autocommit off they open a new transaction, which the ROLLBACK sent
/// once the pipeline's replies are read undoes (with autocommit on, each would be committed on
/// its own, half a transaction in the database).
pub(crate) fn open(
    target: &ConnectOptions,
    workload: &Workload,
    ps: bool,
    pipeline: bool,
    isolation: Option<Isolation>,
) -> Result<Opened, RunError> {
    // Every wait is bounded by the target's timeouts and ends at a first Ctrl-C or SIGTERM.
    let mut conn = Conn::connect(target).map_err(|source| match source {
        qpslab_wire::Error::Interrupted => RunError::Interrupted,
        source => RunError::Connect {
            target: target.describe(),
            source,
        },
    })?;
    // The session's settings, again on every reconnection (a new session starts from the
    // server's).
    let mut settings = Vec::new();
    if pipeline {
        settings.push("SET autocommit = 0".to_string());
    }
    if let Some(level) = isolation {
        settings.push(format!(
            "SET SESSION TRANSACTION ISOLATION LEVEL {}",
            level.sql()
        ));
    }
    for sql in settings {
        conn.query(&sql).map_err(|source| match source {
            qpslab_wire::Error::Interrupted => RunError::Interrupted,
            source => RunError::Prepare { sql, source },
        })?;
    }
    let mut execs = Vec::new();
    if ps {
        for def in workload.statements() {
            if def.text_only {
                execs.push(None);
                continue;
            }
            let stmt = match conn.prepare(&def.sql) {
                Ok(stmt) => stmt,
                // A statement the server cannot prepare (a script's DDL, `SET ... = ?`...)
                // runs as text, as the mysql client would send it.
                Err(e) if e.server_code() == Some(ER_UNSUPPORTED_PS) => {
                    execs.push(None);
                    continue;
                }
                Err(qpslab_wire::Error::Interrupted) => return Err(RunError::Interrupted),
                Err(source) => {
                    let sql = def.sql.clone();
                    return Err(RunError::Prepare { sql, source });
                }
            };
            let types: Vec<ParamType> = def
                .params
                .iter()
                .map(|p| match *p {
                    ParamKind::Int => ParamType::Int,
                    ParamKind::FixedBytes(n) => ParamType::FixedBytes(n),
                })
                .collect();
            execs.push(Some(ExecPacket::new(stmt.id, &types)));
        }
    }
    let (stream, info) = conn.into_stream();
    stream.set_nonblocking(true)?;
    stream.set_nodelay(true)?;
    Ok(Opened {
        stream,
        caps: info.caps,
        execs,
    })
}

impl Session {
    /// A session around an opened socket.
    pub fn new(opened: Opened, gen: SessionGen, now: Instant) -> Session {
        Session {
            stream: opened.stream,
            bin: ReplyReader::new(opened.caps, true),
            text: ReplyReader::new(opened.caps, false),
            binary: false,
            gen,
            ev: EventBuf::default(),
            execs: opened.execs,
            out: Vec::new(),
            out_pos: 0,
            staged_exec: None,
            inbuf: Vec::new(),
            state: State::Idle,
            call: 0,
            batch_end: 0,
            failure: None,
            event_start: now,
            call_start: now,
            warm: false,
            want_write: false,
            measured: (0, 0),
        }
    }

    /// Replaces a lost connection with a new one.
    pub fn replace(&mut self, opened: Opened) {
        self.stream = opened.stream;
        self.bin = ReplyReader::new(opened.caps, true);
        self.text = ReplyReader::new(opened.caps, false);
        self.execs = opened.execs;
        self.out.clear();
        self.out_pos = 0;
        self.staged_exec = None;
        self.inbuf.clear();
        self.want_write = false;
        self.failure = None;
    }

    /// The parser for the command on the wire.
    #[inline]
    pub fn reader(&mut self) -> &mut ReplyReader {
        if self.binary {
            &mut self.bin
        } else {
            &mut self.text
        }
    }

    /// Encodes the calls `self.call..end` of the current event: one call patches its execute
    /// packet in place, or renders its COM_QUERY into the output buffer; several (a pipeline)
    /// are encoded back to back into the output buffer. [`Session::staged`] then holds the
    /// bytes. A script's `\\sleep` stages nothing: its pause in microseconds is returned instead.
    pub fn stage_call(
        &mut self,
        workload: &Workload,
        scratch: &mut Vec<u8>,
        end: usize,
    ) -> Option<u64> {
        let call = &self.ev.calls[self.call];
        if call.stmt == SLEEP_CALL {
            return match self.ev.call_args(call) {
                [Arg::Int(us)] => Some(u64::try_from(*us).unwrap_or(0)),
                _ => Some(0),
            };
        }
        self.batch_end = end.max(self.call + 1);
        if self.batch_end == self.call + 1 {
            if let Some(Some(packet)) = self.execs.get_mut(call.stmt as usize) {
                patch(packet, &self.ev, call);
                self.binary = true;
                self.bin.reset();
                self.staged_exec = Some(call.stmt as usize);
            } else {
                workload.render_text(&self.ev, call, scratch);
                self.stage_text(scratch);
            }
            return None;
        }
        self.out.clear();
        self.out_pos = 0;
        self.staged_exec = None;
        for call in &self.ev.calls[self.call..self.batch_end] {
            debug_assert_ne!(call.stmt, SLEEP_CALL, "a pipeline holds no sleep");
            if let Some(Some(packet)) = self.execs.get_mut(call.stmt as usize) {
                patch(packet, &self.ev, call);
                self.out.extend_from_slice(packet.packet());
            } else {
                workload.render_text(&self.ev, call, scratch);
                write_com_query(&mut self.out, scratch);
            }
        }
        self.expect(self.call);
        None
    }

    /// Readies the parser for the reply of call `k`: binary for an execute, text for a query.
    pub fn expect(&mut self, k: usize) {
        let stmt = self.ev.calls[k].stmt as usize;
        self.binary = matches!(self.execs.get(stmt), Some(Some(_)));
        self.reader().reset();
    }

    /// Renders a COM_QUERY for `sql` (text reply) as the staged bytes.
    pub fn stage_text(&mut self, sql: &[u8]) {
        self.binary = false;
        self.text.reset();
        self.out.clear();
        self.out_pos = 0;
        self.staged_exec = None;
        write_com_query(&mut self.out, sql);
    }

    /// The staged bytes not yet written.
    pub fn staged(&self) -> &[u8] {
        match self.staged_exec {
            Some(stmt) => self.execs[stmt].as_ref().map_or(&[], ExecPacket::packet),
            None => &self.out[self.out_pos..],
        }
    }

    /// Records that `n` staged bytes were written. Returns true when all were; otherwise the
    /// rest is kept in the output buffer for [`Session::flush`].
    pub fn wrote(&mut self, n: usize) -> bool {
        match self.staged_exec.take() {
            Some(stmt) => {
                let bytes = self.execs[stmt]
                    .as_ref()
                    .map_or(&[][..], ExecPacket::packet);
                if n >= bytes.len() {
                    return true;
                }
                self.out.clear();
                self.out.extend_from_slice(&bytes[n..]);
                self.out_pos = 0;
                false
            }
            None => {
                self.out_pos = (self.out_pos + n).min(self.out.len());
                self.out_pos == self.out.len()
            }
        }
    }

    /// Writes the staged bytes with plain writes. `Ok(true)` when all went out, `Ok(false)`
    /// when the rest waits for writability.
    pub fn write_staged(&mut self) -> io::Result<bool> {
        if let Some(stmt) = self.staged_exec {
            let bytes = self.execs[stmt]
                .as_ref()
                .map_or(&[][..], ExecPacket::packet);
            let n = write_some(&mut self.stream, bytes)?;
            if !self.wrote(n) {
                return Ok(false);
            }
        }
        self.flush()
    }

    /// True when the staged bytes may go through an io_uring send (a plain socket).
    pub fn ring_ok(&self) -> bool {
        !self.stream.is_tls()
    }

    /// Writes what is pending. `Ok(true)` when nothing is left.
    pub fn flush(&mut self) -> io::Result<bool> {
        if self.out_pos < self.out.len() {
            self.out_pos += write_some(&mut self.stream, &self.out[self.out_pos..])?;
            if self.out_pos < self.out.len() {
                return Ok(false);
            }
        }
        if self.stream.wants_write() {
            match self.stream.flush() {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }
}

impl Drop for Session {
    /// Closes politely (COM_QUIT, never blocking), unless the connection is already lost or a
    /// request is half written (the server would read the goodbye as part of it).
    fn drop(&mut self) {
        if !self.want_write && !matches!(self.state, State::Reconnect { .. }) {
            self.stream.quit();
        }
    }
}

/// Binds `call`'s arguments into its statement's execute packet.
fn patch(packet: &mut ExecPacket, ev: &EventBuf, call: &Call) {
    for (i, arg) in ev.call_args(call).iter().enumerate() {
        match *arg {
            Arg::Int(v) => packet.set_int(i, v),
            Arg::Bytes { .. } => packet.set_bytes(i, ev.arg_bytes(arg).unwrap_or(&[])),
        }
    }
}

/// Writes as much of `buf` as the socket takes without blocking.
fn write_some(stream: &mut Stream, buf: &[u8]) -> io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match stream.write(&buf[done..]) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

/// Best-effort message of the ERR packet with `code` among the packets at the start of `bytes`
/// (the reply parser reports only the code; the message matters only when the phase stops).
pub(crate) fn err_message(bytes: &[u8], code: u16) -> String {
    let mut rest = bytes;
    while rest.len() >= 4 {
        let len = usize::from(rest[0]) | usize::from(rest[1]) << 8 | usize::from(rest[2]) << 16;
        let Some(payload) = rest.get(4..4 + len) else {
            break;
        };
        if payload.len() >= 3
            && payload[0] == 0xFF
            && u16::from_le_bytes([payload[1], payload[2]]) == code
        {
            let msg = &payload[3..];
            let msg = match msg.first() {
                Some(b'#') if msg.len() >= 6 => &msg[6..],
                _ => msg,
            };
            return String::from_utf8_lossy(msg).into_owned();
        }
        rest = &rest[4 + len..];
    }
    String::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn err_message_is_read_back_from_the_packet() {
        let mut payload = vec![0xFF];
        payload.extend_from_slice(&1062u16.to_le_bytes());
        payload.extend_from_slice(b"#23000Duplicate entry '1' for key 'PRIMARY'");
        let mut bytes = vec![payload.len() as u8, 0, 0, 1];
        bytes.extend_from_slice(&payload);
        assert_eq!(
            err_message(&bytes, 1062),
            "Duplicate entry '1' for key 'PRIMARY'"
        );
        assert_eq!(err_message(&bytes, 1213), "");
        assert_eq!(err_message(&bytes[..10], 1062), "");
        // An OK packet first, then the error.
        let mut two = vec![7, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0];
        two.extend_from_slice(&bytes);
        assert!(err_message(&two, 1062).starts_with("Duplicate"));
    }
}
