//! What the slow and general log readers share: the entry being read and each connection's
//! user, host and schema, kept in buffers reused from entry to entry, and the line tests both
//! formats need. It sits below the reader and the two format modules (`slow`, `general`),
//! which read into it.

use std::borrow::Cow;
use std::collections::HashMap;

use crate::entry::EntryRef;
use crate::error::LogError;
use crate::lines::{Lines, MAX_LINE};

/// What the reader remembers about one connection between its entries.
#[derive(Debug, Default)]
pub(crate) struct Conn {
    pub(crate) user: String,
    pub(crate) host: String,
    pub(crate) db: String,
}

/// The entry being read, in buffers reused from entry to entry.
#[derive(Debug, Default)]
pub(crate) struct Cur {
    pub(crate) line: u64,
    pub(crate) at_us: Option<i64>,
    /// MySQL 8's `Start:` (`log_slow_extra`): when the statement started, µs.
    pub(crate) start_us: Option<i64>,
    pub(crate) thread_id: Option<u64>,
    pub(crate) user: Option<String>,
    pub(crate) host: Option<String>,
    pub(crate) db: Option<String>,
    pub(crate) query_time_s: Option<f64>,
    pub(crate) lock_time_s: Option<f64>,
    pub(crate) rows_sent: Option<u64>,
    pub(crate) rows_examined: Option<u64>,
    pub(crate) rows_affected: Option<u64>,
    /// The header lines' text, for [`EntryRef::extras`].
    pub(crate) extras: Vec<u8>,
    /// The raw statement lines; `sql` is the statement's range in it.
    pub(crate) body: Vec<u8>,
    pub(crate) sql: (usize, usize),
    pub(crate) command: String,
    /// A line was cut or the input ended mid-line: the entry is incomplete.
    pub(crate) cut: bool,
}

/// Sets a reused `Option<String>` to `text` without allocating when it already has room.
pub(crate) fn put(slot: &mut Option<String>, text: &str) {
    match slot {
        Some(s) => {
            s.clear();
            s.push_str(text);
        }
        None => *slot = Some(text.to_string()),
    }
}

/// Clears a reused `Option<String>`, keeping its buffer when it is empty (`Some("")`
/// reads as `None`, see [`Cur::view`]).
fn clear(slot: &mut Option<String>) {
    if let Some(s) = slot {
        s.clear();
    }
}

impl Cur {
    pub(crate) fn reset(&mut self) {
        self.line = 0;
        self.at_us = None;
        self.thread_id = None;
        clear(&mut self.user);
        clear(&mut self.host);
        clear(&mut self.db);
        self.query_time_s = None;
        self.start_us = None;
        self.lock_time_s = None;
        self.rows_sent = None;
        self.rows_examined = None;
        self.rows_affected = None;
        self.extras.clear();
        self.body.clear();
        self.sql = (0, 0);
        self.command.clear();
        self.command.push_str("Query");
        self.cut = false;
    }

    /// Appends one line to the body; a statement longer than [`MAX_LINE`] is an error, so
    /// garbage cannot grow it without bound.
    pub(crate) fn push_body(&mut self, line: &[u8]) -> Result<(), LogError> {
        bounded(self.line, self.body.len() + line.len() + 1, "a statement")?;
        self.body.extend_from_slice(line);
        self.body.push(b'\n');
        Ok(())
    }

    /// The entry as read so far, borrowed.
    pub(crate) fn view(&self) -> EntryRef<'_> {
        fn text(s: &Option<String>) -> Option<&str> {
            s.as_deref().filter(|s| !s.is_empty())
        }
        EntryRef {
            line: self.line,
            at_us: self.at_us,
            thread_id: self.thread_id,
            user: text(&self.user),
            host: text(&self.host),
            db: text(&self.db),
            query_time_s: self.query_time_s,
            lock_time_s: self.lock_time_s,
            rows_sent: self.rows_sent,
            rows_examined: self.rows_examined,
            rows_affected: self.rows_affected,
            sql: &self.body[self.sql.0..self.sql.1],
            command: &self.command,
            extras: &self.extras,
        }
    }
}

/// An error when `len` bytes of the entry at `line` would pass [`MAX_LINE`].
pub(crate) fn bounded(line: u64, len: usize, what: &'static str) -> Result<(), LogError> {
    if len <= MAX_LINE {
        return Ok(());
    }
    Err(LogError::TooLong {
        file: None,
        line,
        what,
        limit: MAX_LINE,
    })
}

/// Everything the format readers share.
pub(crate) struct State<R> {
    pub(crate) lines: Lines<R>,
    pub(crate) cur: Cur,
    pub(crate) conns: HashMap<u64, Conn>,
    /// The last `# Time:` (MariaDB writes it only when the second changes).
    pub(crate) last_time: Option<i64>,
    pub(crate) skipped: u64,
}

/// The server's banner, repeated at each restart: `/usr/sbin/mariadbd, Version: ...`,
/// `Tcp port: ...`, `Time  Id Command  Argument`.
pub(crate) fn is_server_header(l: &[u8]) -> bool {
    match l.first() {
        Some(b'#') | None => false,
        Some(b'T') if l.starts_with(b"Tcp port:") => true,
        Some(b'T') if l.starts_with(b"Time ") || l.starts_with(b"Time\t") => {
            find(l, b"Id Command").is_some()
        }
        _ => l.ends_with(b"started with:") && find(l, b", Version: ").is_some(),
    }
}

/// The database a `use NAME` names: `NAME` bare, or in backticks with each backtick inside
/// doubled (`` `a``b` `` is ``a`b``), as the server reads it and the slow log writes it.
/// Borrowed unless a doubled backtick must be undone (the digest allocates nothing per entry).
pub(crate) fn use_name(name: &str) -> Cow<'_, str> {
    let name = name.trim();
    let name = name.strip_suffix(';').map_or(name, str::trim_end);
    match name.strip_prefix('`').and_then(|n| n.strip_suffix('`')) {
        Some(inner) if inner.contains("``") => Cow::Owned(inner.replace("``", "`")),
        Some(inner) => Cow::Borrowed(inner),
        None => Cow::Borrowed(name),
    }
}

/// Where `needle` first occurs in `hay` (short lines: no searcher to build).
pub(crate) fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return Some(0);
    }
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{LogReader, LogType};

    /// The database of each entry of `log`.
    fn dbs(log: &str, kind: LogType) -> Vec<Option<String>> {
        let mut r = LogReader::new(log.as_bytes(), kind).unwrap();
        let mut out = Vec::new();
        while let Some(e) = r.next_ref() {
            out.push(e.unwrap().db.map(str::to_string));
        }
        out
    }

    #[test]
    fn issue_45_use_takes_a_doubled_backtick_as_one() {
        assert_eq!(use_name("`a``b`"), "a`b");
        assert_eq!(use_name(" `shop` "), "shop");
        assert_eq!(use_name("shop;"), "shop");
        assert_eq!(use_name("`a``b`;"), "a`b");
        assert_eq!(use_name("`x````y`"), "x``y");
        assert_eq!(use_name("`"), "`");
        assert!(matches!(use_name("`shop`"), Cow::Borrowed(_)));
        let slow = "# Time: 261123  4:25:49\n# User@Host: root[root] @ localhost []\n\
                    # Thread_id: 6  Schema:   QC_hit: No\n\
                    # Query_time: 0.1  Lock_time: 0.0  Rows_sent: 1  Rows_examined: 1\n\
                    use `a``b`;\nSET timestamp=1795407949;\nSELECT 1;\n";
        assert_eq!(dbs(slow, LogType::Slow), [Some("a`b".to_string())]);
        let general = "261123  4:25:49\t     5 Query\tUSE `a``b`\n\
                       \t\t     5 Query\tSELECT 1\n";
        assert_eq!(dbs(general, LogType::General)[1].as_deref(), Some("a`b"));
    }
}
