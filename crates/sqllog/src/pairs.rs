//! The `Name: value  Name: value` text of a slow log's header lines, split into pairs by
//! whitespace-separated tokens (no allocation). `explain:` takes the rest of its line.

/// The names the reader keeps in [`crate::Entry`]'s own fields (the others are extras).
pub(crate) const KNOWN: [&[u8]; 7] = [
    b"Query_time",
    b"Lock_time",
    b"Rows_sent",
    b"Rows_examined",
    b"Rows_affected",
    b"Thread_id",
    b"Schema",
];

/// A `Name:` token: a letter, then letters, digits and `_`, then `:`.
fn is_name(token: &[u8]) -> bool {
    let Some((b':', name)) = token.split_last() else {
        return false;
    };
    name.first().is_some_and(u8::is_ascii_alphabetic)
        && name.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

/// The pairs of one header line's text (after `# `).
pub(crate) struct Pairs<'a> {
    l: &'a [u8],
    i: usize,
}

impl<'a> Pairs<'a> {
    pub(crate) fn new(l: &'a [u8]) -> Self {
        Pairs { l, i: 0 }
    }

    fn skip_blank(&mut self) {
        while self.l.get(self.i).is_some_and(u8::is_ascii_whitespace) {
            self.i += 1;
        }
    }

    /// The token at `i` (not consumed).
    fn token(&self) -> &'a [u8] {
        let rest = &self.l[self.i..];
        &rest[..rest
            .iter()
            .position(u8::is_ascii_whitespace)
            .unwrap_or(rest.len())]
    }
}

impl<'a> Iterator for Pairs<'a> {
    type Item = (&'a [u8], &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            self.skip_blank();
            if self.i >= self.l.len() {
                return None;
            }
            let tok = self.token();
            self.i += tok.len();
            if !is_name(tok) {
                continue;
            }
            let name = &tok[..tok.len() - 1];
            self.skip_blank();
            let (start, mut end) = (self.i, self.i);
            if name == b"explain" {
                end = self.l.len();
                end -= self
                    .l
                    .iter()
                    .rev()
                    .take_while(|c| c.is_ascii_whitespace())
                    .count();
                self.i = self.l.len();
                return Some((name, &self.l[start..end.max(start)]));
            }
            while self.i < self.l.len() {
                let t = self.token();
                if is_name(t) {
                    break;
                }
                self.i += t.len();
                end = self.i;
                self.skip_blank();
            }
            return Some((name, &self.l[start..end]));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(l: &str) -> Vec<(String, String)> {
        let s = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        Pairs::new(l.as_bytes())
            .map(|(n, v)| (s(n), s(v)))
            .collect()
    }

    #[test]
    fn pairs_of_header_lines() {
        let want = |p: &[(&str, &str)]| {
            p.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            all("Thread_id: 8  Schema:   QC_hit: No"),
            want(&[("Thread_id", "8"), ("Schema", ""), ("QC_hit", "No")])
        );
        assert_eq!(
            all("Start: 2026-11-23T04:11:58Z End: x"),
            want(&[("Start", "2026-11-23T04:11:58Z"), ("End", "x")])
        );
        assert_eq!(
            all("explain: 1\tSIMPLE\tt1\tALL "),
            want(&[("explain", "1\tSIMPLE\tt1\tALL")])
        );
        assert_eq!(
            all("stray Name: two words  9: x"),
            want(&[("Name", "two words  9: x")])
        );
        assert!(all("").is_empty() && all(":  :").is_empty());
    }
}
