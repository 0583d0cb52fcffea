//! Hot-path framing: COM_QUERY and COM_STMT_EXECUTE packets, and an incremental reply parser.
//!
//! Nothing here allocates per call once its buffers exist. A session's loop looks like:
//! ```
//! use qpslab_wire::codec::{ExecPacket, ParamType, Reply, ReplyReader};
//! use qpslab_wire::Capabilities;
//! let mut exec = ExecPacket::new(1, &[ParamType::Int]);
//! exec.set_int(0, 42);
//! // write exec.packet() to the socket, then feed what comes back:
//! let mut reader = ReplyReader::new(Capabilities(qpslab_wire::caps::CLIENT_DEPRECATE_EOF), true);
//! let ok = [7, 0, 0, 1, 0, 1, 0, 2, 0, 0, 0];
//! assert_eq!(reader.feed(&ok).unwrap(), (11, Some(Reply::Ok { affected_rows: 1 })));
//! ```

use crate::caps::Capabilities;
use crate::error::Error;
use crate::packet::MAX_PAYLOAD;
use crate::proto::{
    err_code, is_eof, parse_eof_status, parse_ok, Reader, SERVER_MORE_RESULTS_EXISTS,
};

/// Appends a COM_QUERY packet (sequence 0) for `sql` to `buf`, split into 16 MiB - 1 chunks
/// when the statement is that large.
pub fn write_com_query(buf: &mut Vec<u8>, sql: &[u8]) {
    let total = 1 + sql.len();
    buf.reserve(total + 4 * (total / MAX_PAYLOAD + 1));
    let mut seq = 0u8;
    let mut done = 0; // bytes of the payload (command byte included) written
    loop {
        let n = (total - done).min(MAX_PAYLOAD);
        buf.extend_from_slice(&(n as u32).to_le_bytes()[..3]);
        buf.push(seq);
        let mut from = done;
        if from == 0 {
            buf.push(0x03);
            from = 1;
        }
        buf.extend_from_slice(&sql[from - 1..done + n - 1]);
        done += n;
        seq = seq.wrapping_add(1);
        // A payload that ends exactly on a chunk boundary needs an empty final packet.
        if n < MAX_PAYLOAD {
            return;
        }
    }
}

/// The declared type of one COM_STMT_EXECUTE parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamType {
    /// A signed 64-bit integer, sent as MYSQL_TYPE_LONGLONG (8 bytes).
    Int,
    /// A string of exactly this many bytes, sent as MYSQL_TYPE_STRING with a length prefix.
    FixedBytes(usize),
}

/// A COM_STMT_EXECUTE packet encoded once per statement and patched in place per call.
///
/// The whole payload must fit one physical packet (under 16 MiB); sysbench's parameters are
/// a few hundred bytes at most.
#[derive(Clone, Debug)]
pub struct ExecPacket {
    buf: Vec<u8>,
    /// Offset in `buf` of each parameter's value bytes (after any length prefix), and type.
    slots: Vec<(usize, ParamType)>,
}

impl ExecPacket {
    /// Encodes an execute of `stmt_id` with parameters of the given types, all zero or blank
    /// (spaces), and with the "new parameters bound" flag set so no earlier execute is needed.
    pub fn new(stmt_id: u32, params: &[ParamType]) -> ExecPacket {
        let mut b = Vec::with_capacity(64 + params.len() * 16);
        b.extend_from_slice(&[0, 0, 0, 0]); // header, patched below
        b.push(0x17);
        b.extend_from_slice(&stmt_id.to_le_bytes());
        b.push(0); // CURSOR_TYPE_NO_CURSOR
        b.extend_from_slice(&1u32.to_le_bytes()); // iteration count
        let mut slots = Vec::with_capacity(params.len());
        if !params.is_empty() {
            b.resize(b.len() + params.len().div_ceil(8), 0); // no NULLs
            b.push(1);
            for p in params {
                b.extend_from_slice(match p {
                    ParamType::Int => &[8, 0],
                    ParamType::FixedBytes(_) => &[0xFE, 0],
                });
            }
            for p in params {
                match p {
                    ParamType::Int => {
                        slots.push((b.len(), *p));
                        b.extend_from_slice(&[0; 8]);
                    }
                    ParamType::FixedBytes(n) => {
                        crate::proto::put_lenenc(&mut b, *n as u64);
                        slots.push((b.len(), *p));
                        b.resize(b.len() + n, b' ');
                    }
                }
            }
        }
        let len = (b.len() - 4) as u32;
        b[..3].copy_from_slice(&len.to_le_bytes()[..3]);
        ExecPacket { buf: b, slots }
    }

    /// Sets integer parameter `i`. An index out of range or of another type is ignored
    /// (a caller bug caught by the debug assertion).
    pub fn set_int(&mut self, i: usize, v: i64) {
        match self.slots.get(i) {
            Some(&(at, ParamType::Int)) => self.buf[at..at + 8].copy_from_slice(&v.to_le_bytes()),
            _ => debug_assert!(false, "parameter {i} is not an Int"),
        }
    }

    /// Sets fixed-length parameter `i`. `v` should have the declared length: a shorter value
    /// is padded with spaces and a longer one truncated (for CHAR columns, such as sysbench's
    /// `c` and `pad`, trailing spaces do not change the value). Debug builds assert the length.
    pub fn set_bytes(&mut self, i: usize, v: &[u8]) {
        match self.slots.get(i) {
            Some(&(at, ParamType::FixedBytes(n))) => {
                debug_assert_eq!(v.len(), n, "parameter {i} has a fixed length");
                let k = v.len().min(n);
                self.buf[at..at + k].copy_from_slice(&v[..k]);
                self.buf[at + k..at + n].fill(b' ');
            }
            _ => debug_assert!(false, "parameter {i} is not FixedBytes"),
        }
    }

    /// The whole packet (header and payload, sequence 0), ready to write.
    pub fn packet(&self) -> &[u8] {
        &self.buf
    }
}

/// The outcome of one command, as the hot path needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reply {
    /// An OK packet (for several results, the affected rows are summed).
    Ok {
        /// Rows changed by the statement.
        affected_rows: u64,
    },
    /// One or more result sets, fully read.
    Rows {
        /// Number of rows in them.
        rows: u64,
    },
    /// An ERR packet.
    Err {
        /// The server's error number.
        code: u16,
    },
}

/// Where the parser is within a reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Expecting OK, ERR or a column count.
    Start,
    /// Skipping this many column definitions.
    Columns(u64),
    /// Skipping the EOF after column definitions (no DEPRECATE_EOF).
    ColumnsEof,
    /// Reading rows until EOF / OK.
    Rows,
}

/// Payloads up to this size are parsed whole; larger ones can only be rows or column
/// definitions and are skipped as they stream in, so the caller's buffer need not hold them.
const WHOLE: usize = 1024;

/// Incremental parser of one command's reply: OK, ERR, or result sets (text or binary rows,
/// with or without DEPRECATE_EOF, with or without MariaDB metadata caching). It counts rows
/// without decoding them.
#[derive(Clone, Debug)]
pub struct ReplyReader {
    caps: Capabilities,
    binary: bool,
    state: State,
    /// Bytes of the current packet still to skip (a large packet consumed piecewise).
    skip: usize,
    /// The packet being skipped is exactly 16 MiB - 1: a continuation packet follows.
    continued: bool,
    rows: u64,
    affected: u64,
    saw_rows: bool,
}

impl ReplyReader {
    /// A reader for replies on a session with `caps`; `binary` for COM_STMT_EXECUTE replies.
    pub fn new(caps: Capabilities, binary: bool) -> ReplyReader {
        ReplyReader {
            caps,
            binary,
            state: State::Start,
            skip: 0,
            continued: false,
            rows: 0,
            affected: 0,
            saw_rows: false,
        }
    }

    /// Forgets any partial reply, ready for the next command.
    pub fn reset(&mut self) {
        *self = ReplyReader::new(self.caps, self.binary);
    }

    /// Consumes bytes from `buf`; returns how many were consumed and the reply once complete.
    /// Bytes after a complete reply are not consumed. After a complete reply the reader is
    /// reset for the next command.
    pub fn feed(&mut self, buf: &[u8]) -> Result<(usize, Option<Reply>), Error> {
        let mut pos = 0;
        loop {
            if self.skip > 0 {
                let k = self.skip.min(buf.len() - pos);
                self.skip -= k;
                pos += k;
                if self.skip > 0 {
                    return Ok((pos, None));
                }
            }
            let rest = &buf[pos..];
            if rest.len() < 4 {
                return Ok((pos, None));
            }
            let len = u32::from_le_bytes([rest[0], rest[1], rest[2], 0]) as usize;
            let continuation = std::mem::replace(&mut self.continued, len == MAX_PAYLOAD);
            let body = &rest[4..];
            if !continuation && len > WHOLE && self.state != State::Start && body.is_empty() {
                return Ok((pos, None)); // cannot classify a large packet without its first byte
            }
            let streamable = len > WHOLE
                && self.state != State::Start
                && body[0] != 0xFF
                && !(body[0] == 0xFE && len < MAX_PAYLOAD);
            if continuation || streamable {
                // Part of a large row or column definition: count it and stream past it.
                if !continuation {
                    self.count_skipped();
                }
                pos += 4;
                self.skip = len;
                continue;
            }
            if body.len() < len {
                self.continued = continuation;
                return Ok((pos, None));
            }
            pos += 4 + len;
            if let Some(reply) = self.packet(&body[..len])? {
                self.reset();
                return Ok((pos, Some(reply)));
            }
        }
    }

    /// A large packet skipped without parsing: a row or a column definition.
    fn count_skipped(&mut self) {
        match self.state {
            State::Rows => self.rows += 1,
            State::Columns(n) => self.state = next_after_column(n, self.caps),
            _ => {}
        }
    }

    /// Handles one whole packet; returns the reply when it ends the command.
    fn packet(&mut self, p: &[u8]) -> Result<Option<Reply>, Error> {
        match self.state {
            State::Start => match p.first() {
                Some(0x00) => {
                    let ok = parse_ok(p)?;
                    self.affected += ok.affected_rows;
                    Ok(self.finish(ok.status))
                }
                Some(0xFF) => Ok(Some(Reply::Err { code: err_code(p) })),
                Some(0xFB) => Err(Error::Protocol(
                    "the server asked for a LOCAL INFILE on the hot path".into(),
                )),
                _ => {
                    let mut r = Reader::new(p);
                    let n = r.lenenc_int()?;
                    let follows = !self.caps.cache_metadata() || r.u8()? != 0;
                    self.saw_rows = true;
                    self.state = if follows {
                        State::Columns(n)
                    } else {
                        State::Rows
                    };
                    if n == 0 {
                        self.state = next_after_column(1, self.caps);
                    }
                    Ok(None)
                }
            },
            State::Columns(n) => {
                self.state = next_after_column(n, self.caps);
                Ok(None)
            }
            State::ColumnsEof => {
                self.state = State::Rows;
                Ok(None)
            }
            State::Rows => {
                if is_eof(p) {
                    let status = if self.caps.deprecate_eof() {
                        parse_ok(p)?.status
                    } else {
                        parse_eof_status(p)
                    };
                    return Ok(self.finish(status));
                }
                if p.first() == Some(&0xFF) {
                    return Ok(Some(Reply::Err { code: err_code(p) }));
                }
                if self.binary && p.first() != Some(&0x00) {
                    return Err(Error::Protocol("binary row without its 0x00 header".into()));
                }
                self.rows += 1;
                Ok(None)
            }
        }
    }

    /// The end of one result: the reply, unless the server says more results follow.
    fn finish(&mut self, status: u16) -> Option<Reply> {
        if status & SERVER_MORE_RESULTS_EXISTS != 0 {
            self.state = State::Start;
            return None;
        }
        Some(if self.saw_rows {
            Reply::Rows { rows: self.rows }
        } else {
            Reply::Ok {
                affected_rows: self.affected,
            }
        })
    }
}

/// The state after one more column definition when `n` were outstanding.
fn next_after_column(n: u64, caps: Capabilities) -> State {
    match n {
        0 | 1 if caps.deprecate_eof() => State::Rows,
        0 | 1 => State::ColumnsEof,
        n => State::Columns(n - 1),
    }
}
