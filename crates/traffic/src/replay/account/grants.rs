//! An account's grants as `SHOW GRANTS` lists them, read: which privileges on which objects,
//! whether they only read (EXECUTE does on an SQL SECURITY INVOKER routine only), and whether a
//! grant to PUBLIC covers a database that exists.

use super::routines;
use qpslab_lab::ExecError;
use qpslab_wire::Conn;

/// One grant line, split: its privileges (upper case, column lists left out), its object
/// (none for a role granted) and whether it is granted to PUBLIC.
#[derive(Debug, PartialEq)]
pub(super) struct Grant {
    pub(super) privileges: Vec<String>,
    pub(super) object: Option<String>,
    pub(super) public: bool,
    pub(super) grant_option: bool,
}

pub(super) fn parse(line: &str) -> Option<Grant> {
    let rest = line.strip_prefix("GRANT ")?;
    let to = find_outside_quotes(rest, " TO ")?;
    let (what, grantee) = (&rest[..to], &rest[to + 4..]);
    let (privs, object) = match find_outside_quotes(what, " ON ") {
        Some(on) => (&what[..on], Some(what[on + 4..].trim().to_string())),
        None => (what, None),
    };
    let mut privileges = Vec::new();
    let mut depth = 0;
    let mut cur = String::new();
    for c in privs.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => privileges.push(std::mem::take(&mut cur)),
            _ if depth == 0 => cur.push(c),
            _ => {}
        }
    }
    privileges.push(cur);
    Some(Grant {
        privileges: privileges
            .iter()
            .map(|p| p.trim().to_ascii_uppercase())
            .filter(|p| !p.is_empty())
            .collect(),
        object,
        public: grantee.trim_start().starts_with("PUBLIC"),
        grant_option: grantee.contains("WITH GRANT OPTION"),
    })
}

/// Where `needle` starts in `s` outside backquotes and quotes.
pub(super) fn find_outside_quotes(s: &str, needle: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    for (i, c) in s.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '`' || c == '\'' || c == '"' => quote = Some(c),
            None if s[i..].starts_with(needle) => return Some(i),
            None => {}
        }
    }
    None
}

/// Whether the grants let the account create users and grant them SELECT.
pub(super) fn may_create_users(lines: &[String]) -> bool {
    lines.iter().filter_map(|l| parse(l)).any(|g| {
        g.object.as_deref() == Some("*.*")
            && g.grant_option
            && g.privileges
                .iter()
                .any(|p| p == "ALL PRIVILEGES" || p == "CREATE USER")
    })
}

/// Whether a privilege only reads; EXECUTE does on an INVOKER routine (`invoker`: the grant's
/// object is one), which runs with the caller's privileges.
pub(super) fn reads_only(privilege: &str, invoker: bool) -> bool {
    matches!(privilege, "USAGE" | "SELECT" | "SHOW VIEW") || (invoker && privilege == "EXECUTE")
}

/// The grants among `lines` that write or administer (a granted role counts: it may; EXECUTE
/// does, unless on one of `invoker`, the INVOKER routines `--grant-execute` allows), less
/// those to PUBLIC on databases the server reached by `conn` does not have.
pub(super) fn writing_grants(
    conn: &mut Conn,
    lines: &[String],
    invoker: &[routines::Routine],
    dbs: &[String],
) -> Result<Vec<String>, ExecError> {
    let mut out = Vec::new();
    for line in lines {
        let Some(g) = parse(line) else { continue };
        let on_invoker = g
            .object
            .as_deref()
            .is_some_and(|o| routines::is_one_of(o, invoker));
        let writes = g.object.is_none()
            || g.grant_option
            || g.privileges.iter().any(|p| !reads_only(p, on_invoker));
        if !writes {
            continue;
        }
        if g.public {
            if let Some(db) = g.object.as_deref().and_then(database_pattern) {
                let ours = dbs.is_empty() || dbs.iter().any(|d| like(d, &db));
                if !ours || !database_exists(conn, &db)? {
                    continue;
                }
            }
        }
        out.push(short(line));
    }
    Ok(out)
}

/// The database pattern of a grant's object (`` `test\_%`.* `` is `test\_%`); none for `*.*`.
pub(super) fn database_pattern(object: &str) -> Option<String> {
    let object = object
        .strip_prefix("FUNCTION ")
        .or_else(|| object.strip_prefix("PROCEDURE "))
        .or_else(|| object.strip_prefix("PACKAGE BODY "))
        .or_else(|| object.strip_prefix("PACKAGE "))
        .unwrap_or(object);
    let quoted = object.strip_prefix('`')?;
    let mut db = String::new();
    let mut chars = quoted.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '`' {
            if chars.peek() == Some(&'`') {
                chars.next();
                db.push('`');
                continue;
            }
            return Some(db);
        }
        db.push(c);
    }
    None
}

/// Whether `name` matches the LIKE pattern `pattern` (`%`, `_`, `\` escapes; case-insensitive
/// as database names on a case-insensitive file system may be: a wider match is the safe side).
pub(super) fn like(name: &str, pattern: &str) -> bool {
    let n: Vec<char> = name.to_lowercase().chars().collect();
    let p: Vec<char> = pattern.to_lowercase().chars().collect();
    fn go(n: &[char], p: &[char]) -> bool {
        match p.split_first() {
            None => n.is_empty(),
            Some(('%', rest)) => (0..=n.len()).any(|i| go(&n[i..], rest)),
            Some(('_', rest)) => !n.is_empty() && go(&n[1..], rest),
            Some(('\\', rest)) if !rest.is_empty() => {
                n.first() == Some(&rest[0]) && go(&n[1..], &rest[1..])
            }
            Some((c, rest)) => n.first() == Some(c) && go(&n[1..], rest),
        }
    }
    go(&n, &p)
}

/// Whether a database matching the grant pattern `pattern` (LIKE syntax) exists.
pub(super) fn database_exists(conn: &mut Conn, pattern: &str) -> Result<bool, ExecError> {
    let literal = pattern.replace('\\', "\\\\").replace('\'', "''");
    let r = conn
        .query(&format!("SHOW DATABASES LIKE '{literal}'"))
        .map_err(|e| ExecError::Replay(format!("listing the databases: {e}")))?;
    Ok(!r.rows.is_empty())
}

/// A grant line without its password hash, at most 200 characters.
pub(super) fn short(line: &str) -> String {
    let line = match line.find(" IDENTIFIED ") {
        Some(i) => &line[..i],
        None => line,
    };
    line.chars().take(200).collect()
}
