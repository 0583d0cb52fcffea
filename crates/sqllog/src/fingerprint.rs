//! Statement fingerprints: the class key that groups statements differing only in literals.
//!
//! The rules follow pt-fingerprint (so counts agree with pt-query-digest's) with one
//! deliberate difference: digits inside identifiers are kept, so `sbtest1` and `sbtest12`
//! stay two classes (pt folds both into `sbtest?`).
//!
//! - literals become `?`: strings (`'..'`, `".."`, with `\` and doubled-quote escapes, and
//!   `x'..'`, `b'..'`, `n'..'` prefixes), numbers (ints, decimals, exponents, hex `0x..`,
//!   bits `0b..`, a sign in front of a number that follows an operator), `NULL`, `TRUE`,
//!   `FALSE` (pt folds `null` too);
//! - `IN (?, ?, ...)` becomes `in(?+)` and `VALUES (...), (...)` becomes `values(?+)`
//!   when the lists hold only literals;
//! - `LIMIT ?, ?` and `LIMIT ? OFFSET ?` become `limit ?`;
//! - comments (`-- `, `#`, `/* */`) are removed, but `/*! ... */`, MariaDB's `/*M! ... */` and
//!   `/*+ ... */` hints are kept (folded like the rest): they change what the server does, so a hinted statement
//!   is a different class;
//! - backquotes are removed, everything outside literals is lowercased, whitespace runs
//!   become one space, none after `(` or before `)` and `,`, one after `,`;
//! - a trailing `;` is dropped.

/// The fingerprint of one statement (see the module documentation for the rules).
///
/// ```
/// use qpslab_sqllog::fingerprint;
/// assert_eq!(fingerprint("SELECT c FROM sbtest12 WHERE id IN (1, 2,3)"),
///            "select c from sbtest12 where id in(?+)");
/// ```
pub fn fingerprint(sql: impl AsRef<[u8]>) -> String {
    let sql = sql.as_ref();
    let mut out = Vec::with_capacity(sql.len());
    fingerprint_into(sql, &mut out);
    match String::from_utf8(out) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

/// [`fingerprint`] over bytes into a reused buffer (cleared first): the digest's
/// allocation-free path. Bytes other than ASCII are copied as they are.
pub fn fingerprint_into(sql: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let mut f = Folder {
        s: sql,
        i: 0,
        out,
        parens: [0; MAX_DEPTH],
        depth: 0,
        space: false,
    };
    f.run();
    while matches!(f.out.last(), Some(b';' | b' ')) {
        f.out.pop();
    }
    if out.starts_with(b"use ") && !out[4..].contains(&b' ') {
        // `use db` is one class whatever the database, as pt-fingerprint has it
        out.truncate(4);
        out.push(b'?');
    }
    if out.windows(7).any(|w| w == b"limit ?") {
        fold_limits(out);
    }
}

/// The parentheses nesting whose lists are folded.
const MAX_DEPTH: usize = 64;

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80
}

struct Folder<'a> {
    s: &'a [u8],
    i: usize,
    out: &'a mut Vec<u8>,
    /// Positions in `out` of the open parentheses (a fixed stack: no allocation per
    /// statement; deeper nesting is not folded).
    parens: [usize; MAX_DEPTH],
    depth: usize,
    /// Whitespace (or a comment) was seen since the last token.
    space: bool,
}

impl Folder<'_> {
    fn peek(&self, k: usize) -> u8 {
        self.s.get(self.i + k).copied().unwrap_or(0)
    }

    fn run(&mut self) {
        while self.i < self.s.len() {
            let c = self.s[self.i];
            match c {
                b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c => {
                    self.space = true;
                    self.i += 1;
                }
                b'#' => self.line_comment(),
                b'-' if self.peek(1) == b'-' && matches!(self.peek(2), 0..=b' ') => {
                    self.line_comment()
                }
                b'/' if self.peek(1) == b'*'
                    && !matches!(self.peek(2), b'!' | b'+')
                    && (self.peek(2), self.peek(3)) != (b'M', b'!') =>
                {
                    self.block_comment()
                }
                b'\'' | b'"' => {
                    self.skip_quoted(c);
                    self.literal();
                }
                b'`' => self.backquoted(),
                b'0'..=b'9' => self.number_or_word(),
                b'.' if self.peek(1).is_ascii_digit() && !self.after_name() => self.number(),
                b'-' | b'+' if self.signed_number() => {
                    self.i += 1;
                    self.number();
                }
                _ if is_ident(c) => self.word(),
                _ => self.punct(c),
            }
        }
    }

    fn line_comment(&mut self) {
        self.i = memchr::memchr(b'\n', &self.s[self.i..]).map_or(self.s.len(), |n| self.i + n);
        self.space = true;
    }

    fn block_comment(&mut self) {
        let rest = &self.s[self.i + 2..];
        self.i = memchr::memmem::find(rest, b"*/").map_or(self.s.len(), |n| self.i + 2 + n + 2);
        self.space = true;
    }

    /// Skips a quoted run starting at the quote `q`, honouring `\` and doubled quotes.
    fn skip_quoted(&mut self, q: u8) {
        self.i += 1;
        while self.i < self.s.len() {
            let c = self.s[self.i];
            self.i += 1;
            if c == b'\\' {
                self.i += 1;
            } else if c == q {
                if self.peek(0) != q {
                    return;
                }
                self.i += 1;
            }
        }
    }

    /// Writes the separator owed before a token, then nothing else.
    fn sep(&mut self, token: u8) {
        let last = self.out.last().copied();
        let glue = matches!(last, None | Some(b'(' | b' ')) || matches!(token, b')' | b',');
        if last == Some(b',') || (self.space && !glue) {
            self.out.push(b' ');
        }
        self.space = false;
    }

    fn literal(&mut self) {
        self.sep(b'?');
        self.out.push(b'?');
    }

    fn backquoted(&mut self) {
        let start = self.i + 1;
        let end = memchr::memchr(b'`', &self.s[start..]).map_or(self.s.len(), |n| start + n);
        self.sep(b'a');
        let mut blank = false;
        for &c in &self.s[start..end] {
            if c.is_ascii_whitespace() {
                blank = true;
                continue;
            }
            if blank && !matches!(self.out.last(), None | Some(b' ' | b'(')) {
                self.out.push(b' ');
            }
            blank = false;
            self.out.push(c.to_ascii_lowercase());
        }
        self.space = blank;
        self.i = (end + 1).min(self.s.len());
    }

    /// The previous output is a name or a closing parenthesis (so `.5` or `-1` after it is
    /// part of an expression, not a literal of its own).
    fn after_name(&self) -> bool {
        !self.space
            && self
                .out
                .last()
                .is_some_and(|&c| is_ident(c) || c == b')' || c == b'?')
    }

    fn signed_number(&self) -> bool {
        let digit = self.peek(1).is_ascii_digit()
            || (self.peek(1) == b'.' && self.peek(2).is_ascii_digit());
        let operand_before = self
            .out
            .iter()
            .rev()
            .find(|c| **c != b' ')
            .is_some_and(|&c| is_ident(c) || c == b')' || c == b'?');
        digit && !operand_before
    }

    /// A number, or a name that starts with digits (`1t` is a valid MySQL identifier).
    fn number_or_word(&mut self) {
        if self.out.last().is_some_and(|&c| is_ident(c)) && !self.space {
            return self.word();
        }
        let end = self.s[self.i..]
            .iter()
            .position(|&c| !is_ident(c))
            .map_or(self.s.len(), |n| self.i + n);
        let run = &self.s[self.i..end];
        let hex = run.len() > 2
            && (run.starts_with(b"0x") || run.starts_with(b"0b"))
            && run[2..].iter().all(u8::is_ascii_hexdigit);
        if hex {
            self.i = end;
            return self.literal();
        }
        let numeric = run.iter().all(u8::is_ascii_digit)
            || (run.ends_with(b"e") || run.ends_with(b"E"))
                && matches!(self.s.get(end), Some(b'+' | b'-'))
            || run
                .iter()
                .position(|c| !c.is_ascii_digit())
                .is_some_and(|p| {
                    matches!(run[p], b'e' | b'E')
                        && run[p + 1..].iter().all(u8::is_ascii_digit)
                        && p + 1 < run.len()
                });
        if numeric || self.s.get(end) == Some(&b'.') {
            self.number()
        } else {
            self.word()
        }
    }

    /// Digits, a fraction, an exponent: one `?`.
    fn number(&mut self) {
        let s = self.s;
        let mut i = self.i;
        if s[i] == b'0' && matches!(s.get(i + 1), Some(b'x' | b'b')) {
            let n = s[i + 2..]
                .iter()
                .take_while(|c| c.is_ascii_hexdigit())
                .count();
            if n > 0 {
                self.i = i + 2 + n;
                return self.literal();
            }
        }
        let run = |i: usize| i + s[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        i = run(i);
        if s.get(i) == Some(&b'.') {
            i = run(i + 1);
        }
        if matches!(s.get(i), Some(b'e' | b'E')) {
            let j = i + 1 + usize::from(matches!(s.get(i + 1), Some(b'+' | b'-')));
            if s.get(j).is_some_and(u8::is_ascii_digit) {
                i = run(j);
            }
        }
        self.i = i;
        self.literal();
    }

    fn word(&mut self) {
        let start = self.i;
        let end = self.s[start..]
            .iter()
            .position(|&c| !is_ident(c))
            .map_or(self.s.len(), |n| start + n);
        let w = &self.s[start..end];
        self.i = end;
        if w.len() == 1 && matches!(w[0] | 0x20, b'x' | b'b' | b'n') && self.peek(0) == b'\'' {
            self.skip_quoted(b'\'');
            return self.literal();
        }
        if [&b"null"[..], b"true", b"false"]
            .iter()
            .any(|k| w.eq_ignore_ascii_case(k))
        {
            return self.literal();
        }
        self.sep(b'a');
        self.out.extend(w.iter().map(u8::to_ascii_lowercase));
    }

    fn punct(&mut self, c: u8) {
        self.i += 1;
        if c == b',' {
            self.space = false;
            self.out.push(b',');
            return;
        }
        self.sep(c);
        self.out.push(c);
        match c {
            b'(' => {
                if let Some(slot) = self.parens.get_mut(self.depth) {
                    *slot = self.out.len() - 1;
                }
                self.depth += 1;
            }
            b')' if self.depth > 0 => {
                self.depth -= 1;
                if let Some(&open) = self.parens.get(self.depth) {
                    fold_list(self.out, open);
                }
            }
            _ => {}
        }
    }
}

/// Called when `)` closed the list opened at `open`: `in(?, ?)` → `in(?+)`,
/// `values(?, ?), (?, ?)` → `values(?+)`.
fn fold_list(out: &mut Vec<u8>, open: usize) {
    let inner = &out[open + 1..out.len() - 1];
    if !inner.iter().all(|c| matches!(c, b'?' | b',' | b' ')) || inner.is_empty() {
        return;
    }
    let before = &out[..open];
    let trimmed = before.strip_suffix(b" ").unwrap_or(before);
    let word_end = |w: &[u8]| {
        trimmed.ends_with(w) && trimmed.len() == w.len()
            || trimmed.ends_with(w) && !is_ident(trimmed[trimmed.len() - w.len() - 1])
    };
    if word_end(b"in") || word_end(b"values") || word_end(b"value") {
        let keep = trimmed.len();
        out.truncate(keep);
        out.extend_from_slice(b"(?+)");
        return;
    }
    let repeat = trimmed.strip_suffix(b",").unwrap_or(trimmed);
    if repeat.ends_with(b"values(?+)") || repeat.ends_with(b"value(?+)") {
        let keep = repeat.len();
        out.truncate(keep);
    }
}

/// `limit ?, ?` and `limit ? offset ?` → `limit ?`.
fn fold_limits(out: &mut Vec<u8>) {
    for long in [&b"limit ?, ?"[..], b"limit ? offset ?"] {
        while let Some(at) = memchr::memmem::find(out, long) {
            let tail = at + long.len();
            if out.get(tail).is_some_and(|&c| is_ident(c)) {
                break;
            }
            out.drain(at + 7..tail);
        }
    }
}

/// What a statement does to data, in three words (the digest's read/write column): the
/// [`crate::classify`] verdict's effect, folded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StatementKind {
    /// Reads: SELECT (locking reads included), SHOW, DESCRIBE, EXPLAIN, WITH ... that only reads.
    Read,
    /// Anything that may change data, the schema or the server (see [`crate::Effect`]).
    Write,
    /// Session and transaction control: BEGIN, COMMIT, SET (session), USE, ...
    Other,
}

/// The kind of one statement (see [`StatementKind`]).
pub fn statement_kind(sql: &str) -> StatementKind {
    kind_of_fingerprint(sql)
}

/// [`statement_kind`] of an already computed fingerprint (the classifier reads either).
pub fn kind_of_fingerprint(fp: &str) -> StatementKind {
    match crate::classify(fp).effect {
        crate::Effect::Read => StatementKind::Read,
        crate::Effect::Session => StatementKind::Other,
        _ => StatementKind::Write,
    }
}

#[cfg(test)]
#[path = "fingerprint_tests.rs"]
mod tests;
