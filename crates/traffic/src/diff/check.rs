//! Whether two sides return the same rows, as pt-upgrade checks: a row count and a checksum of
//! the rows, insensitive to row order unless the statement orders its result (a top-level
//! `ORDER BY`), since without one the server may return rows in any order. The checksum is
//! folded row by row as the result streams past ([`Digest`]), so a result of any size is
//! compared in constant memory.

use super::session::SideConn;
use super::ClassWork;
use qpslab_core::diff::ResultsCheck;
use qpslab_wire::Streamed;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

/// A result's row count and checksum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checksum {
    /// Rows returned (for a write: rows affected).
    pub rows: u64,
    /// The rows' hash.
    pub hash: u64,
}

impl std::fmt::Display for Checksum {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} rows, checksum {:016x}", self.rows, self.hash)
    }
}

/// A checksum folded one row at a time. Each row's packet (its values length-encoded, NULL
/// apart from any string) is hashed; an ordered result chains the row hashes, an unordered
/// one adds them (wrapping), which no row order changes: a multiset hash, as a sort of the
/// row hashes would be, without keeping them.
#[derive(Clone, Debug)]
pub struct Digest {
    ordered: bool,
    rows: u64,
    chain: u64,
    sum: u64,
}

impl Digest {
    /// A digest of a result whose row order counts when `ordered`.
    pub fn new(ordered: bool) -> Digest {
        Digest {
            ordered,
            rows: 0,
            chain: 0,
            sum: 0,
        }
    }

    /// Adds a row, as the server sent it.
    pub fn row(&mut self, packet: &[u8]) {
        let mut h = DefaultHasher::new();
        packet.hash(&mut h);
        let row = h.finish();
        self.rows += 1;
        if self.ordered {
            let mut h = DefaultHasher::new();
            (self.chain, row).hash(&mut h);
            self.chain = h.finish();
        } else {
            self.sum = self.sum.wrapping_add(row);
        }
    }

    /// The checksum of the rows added, with the statement's counts `s`.
    pub fn finish(&self, s: &Streamed) -> Checksum {
        let mut h = DefaultHasher::new();
        (self.rows, self.chain, self.sum, s.affected_rows).hash(&mut h);
        Checksum {
            rows: if s.sets == 0 {
                s.affected_rows
            } else {
                self.rows
            },
            hash: h.finish(),
        }
    }
}

/// Whether `sql` has an `ORDER BY` outside parentheses, quotes and comments.
pub fn ordered(sql: &[u8]) -> bool {
    let lower = String::from_utf8_lossy(sql).to_ascii_lowercase();
    let b = lower.as_bytes();
    let (mut depth, mut i) = (0i32, 0usize);
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"' | b'`') => i = skip_quoted(b, i, q),
            b'(' => depth += 1,
            b')' => depth -= 1,
            b'o' if depth == 0 && word_at(&lower, i, "order") => {
                let rest = lower[i + 5..].trim_start();
                if rest.starts_with("by")
                    && !rest[2..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
                {
                    return true;
                }
            }
            _ => {}
        }
        i += 1;
    }
    false
}

/// The index of the closing quote `q` of the string starting at `start` (or the end).
fn skip_quoted(b: &[u8], start: usize, q: u8) -> usize {
    let mut i = start + 1;
    while i < b.len() {
        if b[i] == b'\\' {
            i += 2;
            continue;
        }
        if b[i] == q {
            return i;
        }
        i += 1;
    }
    b.len()
}

/// Whether `word` starts a word at `i` of `s`.
fn word_at(s: &str, i: usize, word: &str) -> bool {
    let b = s.as_bytes();
    let before = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
    let after = b
        .get(i + word.len())
        .is_none_or(|c| !(c.is_ascii_alphanumeric() || *c == b'_'));
    before && s[i..].starts_with(word) && after
}

/// Runs each of `c`'s sampled statements once on both sides and compares their checksums
/// (this pass also warms both sides). A statement failing on one side only is a mismatch;
/// one failing on both is an error of the class; one given up on (its reply not read) is the
/// check's error.
pub fn compare(
    a: &mut SideConn,
    b: &mut SideConn,
    c: &ClassWork,
) -> Result<ResultsCheck, qpslab_wire::Error> {
    for s in &c.sample {
        let ordered = ordered(&s.sql);
        let ra = digest(a, s, c.write, ordered);
        // A statement given up on (a timeout, a stop) ends the check: B is not started.
        let ra = match ra {
            Err(e) if crate::replay::exec::limits::left_running(&e) => return Err(e),
            ra => ra,
        };
        let rb = digest(b, s, c.write, ordered);
        let (ra, rb) = match (ra, rb) {
            (Err(e), Err(_)) => return Err(e),
            (ra, rb) => (ra, rb),
        };
        let same = matches!((&ra, &rb), (Ok(x), Ok(y)) if x == y);
        if !same {
            let show = |r: Result<Checksum, qpslab_wire::Error>| match r {
                Ok(c) => c.to_string(),
                Err(e) => format!("error: {e}"),
            };
            return Ok(ResultsCheck {
                matched: false,
                first_mismatch: Some(String::from_utf8_lossy(&s.sql).into_owned()),
                sides: Some([show(ra), show(rb)]),
            });
        }
    }
    Ok(ResultsCheck {
        matched: true,
        ..Default::default()
    })
}

/// The checksum of `s`'s result on `conn`, folded as its rows arrive (the first result set's:
/// those a client reads first).
fn digest(
    conn: &mut SideConn,
    s: &super::Sampled,
    write: bool,
    ordered: bool,
) -> Result<Checksum, qpslab_wire::Error> {
    let mut d = Digest::new(ordered);
    let (r, _) = conn.run_each(s, write, &mut |row| {
        if row.set == 0 {
            d.row(row.packet());
        }
    })?;
    Ok(d.finish(&r))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checksum(rows: &[&str], ordered: bool) -> Checksum {
        let mut d = Digest::new(ordered);
        for r in rows {
            d.row(r.as_bytes());
        }
        let s = Streamed {
            sets: 1,
            rows: rows.len() as u64,
            ..Default::default()
        };
        d.finish(&s)
    }

    #[test]
    fn row_order_counts_only_under_a_top_level_order_by() {
        let (x, y) = (["\x011", "\x012"], ["\x012", "\x011"]);
        assert_eq!(checksum(&x, false), checksum(&y, false));
        assert_ne!(checksum(&x, true), checksum(&y, true));
        assert_ne!(checksum(&x, false), checksum(&["\x011", "\x013"], false));
        assert_ne!(checksum(&x, false), checksum(&["\x011"], false));
        assert_eq!(checksum(&x, false).rows, 2);
        // A write's count is its affected rows.
        let write = Streamed {
            affected_rows: 3,
            ..Default::default()
        };
        assert_eq!(Digest::new(false).finish(&write).rows, 3);
    }

    #[test]
    fn a_top_level_order_by_is_found_outside_subqueries_and_strings() {
        assert!(ordered(b"SELECT a FROM t ORDER BY a"));
        assert!(ordered(b"select a from t order\n  by a desc limit 3"));
        assert!(!ordered(
            b"SELECT a FROM (SELECT a FROM t ORDER BY a LIMIT 5) x"
        ));
        assert!(!ordered(b"SELECT 'order by' FROM t"));
        assert!(!ordered(b"SELECT a FROM t WHERE border = 1"));
        assert!(!ordered(b"SELECT a FROM t_order by_x"));
    }
}
