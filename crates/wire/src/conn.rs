//! The blocking session.

use crate::caps::Capabilities;
use crate::error::Error;
use crate::stream::Stream;
use qpslab_core::ConnectOptions;

/// Result of a text-protocol query or a statement execution, fully read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QueryResult {
    /// Column names (empty for statements without a result set).
    pub columns: Vec<String>,
    /// Rows, each value as text or NULL.
    pub rows: Vec<Vec<Option<String>>>,
    /// Rows changed (OK packet).
    pub affected_rows: u64,
    /// Last AUTO_INCREMENT value generated (OK packet).
    pub last_insert_id: u64,
    /// Warning count.
    pub warnings: u16,
}

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
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// SQL NULL.
    Null,
    /// A signed integer.
    Int(i64),
    /// A string or blob.
    Bytes(Vec<u8>),
}

/// What an event loop needs to know about a session handed over by [`Conn::into_stream`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionInfo {
    /// Negotiated capabilities.
    pub caps: Capabilities,
    /// Server thread id.
    pub connection_id: u32,
    /// Server version string.
    pub server_version: String,
    /// True for MariaDB.
    pub mariadb: bool,
}

/// A blocking session.
#[derive(Debug)]
pub struct Conn {
    stream: Stream,
    info: SessionInfo,
}

impl Conn {
    /// Connects and authenticates.
    pub fn connect(opts: &ConnectOptions) -> Result<Conn, Error> {
        let _ = opts;
        todo!()
    }
    /// Runs a text-protocol query and reads every row.
    pub fn query(&mut self, sql: &str) -> Result<QueryResult, Error> {
        let _ = sql;
        todo!()
    }
    /// Runs a statement, drops any rows, returns affected rows.
    pub fn execute(&mut self, sql: &str) -> Result<u64, Error> {
        let _ = sql;
        todo!()
    }
    /// Prepares a statement.
    pub fn prepare(&mut self, sql: &str) -> Result<Statement, Error> {
        let _ = sql;
        todo!()
    }
    /// Executes a prepared statement.
    pub fn exec(&mut self, stmt: &Statement, params: &[Value]) -> Result<QueryResult, Error> {
        let _ = (stmt, params);
        todo!()
    }
    /// Closes a prepared statement.
    pub fn close_statement(&mut self, stmt: &Statement) -> Result<(), Error> {
        let _ = stmt;
        todo!()
    }
    /// Runs LOAD DATA LOCAL INFILE, streaming `data` as the file.
    pub fn load_data_local(
        &mut self,
        sql: &str,
        data: &mut dyn std::io::Read,
    ) -> Result<u64, Error> {
        let _ = (sql, data);
        todo!()
    }
    /// COM_PING.
    pub fn ping(&mut self) -> Result<(), Error> {
        todo!()
    }
    /// Server version string.
    pub fn server_version(&self) -> &str {
        &self.info.server_version
    }
    /// True for MariaDB.
    pub fn is_mariadb(&self) -> bool {
        self.info.mariadb
    }
    /// Server thread id.
    pub fn connection_id(&self) -> u32 {
        self.info.connection_id
    }
    /// Negotiated capabilities.
    pub fn capabilities(&self) -> Capabilities {
        self.info.caps
    }
    /// Hands the authenticated socket to an event loop.
    pub fn into_stream(self) -> (Stream, SessionInfo) {
        (self.stream, self.info)
    }
}
