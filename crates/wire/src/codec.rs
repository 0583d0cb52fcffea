//! Hot-path framing: COM_QUERY and COM_STMT_EXECUTE packets, and an incremental reply parser.
//!
//! Nothing here allocates per call once its buffers exist.

use crate::caps::Capabilities;
use crate::error::Error;

/// Appends a COM_QUERY packet (sequence 0) for `sql` to `buf`, split into 16 MiB - 1 chunks
/// when the statement is that large.
pub fn write_com_query(buf: &mut Vec<u8>, sql: &[u8]) {
    let _ = (buf, sql);
    todo!()
}

/// The declared type of one COM_STMT_EXECUTE parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamType {
    /// A signed 64-bit integer, sent as MYSQL_TYPE_LONGLONG.
    Int,
    /// A string of exactly this many bytes, sent as MYSQL_TYPE_STRING.
    FixedBytes(usize),
}

/// A COM_STMT_EXECUTE packet encoded once per statement and patched in place per call.
#[derive(Clone, Debug)]
pub struct ExecPacket {
    buf: Vec<u8>,
    offsets: Vec<(usize, ParamType)>,
}

impl ExecPacket {
    /// Encodes an execute of `stmt_id` with parameters of the given types (all zero/blank).
    pub fn new(stmt_id: u32, params: &[ParamType]) -> ExecPacket {
        let _ = (stmt_id, params);
        todo!()
    }
    /// Sets integer parameter `i`.
    pub fn set_int(&mut self, i: usize, v: i64) {
        let _ = (i, v);
        todo!()
    }
    /// Sets fixed-length parameter `i`.
    pub fn set_bytes(&mut self, i: usize, v: &[u8]) {
        let _ = (i, v);
        todo!()
    }
    /// The whole packet (header and payload, sequence 0), ready to write.
    pub fn packet(&self) -> &[u8] {
        &self.buf
    }
}

/// The outcome of one command, as the hot path needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reply {
    /// An OK packet.
    Ok {
        /// Rows changed by the statement.
        affected_rows: u64,
    },
    /// A result set, fully read.
    Rows {
        /// Number of rows in it.
        rows: u64,
    },
    /// An ERR packet.
    Err {
        /// The server's error number.
        code: u16,
    },
}

/// Incremental parser of one command's reply.
#[derive(Clone, Debug)]
pub struct ReplyReader {
    caps: Capabilities,
    binary: bool,
}

impl ReplyReader {
    /// A reader for replies on a session with `caps`; `binary` for COM_STMT_EXECUTE replies.
    pub fn new(caps: Capabilities, binary: bool) -> ReplyReader {
        ReplyReader { caps, binary }
    }
    /// Forgets any partial reply, ready for the next command.
    pub fn reset(&mut self) {
        todo!()
    }
    /// Consumes bytes from `buf`; returns how many were consumed and the reply once complete.
    pub fn feed(&mut self, buf: &[u8]) -> Result<(usize, Option<Reply>), Error> {
        let _ = buf;
        todo!()
    }
}
