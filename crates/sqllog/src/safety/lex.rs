//! SQL text to tokens, one statement at a time, as one server would read it.
//!
//! What the text means depends on the server (`/*!NNNNN ...*/` runs only from version NNNNN,
//! `/*M!` only on MariaDB) and on the session's `sql_mode` (`NO_BACKSLASH_ESCAPES` changes where
//! a string ends, `ANSI_QUOTES` makes `"x"` a name): a [`Lexer`] reads under one [`ServerGuess`]
//! hypothesis and one [`Mode`]; the caller tries every reading it cannot rule out. The lexer is
//! a single forward pass with no recursion: its work is linear in the text.
//!
//! The text is bytes, as the client sent them: what they mean also depends on the connection's
//! client character set. In `gbk`, `big5`, `sjis` and `cp932` (and MySQL's `gb18030`) the second
//! byte of a two-byte character may be `\`, `` ` `` or another ASCII byte; the server reads such
//! a character whole, so `0xbf 0x5c` before a quote is one character and the quote closes the
//! string (see [`Charset`]).

/// How a client character set splits bytes into characters, as far as reading SQL goes: the
/// character sets whose two-byte characters may end in an ASCII byte, each by its lead and
/// trail byte ranges (MariaDB's `ismbchar` for each), and all the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Charset {
    /// Every character set whose characters hold no ASCII byte but as a whole character:
    /// latin1, utf8mb3, utf8mb4, ujis, eucjpms, gb2312, binary, ... (euckr's trail bytes may be
    /// ASCII letters, which no reading tells from a name's own letters).
    Ascii,
    /// gbk (and MySQL's gb18030, whose four-byte characters end where gbk's bytes do): a lead
    /// 0x81-0xfe, a trail 0x40-0x7e or 0x80-0xfe.
    Gbk,
    /// big5: a lead 0xa1-0xf9, a trail 0x40-0x7e or 0xa1-0xfe.
    Big5,
    /// sjis and cp932: a lead 0x81-0x9f or 0xe0-0xfc, a trail 0x40-0x7e or 0x80-0xfc.
    Sjis,
}

impl Charset {
    /// Every reading, by [`Charset::index`].
    pub const ALL: [Charset; 4] = [Charset::Ascii, Charset::Gbk, Charset::Big5, Charset::Sjis];

    /// The set of every reading (a bit per [`Charset::index`]).
    pub const ANY: u8 = 0x0f;

    /// 0..4.
    pub fn index(self) -> u8 {
        self as u8
    }

    /// The reading of a character set by its name (`gbk`, `utf8mb4`, `'cp932'`), or None for
    /// a name this classifier does not know (the server may refuse it, or know it).
    pub fn of_name(name: &str) -> Option<Charset> {
        let name = name.to_ascii_lowercase();
        match name.as_str() {
            "gbk" | "gb18030" => Some(Charset::Gbk),
            "big5" => Some(Charset::Big5),
            "sjis" | "cp932" => Some(Charset::Sjis),
            _ if ASCII_SAFE.contains(&name.as_str()) => Some(Charset::Ascii),
            _ => None,
        }
    }

    /// The length of the character at `s[i]`: 2 for a lead byte followed by a trail byte of
    /// this character set, else 1.
    #[inline]
    pub fn char_len(self, s: &[u8], i: usize) -> usize {
        let (Some(&a), Some(&b)) = (s.get(i), s.get(i + 1)) else {
            return 1;
        };
        let pair = match self {
            Charset::Ascii => false,
            Charset::Gbk => (0x81..=0xfe).contains(&a) && matches!(b, 0x40..=0x7e | 0x80..=0xfe),
            Charset::Big5 => (0xa1..=0xf9).contains(&a) && matches!(b, 0x40..=0x7e | 0xa1..=0xfe),
            Charset::Sjis => {
                matches!(a, 0x81..=0x9f | 0xe0..=0xfc) && matches!(b, 0x40..=0x7e | 0x80..=0xfc)
            }
        };
        1 + usize::from(pair)
    }
}

/// Whether any reading of `text` by character set differs from another: only a byte 0x81 or
/// above followed by an ASCII byte can be read two ways.
pub(crate) fn charset_matters(text: &[u8]) -> bool {
    text.windows(2).any(|w| w[0] >= 0x81 && w[1] < 0x80)
}

/// The client character sets whose characters hold no ASCII byte but as a whole character
/// (MariaDB's and MySQL's; ucs2, utf16 and utf32 cannot be a client's).
const ASCII_SAFE: [&str; 36] = [
    "armscii8",
    "ascii",
    "binary",
    "cp1250",
    "cp1251",
    "cp1256",
    "cp1257",
    "cp850",
    "cp852",
    "cp866",
    "dec8",
    "eucjpms",
    "euckr",
    "gb2312",
    "geostd8",
    "greek",
    "hebrew",
    "hp8",
    "keybcs2",
    "koi8r",
    "koi8u",
    "latin1",
    "latin2",
    "latin5",
    "latin7",
    "macce",
    "macroman",
    "swe7",
    "tis620",
    "ujis",
    "utf8",
    "utf8mb3",
    "utf8mb4",
    "filename",
    "cp1252",
    "iso-8859-1",
];

/// How the session reads text: the two `sql_mode` flags that change how it is tokenized, and
/// the client character set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Mode {
    /// `NO_BACKSLASH_ESCAPES`: `\` is an ordinary character in strings.
    pub nbe: bool,
    /// `ANSI_QUOTES`: `"x"` is a quoted name, not a string.
    pub ansi: bool,
    /// The client character set's reading.
    pub cs: Charset,
}

impl Mode {
    /// The default `sql_mode`'s flags in an ASCII-safe character set.
    pub const DEFAULT: Mode = Mode::of(false, false, Charset::Ascii);

    /// Every mode, by [`Mode::index`].
    pub fn all() -> impl Iterator<Item = Mode> {
        (0..16u8).map(Mode::from_index)
    }

    /// The mode of index `i` (0..16).
    pub fn from_index(i: u8) -> Mode {
        Mode::of(
            i & 1 != 0,
            i & 2 != 0,
            Charset::ALL[usize::from((i >> 2) & 3)],
        )
    }

    const fn of(nbe: bool, ansi: bool, cs: Charset) -> Mode {
        Mode { nbe, ansi, cs }
    }

    /// 0..4, the bit of the `sql_mode` flags in a set of them.
    pub fn flags(self) -> u8 {
        u8::from(self.nbe) | (u8::from(self.ansi) << 1)
    }

    /// 0..16, the bit of this mode in a set of modes.
    pub fn index(self) -> u8 {
        self.flags() | (self.cs.index() << 2)
    }

    /// These flags (a [`Mode::flags`]) in this mode's character set.
    pub fn with_flags(self, flags: u8) -> Mode {
        Mode::of(flags & 1 != 0, flags & 2 != 0, self.cs)
    }
}

/// One hypothesis about the server that reads the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ServerGuess {
    /// MariaDB (else MySQL).
    pub mariadb: bool,
    /// Its version as executable comments compare it (10.11.19 is 101119).
    pub version: u32,
    /// Whether executable comments whose fate cannot be told (a version folded to `?` by a
    /// fingerprint, a lowercase `/*m!`, a 6-digit version on MySQL) run.
    pub unsure_runs: bool,
}

/// A token of SQL text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tok<'a> {
    /// A keyword or an unquoted name (or a number).
    Word(&'a [u8]),
    /// A quoted name's raw content (backquotes, or double quotes under `ANSI_QUOTES`): never a
    /// keyword.
    Ident(&'a [u8]),
    /// A string literal, or adjacent ones (`'a' 'b'` is one string): the raw text from the
    /// first opening quote to the last closing one.
    Str(&'a [u8]),
    /// Any other character.
    Punct(u8),
}

/// Whether `c` may be part of an unquoted name (bytes of non-ASCII characters are).
pub(crate) fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80
}

/// How an executable comment's opening is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fate {
    /// Its content is SQL; `usize` bytes of marker and version to skip.
    Run(usize),
    /// An ordinary comment.
    Skip,
}

/// A reader of one text under one reading.
pub(crate) struct Lexer<'a> {
    text: &'a [u8],
    /// The next byte to read.
    pub pos: usize,
    server: ServerGuess,
    /// The `sql_mode` flags the text is read under.
    pub mode: Mode,
    /// Executable comments opened and not yet closed.
    pub open_exec: u32,
}

impl<'a> Lexer<'a> {
    /// A lexer at `pos` of `text`.
    pub fn new(
        text: &'a [u8],
        pos: usize,
        server: ServerGuess,
        mode: Mode,
        open_exec: u32,
    ) -> Self {
        Lexer {
            text,
            pos,
            server,
            mode,
            open_exec,
        }
    }

    fn at(&self, i: usize) -> u8 {
        self.text.get(i).copied().unwrap_or(0)
    }

    /// The tokens of the next statement into `out` (cleared), through its `;`.
    pub fn statement(&mut self, out: &mut Vec<Tok<'a>>) {
        out.clear();
        let s = self.text;
        let cs = self.mode.cs;
        while self.pos < s.len() {
            let i = self.pos;
            let c = s[i];
            match c {
                _ if c.is_ascii_whitespace() => self.pos += 1,
                b'#' => self.pos = line_end(s, i),
                b'-' if self.at(i + 1) == b'-' && matches!(self.at(i + 2), 0..=b' ') => {
                    self.pos = line_end(s, i)
                }
                b'/' if self.at(i + 1) == b'*' => match self.fate(i) {
                    Fate::Run(n) => {
                        self.pos = i + n;
                        self.open_exec = self.open_exec.saturating_add(1);
                    }
                    Fate::Skip => {
                        self.pos = memchr::memmem::find(&s[i + 2..], b"*/")
                            .map_or(s.len(), |n| i + 2 + n + 2)
                    }
                },
                b'*' if self.at(i + 1) == b'/' && self.open_exec > 0 => {
                    self.open_exec -= 1;
                    self.pos += 2;
                }
                b';' => {
                    self.pos += 1;
                    return;
                }
                b'\'' => self.string(out, c),
                b'"' if !self.mode.ansi => self.string(out, c),
                b'"' | b'`' => {
                    let (end, closed) = quoted_end(s, i, c, false, cs);
                    out.push(Tok::Ident(&self.text[i + 1..end - usize::from(closed)]));
                    self.pos = end;
                }
                _ if is_ident(c) => {
                    // A lead byte takes its trail byte (`0x81 0x60` is a letter, not a
                    // backquote) wherever it stands.
                    let mut j = i;
                    while j < s.len() && is_ident(s[j]) {
                        j += cs.char_len(s, j);
                    }
                    let j = j.min(s.len());
                    out.push(Tok::Word(&self.text[i..j]));
                    self.pos = j;
                }
                _ => {
                    out.push(Tok::Punct(c));
                    self.pos += 1;
                }
            }
        }
    }

    /// A string literal at `pos`, joined to the one before it when they are adjacent.
    fn string(&mut self, out: &mut Vec<Tok<'a>>, q: u8) {
        let i = self.pos;
        let (end, _) = quoted_end(self.text, i, q, !self.mode.nbe, self.mode.cs);
        let start = match out.last().copied() {
            Some(Tok::Str(prev)) => {
                out.pop();
                prev.as_ptr() as usize - self.text.as_ptr() as usize
            }
            _ => i,
        };
        out.push(Tok::Str(&self.text[start..end]));
        self.pos = end;
    }

    /// What the server does with the comment opened at `i` (`/*`).
    fn fate(&self, i: usize) -> Fate {
        let sv = self.server;
        let (marker, upper_m) = match (self.at(i + 2), self.at(i + 3)) {
            (b'!', _) => (3, false),
            (b'M', b'!') => (4, true),
            (b'm', b'!') => (4, false),
            _ => return Fate::Skip,
        };
        let unsure = |n: usize| {
            if sv.unsure_runs {
                Fate::Run(n)
            } else {
                Fate::Skip
            }
        };
        let is_m = marker == 4;
        // MySQL reads `/*M!` as an ordinary comment; MariaDB reads `/*M!` (a lowercase `m`
        // cannot be told from a folded fingerprint: both readings).
        if is_m && !sv.mariadb {
            return Fate::Skip;
        }
        let v = i + marker;
        if self.at(v) == b'?' {
            return unsure(marker + 1);
        }
        let digits = (0..6)
            .take_while(|&k| self.at(v + k).is_ascii_digit())
            .count();
        if is_m && !upper_m {
            return unsure(marker + if digits >= 5 { digits } else { 0 });
        }
        if digits < 5 {
            // No version: the content always runs (digits and all).
            return Fate::Run(marker);
        }
        let number = |n: usize| {
            self.text[v..v + n]
                .iter()
                .fold(0u32, |a, d| a * 10 + u32::from(d - b'0'))
        };
        if sv.mariadb {
            // MariaDB reads 5 or 6 digits and ignores MySQL 5.7+ versions (50700-99999)
            // unless the comment is `/*M!`.
            let version = number(digits);
            let mysql_only = (50700..=99999).contains(&version) && !is_m;
            if version <= sv.version && !mysql_only {
                Fate::Run(marker + digits)
            } else {
                Fate::Skip
            }
        } else if digits == 6 {
            // MySQL versions differ on whether a sixth digit belongs to the version.
            unsure(marker + 6)
        } else if number(5) <= sv.version {
            Fate::Run(marker + 5)
        } else {
            Fate::Skip
        }
    }
}

/// Versions that executable comments in `text` compare against (anywhere: a superset).
pub(crate) fn comment_versions(text: &[u8]) -> Vec<u32> {
    let s = text;
    let mut out = Vec::new();
    for at in memchr::memmem::find_iter(s, b"/*") {
        let v = match s.get(at + 2..at + 4) {
            Some([b'!', _]) => at + 3,
            Some([b'M' | b'm', b'!']) => at + 4,
            _ => continue,
        };
        let digits = (0..6)
            .take_while(|&k| s.get(v + k).is_some_and(u8::is_ascii_digit))
            .count();
        if digits >= 5 {
            let n = |k: usize| {
                s[v..v + k]
                    .iter()
                    .fold(0u32, |a, d| a * 10 + u32::from(d - b'0'))
            };
            out.push(n(digits));
            out.push(n(5));
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Whether `text` holds an executable comment whose fate no version settles.
pub(crate) fn has_unsure_comment(text: &[u8]) -> bool {
    let s = text;
    memchr::memmem::find_iter(s, b"/*").any(|at| match s.get(at + 2..at + 4) {
        Some([b'm', b'!']) | Some([b'!', b'?']) => true,
        Some([b'!', _]) | Some([b'M', b'!']) => {
            let v = at + if s[at + 2] == b'!' { 3 } else { 4 };
            s.get(v) == Some(&b'?') || (0..6).all(|k| s.get(v + k).is_some_and(u8::is_ascii_digit))
        }
        _ => false,
    })
}

fn line_end(s: &[u8], i: usize) -> usize {
    memchr::memchr(b'\n', &s[i..]).map_or(s.len(), |n| i + n)
}

/// The index after the quoted run opened by `q` at `i` (doubled quotes, and `\` escapes when
/// `escapes`), and whether its closing quote was found. A two-byte character of `cs` is read
/// whole, as the server reads it: its trail byte is neither an escape nor a quote.
pub(crate) fn quoted_end(s: &[u8], i: usize, q: u8, escapes: bool, cs: Charset) -> (usize, bool) {
    let mut j = i + 1;
    while j < s.len() {
        let n = cs.char_len(s, j);
        if n > 1 {
            j += n;
            continue;
        }
        let c = s[j];
        j += 1;
        if c == b'\\' && escapes {
            j += 1;
        } else if c == q {
            if s.get(j) != Some(&q) {
                return (j, true);
            }
            j += 1;
        }
    }
    (s.len(), false)
}

/// The value of a [`Tok::Str`] read under `mode`, or None when it holds a backslash escape (its
/// value then depends on more than this reading) or is not only literals and spaces.
pub(crate) fn string_value(raw: &[u8], mode: Mode) -> Option<String> {
    let s = raw;
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        let q = s[i];
        if q.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if !(q == b'\'' || (q == b'"' && !mode.ansi)) {
            return None;
        }
        let (end, closed) = quoted_end(s, i, q, !mode.nbe, mode.cs);
        let body = raw.get(i + 1..end - usize::from(closed))?;
        if body.contains(&b'\\') && !mode.nbe {
            return None;
        }
        let mut k = 0;
        while k < body.len() {
            // A doubled quote is one; a two-byte character is copied whole.
            let n = if body[k] == q {
                2
            } else {
                mode.cs.char_len(body, k)
            };
            out.extend_from_slice(&body[k..(k + n).min(body.len())]);
            if body[k] == q {
                out.pop();
            }
            k += n;
        }
        i = end;
    }
    Some(String::from_utf8_lossy(&out).into_owned())
}
