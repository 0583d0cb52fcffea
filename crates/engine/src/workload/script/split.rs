//! Splits a script's text into SQL statements and meta-command lines.
//!
//! A statement ends at a `;` outside quotes and comments and may span lines; a line starting
//! with `\` between statements is a meta-command. While splitting, `:name` outside quotes and
//! comments (not `::`, not `:=`) becomes a `?` placeholder, and `--`/`#` comments are dropped
//! (`/* */` comments stay: they may be optimizer hints or versioned code).

/// One piece of a script.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Piece {
    /// A statement: its SQL with `?` for each parameter, and the parameters' names in order.
    Sql {
        line: u32,
        sql: String,
        params: Vec<String>,
        /// The placeholders' byte offsets in `sql` when it also holds a literal `?`.
        placeholders: Option<Vec<u32>>,
    },
    /// A meta-command line: the command (without `\`) and the rest of the line.
    Meta {
        line: u32,
        cmd: String,
        args: String,
    },
}

/// A splitting error: the line and the message.
pub(crate) type SplitError = (u32, String);

#[derive(Clone, Copy, PartialEq, Eq, Default)]
enum Mode {
    #[default]
    Code,
    Quote(u8),
    Block,
}

/// Splits `text` into pieces.
pub(crate) fn split(text: &str) -> Result<Vec<Piece>, SplitError> {
    let mut s = Splitter::default();
    for (n, line) in text.lines().enumerate() {
        let n = u32::try_from(n + 1).unwrap_or(u32::MAX);
        s.line(n, line)?;
    }
    match s.mode {
        Mode::Quote(q) => Err((s.start, format!("unterminated {} quote", q as char))),
        Mode::Block => Err((s.start, "unterminated /* comment".into())),
        Mode::Code => {
            s.finish();
            Ok(s.out)
        }
    }
}

#[derive(Default)]
struct Splitter {
    out: Vec<Piece>,
    sql: String,
    params: Vec<String>,
    /// Where each placeholder's `?` is in `sql`.
    marks: Vec<usize>,
    start: u32,
    mode: Mode,
}

fn ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

impl Splitter {
    fn pending(&self) -> bool {
        !self.sql.trim().is_empty() || self.mode != Mode::Code
    }

    fn line(&mut self, n: u32, line: &str) -> Result<(), SplitError> {
        let trimmed = line.trim_start();
        if let Some(meta) = trimmed.strip_prefix('\\') {
            if self.pending() {
                return Err((
                    n,
                    "meta-command inside an unfinished statement (missing ';'?)".into(),
                ));
            }
            let (cmd, args) = meta.split_once(char::is_whitespace).unwrap_or((meta, ""));
            self.out.push(Piece::Meta {
                line: n,
                cmd: cmd.to_string(),
                args: args.trim().to_string(),
            });
            return Ok(());
        }
        if !self.sql.is_empty() {
            self.sql.push('\n');
        }
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            i = self.char_at(n, &chars, i);
        }
        Ok(())
    }

    /// Consumes the character(s) at `i`; returns the next index.
    fn char_at(&mut self, n: u32, chars: &[char], i: usize) -> usize {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if self.sql.trim().is_empty() && self.mode == Mode::Code && !c.is_whitespace() {
            self.start = n;
        }
        match self.mode {
            Mode::Quote(q) => {
                self.sql.push(c);
                if c == '\\' && q != b'`' {
                    if let Some(e) = next {
                        self.sql.push(e);
                        return i + 2;
                    }
                } else if c == q as char {
                    if next == Some(c) {
                        self.sql.push(c);
                        return i + 2;
                    }
                    self.mode = Mode::Code;
                }
                i + 1
            }
            Mode::Block => {
                self.sql.push(c);
                if c == '*' && next == Some('/') {
                    self.sql.push('/');
                    self.mode = Mode::Code;
                    return i + 2;
                }
                i + 1
            }
            Mode::Code => self.code(chars, i),
        }
    }

    fn code(&mut self, chars: &[char], i: usize) -> usize {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match c {
            '\'' | '"' | '`' => {
                self.mode = Mode::Quote(c as u8);
                self.sql.push(c);
            }
            '#' => return chars.len(),
            '-' if next == Some('-') && chars.get(i + 2).is_none_or(|c| c.is_whitespace()) => {
                return chars.len()
            }
            '/' if next == Some('*') => {
                self.mode = Mode::Block;
                self.sql.push_str("/*");
                return i + 2;
            }
            ';' => self.finish(),
            ':' if next == Some(':') => {
                self.sql.push_str("::");
                return i + 2;
            }
            ':' if next.is_some_and(ident) && (i == 0 || chars[i - 1] != ':') => {
                let end = (i + 1..chars.len())
                    .find(|&j| !ident(chars[j]))
                    .unwrap_or(chars.len());
                self.params.push(chars[i + 1..end].iter().collect());
                self.marks.push(self.sql.len());
                self.sql.push('?');
                return end;
            }
            _ => self.sql.push(c),
        }
        i + 1
    }

    /// Ends the statement in progress, if any.
    fn finish(&mut self) {
        let sql = self.sql.trim();
        if !sql.is_empty() {
            let lead = self.sql.len() - self.sql.trim_start().len();
            let literal = sql.matches('?').count() != self.marks.len();
            let at = self.marks.iter().map(|m| (m - lead) as u32).collect();
            self.out.push(Piece::Sql {
                line: self.start,
                sql: sql.to_string(),
                params: std::mem::take(&mut self.params),
                placeholders: literal.then_some(at),
            });
        }
        self.sql.clear();
        self.params.clear();
        self.marks.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sql(line: u32, sql: &str, params: &[&str]) -> Piece {
        Piece::Sql {
            line,
            sql: sql.into(),
            params: params.iter().map(|p| p.to_string()).collect(),
            placeholders: None,
        }
    }

    #[test]
    fn a_literal_question_mark_keeps_the_placeholders_offsets() {
        let p = split("  SELECT '?', :a /* ? */, :b;").unwrap();
        let Piece::Sql {
            sql, placeholders, ..
        } = &p[0]
        else {
            panic!("{p:?}")
        };
        assert_eq!(sql, "SELECT '?', ? /* ? */, ?");
        assert_eq!(placeholders.as_deref(), Some(&[12, 23][..]));
    }

    #[test]
    fn statements_span_lines_and_end_at_semicolons_outside_quotes() {
        let text = "-- header\n\\set id random(1, 10)\nSELECT 'a;b', \"c;\" -- x;\n  FROM t WHERE id = :id;\n# note\nUPDATE t /* ; */ SET v = v + :d WHERE id=:id;\nSELECT 1::int, @x:=2";
        let p = split(text).unwrap();
        assert_eq!(
            p,
            vec![
                Piece::Meta {
                    line: 2,
                    cmd: "set".into(),
                    args: "id random(1, 10)".into()
                },
                sql(3, "SELECT 'a;b', \"c;\" \n  FROM t WHERE id = ?", &["id"]),
                sql(6, "UPDATE t /* ; */ SET v = v + ? WHERE id=?", &["d", "id"]),
                sql(7, "SELECT 1::int, @x:=2", &[]),
            ]
        );
    }

    #[test]
    fn escaped_and_doubled_quotes_stay_inside_the_string() {
        let p = split("SELECT 'it''s :x', 'a\\';b';").unwrap();
        assert_eq!(p, vec![sql(1, "SELECT 'it''s :x', 'a\\';b'", &[])]);
    }

    #[test]
    fn errors_name_the_line() {
        assert_eq!(
            split("SELECT 1\n\\set a 1\n").unwrap_err().0,
            2,
            "a meta-command inside a statement"
        );
        let (line, msg) = split("SELECT 1;\nSELECT 'x;\n").unwrap_err();
        assert_eq!((line, msg.as_str()), (2, "unterminated ' quote"));
        assert_eq!(split("/* open\n\n").unwrap_err().0, 1);
    }
}
