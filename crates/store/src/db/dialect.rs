//! The store's SQL, as written for SQLite, in the spelling MySQL and MariaDB accept: numbered
//! `?N` placeholders become `?` with the parameters reordered to match, `INSERT OR IGNORE`
//! becomes `INSERT IGNORE`, double-quoted identifiers take backticks, and the column names
//! MySQL reserves (`reads`, `repeat`) are quoted. String literals are left as they are.

/// A statement for the server, and for each `?` in it, which of the caller's parameters
/// (0-based) it takes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Translated {
    /// The statement's text.
    pub sql: String,
    /// The caller's parameter behind each `?`, in order.
    pub order: Vec<usize>,
}

/// Column names MySQL reserves that the store's tables use.
const RESERVED: &[&str] = &["reads", "repeat"];

/// `sql` in MySQL's spelling.
pub(crate) fn translate(sql: &str) -> Translated {
    let sql = sql.replace("INSERT OR IGNORE", "INSERT IGNORE");
    let b = sql.as_bytes();
    let mut out = String::with_capacity(sql.len() + 8);
    let mut order = Vec::new();
    let mut next = 0usize;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'\'' => {
                // A literal, '' escaping a quote inside it, copied whole.
                let start = i;
                i += 1;
                while i < b.len() {
                    if b[i] == b'\'' {
                        if b.get(i + 1) == Some(&b'\'') {
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    i += 1;
                }
                i = (i + 1).min(b.len());
                out.push_str(&sql[start..i]);
                continue;
            }
            b'"' => {
                let end = sql[i + 1..].find('"').map_or(b.len(), |e| i + 1 + e);
                out.push('`');
                out.push_str(&sql[i + 1..end]);
                out.push('`');
                i = (end + 1).min(b.len());
                continue;
            }
            b'?' => {
                let digits = sql[i + 1..].bytes().take_while(u8::is_ascii_digit).count();
                let n = if digits > 0 {
                    sql[i + 1..i + 1 + digits]
                        .parse::<usize>()
                        .unwrap_or(1)
                        .max(1)
                        - 1
                } else {
                    next
                };
                next = n + 1;
                order.push(n);
                out.push('?');
                i += 1 + digits;
                continue;
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let len = sql[i..]
                    .bytes()
                    .take_while(|x| x.is_ascii_alphanumeric() || *x == b'_')
                    .count();
                let word = &sql[i..i + len];
                let after_dot = i > 0 && b[i - 1] == b'.';
                let is_call = sql[i + len..].trim_start().starts_with('(');
                if RESERVED.contains(&word) && !is_call || (after_dot && RESERVED.contains(&word)) {
                    out.push('`');
                    out.push_str(word);
                    out.push('`');
                } else {
                    out.push_str(word);
                }
                i += len;
                continue;
            }
            _ => {}
        }
        let ch = sql[i..].chars().next().unwrap_or(' ');
        out.push(ch);
        i += ch.len_utf8();
    }
    Translated { sql: out, order }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_numbered_reordered_and_repeated() {
        let t = translate("UPDATE runs SET status = ?2, finished_at = ?1 WHERE uuid = ?3 OR ?1");
        assert_eq!(
            t.sql,
            "UPDATE runs SET status = ?, finished_at = ? WHERE uuid = ? OR ?"
        );
        assert_eq!(t.order, vec![1, 0, 2, 0]);
        let t = translate("SELECT ? , ?");
        assert_eq!(t.order, vec![0, 1]);
    }

    #[test]
    fn literals_are_kept_and_identifiers_quoted() {
        let t = translate(
            "INSERT OR IGNORE INTO samples (reads, \"from\") VALUES ('it''s ?1 reads', ?1)",
        );
        assert_eq!(
            t.sql,
            "INSERT IGNORE INTO samples (`reads`, `from`) VALUES ('it''s ?1 reads', ?)"
        );
        assert_eq!(t.order, vec![0]);
        assert_eq!(
            translate("SELECT p.reads, repeat('x', 2)").sql,
            "SELECT p.`reads`, repeat('x', 2)"
        );
        assert_eq!(
            translate("SELECT threads, readsx").sql,
            "SELECT threads, readsx"
        );
    }

    #[test]
    fn text_beyond_ascii_and_unclosed_quotes_survive() {
        assert_eq!(translate("SELECT 'é' -- ü").sql, "SELECT 'é' -- ü");
        assert_eq!(translate("SELECT 'open").sql, "SELECT 'open");
        assert_eq!(translate("SELECT \"open").sql, "SELECT `open`");
    }
}
