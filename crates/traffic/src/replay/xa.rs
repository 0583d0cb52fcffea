//! XA transactions a replay leaves prepared.
//!
//! A prepared XA transaction outlives the session that prepared it (a disconnect, a
//! COM_RESET_CONNECTION), holding its locks until someone commits or rolls it back. A replay
//! must leave none of its own, and must not touch anyone else's (on a shared server another
//! client's prepared transaction is its work in progress): the sessions note in [`Started`]
//! the xid of every `XA START`/`XA BEGIN` they ran ([`started`] parses it), [`prepared`] lists
//! the server's before the replay, and [`roll_back_new`] rolls back those that appeared during
//! it and that the replay started (as the connecting account: the replay's own read-only
//! account may not see them). Xids are compared as the server does, by their bytes and format
//! id, whatever the spelling (`'a'`, `'a','',1`, `X'61'`, `0x61`).

use qpslab_wire::Conn;
use std::collections::BTreeSet;
use std::sync::Mutex;

/// The server's prepared XA transactions, each as the SQL that names it (`XA RECOVER
/// FORMAT='SQL'`, MariaDB; MySQL's `CONVERT XID` form otherwise).
pub fn prepared(conn: &mut Conn) -> Result<BTreeSet<String>, qpslab_wire::Error> {
    let sql = if conn.is_mariadb() {
        "XA RECOVER FORMAT='SQL'"
    } else {
        "XA RECOVER CONVERT XID"
    };
    let r = conn.query(sql)?;
    let data = r
        .columns
        .iter()
        .position(|c| c.eq_ignore_ascii_case("data"))
        .unwrap_or(3);
    let format = r
        .columns
        .iter()
        .position(|c| c.eq_ignore_ascii_case("formatID"));
    let gtrid = r
        .columns
        .iter()
        .position(|c| c.eq_ignore_ascii_case("gtrid_length"));
    Ok(r.rows
        .iter()
        .filter_map(|row| {
            let d = row.get(data)?.clone()?;
            if conn_is_sql_form(&d) {
                return Some(d);
            }
            // MySQL: 0x<hex of gtrid and bqual>, split by gtrid_length.
            let hex = d.strip_prefix("0x")?;
            let g = gtrid.and_then(|i| row.get(i)?.as_deref()?.parse::<usize>().ok())?;
            let f = format.and_then(|i| row.get(i)?.clone())?;
            let (a, b) = hex.split_at((2 * g).min(hex.len()));
            Some(format!("X'{a}',X'{b}',{f}"))
        })
        .collect())
}

/// Whether an `XA RECOVER` data field is already SQL (MariaDB's `FORMAT='SQL'`).
fn conn_is_sql_form(d: &str) -> bool {
    d.starts_with('\'') || d.starts_with("X'")
}

/// An XA transaction's id: its global transaction id, branch qualifier and format id, as bytes.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Xid {
    /// The global transaction id.
    pub gtrid: Vec<u8>,
    /// The branch qualifier (empty when not given).
    pub bqual: Vec<u8>,
    /// The format id (1 when not given).
    pub format: u64,
}

/// The xids of the XA transactions a replay's sessions started, shared by its sessions.
#[derive(Debug, Default)]
pub struct Started(Mutex<BTreeSet<Xid>>);

impl Started {
    /// Notes that a session ran `sql` without error: when it is `XA START`/`XA BEGIN`, its xid.
    pub fn note(&self, sql: &[u8]) {
        if let Some(x) = started(&String::from_utf8_lossy(sql)) {
            self.0.lock().unwrap_or_else(|p| p.into_inner()).insert(x);
        }
    }

    /// The xids noted.
    pub fn xids(&self) -> BTreeSet<Xid> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// The xid `sql` starts, when it is `XA START xid` or `XA BEGIN xid` (leading spaces and
/// comments allowed).
pub fn started(sql: &str) -> Option<Xid> {
    let rest = skip_space(sql);
    let rest = keyword(rest, "XA")?;
    let rest = keyword(rest, "START").or_else(|| keyword(rest, "BEGIN"))?;
    xid(rest)
}

/// The xid written as SQL (`'gtrid'[, 'bqual'[, formatID]]`, each string quoted, `X'hex'` or
/// `0xhex`), with what follows it (`JOIN`, `RESUME`, a comment...) ignored.
pub fn xid(text: &str) -> Option<Xid> {
    let (gtrid, rest) = string(skip_space(text))?;
    let mut x = Xid {
        gtrid,
        bqual: Vec::new(),
        format: 1,
    };
    let Some(rest) = skip_space(rest).strip_prefix(',') else {
        return Some(x);
    };
    let (bqual, rest) = string(skip_space(rest))?;
    x.bqual = bqual;
    let Some(rest) = skip_space(rest).strip_prefix(',') else {
        return Some(x);
    };
    let rest = skip_space(rest);
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    x.format = rest[..digits].parse().ok()?;
    Some(x)
}

/// `text` without its leading spaces and comments (`/* */` that do not run, `-- `, `#`).
fn skip_space(mut text: &str) -> &str {
    loop {
        let t = text.trim_start();
        text = if t.starts_with("/*") && !t.starts_with("/*!") && !t.starts_with("/*M!") {
            match t[2..].find("*/") {
                Some(end) => &t[end + 4..],
                None => "",
            }
        } else if t.starts_with('#') || t.starts_with("-- ") {
            t.find('\n').map_or("", |end| &t[end..])
        } else {
            return t;
        };
    }
}

/// `text` after keyword `kw` (any case, followed by no name character).
fn keyword<'a>(text: &'a str, kw: &str) -> Option<&'a str> {
    let head = text.get(..kw.len())?;
    let rest = &text[kw.len()..];
    let ends = !rest
        .bytes()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'$');
    (head.eq_ignore_ascii_case(kw) && ends).then(|| skip_space(rest))
}

/// A string of an xid at the start of `text` and what follows it: `'...'` or `"..."` (doubled
/// quotes and backslash escapes), `X'hex'`, `0xhex`.
fn string(text: &str) -> Option<(Vec<u8>, &str)> {
    let b = text.as_bytes();
    match b.first()? {
        q @ (b'\'' | b'"') => {
            let mut out = Vec::new();
            let mut i = 1;
            loop {
                match *b.get(i)? {
                    c if c == *q && b.get(i + 1) == Some(q) => {
                        out.push(c);
                        i += 2;
                    }
                    c if c == *q => return Some((out, &text[i + 1..])),
                    b'\\' => {
                        out.push(unescape(*b.get(i + 1)?));
                        i += 2;
                    }
                    c => {
                        out.push(c);
                        i += 1;
                    }
                }
            }
        }
        b'x' | b'X' if b.get(1) == Some(&b'\'') => {
            let end = 2 + text[2..].find('\'')?;
            Some((unhex(&text[2..end])?, &text[end + 1..]))
        }
        b'0' if matches!(b.get(1), Some(b'x')) => {
            let digits = text[2..].bytes().take_while(u8::is_ascii_hexdigit).count();
            let hex = &text[2..2 + digits];
            // 0xABC is 0x0ABC.
            let padded = if hex.len() % 2 == 1 {
                format!("0{hex}")
            } else {
                hex.to_string()
            };
            Some((unhex(&padded)?, &text[2 + digits..]))
        }
        _ => None,
    }
}

/// The byte a backslash escape stands for, as the server reads it.
fn unescape(c: u8) -> u8 {
    match c {
        b'0' => 0,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        b'b' => 8,
        b'Z' => 26,
        c => c,
    }
}

fn unhex(hex: &str) -> Option<Vec<u8>> {
    if hex.len() % 2 == 1 {
        return None;
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Rolls back the prepared XA transactions that are not in `before` and that the replay
/// started (`ours`); returns each one's xid and, for those that could not be rolled back, why.
/// Another client's, prepared while the replay ran, are left as they are.
pub fn roll_back_new(
    conn: &mut Conn,
    before: &BTreeSet<String>,
    ours: &BTreeSet<Xid>,
) -> Result<Vec<(String, Option<String>)>, qpslab_wire::Error> {
    let mut out = Vec::new();
    for xid_sql in prepared(conn)?.difference(before) {
        if !xid(xid_sql).is_some_and(|x| ours.contains(&x)) {
            continue;
        }
        let failed = match conn.execute(&format!("XA ROLLBACK {xid_sql}")) {
            // XA_RBROLLBACK: a read-only branch, rolled back all the same.
            Ok(_) => None,
            Err(e) if e.server_code() == Some(1402) => None,
            Err(e) => Some(e.to_string()),
        };
        out.push((xid_sql.clone(), failed));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn x(g: &[u8], b: &[u8], f: u64) -> Xid {
        Xid {
            gtrid: g.to_vec(),
            bqual: b.to_vec(),
            format: f,
        }
    }

    #[test]
    fn an_xid_is_read_whatever_its_spelling() {
        assert_eq!(started("XA START 'a'"), Some(x(b"a", b"", 1)));
        assert_eq!(
            started("  /* app */ xa begin 'a' , '' ,1"),
            Some(x(b"a", b"", 1))
        );
        assert_eq!(started("XA START 'a','b',7 JOIN"), Some(x(b"a", b"b", 7)));
        assert_eq!(started("XA START X'6162',0x63,3"), Some(x(b"ab", b"c", 3)));
        assert_eq!(started("XA START 0x616"), Some(x(&[0x06, 0x16], b"", 1)));
        assert_eq!(
            started("XA START 'it''s', \"q\\\"\""),
            Some(x(b"it's", b"q\"", 1))
        );
        assert_eq!(started("XA START 'a\\\\b'"), Some(x(b"a\\b", b"", 1)));
        // Not a start, or no xid to read.
        for sql in [
            "XA END 'a'",
            "XA PREPARE 'a'",
            "XA STARTX 'a'",
            "SELECT 'XA START'",
            "XA START @a",
        ] {
            assert_eq!(started(sql), None, "{sql}");
        }
    }

    #[test]
    fn xa_recover_data_reads_as_the_xid_that_started_it() {
        // MariaDB's XA RECOVER FORMAT='SQL', and the form `prepared` gives MySQL's.
        assert_eq!(xid("'a'"), started("XA START 'a'"));
        assert_eq!(xid("'ab','c',3"), started("XA START X'6162',0x63,3"));
        assert_eq!(xid("X'615c62'"), started("XA START 'a\\\\b'"));
        assert_eq!(xid("X'6162',X'',1"), started("XA START 'ab'"));
        assert_ne!(xid("'a','b'"), started("XA START 'a'"));
    }
}
