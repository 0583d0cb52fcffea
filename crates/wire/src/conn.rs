//! The blocking session: text queries, prepared statements, LOAD DATA LOCAL INFILE.

use crate::caps::Capabilities;
use crate::codec::ParamType;
use crate::error::Error;
use crate::handshake::{establish, SessionInfo};
use crate::packet::PacketIo;
use crate::proto::{
    column_count, is_eof, parse_eof_status, parse_err, parse_ok, put_lenenc_bytes, OkPacket,
    Reader, SERVER_MORE_RESULTS_EXISTS,
};
use crate::rows::{parse_column, Column, Each, Keep, KeepTyped, Sink};
pub use crate::rows::{Cell, QueryResult, Row, Streamed, Typed};
use crate::stream::Stream;
use qpslab_core::ConnectOptions;
use std::collections::HashMap;
use std::time::Duration;

/// A prepared statement on the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Statement {
    /// Server-side statement id.
    pub id: u32,
    /// Number of `?` parameters.
    pub params: u16,
    /// Number of result columns.
    pub columns: u16,
}

/// A parameter value for [`Conn::exec`].
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// SQL NULL.
    Null,
    /// A signed integer.
    Int(i64),
    /// A double, sent as its 8 bytes (exact).
    Double(f64),
    /// A string or blob.
    Bytes(Vec<u8>),
}

/// A blocking session. Dropping it says goodbye to the server (COM_QUIT, best effort and
/// never blocking; see [`Stream::quit`]).
#[derive(Debug)]
pub struct Conn {
    io: PacketIo,
    info: SessionInfo,
    /// Result columns of each open prepared statement: with MariaDB metadata caching the
    /// server omits them from execute replies, so they are kept from the prepare reply.
    stmt_columns: HashMap<u32, Vec<Column>>,
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.io.stream.quit();
    }
}

const COM_QUERY: u8 = 0x03;
const COM_PING: u8 = 0x0E;
const COM_RESET_CONNECTION: u8 = 0x1F;
const COM_STMT_PREPARE: u8 = 0x16;
const COM_STMT_EXECUTE: u8 = 0x17;
const COM_STMT_CLOSE: u8 = 0x19;
const COM_STMT_BULK_EXECUTE: u8 = 0xFA;

impl Conn {
    /// Connects and authenticates. A refused connection is [`Error::Io`] naming the endpoint;
    /// a rejected login is [`Error::Server`] (1045) with the server's message; a server that
    /// does not answer within `opts.timeouts.connect`, or does not speak MySQL, is
    /// [`Error::Unreachable`]. Later reads and writes wait at most `opts.timeouts.read` each.
    /// Every wait ends early at [`crate::interrupt`].
    ///
    /// TLS is used over TCP only. A Unix socket is already a private channel (the server
    /// counts it as secure transport too), so every ssl-mode is satisfied there without TLS,
    /// and cleartext passwords (caching_sha2 full auth, mysql_clear_password) may be sent.
    pub fn connect(opts: &ConnectOptions) -> Result<Conn, Error> {
        Conn::open(opts, opts.timeouts.connect, opts.timeouts.read)
    }

    /// Connects like [`Conn::connect`], every blocking step bounded by `timeout` (connecting
    /// and the handshake also by `opts.timeouts.connect`, when shorter; every read and write
    /// afterwards by `timeout`): a server that stopped answering (SIGSTOP, a hung host) gives
    /// an error after `timeout` instead of a wait without end. A timed-out connection is no
    /// longer usable: drop it.
    pub fn connect_timeout(opts: &ConnectOptions, timeout: Duration) -> Result<Conn, Error> {
        Conn::open(opts, timeout.min(opts.timeouts.connect), Some(timeout))
    }

    fn open(
        opts: &ConnectOptions,
        connect: Duration,
        read: Option<Duration>,
    ) -> Result<Conn, Error> {
        let (io, info) = establish(opts, connect, read)?;
        Ok(Conn {
            io,
            info,
            stmt_columns: HashMap::new(),
        })
    }

    /// Bounds every later read and write on this connection (`None`: until interrupted). A
    /// timed-out connection is no longer usable: drop it.
    pub fn set_timeout(&self, timeout: Option<Duration>) -> Result<(), Error> {
        self.io.set_limit(timeout);
        Ok(())
    }

    fn command(&mut self, cmd: u8, body: &[u8]) -> Result<(), Error> {
        let mut p = Vec::with_capacity(1 + body.len());
        p.push(cmd);
        p.extend_from_slice(body);
        self.io.reset_seq();
        self.io.write(&p)
    }

    /// Runs a text-protocol query and reads every row. With several result sets (multi-result
    /// procedures) the rows of the first one with columns are kept and the rest are read.
    pub fn query(&mut self, sql: &str) -> Result<QueryResult, Error> {
        self.query_bytes(sql.as_bytes())
    }

    /// [`Conn::query`] for a statement given as bytes, sent as they are (a logged statement in
    /// its connection's character set, which need not be UTF-8). Keeps the first result set's
    /// rows: for a result of any size, use [`Conn::query_each`].
    pub fn query_bytes(&mut self, sql: &[u8]) -> Result<QueryResult, Error> {
        self.command(COM_QUERY, sql)?;
        let mut keep = Keep::new(false);
        let s = self.read_results(None, &mut keep)?;
        Ok(keep.into_result(&s))
    }

    /// Runs a text-protocol query given as bytes (sent as they are) and hands every row of
    /// every result set to `each` as it arrives, keeping none: memory stays bounded by the
    /// largest row (`max_allowed_packet`), whatever the result's size. Returns the counts.
    pub fn query_each(
        &mut self,
        sql: &[u8],
        each: &mut dyn FnMut(&Row<'_>),
    ) -> Result<Streamed, Error> {
        self.command(COM_QUERY, sql)?;
        self.read_results(None, &mut Each(each))
    }

    /// Runs a statement, drops any rows, returns the affected rows.
    pub fn execute(&mut self, sql: &str) -> Result<u64, Error> {
        Ok(self.query(sql)?.affected_rows)
    }

    /// Prepares a statement (COM_STMT_PREPARE).
    pub fn prepare(&mut self, sql: &str) -> Result<Statement, Error> {
        self.command(COM_STMT_PREPARE, sql.as_bytes())?;
        let p = self.io.read()?;
        if p.first() == Some(&0xFF) {
            return Err(parse_err(&p));
        }
        let mut r = Reader::new(&p);
        if r.u8()? != 0 {
            return Err(Error::Protocol("bad COM_STMT_PREPARE reply".into()));
        }
        let id = r.u32()?;
        let columns = r.u16()?;
        let params = r.u16()?;
        column_count(columns.into())?;
        for _ in 0..params {
            self.io.read()?;
        }
        if params > 0 && !self.info.caps.deprecate_eof() {
            self.io.read()?;
        }
        let mut cols = Vec::with_capacity((columns as usize).min(64)); // a count, not yet columns
        for _ in 0..columns {
            cols.push(parse_column(&self.io.read()?)?);
        }
        if columns > 0 && !self.info.caps.deprecate_eof() {
            self.io.read()?;
        }
        self.stmt_columns.insert(id, cols);
        Ok(Statement {
            id,
            params,
            columns,
        })
    }

    /// Executes a prepared statement with `params` (binary protocol); values come back as
    /// text formatted like the text protocol's.
    pub fn exec(&mut self, stmt: &Statement, params: &[Value]) -> Result<QueryResult, Error> {
        let b = execute_packet(stmt, params)?;
        self.command(COM_STMT_EXECUTE, &b)?;
        let mut cols = self.stmt_columns.remove(&stmt.id).unwrap_or_default();
        let mut keep = Keep::new(true);
        let r = self.read_results(Some(&mut cols), &mut keep);
        self.stmt_columns.insert(stmt.id, cols);
        Ok(keep.into_result(&r?))
    }

    /// Executes a prepared statement with `params` and keeps its rows' values as the server
    /// sent them ([`Cell`]): integers and doubles exact, blobs as their bytes.
    pub fn exec_typed(&mut self, stmt: &Statement, params: &[Value]) -> Result<Typed, Error> {
        let b = execute_packet(stmt, params)?;
        self.command(COM_STMT_EXECUTE, &b)?;
        let mut cols = self.stmt_columns.remove(&stmt.id).unwrap_or_default();
        let mut keep = KeepTyped::default();
        let r = self.read_results(Some(&mut cols), &mut keep);
        self.stmt_columns.insert(stmt.id, cols);
        let r = r?;
        Ok(Typed {
            rows: keep.rows,
            affected_rows: r.affected_rows,
            last_insert_id: r.last_insert_id,
        })
    }

    /// Runs prepared statement `stmt` once per parameter row (MariaDB's COM_STMT_BULK_EXECUTE,
    /// when [`Capabilities::bulk_operations`]). `types` declares the parameters; `rows` holds
    /// the rows, each parameter an indicator byte (0: a value follows, as
    /// [`crate::codec::put_bulk_int`] and [`crate::codec::put_bulk_bytes`] write it; 1: NULL)
    /// and its binary value. Returns the affected rows.
    pub fn bulk_execute(
        &mut self,
        stmt: &Statement,
        types: &[ParamType],
        rows: &[u8],
    ) -> Result<u64, Error> {
        if !self.info.caps.bulk_operations() {
            return Err(Error::Protocol(
                "the server does not offer bulk operations".into(),
            ));
        }
        let mut b = Vec::with_capacity(7 + types.len() * 2 + rows.len());
        b.extend_from_slice(&stmt.id.to_le_bytes());
        b.extend_from_slice(&128u16.to_le_bytes()); // SEND_TYPES_TO_SERVER
        for t in types {
            b.extend_from_slice(&t.declared());
        }
        b.extend_from_slice(rows);
        self.command(COM_STMT_BULK_EXECUTE, &b)?;
        Ok(self
            .read_results(None, &mut Keep::new(false))?
            .affected_rows)
    }

    /// Closes a prepared statement (the server sends no reply).
    pub fn close_statement(&mut self, stmt: &Statement) -> Result<(), Error> {
        self.stmt_columns.remove(&stmt.id);
        self.command(COM_STMT_CLOSE, &stmt.id.to_le_bytes())
    }

    /// Runs `sql` (a LOAD DATA LOCAL INFILE statement) and, when the server asks for the
    /// file, streams `data` as its content. Returns the affected rows. The file name the
    /// server asks for is ignored: only `data` is ever sent.
    pub fn load_data_local(
        &mut self,
        sql: &str,
        data: &mut dyn std::io::Read,
    ) -> Result<u64, Error> {
        self.command(COM_QUERY, sql.as_bytes())?;
        let p = self.io.read()?;
        match p.first() {
            Some(0xFB) => {}
            Some(0xFF) => return Err(parse_err(&p)),
            Some(0x00) => return Ok(parse_ok(&p)?.affected_rows),
            _ => {
                return Err(Error::Protocol(
                    "LOAD DATA LOCAL INFILE: the server did not ask for the file".into(),
                ))
            }
        }
        let mut chunk = vec![0u8; 64 * 1024];
        let sent = loop {
            let n = match data.read(&mut chunk) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => break Err(e),
            };
            if n == 0 {
                break Ok(());
            }
            self.io.write(&chunk[..n])?;
        };
        // The empty packet ends the file, also after a read error, so the session stays usable.
        self.io.write(&[])?;
        let r = self.read_results(None, &mut Keep::new(false));
        sent?;
        Ok(r?.affected_rows)
    }

    /// Checks the session is alive (COM_PING).
    pub fn ping(&mut self) -> Result<(), Error> {
        self.command(COM_PING, &[])?;
        let p = self.io.read()?;
        match p.first() {
            Some(0x00) => Ok(()),
            Some(0xFF) => Err(parse_err(&p)),
            _ => Err(Error::Protocol("unexpected reply to COM_PING".into())),
        }
    }

    /// Resets the session to the state of a new connection (COM_RESET_CONNECTION): rolls back
    /// its transaction, releases its locks, drops its temporary tables, prepared statements and
    /// user variables, and resets its session variables; the user and database stay.
    pub fn reset(&mut self) -> Result<(), Error> {
        self.command(COM_RESET_CONNECTION, &[])?;
        let p = self.io.read()?;
        match p.first() {
            Some(0x00) => Ok(()),
            Some(0xFF) => Err(parse_err(&p)),
            _ => Err(Error::Protocol(
                "unexpected reply to COM_RESET_CONNECTION".into(),
            )),
        }
    }

    /// Server version string, without MariaDB's "5.5.5-" replication prefix.
    pub fn server_version(&self) -> &str {
        &self.info.server_version
    }
    /// True for MariaDB.
    pub fn is_mariadb(&self) -> bool {
        self.info.mariadb
    }
    /// Server thread id (what `SELECT CONNECTION_ID()` returns).
    pub fn connection_id(&self) -> u32 {
        self.info.connection_id
    }
    /// Negotiated capabilities.
    pub fn capabilities(&self) -> Capabilities {
        self.info.caps
    }

    /// Hands the authenticated socket to an event loop, in blocking mode without timeouts,
    /// with no reply pending: the next byte the server sends answers the caller's next command.
    pub fn into_stream(self) -> (Stream, SessionInfo) {
        debug_assert_eq!(self.io.buffered(), 0, "unread bytes at hand-over");
        // The session lives on in the caller's hands: no COM_QUIT (see `Drop`).
        let mut me = std::mem::ManuallyDrop::new(self);
        // SAFETY: `me` is never dropped nor used again; each field is moved out exactly once
        // (`io`, `info`) or dropped in place (`stmt_columns`).
        let (stream, info) = unsafe {
            std::ptr::drop_in_place(&mut me.stmt_columns);
            (
                std::ptr::read(&me.io).into_stream(),
                std::ptr::read(&me.info),
            )
        };
        // The new owner waits its own way: no kernel timeout of ours stays on the socket
        // (failing to clear it only makes a blocking owner's calls return early).
        let _ = stream.set_timeouts(None);
        (stream, info)
    }

    /// Reads every result of one command, handing each result set's columns and rows to
    /// `sink`. `cached` holds the columns of a prepared statement: used when the server omits
    /// them (MariaDB metadata caching on execute) and replaced when it sends them (the first
    /// execute reports the types the parameters produced).
    fn read_results(
        &mut self,
        mut cached: Option<&mut Vec<Column>>,
        sink: &mut dyn Sink,
    ) -> Result<Streamed, Error> {
        let mut out = Streamed::default();
        loop {
            let p = self.io.read()?;
            let more = match p.first() {
                Some(0x00) => {
                    let ok = parse_ok(&p)?;
                    out.affected_rows += ok.affected_rows;
                    out.last_insert_id = ok.last_insert_id.max(out.last_insert_id);
                    out.warnings = out.warnings.saturating_add(ok.warnings);
                    ok.status
                }
                Some(0xFF) => {
                    // Later results may follow an error only on a new command; drain nothing.
                    return Err(parse_err(&p));
                }
                Some(0xFB) => {
                    // LOAD DATA LOCAL outside load_data_local: refuse by sending no content.
                    self.io.write(&[])?;
                    continue;
                }
                _ => {
                    let status =
                        self.read_result_set(&p, cached.as_deref_mut(), out.sets, sink, &mut out)?;
                    out.sets += 1;
                    out.warnings = out.warnings.saturating_add(status.warnings);
                    status.status
                }
            };
            if more & SERVER_MORE_RESULTS_EXISTS == 0 {
                return Ok(out);
            }
        }
    }

    /// Reads result set `set` after its column-count packet `first`, each row handed to `sink`
    /// and counted in `out` as it arrives: nothing is kept here, whatever the result's size.
    fn read_result_set(
        &mut self,
        first: &[u8],
        cached: Option<&mut Vec<Column>>,
        set: usize,
        sink: &mut dyn Sink,
        out: &mut Streamed,
    ) -> Result<OkPacket, Error> {
        let mut r = Reader::new(first);
        let n = column_count(r.lenenc_int()?)?;
        // MariaDB metadata caching adds a "metadata follows" byte to the column count.
        let follows = !self.info.caps.cache_metadata() || r.u8()? != 0;
        let cols: Vec<Column> = if follows {
            let mut v = Vec::with_capacity(n.min(64)); // a count, not yet columns
            for _ in 0..n {
                v.push(parse_column(&self.io.read()?)?);
            }
            if !self.info.caps.deprecate_eof() {
                self.io.read()?;
            }
            if let Some(c) = cached {
                c.clone_from(&v);
            }
            v
        } else {
            cached
                .filter(|c| c.len() == n)
                .ok_or_else(|| {
                    Error::Protocol("server skipped metadata this client does not have".into())
                })?
                .clone()
        };
        sink.columns(set, &cols);
        let mut p = Vec::new();
        loop {
            self.io.read_into(&mut p)?;
            if is_eof(&p) {
                return Ok(if self.info.caps.deprecate_eof() {
                    parse_ok(&p)?
                } else {
                    OkPacket {
                        status: parse_eof_status(&p),
                        warnings: u16::from_le_bytes([
                            p.get(1).copied().unwrap_or(0),
                            p.get(2).copied().unwrap_or(0),
                        ]),
                        ..OkPacket::default()
                    }
                });
            }
            if p.first() == Some(&0xFF) {
                return Err(parse_err(&p));
            }
            out.rows += 1;
            sink.row(set, &p, &cols)?;
        }
    }
}

/// The COM_STMT_EXECUTE payload of `stmt` with `params`.
fn execute_packet(stmt: &Statement, params: &[Value]) -> Result<Vec<u8>, Error> {
    if params.len() != stmt.params as usize {
        return Err(Error::Protocol(format!(
            "statement {} takes {} parameters, {} given",
            stmt.id,
            stmt.params,
            params.len()
        )));
    }
    let mut b = Vec::with_capacity(16 + params.len() * 12);
    b.extend_from_slice(&stmt.id.to_le_bytes());
    b.push(0); // CURSOR_TYPE_NO_CURSOR
    b.extend_from_slice(&1u32.to_le_bytes()); // iteration count
    if !params.is_empty() {
        let mut nulls = vec![0u8; params.len().div_ceil(8)];
        for (i, v) in params.iter().enumerate() {
            if *v == Value::Null {
                nulls[i / 8] |= 1 << (i % 8);
            }
        }
        b.extend_from_slice(&nulls);
        b.push(1); // new parameters bound: types follow
        for v in params {
            b.extend_from_slice(match v {
                Value::Null => &[6, 0],
                Value::Int(_) => &[8, 0],
                Value::Double(_) => &[5, 0],
                Value::Bytes(_) => &[0xFE, 0],
            });
        }
        for v in params {
            match v {
                Value::Null => {}
                Value::Int(i) => b.extend_from_slice(&i.to_le_bytes()),
                Value::Double(f) => b.extend_from_slice(&f.to_le_bytes()),
                Value::Bytes(x) => put_lenenc_bytes(&mut b, x),
            }
        }
    }
    Ok(b)
}
