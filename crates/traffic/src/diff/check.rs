//! Whether two sides return the same rows, as pt-upgrade checks: a row count and a checksum of
//! the rows, insensitive to row order unless the statement orders its result (a top-level
//! `ORDER BY`), since without one the server may return rows in any order.

use super::session::SideConn;
use super::ClassWork;
use qpslab_core::diff::ResultsCheck;
use qpslab_wire::QueryResult;
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

/// The checksum of `r`: rows hashed one by one, combined in order when `ordered`, else sorted
/// first.
pub fn checksum(r: &QueryResult, ordered: bool) -> Checksum {
    let mut rows: Vec<u64> = r
        .rows
        .iter()
        .map(|row| {
            let mut h = DefaultHasher::new();
            row.hash(&mut h);
            h.finish()
        })
        .collect();
    if !ordered {
        rows.sort_unstable();
    }
    let mut h = DefaultHasher::new();
    rows.hash(&mut h);
    r.affected_rows.hash(&mut h);
    Checksum {
        rows: if r.columns.is_empty() {
            r.affected_rows
        } else {
            r.rows.len() as u64
        },
        hash: h.finish(),
    }
}

/// Whether `sql` has an `ORDER BY` outside parentheses, quotes and comments.
pub fn ordered(sql: &str) -> bool {
    let lower = sql.to_ascii_lowercase();
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
/// one failing on both is an error of the class.
pub fn compare(
    a: &mut SideConn,
    b: &mut SideConn,
    c: &ClassWork,
) -> Result<ResultsCheck, qpslab_wire::Error> {
    for s in &c.sample {
        let ordered = ordered(&s.sql);
        let ra = a.run(s, c.write).map(|(r, _)| checksum(&r, ordered));
        let rb = b.run(s, c.write).map(|(r, _)| checksum(&r, ordered));
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
                first_mismatch: Some(s.sql.clone()),
                sides: Some([show(ra), show(rb)]),
            });
        }
    }
    Ok(ResultsCheck {
        matched: true,
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(rows: &[&str]) -> QueryResult {
        QueryResult {
            columns: vec!["a".into()],
            rows: rows.iter().map(|r| vec![Some(r.to_string())]).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn row_order_counts_only_under_a_top_level_order_by() {
        let (x, y) = (result(&["1", "2"]), result(&["2", "1"]));
        assert_eq!(checksum(&x, false), checksum(&y, false));
        assert_ne!(checksum(&x, true), checksum(&y, true));
        assert_ne!(checksum(&x, false), checksum(&result(&["1", "3"]), false));
        assert_eq!(checksum(&x, false).rows, 2);
    }

    #[test]
    fn a_top_level_order_by_is_found_outside_subqueries_and_strings() {
        assert!(ordered("SELECT a FROM t ORDER BY a"));
        assert!(ordered("select a from t order\n  by a desc limit 3"));
        assert!(!ordered(
            "SELECT a FROM (SELECT a FROM t ORDER BY a LIMIT 5) x"
        ));
        assert!(!ordered("SELECT 'order by' FROM t"));
        assert!(!ordered("SELECT a FROM t WHERE border = 1"));
        assert!(!ordered("SELECT a FROM t_order by_x"));
    }
}
