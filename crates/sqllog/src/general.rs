//! The general query log: one line per command, `TIME\tID Command\tArgument`, the time
//! written only when it changes (MariaDB) or on every line (MySQL, ISO); a statement's
//! further lines follow as they are.

use std::io::BufRead;

use crate::entry::Flavor;
use crate::error::LogError;
use crate::state::{is_server_header, put, Conn, State};
use crate::time::{parse_iso, parse_short};

/// One command line's parts.
pub(crate) struct Head {
    pub(crate) flavor: Flavor,
    pub(crate) at_us: Option<i64>,
    pub(crate) id: u64,
    pub(crate) command: (usize, usize),
    /// Where the argument starts (the line's end when there is none).
    pub(crate) arg: usize,
}

/// Parses a command line, `None` for any other line (a statement's continuation).
pub(crate) fn parse_line(l: &[u8]) -> Option<Head> {
    let (flavor, at_us, mut i) = match l.first()? {
        b'0'..=b'9' => match parse_iso(l) {
            Some((t, n)) => (Flavor::MySql, Some(t), n),
            None => parse_short(l).map(|(t, n)| (Flavor::MariaDb, Some(t), n))?,
        },
        b'\t' => (Flavor::MariaDb, None, 0),
        _ => return None,
    };
    let tabs = l[i..].iter().take_while(|&&c| c == b'\t').count();
    if tabs == 0 || tabs > 2 {
        return None;
    }
    i += tabs;
    i += l[i..].iter().take_while(|&&c| c == b' ').count();
    let digits = l[i..].iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 || digits > 19 || l.get(i + digits) != Some(&b' ') {
        return None;
    }
    let id = std::str::from_utf8(&l[i..i + digits]).ok()?.parse().ok()?;
    let c0 = i + digits + 1;
    let clen = l[c0..].iter().take_while(|&&c| c != b'\t').count();
    let name = &l[c0..c0 + clen];
    let plain = name.iter().all(|c| c.is_ascii_alphabetic() || *c == b' ');
    if clen == 0 || clen > 24 || !plain || !name[0].is_ascii_uppercase() {
        return None;
    }
    let arg = (c0 + clen + 1).min(l.len());
    Some(Head {
        flavor,
        at_us,
        id,
        command: (c0, c0 + clen),
        arg,
    })
}

/// Reads one entry: whole (`Some(true)`), incomplete (`Some(false)`), or none left.
pub(crate) fn read_one<R: BufRead>(st: &mut State<R>) -> Result<Option<bool>, LogError> {
    st.cur.reset();
    let mut started = false;
    let mut orphan = false;
    while st.lines.advance()? {
        let l = &st.lines.buf;
        let head = parse_line(l);
        if (head.is_some() || is_server_header(l)) && (started || orphan) {
            st.lines.hold();
            return Ok(Some(started && finish(st)));
        }
        if is_server_header(l) {
            continue;
        }
        st.cur.cut |= st.lines.cut;
        let Some(h) = head else {
            if started {
                let l = std::mem::take(&mut st.lines.buf);
                let pushed = st.cur.push_body(&l);
                st.lines.buf = l;
                pushed?;
            } else {
                orphan |= !l.iter().all(u8::is_ascii_whitespace);
            }
            continue;
        };
        started = true;
        begin(st, &h)?;
    }
    Ok((started || orphan).then(|| started && finish(st)))
}

/// Starts an entry from its command line.
fn begin<R>(st: &mut State<R>, h: &Head) -> Result<(), LogError> {
    let l = std::mem::take(&mut st.lines.buf);
    let c = &mut st.cur;
    c.line = st.lines.number;
    if h.at_us.is_some() {
        st.last_time = h.at_us;
    }
    c.at_us = st.last_time;
    c.thread_id = Some(h.id);
    c.command.clear();
    c.command
        .push_str(std::str::from_utf8(&l[h.command.0..h.command.1]).unwrap_or("Other"));
    let pushed = c.push_body(&l[h.arg..]);
    st.lines.buf = l;
    pushed
}

fn text(b: &[u8]) -> &str {
    std::str::from_utf8(b).unwrap_or("")
}

/// Completes the entry and updates what its connection remembers.
fn finish<R>(st: &mut State<R>) -> bool {
    let c = &mut st.cur;
    let mut end = c.body.len();
    end -= c
        .body
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_whitespace())
        .count();
    if c.body[..end].ends_with(b";") {
        end -= 1;
    }
    c.sql = (0, end);
    let Some(id) = c.thread_id else { return false };
    if st.conns.len() >= MAX_CONNS && !st.conns.contains_key(&id) {
        st.conns.clear();
    }
    let conn = st.conns.entry(id).or_default();
    let arg = &c.body[..end];
    match c.command.as_str() {
        "Connect" => connect(conn, arg),
        "Init DB" => set(&mut conn.db, text(arg)),
        "Query" => {
            let lower = arg
                .get(..4)
                .is_some_and(|w| w.eq_ignore_ascii_case(b"use "));
            if lower && !arg.contains(&b'\n') {
                set(&mut conn.db, &crate::state::use_name(text(&arg[4..])));
            }
        }
        _ => {}
    }
    put(&mut c.user, &conn.user);
    put(&mut c.host, &conn.host);
    put(&mut c.db, &conn.db);
    if c.command == "Quit" {
        st.conns.remove(&id);
    }
    !c.cut
}

/// The connections remembered at most (connections whose `Quit` the log never shows
/// would otherwise grow the record without bound).
const MAX_CONNS: usize = 1 << 16;

fn set(slot: &mut String, v: &str) {
    slot.clear();
    slot.push_str(v);
}

/// `user@host on db using Socket` (the database may be empty).
fn connect(conn: &mut Conn, arg: &[u8]) {
    let s = text(arg);
    let (who, rest) = s.split_once(" on ").unwrap_or((s, ""));
    let (user, host) = who.split_once('@').unwrap_or((who, ""));
    let db = rest.split(" using ").next().unwrap_or("").trim();
    set(&mut conn.user, user);
    set(&mut conn.host, host);
    set(&mut conn.db, db);
}
