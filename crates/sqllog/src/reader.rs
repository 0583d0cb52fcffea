//! [`LogReader`]: format detection, the per-entry state and the two iterators.

use std::collections::HashMap;
use std::io::BufRead;

use crate::entry::{Entry, EntryRef, Flavor, LogType};
use crate::error::{describe, shorten, LogError};
use crate::lines::{Lines, MAX_LINE};
use crate::{general, slow};

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

    /// Appends one line to the body (capped, so garbage cannot grow it without bound).
    pub(crate) fn push_body(&mut self, line: &[u8]) {
        if self.body.len() + line.len() >= MAX_LINE {
            self.cut = true;
            return;
        }
        self.body.extend_from_slice(line);
        self.body.push(b'\n');
    }

    fn view(&self) -> EntryRef<'_> {
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

/// Everything the format readers share.
pub(crate) struct State<R> {
    pub(crate) lines: Lines<R>,
    pub(crate) cur: Cur,
    pub(crate) conns: HashMap<u64, Conn>,
    /// The last `# Time:` (MariaDB writes it only when the second changes).
    pub(crate) last_time: Option<i64>,
    pub(crate) skipped: u64,
}

/// A streaming reader of one slow or general log: an iterator of owned [`Entry`]s, and
/// [`LogReader::next_ref`] for borrowed ones. Memory stays constant whatever the log's size
/// (one reused line and entry buffer, and one small record per open connection).
pub struct LogReader<R: BufRead> {
    st: State<R>,
    kind: LogType,
    flavor: Flavor,
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

/// Where `needle` first occurs in `hay` (short lines: no searcher to build).
pub(crate) fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return Some(0);
    }
    hay.windows(needle.len()).position(|w| w == needle)
}

impl<R: BufRead> LogReader<R> {
    /// A reader of `r` as a log of type `kind`; reads the first lines to detect the
    /// server's flavor. Input that is not such a log gives [`LogError::UnknownFormat`].
    pub fn new(r: R, kind: LogType) -> Result<Self, LogError> {
        let mut st = State {
            lines: Lines::new(r),
            cur: Cur::default(),
            conns: HashMap::new(),
            last_time: None,
            skipped: 0,
        };
        let mut header_flavor = None;
        let mut any = false;
        // The first line that fits no entry, and how many such lines were read.
        let mut first: Option<Vec<u8>> = None;
        let mut looked = 0;
        while st.lines.advance()? {
            any = true;
            let l = &st.lines.buf;
            if l.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            if is_server_header(l) {
                if find(l, b", Version: ").is_some() {
                    let maria = find(l, b"MariaDB").is_some();
                    header_flavor = Some(if maria {
                        Flavor::MariaDb
                    } else {
                        Flavor::MySql
                    });
                }
                continue;
            }
            match fit(l, kind) {
                Fit::Yes(flavor) => {
                    // a log cut in the middle of an entry (`tail -c`): that entry is skipped
                    st.skipped += u64::from(first.is_some());
                    st.lines.hold();
                    let flavor = header_flavor.unwrap_or(flavor);
                    return Ok(LogReader { st, kind, flavor });
                }
                Fit::OtherKind(e) => return Err(e),
                Fit::No if first.is_none() && shorten(l).is_none() => return Err(unknown(kind, l)),
                Fit::No => {
                    let first = first.get_or_insert_with(|| l.clone());
                    looked += 1;
                    if looked >= LOOKAHEAD {
                        return Err(unknown(kind, first));
                    }
                }
            }
        }
        match (header_flavor, first) {
            (_, Some(first)) => Err(unknown(kind, &first)),
            (Some(flavor), None) => Ok(LogReader { st, kind, flavor }),
            (None, None) if any => Err(LogError::UnknownFormat(
                "the log holds only blank lines".into(),
            )),
            (None, None) => Err(LogError::UnknownFormat("the log is empty".into())),
        }
    }

    /// The server that wrote the log.
    pub fn flavor(&self) -> Flavor {
        self.flavor
    }

    /// The log's type as given.
    pub fn log_type(&self) -> LogType {
        self.kind
    }

    /// Bytes read so far (for progress).
    pub fn bytes_read(&self) -> u64 {
        self.st.lines.bytes
    }

    /// Truncated or unparseable entries skipped so far.
    pub fn skipped(&self) -> u64 {
        self.st.skipped
    }

    /// The next entry, borrowed from the reader's buffers (no allocation per entry once the
    /// buffers have grown to the log's largest entry).
    pub fn next_ref(&mut self) -> Option<Result<EntryRef<'_>, LogError>> {
        let read_one = match self.kind {
            LogType::Slow => slow::read_one,
            LogType::General => general::read_one,
        };
        match next_whole(&mut self.st, read_one) {
            Ok(true) => Some(Ok(self.st.cur.view())),
            Ok(false) => None,
            Err(e) => Some(Err(LogError::Io(e))),
        }
    }
}

impl<R: BufRead> Iterator for LogReader<R> {
    type Item = Result<Entry, LogError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_ref().map(|r| r.map(|e| e.to_entry()))
    }
}

/// Lines read past a first line that starts no entry, looking for one that does (a log
/// cut mid-entry) before giving up.
const LOOKAHEAD: usize = 256;

/// How a line fits a log of type `kind`.
enum Fit {
    /// It starts an entry of that type, written by this flavor.
    Yes(Flavor),
    /// It starts an entry of the other type (the error says which to use).
    OtherKind(LogError),
    /// It starts no entry.
    No,
}

fn fit(l: &[u8], kind: LogType) -> Fit {
    let slow = slow::first_line_flavor(l);
    let general = general::parse_line(l).map(|g| g.flavor);
    let line = shorten(l).unwrap_or_default();
    match (kind, slow, general) {
        (LogType::Slow, Some(f), _) | (LogType::General, _, Some(f)) => Fit::Yes(f),
        (LogType::Slow, None, Some(_)) => Fit::OtherKind(LogError::UnknownFormat(format!(
            "not a slow log: its entries look like a general log's (\"{line}\"); use --log-type general"
        ))),
        (LogType::General, Some(_), None) => Fit::OtherKind(LogError::UnknownFormat(format!(
            "not a general log: its entries look like a slow log's (\"{line}\"); use --log-type slow"
        ))),
        (_, None, None) => Fit::No,
    }
}

/// The error for input where no line starts an entry: names the first line.
fn unknown(kind: LogType, first: &[u8]) -> LogError {
    let kind = match kind {
        LogType::Slow => "slow",
        LogType::General => "general",
    };
    LogError::UnknownFormat(format!(
        "not a MariaDB or MySQL {kind} log: {}",
        describe(first)
    ))
}

/// Reads entries with `read_one` until one is whole (true) or the input ends (false);
/// incomplete entries are counted in `skipped`.
fn next_whole<R: BufRead>(
    st: &mut State<R>,
    read_one: fn(&mut State<R>) -> std::io::Result<Option<bool>>,
) -> std::io::Result<bool> {
    loop {
        match read_one(st)? {
            Some(true) => return Ok(true),
            Some(false) => st.skipped += 1,
            None => return Ok(false),
        }
    }
}
