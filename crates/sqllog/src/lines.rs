//! Lines from a reader into one reused buffer, with a cap on a line's length.

use crate::error::LogError;
use std::io::{self, BufRead};

/// The longest line read: a longer one is an error (a statement this long is far beyond any
/// server's `max_allowed_packet` default; garbage without newlines, `/dev/zero` say, must end
/// the read at once, neither growing the reader's memory nor reading on for ever).
pub(crate) const MAX_LINE: usize = crate::MAX_STATEMENT;

/// A line source that can hand the same line back once (`hold`).
pub(crate) struct Lines<R> {
    r: R,
    /// The current line, without its `\n` (and without a `\r` before it).
    pub(crate) buf: Vec<u8>,
    /// The current line's number (1-based).
    pub(crate) number: u64,
    /// The current line ended without a newline at the end of the input (a cut last entry).
    pub(crate) cut: bool,
    /// Bytes consumed from the reader.
    pub(crate) bytes: u64,
    held: bool,
}

impl<R: BufRead> Lines<R> {
    pub(crate) fn new(r: R) -> Self {
        Lines {
            r,
            buf: Vec::with_capacity(64 << 10),
            number: 0,
            cut: false,
            bytes: 0,
            held: false,
        }
    }

    /// The next line into `buf`; false at the end of the input. A line longer than
    /// [`MAX_LINE`] is an error naming its number.
    pub(crate) fn advance(&mut self) -> Result<bool, LogError> {
        if self.held {
            self.held = false;
            return Ok(true);
        }
        self.buf.clear();
        self.cut = false;
        let mut newline = false;
        loop {
            let chunk = match self.r.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.into()),
            };
            if chunk.is_empty() {
                break;
            }
            let (take, found) = match memchr::memchr(b'\n', chunk) {
                Some(n) => (n + 1, true),
                None => (chunk.len(), false),
            };
            let body = if found { take - 1 } else { take };
            if self.buf.len() + body > MAX_LINE {
                return Err(LogError::TooLong {
                    file: None,
                    line: self.number + 1,
                    what: "a line",
                    limit: MAX_LINE,
                });
            }
            self.buf.extend_from_slice(&chunk[..body]);
            self.r.consume(take);
            self.bytes += take as u64;
            if found {
                newline = true;
                break;
            }
        }
        if !newline && self.buf.is_empty() {
            return Ok(false);
        }
        self.cut |= !newline;
        if self.buf.last() == Some(&b'\r') {
            self.buf.pop();
        }
        self.number += 1;
        Ok(true)
    }

    /// Hands the current line back: the next `advance` returns it again.
    pub(crate) fn hold(&mut self) {
        self.held = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use qpslab_core::fault::Blame;
    use std::io::Read;

    fn all(input: &[u8]) -> Vec<(String, bool)> {
        let mut l = Lines::new(input);
        let mut out = Vec::new();
        while l.advance().unwrap() {
            out.push((String::from_utf8_lossy(&l.buf).into_owned(), l.cut));
        }
        out
    }

    #[test]
    fn lines_and_the_cut_last_one() {
        let got = all(b"a\r\nbc\n\nd");
        let want = [("a", false), ("bc", false), ("", false), ("d", true)];
        assert_eq!(got, want.map(|(s, c)| (s.to_string(), c)));
        assert!(all(b"").is_empty());
    }

    #[test]
    fn a_line_longer_than_the_limit_is_an_error_not_a_cut_line() {
        let within = [vec![b'x'; MAX_LINE], b"\n".to_vec()].concat();
        let over = std::io::BufReader::new(std::io::repeat(0).take(MAX_LINE as u64 + 1));
        let mut l = Lines::new(&within[..]);
        assert!(l.advance().unwrap());
        assert_eq!(l.buf.len(), MAX_LINE);
        let e = Lines::new(over).advance().unwrap_err().in_file("/dev/zero");
        assert_eq!(
            e.to_string(),
            "/dev/zero:1: a line longer than 64 MiB, the limit of the log reader"
        );
        assert!(e.is_user_error());
    }

    #[test]
    fn hold_returns_the_same_line() {
        let mut l = Lines::new(&b"x\ny\n"[..]);
        assert!(l.advance().unwrap());
        l.hold();
        assert!(l.advance().unwrap());
        assert_eq!((l.buf.as_slice(), l.number), (&b"x"[..], 1));
        assert!(l.advance().unwrap());
        assert_eq!(l.number, 2);
        assert_eq!(l.bytes, 4);
    }
}
