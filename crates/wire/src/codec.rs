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
    column_count, err_code, is_eof, parse_eof_status, parse_ok, Reader, SERVER_MORE_RESULTS_EXISTS,
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

impl ParamType {
    /// The (field type, flags) pair that declares the parameter in an execute packet.
    pub fn declared(self) -> [u8; 2] {
        match self {
            ParamType::Int => [8, 0],
            ParamType::FixedBytes(_) => [0xFE, 0],
        }
    }
}

/// Appends one non-NULL integer parameter of a COM_STMT_BULK_EXECUTE row
/// ([`crate::Conn::bulk_execute`]): the indicator byte 0, then 8 bytes little-endian.
pub fn put_bulk_int(row: &mut Vec<u8>, v: i64) {
    row.push(0);
    row.extend_from_slice(&v.to_le_bytes());
}

/// Appends one NULL parameter of a COM_STMT_BULK_EXECUTE row: the indicator byte 1, no value.
pub fn put_bulk_null(row: &mut Vec<u8>) {
    row.push(1);
}

/// Appends one non-NULL string parameter of `len` bytes to a COM_STMT_BULK_EXECUTE row and
/// returns its bytes for the caller to fill (zeroed).
pub fn put_bulk_bytes(row: &mut Vec<u8>, len: usize) -> &mut [u8] {
    row.push(0);
    crate::proto::put_lenenc(row, len as u64);
    let start = row.len();
    row.resize(start + len, 0);
    &mut row[start..]
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
                b.extend_from_slice(&p.declared());
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
            let continuation = self.continued;
            let body = &rest[4..];
            if !continuation && len > WHOLE && self.state != State::Start && body.is_empty() {
                return Ok((pos, None)); // cannot classify a large packet without its first byte
            }
            // (A continuation is skipped unseen: its body may not have arrived yet.)
            let streamable = |first: u8| {
                len > WHOLE
                    && self.state != State::Start
                    && first != 0xFF
                    && !(first == 0xFE && len < MAX_PAYLOAD)
            };
            if continuation || body.first().is_some_and(|b| streamable(*b)) {
                // Part of a large row or column definition: count it and stream past it.
                if !continuation {
                    self.count_skipped();
                }
                self.continued = len == MAX_PAYLOAD;
                pos += 4;
                self.skip = len;
                continue;
            }
            if body.len() < len {
                return Ok((pos, None));
            }
            self.continued = len == MAX_PAYLOAD;
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
                    let n = column_count(r.lenenc_int()?)? as u64;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::caps::{CLIENT_DEPRECATE_EOF, MARIADB_CLIENT_CACHE_METADATA};

    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    const CACHED: Capabilities = Capabilities(CLIENT_DEPRECATE_EOF | MARIADB_CLIENT_CACHE_METADATA);

    // Captured from MariaDB 10.11.19 (Debian) with DEPRECATE_EOF and CACHE_METADATA:
    // execute of `SELECT c FROM t WHERE id=?` returning one row whose c is 1 byte 'x':
    // column count 1 + "metadata follows" 0, a binary row, an OK packet with 0xFE header.
    const EXEC_ONE_ROW: &str = "020000010100040000020000017807000003fe000002000000";
    // COM_QUERY `SELECT 1 FROM t` (2 rows): count 1 + follows 1, one column definition, rows.
    const QUERY_TWO_ROWS: &str = "02000001010117000002036465660000000131000c3f000100000003810000000002000003013102000004013107000005fe000022000000";
    // COM_QUERY UPDATE: OK, 1 affected row, with an info string.
    const UPDATE_OK: &str = "300000010001000200000028526f7773206d6174636865643a203120204368616e6765643a203120205761726e696e67733a2030";
    // COM_QUERY `SELECT nosuch`: ERR 1054.
    const ERR_1054: &str = "2c000001ff1e04233432533232556e6b6e6f776e20636f6c756d6e20276e6f737563682720696e202753454c45435427";

    #[test]
    fn parses_captured_replies_whole() {
        let mut r = ReplyReader::new(CACHED, true);
        let b = unhex(EXEC_ONE_ROW);
        assert_eq!(
            r.feed(&b).unwrap(),
            (b.len(), Some(Reply::Rows { rows: 1 }))
        );
        let mut r = ReplyReader::new(CACHED, false);
        let b = unhex(QUERY_TWO_ROWS);
        assert_eq!(
            r.feed(&b).unwrap(),
            (b.len(), Some(Reply::Rows { rows: 2 }))
        );
        let b = unhex(UPDATE_OK);
        assert_eq!(
            r.feed(&b).unwrap(),
            (b.len(), Some(Reply::Ok { affected_rows: 1 }))
        );
        let b = unhex(ERR_1054);
        assert_eq!(
            r.feed(&b).unwrap(),
            (b.len(), Some(Reply::Err { code: 1054 }))
        );
    }

    #[test]
    fn parses_replies_fed_byte_by_byte_and_keeps_the_next_reply() {
        let mut all = unhex(QUERY_TWO_ROWS);
        let first = all.len();
        all.extend(unhex(UPDATE_OK));
        let mut r = ReplyReader::new(CACHED, false);
        let mut have = 0; // bytes received so far
        let mut used = 0; // bytes consumed
        let mut replies = Vec::new();
        while have < all.len() {
            have += 1;
            let (n, reply) = r.feed(&all[used..have]).unwrap();
            used += n;
            if let Some(reply) = reply {
                replies.push((used, reply));
            }
        }
        assert_eq!(
            replies,
            [
                (first, Reply::Rows { rows: 2 }),
                (all.len(), Reply::Ok { affected_rows: 1 })
            ]
        );
    }

    #[test]
    fn old_style_eof_and_uncached_metadata() {
        // Without DEPRECATE_EOF: count, one column def, EOF, one row, EOF.
        let mut b = Vec::new();
        for (seq, p) in [
            vec![1u8],
            vec![
                3, b'd', b'e', b'f', 0, 0, 0, 1, b'a', 0, 0x0c, 8, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0,
            ],
            vec![0xFE, 0, 0, 2, 0],
            vec![1, b'7'],
            vec![0xFE, 0, 0, 2, 0],
        ]
        .iter()
        .enumerate()
        {
            crate::packet::frame(&mut b, p, seq as u8);
        }
        let mut r = ReplyReader::new(Capabilities(0), false);
        assert_eq!(
            r.feed(&b).unwrap(),
            (b.len(), Some(Reply::Rows { rows: 1 }))
        );
    }

    #[test]
    fn a_column_count_above_4096_is_a_protocol_error() {
        // 10^9 columns were skipped one packet at a time, for as long as the server sent them.
        let mut b = Vec::new();
        let mut count = vec![0xFE];
        count.extend_from_slice(&1_000_000_000u64.to_le_bytes());
        crate::packet::frame(&mut b, &count, 1);
        let e = ReplyReader::new(Capabilities(0), false)
            .feed(&b)
            .unwrap_err();
        assert!(e.to_string().contains("1000000000 columns"), "{e}");
        let mut b = Vec::new();
        crate::packet::frame(&mut b, &[0xFC, 0x00, 0x10], 1); // 4096: allowed
        assert_eq!(
            ReplyReader::new(Capabilities(0), false).feed(&b).unwrap(),
            (7, None)
        );
    }

    #[test]
    fn streams_past_rows_larger_than_the_buffer() {
        // A text row of 100 000 bytes, fed in 4 KiB pieces, then the final OK.
        let mut b = Vec::new();
        crate::packet::frame(&mut b, &[1, 0], 1);
        let mut row = vec![0xFD, 0xA0, 0x86, 0x01];
        row.resize(4 + 100_000, b'z');
        crate::packet::frame(&mut b, &row, 2);
        crate::packet::frame(&mut b, &[0xFE, 0, 0, 2, 0, 0, 0], 3);
        let mut r = ReplyReader::new(CACHED, false);
        let mut used = 0;
        let mut have = 0;
        let reply = loop {
            have = (have + 4096).min(b.len());
            let (n, reply) = r.feed(&b[used..have]).unwrap();
            used += n;
            assert!(have - used < 2048, "the reader must not need the whole row");
            if let Some(x) = reply {
                break x;
            }
        };
        assert_eq!(reply, Reply::Rows { rows: 1 });
        assert_eq!(used, b.len());
    }

    #[test]
    fn more_results_are_followed() {
        let mut b = Vec::new();
        // OK with SERVER_MORE_RESULTS_EXISTS, then a final OK.
        crate::packet::frame(&mut b, &[0, 2, 0, 8, 0, 0, 0], 1);
        crate::packet::frame(&mut b, &[0, 3, 0, 2, 0, 0, 0], 2);
        let mut r = ReplyReader::new(CACHED, false);
        assert_eq!(
            r.feed(&b).unwrap(),
            (b.len(), Some(Reply::Ok { affected_rows: 5 }))
        );
    }

    #[test]
    fn exec_packet_is_patched_in_place() {
        let mut e = ExecPacket::new(7, &[ParamType::Int, ParamType::FixedBytes(3)]);
        let p = e.packet().to_vec();
        assert_eq!(p.len(), 4 + 10 + 1 + 1 + 4 + 8 + 1 + 3);
        assert_eq!(&p[..4], &[(p.len() - 4) as u8, 0, 0, 0]);
        assert_eq!(&p[4..9], &[0x17, 7, 0, 0, 0]);
        assert_eq!(&p[16..20], &[8, 0, 0xFE, 0]);
        e.set_int(0, -2);
        e.set_bytes(1, b"abc");
        let q = e.packet();
        assert_eq!(&q[20..28], &(-2i64).to_le_bytes());
        assert_eq!(&q[28..], &[3, b'a', b'b', b'c']);
        assert_eq!(q.len(), p.len());
    }

    #[test]
    fn com_query_framing() {
        let mut b = Vec::new();
        write_com_query(&mut b, b"SELECT 1");
        assert_eq!(b, b"\x09\x00\x00\x00\x03SELECT 1");
        let big = vec![b'x'; MAX_PAYLOAD - 1]; // with the command byte: exactly one full chunk
        let mut b = Vec::new();
        write_com_query(&mut b, &big);
        assert_eq!(b.len(), 4 + MAX_PAYLOAD + 4);
        assert_eq!(&b[..5], &[0xFF, 0xFF, 0xFF, 0, 0x03]);
        assert_eq!(&b[b.len() - 4..], &[0, 0, 0, 1]);
        let mut b = Vec::new();
        write_com_query(&mut b, &vec![b'y'; MAX_PAYLOAD + 5]);
        assert_eq!(&b[4 + MAX_PAYLOAD..8 + MAX_PAYLOAD], &[6, 0, 0, 1]);
        assert_eq!(b.len(), MAX_PAYLOAD + 6 + 8);
    }
}
