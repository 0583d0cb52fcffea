//! What one log entry says: the owned [`Entry`] and its borrowed view [`EntryRef`].

use crate::pairs::{Pairs, KNOWN};

/// Which log a file is (`--log-type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogType {
    /// The slow query log (`slow_query_log`), the default.
    #[default]
    Slow,
    /// The general query log (`general_log`).
    General,
}

/// Which server wrote the log, detected from its header or its lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// MariaDB (and MySQL 5.6's short `YYMMDD` times).
    MariaDb,
    /// MySQL 5.7 and 8 (ISO times, `Id:` in `# User@Host:`).
    MySql,
}

impl Flavor {
    /// `MariaDB` or `MySQL`.
    pub fn name(self) -> &'static str {
        match self {
            Flavor::MariaDb => "MariaDB",
            Flavor::MySql => "MySQL",
        }
    }
}

/// The server command an entry records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// A statement (`COM_QUERY`, and an executed prepared statement in a slow log).
    Query,
    /// A connection opened.
    Connect,
    /// A connection closed.
    Quit,
    /// A statement prepared (`COM_STMT_PREPARE`).
    Prepare,
    /// A prepared statement executed (`COM_STMT_EXECUTE`, general log).
    Execute,
    /// A prepared statement closed.
    Close,
    /// Any other administrator command, by the name the log gives it.
    Other(String),
}

impl Command {
    /// The command a log names (`Query`, `Close stmt`, `Init DB`, ...).
    pub fn from_name(name: &str) -> Command {
        match name {
            "Query" => Command::Query,
            "Connect" => Command::Connect,
            "Quit" => Command::Quit,
            "Prepare" => Command::Prepare,
            "Execute" => Command::Execute,
            "Close stmt" | "Close" => Command::Close,
            other => Command::Other(other.to_string()),
        }
    }
}

/// One entry of a log, owned (see [`EntryRef`] for the allocation-free view).
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The line number where the entry starts (1-based).
    pub line: u64,
    /// When the statement started, µs since the Unix epoch in the log's own clock: MariaDB's
    /// `SET timestamp=` (whole seconds), else the `# Time:` it was logged at (its end; MySQL's
    /// in µs) less its `Query_time`; a general log's time (whole seconds on MariaDB). `None`
    /// when the log has none.
    pub at_us: Option<i64>,
    /// The original connection id.
    pub thread_id: Option<u64>,
    /// The account's user name.
    pub user: Option<String>,
    /// The client's host (or its address when the host is empty).
    pub host: Option<String>,
    /// The database in effect (`use db;`, `Schema:`, `Init DB`), carried forward per connection.
    pub db: Option<String>,
    /// `Query_time` in seconds (slow log only).
    pub query_time_s: Option<f64>,
    /// `Lock_time` in seconds (slow log only).
    pub lock_time_s: Option<f64>,
    /// `Rows_sent`.
    pub rows_sent: Option<u64>,
    /// `Rows_examined`.
    pub rows_examined: Option<u64>,
    /// `Rows_affected` (MariaDB's `log_slow_verbosity`).
    pub rows_affected: Option<u64>,
    /// The other `# Name: value` pairs (`Pages_accessed`, `Full_scan`, `explain`, ...).
    pub extras: Vec<(String, String)>,
    /// The statement's bytes as logged (a log may hold bytes that are not UTF-8: a client's
    /// gbk, say), without the trailing `;` and without the `use` and `SET timestamp` lines the
    /// log adds. Replay sends them unchanged; [`Entry::text`] is their text for people.
    pub sql: Vec<u8>,
    /// What the entry records.
    pub command: Command,
}

impl Entry {
    /// The statement as text, for people: bytes that are not UTF-8 read as U+FFFD.
    pub fn text(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(&self.sql)
    }
}

/// One entry borrowed from the reader's buffers, valid until the next read: the digest's
/// path, which allocates nothing per entry.
#[derive(Debug, Clone, Copy)]
pub struct EntryRef<'a> {
    /// See [`Entry::line`].
    pub line: u64,
    /// See [`Entry::at_us`].
    pub at_us: Option<i64>,
    /// See [`Entry::thread_id`].
    pub thread_id: Option<u64>,
    /// See [`Entry::user`].
    pub user: Option<&'a str>,
    /// See [`Entry::host`].
    pub host: Option<&'a str>,
    /// See [`Entry::db`].
    pub db: Option<&'a str>,
    /// See [`Entry::query_time_s`].
    pub query_time_s: Option<f64>,
    /// See [`Entry::lock_time_s`].
    pub lock_time_s: Option<f64>,
    /// See [`Entry::rows_sent`].
    pub rows_sent: Option<u64>,
    /// See [`Entry::rows_examined`].
    pub rows_examined: Option<u64>,
    /// See [`Entry::rows_affected`].
    pub rows_affected: Option<u64>,
    /// The statement's bytes (logs may hold bytes that are not UTF-8).
    pub sql: &'a [u8],
    /// The command's name as the log writes it (`Query`, `Quit`, `Close stmt`, ...).
    pub command: &'a str,
    /// The header lines' text (after `# `, one line each), parsed when asked.
    pub(crate) extras: &'a [u8],
}

impl<'a> EntryRef<'a> {
    /// The other `# Name: value` pairs, in the log's order (parsed on each call: the
    /// digest never asks).
    pub fn extras(&self) -> impl Iterator<Item = (&'a str, &'a str)> + 'a {
        let text = |b: &'a [u8]| std::str::from_utf8(b).unwrap_or("");
        self.extras
            .split(|&c| c == b'\n')
            .flat_map(Pairs::new)
            .filter(|(name, _)| !KNOWN.contains(name))
            .map(move |(n, v)| (text(n), text(v)))
    }

    /// The owned copy.
    pub fn to_entry(&self) -> Entry {
        let own = |s: Option<&str>| s.map(str::to_string);
        Entry {
            line: self.line,
            at_us: self.at_us,
            thread_id: self.thread_id,
            user: own(self.user),
            host: own(self.host),
            db: own(self.db),
            query_time_s: self.query_time_s,
            lock_time_s: self.lock_time_s,
            rows_sent: self.rows_sent,
            rows_examined: self.rows_examined,
            rows_affected: self.rows_affected,
            extras: self
                .extras()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
            sql: self.sql.to_vec(),
            command: Command::from_name(self.command),
        }
    }
}
