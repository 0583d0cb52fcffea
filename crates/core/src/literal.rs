//! SQL string literals, written the one way every statement qpslab builds quotes a value
//! (account names, passwords, file names, replication settings).

/// `s` as a single-quoted SQL string literal: backslashes and single quotes escaped with a
/// backslash, as MySQL and MariaDB read them in their default SQL mode.
///
/// ```
/// assert_eq!(qpslab_core::literal::quote(r"it's a\b"), r"'it\'s a\\b'");
/// ```
pub fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_and_backslashes_are_escaped() {
        assert_eq!(quote(""), "''");
        assert_eq!(quote("plain"), "'plain'");
        assert_eq!(quote("a'b"), r"'a\'b'");
        assert_eq!(quote(r"a\'"), r"'a\\\''");
    }
}
