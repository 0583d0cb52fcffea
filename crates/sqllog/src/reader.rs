//! [`LogReader`]: format detection, the per-entry state and the two iterators.

use std::collections::HashMap;
use std::io::BufRead;

use crate::entry::{Entry, EntryRef, Flavor, LogType};
use crate::error::{describe, shorten, LogError};
use crate::lines::Lines;
use crate::state::{find, is_server_header, Cur, State};
use crate::{general, slow};

/// A streaming reader of one slow or general log: an iterator of owned [`Entry`]s, and
/// [`LogReader::next_ref`] for borrowed ones. Memory stays constant whatever the log's size
/// (one reused line and entry buffer, and one small record per open connection). A line or
/// an entry longer than [`crate::MAX_STATEMENT`] is an error ([`LogError::TooLong`]).
pub struct LogReader<R: BufRead> {
    st: State<R>,
    kind: LogType,
    flavor: Flavor,
    /// The log's name for errors that name a line ([`LogReader::named`]).
    name: Option<String>,
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
                    return Ok(LogReader {
                        st,
                        kind,
                        flavor,
                        name: None,
                    });
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
            (Some(flavor), None) => Ok(LogReader {
                st,
                kind,
                flavor,
                name: None,
            }),
            (None, None) if any => Err(LogError::UnknownFormat(
                "the log holds only blank lines".into(),
            )),
            (None, None) => Err(LogError::UnknownFormat("the log is empty".into())),
        }
    }

    /// The reader with the log's name, which errors that name a line give as `NAME:LINE`.
    pub fn named(mut self, name: &str) -> Self {
        self.name = Some(name.to_string());
        self
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
            Err(e) => Some(Err(match &self.name {
                Some(name) => e.in_file(name),
                None => e,
            })),
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
    read_one: fn(&mut State<R>) -> Result<Option<bool>, LogError>,
) -> Result<bool, LogError> {
    loop {
        match read_one(st)? {
            Some(true) => return Ok(true),
            Some(false) => st.skipped += 1,
            None => return Ok(false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MAX_STATEMENT;

    /// A statement of `lines` lines of `width` bytes each, in a `kind` log.
    fn log_with_statement(kind: LogType, lines: usize, width: usize) -> Vec<u8> {
        let mut log = match kind {
            LogType::Slow => b"# Time: 261123  4:11:58\n# User@Host: a[a] @ h []\n# Query_time: 0.1  Lock_time: 0.0  Rows_sent: 0  Rows_examined: 0\nSELECT 1\n".to_vec(),
            LogType::General => b"261123  4:11:58\t    8 Query\tSELECT 1\n".to_vec(),
        };
        let line = [vec![b'1'; width], b"\n".to_vec()].concat();
        log.extend(line.repeat(lines));
        log.extend(b";\n");
        log
    }

    #[test]
    fn a_statement_longer_than_the_limit_is_an_error_naming_its_line() {
        for kind in [LogType::Slow, LogType::General] {
            let log = log_with_statement(kind, MAX_STATEMENT / (1 << 20), 1 << 20);
            let mut r = LogReader::new(&log[..], kind).unwrap().named("x.log");
            let e = r.next().unwrap().unwrap_err();
            assert_eq!(
                e.to_string(),
                "x.log:1: a statement longer than 64 MiB, the limit of the log reader"
            );
            let log = log_with_statement(kind, 3, 1 << 20);
            let e = LogReader::new(&log[..], kind).unwrap().next().unwrap();
            assert!(e.unwrap().sql.len() > 3 << 20);
        }
    }

    #[test]
    fn a_header_longer_than_the_limit_is_an_error() {
        let line = format!("# Thread_id: 8 {}\n", "x".repeat(1 << 20));
        let log = format!("# Time: 261123  4:11:58\n{}", line.repeat(64));
        let e = LogReader::new(log.as_bytes(), LogType::Slow)
            .unwrap()
            .next()
            .unwrap()
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 1: an entry's header longer than 64 MiB, the limit of the log reader"
        );
    }
}
