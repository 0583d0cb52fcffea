//! The option-file format of MySQL and MariaDB (my.cnf), read the way their servers and clients
//! read it, for every option file qpslab takes: a client's option files (the client groups:
//! `--defaults-file`, or the files a mysql client reads by default, [`default_client_files`])
//! and a sandbox profile (the server groups).
//!
//! - `[group]` headers (case-insensitive; text after the `]` is ignored); `#` and `;` start a
//!   comment line, and `#` outside quotes ends a line's text.
//! - `name`, `name = value`; a value wrapped in matching `"` or `'` loses them, and the escapes
//!   `\n \t \r \b \s \" \' \\` are replaced in every value (an unknown escape stays as written).
//! - `!include FILE` reads another file in place, `!includedir DIR` every `*.cnf` file of a
//!   directory in name order (MariaDB sorts them; MySQL promises no order; the `.ini` files are
//!   read on Windows only). A relative path is relative to the current directory, as the servers
//!   resolve it. Each file must open its own `[group]`; after it, the including file's group
//!   goes on. Unknown `!` directives are ignored, as the servers ignore them.
//!
//! Unlike the servers, which skip a missing `!include` file silently and a too-deep one with a
//! warning, a missing file, a nesting deeper than [`MAX_DEPTH`] and an include cycle are
//! errors here, naming the file and line of the directive: a profile that silently loses half
//! its settings measures something else.
//!
//! Every file is read through [`crate::input`]: a regular file only (a FIFO as `~/.my.cnf` is
//! refused, never waited on), of at most [`OPTION_FILE_LIMIT`] bytes, and the files one read
//! takes in, includes and all, of at most [`OPTION_FILES_TOTAL`] bytes together.
//!
//! ```
//! use qpslab_core::optfile::parse_client_options;
//! let o = parse_client_options("[client]\nuser = bench # who\nssl_ca='/ca.pem'\n").unwrap();
//! assert_eq!((o["user"].as_str(), o["ssl-ca"].as_str()), ("bench", "/ca.pem"));
//! ```

use crate::input::{self, InputError};
pub use crate::input::{OPTION_FILES_TOTAL, OPTION_FILE_LIMIT};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Groups whose options a client honours, in increasing precedence: every client's
/// (`client`, and MariaDB's `client-server` that its servers read too), MariaDB clients'
/// (`client-mariadb`), the mysql command-line client's (`mysql`, `mariadb-client`), ours.
pub const CLIENT_GROUPS: [&str; 6] = [
    "client",
    "client-server",
    "client-mariadb",
    "mysql",
    "mariadb-client",
    "qpslab",
];
/// Groups a MariaDB or MySQL server reads.
pub const SERVER_GROUPS: [&str; 4] = ["mysqld", "server", "mariadb", "mariadbd"];
/// How deep `!include` and `!includedir` may nest: the servers' own limit.
pub const MAX_DEPTH: usize = 10;

/// Which groups of an option file to read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Groups<'a> {
    /// Group names, lowercase.
    pub names: &'a [&'a str],
    /// Whether options before the first header of the file named to [`read`] or [`parse`] are
    /// read (a profile may be a bare fragment) rather than refused, as the servers refuse them.
    pub headerless: bool,
}

impl Groups<'static> {
    /// A client's groups ([`CLIENT_GROUPS`]); an option before any header is an error.
    pub const CLIENT: Groups<'static> = Groups {
        names: &CLIENT_GROUPS,
        headerless: false,
    };
    /// A server's groups ([`SERVER_GROUPS`]); options before any header count as the server's.
    pub const SERVER: Groups<'static> = Groups {
        names: &SERVER_GROUPS,
        headerless: true,
    };
}

/// One option read from a group asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptionLine {
    /// Its group, lowercase (empty for an option before any header).
    pub group: String,
    /// The name as written (dashes and underscores, `loose-` and case left to the caller).
    pub name: String,
    /// The value, unquoted and unescaped; empty for a bare `name`.
    pub value: String,
    /// The file it is in.
    pub file: PathBuf,
    /// Its line number, from 1.
    pub line: usize,
}

/// An option file that cannot be read, naming the file and, for a line's fault, the line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{}: {reason}", file.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct OptFileError {
    /// The file at fault (for a missing include, the file with the directive).
    pub file: PathBuf,
    /// The line at fault, when it is one line's.
    pub line: Option<usize>,
    /// What is wrong.
    pub reason: String,
}

/// Reads the options of `groups` from the file at `path` and the files it includes, in the
/// order the server would apply them (later wins).
pub fn read(path: &Path, groups: Groups<'_>) -> Result<Vec<OptionLine>, OptFileError> {
    let mut r = Reader::new(groups);
    r.file(path, None)?;
    Ok(r.out)
}

/// Like [`read`] for text already read; `origin` names it in errors.
pub fn parse(
    text: &str,
    origin: &Path,
    groups: Groups<'_>,
) -> Result<Vec<OptionLine>, OptFileError> {
    let mut r = Reader::new(groups);
    r.stack
        .push(std::fs::canonicalize(origin).unwrap_or_else(|_| origin.to_path_buf()));
    r.text(text, origin, true)?;
    Ok(r.out)
}

/// Reads a client option file into the options of [`CLIENT_GROUPS`], keys with dashes
/// (`ssl_ca` → `ssl-ca`) and lowercase. A later group in `CLIENT_GROUPS` wins over an earlier
/// one whatever their order in the file; within a group, a later line wins.
pub fn read_client_options(path: &Path) -> Result<BTreeMap<String, String>, OptFileError> {
    read(path, Groups::CLIENT).map(client_options)
}

/// Like [`read_client_options`] for text already read.
pub fn parse_client_options(text: &str) -> Result<BTreeMap<String, String>, OptFileError> {
    parse(text, Path::new("<option file>"), Groups::CLIENT).map(client_options)
}

/// The option files a mysql or MariaDB client reads when given none, in its order (a later
/// file wins): `/etc/my.cnf`, `/etc/mysql/my.cnf`, `$MARIADB_HOME/my.cnf` (else
/// `$MYSQL_HOME/my.cnf`), the `--defaults-extra-file`, then `~/.my.cnf`. Each is `(path,
/// required)`: only the extra file must exist, as the clients demand; the others are skipped
/// when absent.
pub fn default_client_files(
    home: Option<&Path>,
    mysql_home: Option<&Path>,
    extra: Option<&Path>,
) -> Vec<(PathBuf, bool)> {
    let mut files = vec![
        (PathBuf::from("/etc/my.cnf"), false),
        (PathBuf::from("/etc/mysql/my.cnf"), false),
    ];
    files.extend(mysql_home.map(|d| (d.join("my.cnf"), false)));
    files.extend(extra.map(|f| (f.to_path_buf(), true)));
    files.extend(home.map(|d| (d.join(".my.cnf"), false)));
    files
}

/// Reads the client options of several files (as [`read_client_options`] reads one), a later
/// file's value winning over an earlier one's; a file not required and absent is skipped.
pub fn read_client_files(
    files: &[(PathBuf, bool)],
) -> Result<BTreeMap<String, String>, OptFileError> {
    let mut out = BTreeMap::new();
    for (path, required) in files {
        if *required || path.exists() {
            out.extend(read_client_options(path)?);
        }
    }
    Ok(out)
}

fn client_options(lines: Vec<OptionLine>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for g in CLIENT_GROUPS {
        for l in lines.iter().filter(|l| l.group == g) {
            out.insert(
                l.name.replace('_', "-").to_ascii_lowercase(),
                l.value.clone(),
            );
        }
    }
    out
}

/// The state of one read: the chain of files being read (for the cycle check), the bytes read
/// so far (for [`OPTION_FILES_TOTAL`]) and the options found so far.
struct Reader<'g> {
    groups: Groups<'g>,
    stack: Vec<PathBuf>,
    bytes: u64,
    out: Vec<OptionLine>,
}

/// Where a directive was: the file and line that named a file to read.
type Origin<'a> = Option<(&'a Path, usize)>;

impl<'g> Reader<'g> {
    fn new(groups: Groups<'g>) -> Self {
        Reader {
            groups,
            stack: Vec::new(),
            bytes: 0,
            out: Vec::new(),
        }
    }

    /// Reads one file, named by the directive at `from` (none for the file asked for).
    fn file(&mut self, path: &Path, from: Origin<'_>) -> Result<(), OptFileError> {
        let fail = |reason: String| match from {
            Some((file, line)) => err(file, Some(line), reason),
            None => err(path, None, reason),
        };
        let what = |e: std::io::Error| match from {
            Some(_) => format!("cannot read {}: {e}", path.display()),
            None => format!("cannot read: {e}"),
        };
        let canonical = std::fs::canonicalize(path).map_err(|e| fail(what(e)))?;
        if self.stack.contains(&canonical) {
            let chain: Vec<String> = self.stack.iter().map(|p| p.display().to_string()).collect();
            return Err(fail(format!(
                "an !include cycle: {} -> {}",
                chain.join(" -> "),
                canonical.display()
            )));
        }
        if self.stack.len() > MAX_DEPTH {
            return Err(fail(format!(
                "{} is nested more than {MAX_DEPTH} !include levels deep",
                path.display()
            )));
        }
        let text = input::read_text(path, "an option file", OPTION_FILE_LIMIT)
            .map_err(|e| fail(read_error(&e, from.is_some())))?;
        self.bytes += text.len() as u64;
        if self.bytes > OPTION_FILES_TOTAL {
            return Err(fail(format!(
                "{} brings the option files read to more than {}, the limit in total",
                path.display(),
                input::size_text(OPTION_FILES_TOTAL)
            )));
        }
        self.stack.push(canonical);
        self.text(&text, path, from.is_none())?;
        self.stack.pop();
        Ok(())
    }

    /// Reads every `*.cnf` file of a directory, in name order.
    fn dir(&mut self, dir: &Path, from: (&Path, usize)) -> Result<(), OptFileError> {
        let fail = |e: std::io::Error| {
            err(
                from.0,
                Some(from.1),
                format!("cannot read directory {}: {e}", dir.display()),
            )
        };
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(fail)?
            .map(|e| e.map(|e| e.path()))
            .collect::<Result<_, _>>()
            .map_err(fail)?;
        // A directory is skipped, as the servers skip it; any other `*.cnf` entry is read, so a
        // FIFO or device named so is refused by `file` with its name rather than skipped
        // unseen (a file left out is settings lost).
        files.retain(|p| !p.is_dir() && p.to_string_lossy().ends_with(".cnf"));
        files.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
        for f in files {
            self.file(&f, Some(from))?;
        }
        Ok(())
    }

    /// Reads the lines of one file. `top` says whether it is the file asked for, the only one
    /// whose options may come before a header.
    fn text(&mut self, text: &str, file: &Path, top: bool) -> Result<(), OptFileError> {
        let mut group: Option<String> = None;
        for (i, raw) in text.lines().enumerate() {
            let n = i + 1;
            let line = raw.trim();
            if line.is_empty() || line.starts_with(['#', ';']) {
                continue;
            }
            if let Some(directive) = line.strip_prefix('!') {
                self.directive(directive.trim_start(), file, n)?;
            } else if let Some(rest) = line.strip_prefix('[') {
                let (name, _) = rest.split_once(']').ok_or_else(|| {
                    err(
                        file,
                        Some(n),
                        format!("unclosed group header {}", quoted(line)),
                    )
                })?;
                group = Some(name.trim().to_ascii_lowercase());
            } else {
                let wanted = match group.as_deref() {
                    Some(g) => self.groups.names.contains(&g),
                    None if top && self.groups.headerless => true,
                    None => {
                        let reason = format!("option {} outside of any [group]", quoted(line));
                        return Err(err(file, Some(n), reason));
                    }
                };
                if wanted {
                    let g = group.as_deref().unwrap_or_default();
                    self.out.push(option(line, g, file, n));
                }
            }
        }
        Ok(())
    }

    /// Follows `!include` and `!includedir`; other directives are ignored, as the servers do.
    fn directive(&mut self, d: &str, file: &Path, n: usize) -> Result<(), OptFileError> {
        for keyword in ["includedir", "include"] {
            let Some(arg) = d.strip_prefix(keyword) else {
                continue;
            };
            if !(arg.is_empty() || arg.starts_with(char::is_whitespace)) {
                continue;
            }
            let arg = arg.trim();
            if arg.is_empty() {
                return Err(err(file, Some(n), format!("'!{keyword}' names no path")));
            }
            return match keyword {
                "include" => self.file(Path::new(arg), Some((file, n))),
                _ => self.dir(Path::new(arg), (file, n)),
            };
        }
        Ok(())
    }
}

/// Why a file could not be read; `included` says whether the reason must name the file (it
/// is not the file the error is about, but the one with the directive).
fn read_error(e: &InputError, included: bool) -> String {
    match e {
        _ if included => e.to_string(),
        InputError::Io { source, .. } => format!("cannot read: {source}"),
        InputError::NotFile { kind, .. } => format!("is {kind}, not a regular file"),
        InputError::TooLarge { what, limit, .. } => format!(
            "is larger than {}, the limit for {what}",
            input::size_text(*limit)
        ),
        InputError::NotText { .. } => "is not UTF-8 text".into(),
    }
}

/// The most characters of a file's text an error quotes.
const QUOTE_MAX: usize = 60;
/// Parts of a name that make its value a secret (compared in lower case): `password`,
/// `MYSQL_PWD`, `api_token`, `client_secret`.
const SECRET_NAMES: [&str; 5] = ["pass", "pwd", "secret", "token", "credential"];

/// `text` (a line of a file) as an error may quote it, in single quotes: the value of every
/// `name=value` whose name looks like a password's shown as `***`, control characters
/// escaped, and cut at [`QUOTE_MAX`] characters with `…`. The file may not be an option file
/// at all (`--defaults-file /proc/self/environ`): what it holds must not reach a terminal or
/// a log because it was quoted.
pub fn quoted(text: &str) -> String {
    let mut masked = String::new();
    // Segment by segment between control characters (an environment's NULs, a line's end):
    // a secret's value runs to the end of its segment (`password = two words`).
    let mut rest = text;
    while !rest.is_empty() && masked.chars().count() <= QUOTE_MAX {
        let end = rest.find(char::is_control).unwrap_or(rest.len());
        masked.push_str(&mask(&rest[..end]));
        let sep = rest[end..].chars().next().map_or(0, char::len_utf8);
        masked.push_str(&rest[end..end + sep]);
        rest = &rest[end + sep..];
    }
    let mut out = String::from("'");
    for (i, c) in masked.chars().enumerate() {
        if i == QUOTE_MAX {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    out
}

/// `segment` up to the first `=` whose name looks like a password's, then `***`.
fn mask(segment: &str) -> String {
    for (at, _) in segment.match_indices('=') {
        let before = segment[..at].trim_end();
        let name_from = before
            .rfind(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | ',' | '['))
            .map_or(0, |i| i + 1);
        if is_secret_name(&before[name_from..]) {
            return format!("{}***", &segment[..=at]);
        }
    }
    segment.to_string()
}

/// Whether a variable or option of this name holds a secret.
fn is_secret_name(name: &str) -> bool {
    let name = name.trim().to_ascii_lowercase();
    SECRET_NAMES.iter().any(|s| name.contains(s))
}

fn err(file: &Path, line: Option<usize>, reason: String) -> OptFileError {
    OptFileError {
        file: file.to_path_buf(),
        line,
        reason,
    }
}

/// One `name[=value]` line.
fn option(line: &str, group: &str, file: &Path, n: usize) -> OptionLine {
    let text = strip_comment(line);
    let (name, value) = match text.split_once('=') {
        Some((name, value)) => (name.trim(), unescape(unquote(value.trim()))),
        None => (text.trim(), String::new()),
    };
    OptionLine {
        group: group.to_string(),
        name: name.to_string(),
        value,
        file: file.to_path_buf(),
        line: n,
    }
}

/// The line up to a `#` outside quotes (a backslash inside quotes protects the next character).
fn strip_comment(line: &str) -> &str {
    let (mut quote, mut escaped) = (None, false);
    for (i, c) in line.char_indices() {
        if matches!(c, '"' | '\'') && !escaped {
            match quote {
                None => quote = Some(c),
                Some(q) if q == c => quote = None,
                Some(_) => {}
            }
        }
        if quote.is_none() && c == '#' {
            return &line[..i];
        }
        escaped = quote.is_some() && c == '\\' && !escaped;
    }
    line
}

/// Drops matching quotes around a value.
fn unquote(v: &str) -> &str {
    match v.chars().next() {
        Some(q @ ('"' | '\'')) if v.len() >= 2 && v.ends_with(q) => &v[1..v.len() - 1],
        _ => v,
    }
}

/// Replaces the escapes the servers know; an unknown one, or a backslash at the end, stays.
fn unescape(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    let mut chars = v.chars().peekable();
    while let Some(c) = chars.next() {
        let next = chars.peek().copied();
        let replaced = match (c, next) {
            ('\\', Some('n')) => '\n',
            ('\\', Some('t')) => '\t',
            ('\\', Some('r')) => '\r',
            ('\\', Some('b')) => '\u{8}',
            ('\\', Some('s')) => ' ',
            ('\\', Some(e @ ('"' | '\'' | '\\'))) => e,
            _ => {
                out.push(c);
                continue;
            }
        };
        chars.next();
        out.push(replaced);
    }
    out
}

#[cfg(test)]
#[path = "optfile_tests.rs"]
mod tests;
