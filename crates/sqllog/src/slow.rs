//! The slow query log: `# Name: value` header lines, then `use db;`, `SET timestamp=N;` and
//! the statement, ending with `;`.

use std::io::BufRead;

use crate::entry::Flavor;
use crate::error::LogError;
use crate::state::{bounded, find, is_server_header, put, Cur, State};
use crate::time::{parse_iso, parse_short};

/// The flavor a log's first entry line shows, if it starts a slow-log entry.
pub(crate) fn first_line_flavor(l: &[u8]) -> Option<Flavor> {
    if let Some(t) = l.strip_prefix(b"# Time: ") {
        let t = trim_start(t);
        return if parse_iso(t).is_some() {
            Some(Flavor::MySql)
        } else {
            parse_short(t).map(|_| Flavor::MariaDb)
        };
    }
    if l.starts_with(b"# User@Host: ") {
        let mysql = find(l, b" Id: ").is_some();
        return Some(if mysql {
            Flavor::MySql
        } else {
            Flavor::MariaDb
        });
    }
    None
}

fn trim_start(b: &[u8]) -> &[u8] {
    let n = b.iter().take_while(|c| c.is_ascii_whitespace()).count();
    &b[n..]
}

fn trim_end(b: &[u8]) -> &[u8] {
    let n = b
        .iter()
        .rev()
        .take_while(|c| c.is_ascii_whitespace())
        .count();
    &b[..b.len() - n]
}

/// `# Name: ...` with a name of letters, digits and `_` (a header line, not a comment
/// inside a statement).
fn is_pair_line(l: &[u8]) -> bool {
    let Some(rest) = l.strip_prefix(b"# ") else {
        return false;
    };
    name_len(rest).is_some() && !rest.starts_with(b"administrator")
}

/// The length of the `Name` when `b` starts with `Name:` (a letter, then letters, digits, `_`).
fn name_len(b: &[u8]) -> Option<usize> {
    if !b.first()?.is_ascii_alphabetic() {
        return None;
    }
    let n = b
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
        .count();
    (b.get(n) == Some(&b':')).then_some(n)
}

#[derive(Default)]
struct Seen {
    started: bool,
    header: bool,
    time: bool,
    user: bool,
    body: bool,
    /// The entry's own ISO `# Time:` (MySQL, µs, its end): preferred to `SET timestamp` (seconds).
    iso: Option<i64>,
}

/// One entry: `None` at the end of the input, `Some(whole)` otherwise.
pub(crate) fn read_one<R: BufRead>(st: &mut State<R>) -> Result<Option<bool>, LogError> {
    st.cur.reset();
    let mut seen = Seen::default();
    loop {
        if !st.lines.advance()? {
            return Ok(seen.started.then(|| finish(st, &seen)));
        }
        let l = &st.lines.buf;
        let time = l.starts_with(b"# Time: ");
        let user = l.starts_with(b"# User@Host: ");
        let ends = is_server_header(l)
            || time && (seen.time || seen.user || seen.body)
            || user && (seen.user || seen.body)
            || seen.body && is_pair_line(l);
        if ends && seen.started {
            st.lines.hold();
            return Ok(Some(finish(st, &seen)));
        }
        if is_server_header(l) || !seen.started && l.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if !seen.started {
            seen.started = true;
            st.cur.line = st.lines.number;
        }
        st.cur.cut |= st.lines.cut;
        if time {
            let t = trim_start(&l[8..]);
            seen.iso = parse_iso(t).map(|(us, _)| us);
            st.last_time = seen
                .iso
                .or(parse_short(t).map(|(us, _)| us))
                .or(st.last_time);
            seen.time = true;
        } else if user {
            user_host(&mut st.cur, &l[13..]);
            seen.user = true;
            seen.header = true;
        } else if !seen.body && is_pair_line(l) {
            let len = st.cur.extras.len() + l.len();
            bounded(st.cur.line, len, "an entry's header")?;
            header_line(&mut st.cur, &l[2..]);
            seen.header = true;
        } else if !seen.body && l.as_slice() == b"#" {
            continue;
        } else {
            seen.body = true;
            let l = std::mem::take(&mut st.lines.buf);
            let pushed = st.cur.push_body(&l);
            st.lines.buf = l;
            pushed?;
        }
    }
}

fn text(b: &[u8]) -> &str {
    std::str::from_utf8(b).unwrap_or("")
}

/// `root[root] @ localhost [127.0.0.1]  Id:     8` (MySQL adds `Id:`).
fn user_host(c: &mut Cur, l: &[u8]) {
    let (who, rest) = split_at(l, b" @ ");
    let user = who.split(|&c| c == b'[').next().unwrap_or(b"");
    let (host, rest) = split_at(rest, b" [");
    let ip = rest.split(|&c| c == b']').next().unwrap_or(b"");
    put(&mut c.user, text(trim_end(user)));
    let host = if host.is_empty() { ip } else { host };
    put(&mut c.host, text(host));
    if let Some(at) = find(rest, b"Id:") {
        c.thread_id = count(trim_end(trim_start(&rest[at + 3..])));
    }
}

/// The bytes before and after the first `sep` (all of `b` and nothing when it is absent).
fn split_at<'a>(b: &'a [u8], sep: &[u8]) -> (&'a [u8], &'a [u8]) {
    match find(b, sep) {
        Some(at) => (&b[..at], &b[at + sep.len()..]),
        None => (b, &[]),
    }
}

/// One header line's text (after `# `): kept for the extras, and its known fields read when
/// the line is one of the three that carry them (the other lines are parsed only when
/// their extras are asked for).
fn header_line(c: &mut Cur, l: &[u8]) {
    c.extras.extend_from_slice(l);
    c.extras.push(b'\n');
    let carries = [
        &b"Query_time:"[..],
        b"Thread_id:",
        b"Rows_affected:",
        b"Schema:",
    ];
    if !carries.iter().any(|p| l.starts_with(p)) {
        return;
    }
    // These lines' values are single tokens (or empty: `Schema:   QC_hit: No`), so a plain
    // scan does; `Pairs` is for the general case.
    let mut i = 0;
    while let Some(colon) = l[i..].iter().position(|&b| b == b':') {
        let name = trim_start(&l[i..i + colon]);
        i += colon + 1;
        i += l[i..]
            .iter()
            .take_while(|b| b.is_ascii_whitespace())
            .count();
        let len = l[i..]
            .iter()
            .position(u8::is_ascii_whitespace)
            .unwrap_or(l.len() - i);
        let v = if l[i..i + len].ends_with(b":") {
            &[][..]
        } else {
            &l[i..i + len]
        };
        i += v.len();
        match name {
            b"Query_time" => c.query_time_s = seconds(v),
            b"Lock_time" => c.lock_time_s = seconds(v),
            b"Rows_sent" => c.rows_sent = count(v),
            b"Rows_examined" => c.rows_examined = count(v),
            b"Rows_affected" => c.rows_affected = count(v),
            b"Thread_id" => c.thread_id = count(v),
            b"Schema" => put(&mut c.db, text(v)),
            b"Start" => c.start_us = parse_iso(v).map(|(t, _)| t),
            _ => {}
        }
    }
}

/// A count: ASCII digits only.
fn count(b: &[u8]) -> Option<u64> {
    if b.is_empty() || b.len() > 19 || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(b.iter().fold(0, |n, &d| n * 10 + u64::from(d - b'0')))
}

/// Seconds as the logs write them (`0.000123`): digits, a point, digits, read with one
/// rounding (so equal to `str::parse`); anything else goes through `str::parse`.
fn seconds(b: &[u8]) -> Option<f64> {
    let (int, frac) = match b.iter().position(|&c| c == b'.') {
        Some(p) => (&b[..p], &b[p + 1..]),
        None => (b, &[][..]),
    };
    let digits = int.len() + frac.len();
    let plain = digits > 0 && digits <= 15 && int.iter().chain(frac).all(u8::is_ascii_digit);
    if !plain {
        return text(b).parse().ok();
    }
    let whole = int
        .iter()
        .chain(frac)
        .fold(0u64, |n, &d| n * 10 + u64::from(d - b'0'));
    Some(whole as f64 / 10f64.powi(frac.len() as i32))
}

/// Completes the entry: strips the `use` and `SET timestamp` lines, the trailing `;`,
/// carries the connection's database; false when the entry is incomplete.
fn finish<R>(st: &mut State<R>, seen: &Seen) -> bool {
    let c = &mut st.cur;
    c.at_us = st.last_time;
    // `SET timestamp` is when the statement started; `# Time:` (MariaDB's whole seconds, or
    // MySQL's µs) is when it was logged, at its end.
    let mut started = false;
    let body = std::mem::take(&mut c.body);
    let (mut start, end) = (0, trim_end(&body).len());
    while let Some(nl) = memchr::memchr(b'\n', &body[start..end]).map(|n| start + n) {
        let line = trim_end(&body[start..nl]);
        if let Some(db) = line
            .strip_prefix(b"use ")
            .and_then(|d| d.strip_suffix(b";"))
        {
            put(&mut c.db, &crate::state::use_name(text(db)));
        } else if let Some(ts) = line
            .strip_prefix(b"SET timestamp=")
            .and_then(|d| d.strip_suffix(b";"))
        {
            if let Some(t) = count(ts).and_then(|s| i64::try_from(s).ok()) {
                c.at_us = Some(t.saturating_mul(1_000_000));
                started = true;
            }
        } else {
            break;
        }
        start = nl + 1;
    }
    if let Some(iso) = seen.iso {
        (c.at_us, started) = (Some(iso), false);
    }
    if let Some(start) = c.start_us {
        (c.at_us, started) = (Some(start), true);
    }
    if !started {
        let took = c.query_time_s.map_or(0, |q| (q * 1e6).round() as i64);
        c.at_us = c.at_us.map(|end| end.saturating_sub(took));
    }
    let stmt = &body[start..end];
    let whole = seen.header && !c.cut && stmt.ends_with(b";") && stmt.len() > 1;
    if let Some(name) = stmt.strip_prefix(b"# administrator command: ") {
        c.command.clear();
        c.command
            .push_str(text(&name[..name.len().saturating_sub(1)]));
        start += 2;
    }
    c.sql = (start, end - usize::from(whole));
    c.body = body;
    carry_db(st);
    whole
}

/// The connections remembered at most: slow logs rarely record a connection's end, so the
/// record is dropped wholesale past this many (a connection seen again after that takes its
/// database from its next `Schema:` or `use`).
const MAX_CONNS: usize = 1 << 16;

/// The database in effect: the entry's own (`Schema:`, `use`), else its connection's last.
fn carry_db<R>(st: &mut State<R>) {
    let Some(id) = st.cur.thread_id else { return };
    if st.conns.len() >= MAX_CONNS && !st.conns.contains_key(&id) {
        st.conns.clear();
    }
    let conn = st.conns.entry(id).or_default();
    match st.cur.db.as_deref() {
        Some(db) if !db.is_empty() && conn.db != db => {
            conn.db.clear();
            conn.db.push_str(db);
        }
        Some(db) if !db.is_empty() => {}
        _ if !conn.db.is_empty() => put(&mut st.cur.db, &conn.db),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_read_as_str_parse_does() {
        for t in [
            "0.000123",
            "0.028257",
            "12.5",
            "3",
            "1234.567890",
            "0.1",
            "9.999999",
        ] {
            assert_eq!(seconds(t.as_bytes()), t.parse().ok(), "{t}");
        }
        assert_eq!(seconds(b"1e-3"), Some(0.001));
        assert_eq!(
            (seconds(b""), seconds(b"x"), seconds(b".")),
            (None, None, None)
        );
        assert_eq!(
            (
                count(b"42"),
                count(b""),
                count(b"4x"),
                count(b"99999999999999999999")
            ),
            (Some(42), None, None, None)
        );
    }

    #[test]
    fn known_fields_of_header_lines() {
        let mut c = Cur::default();
        header_line(&mut c, b"Thread_id: 8  Schema:   QC_hit: No");
        header_line(&mut c, b"Query_time: 0.000159  Lock_time: 0.000002 Rows_sent: 1  Rows_examined: 10 Thread_id: 9");
        assert_eq!(
            (c.thread_id, c.db.as_deref(), c.rows_examined, c.lock_time_s),
            (Some(9), Some(""), Some(10), Some(0.000002))
        );
    }
}
