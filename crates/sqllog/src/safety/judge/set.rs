//! SET: what an assignment does to the server and to how the session reads later text
//! (`sql_mode`, the client character set), and what would undo `--read-only`'s read-only
//! transaction.

use super::super::lex::{string_value, Charset, Mode, Tok};
use super::super::{v, Effect, Verdict};
use super::{judged, statement, text, Change, Judged, ModeValue, Stmt};
use Effect::*;

/// Variables whose session value changes what reaches replicas or the binary log.
const REPLICATION_VARS: [&str; 7] = [
    "sql_log_bin",
    "gtid_next",
    "gtid_seq_no",
    "gtid_domain_id",
    "server_id",
    "skip_replication",
    "pseudo_slave_mode",
];

/// The server's limits on a statement's time (MariaDB's, MySQL's), which replay and diff set on
/// every session.
const TIME_LIMIT_VARS: [&str; 2] = ["max_statement_time", "max_execution_time"];

/// The verdict on what makes the session's transactions writable again: under `--read-only`
/// it would undo the read-only transaction the replay runs in.
pub(super) const READ_WRITE: Verdict = v(
    Write,
    "READ WRITE undoes the session's read-only transaction",
);

/// The variables that make transactions read-only: setting them to anything but 1 (ON, TRUE)
/// is [`READ_WRITE`].
const READ_ONLY_VARS: [&str; 2] = ["tx_read_only", "transaction_read_only"];

/// Whether the words `READ WRITE` follow each other in `t`.
pub(super) fn read_write(t: &[Tok<'_>]) -> bool {
    let s = Stmt { t };
    (0..t.len()).any(|i| s.is(i, "read") && s.is(i + 1, "write"))
}

/// SET: session unless it names a global or persisted scope, a password, roles, a resource
/// group or a replication variable; `SET STATEMENT ... FOR stmt` is also its statement.
pub(super) fn set(s: &Stmt<'_, '_>, depth: u32, system_db: bool) -> Judged {
    if s.is(1, "password") {
        return judged(v(Admin, "SET PASSWORD changes an account's password"));
    }
    if s.is(1, "default") && s.is(2, "role") {
        return judged(v(Admin, "SET DEFAULT ROLE manages accounts"));
    }
    if s.is(1, "resource") {
        return judged(v(Admin, "SET RESOURCE GROUP changes server threads"));
    }
    // SET STATEMENT var=value[, ...] FOR stmt: the assignments, then the statement.
    let for_stmt = s.is(1, "statement");
    let inner = for_stmt
        .then(|| (2..s.t.len()).find(|&i| s.is(i, "for")))
        .flatten();
    let list_start = if for_stmt { 2 } else { 1 };
    let assignments = &s.t[list_start.min(s.t.len())..inner.unwrap_or(s.t.len())];
    let mut out = Judged {
        verdict: match inner {
            Some(i) if depth < 4 => statement(&s.t[i + 1..], depth + 1, system_db).verdict,
            Some(_) => v(Write, "an unknown statement may write"),
            None => v(Session, "changes only this session"),
        },
        change: Change::default(),
    };
    // `SET [scope] TRANSACTION ... READ WRITE` (its characteristics are comma-separated).
    if (0..assignments.len()).any(|i| Stmt { t: assignments }.is(i, "transaction"))
        && read_write(assignments)
    {
        out.verdict = out.verdict.or_worse(READ_WRITE);
    }
    let mut only_reading = true;
    for a in split_top_level(assignments) {
        let a = Stmt { t: a };
        let set = assignment(&a);
        match set.mode {
            Some(m) if for_stmt => out.change.statement_mode = Some(m),
            Some(m) => out.change.mode = Some(m),
            None => {}
        }
        match set.charset {
            Some(c) if for_stmt => out.change.statement_charset = Some(c),
            Some(c) => out.change.charset = Some(c),
            None => {}
        }
        only_reading &= (set.mode.is_some() || set.charset.is_some()) && !set.may_fail;
        if let Some(f) = set.verdict {
            out.verdict = out.verdict.or_worse(f);
        }
    }
    out.change.pure =
        only_reading && !for_stmt && (out.change.mode.is_some() || out.change.charset.is_some());
    out
}

/// `a, b, c` split at the commas outside parentheses.
fn split_top_level<'a, 'b>(t: &'b [Tok<'a>]) -> impl Iterator<Item = &'b [Tok<'a>]> {
    let mut depth = 0i64;
    t.split(move |x| {
        match x {
            Tok::Punct(b'(') => depth += 1,
            Tok::Punct(b')') => depth -= 1,
            _ => {}
        }
        depth == 0 && *x == Tok::Punct(b',')
    })
}

/// What one assignment of a SET does.
#[derive(Debug, Default)]
struct Assigned {
    /// Its verdict when it is more than a session change.
    verdict: Option<Verdict>,
    /// The value it gives `sql_mode`.
    mode: Option<ModeValue>,
    /// The client character sets it may leave (a set of [`Charset::index`] bits).
    charset: Option<u8>,
    /// It may fail and change nothing (`SET NAMES cs COLLATE c` of another character set).
    may_fail: bool,
}

/// One `[scope] name = value` of a SET (or `NAMES cs`, `CHARACTER SET cs`).
fn assignment(a: &Stmt<'_, '_>) -> Assigned {
    let verdict = |v: Verdict| Assigned {
        verdict: Some(v),
        ..Assigned::default()
    };
    let system = a.punct(0, b'@') && a.punct(1, b'@');
    if a.punct(0, b'@') && !system {
        return Assigned::default(); // a user variable
    }
    let mut k = if system { 2 } else { 0 };
    let scope = a.name(k).map(str::to_ascii_lowercase);
    match scope.as_deref() {
        Some("global" | "persist" | "persist_only") => {
            return verdict(v(Admin, "SET GLOBAL/PERSIST changes server settings"))
        }
        Some("session" | "local") if !system || a.punct(k + 1, b'.') => {
            k += 1 + usize::from(system);
        }
        _ => {}
    }
    let Some(name) = a.name(k).map(str::to_ascii_lowercase) else {
        return Assigned::default();
    };
    if !system {
        // SET NAMES cs [COLLATE c], SET CHARACTER SET cs, SET CHARSET cs.
        let at = match name.as_str() {
            "names" | "charset" => Some(k + 1),
            "character" if a.is(k + 1, "set") => Some(k + 2),
            _ => None,
        };
        if let Some(at) = at {
            let value = &a.t[at.min(a.t.len())..];
            return Assigned {
                charset: Some(charset_value(value, true)),
                may_fail: value.iter().any(is_collate),
                ..Assigned::default()
            };
        }
    }
    if READ_ONLY_VARS.contains(&name.as_str()) {
        let on = matches!(&a.t[(k + 1).min(a.t.len())..], [Tok::Punct(b'='), Tok::Word(w)]
            if ["1", "on", "true"].iter().any(|x| w.eq_ignore_ascii_case(x.as_bytes())));
        return if on {
            Assigned::default()
        } else {
            verdict(READ_WRITE)
        };
    }
    if REPLICATION_VARS.contains(&name.as_str()) {
        return verdict(v(Admin, "changes what reaches the binary log and replicas"));
    }
    if TIME_LIMIT_VARS.contains(&name.as_str()) {
        // A positive number keeps a limit; 0, DEFAULT (the global, often 0) or an expression
        // may lift the one replay and diff put on every statement, which ends what a killed
        // qpslab left running.
        let number = match &a.t[(k + 1).min(a.t.len())..] {
            [Tok::Punct(b'='), rest @ ..] if !rest.is_empty() => rest
                .iter()
                .map(|t| match t {
                    Tok::Word(w) => Some(text(w)),
                    Tok::Punct(b'.') => Some("."),
                    _ => None,
                })
                .collect::<Option<String>>(),
            _ => None,
        };
        let limited = number.is_some_and(|n| n.parse::<f64>().is_ok_and(|n| n > 0.0));
        return if limited {
            Assigned::default()
        } else {
            verdict(v(Admin, "lifts the server's limit on a statement's time"))
        };
    }
    if name != "sql_mode" && name != "character_set_client" {
        return Assigned::default();
    }
    let value = match (
        a.punct(k + 1, b'='),
        a.punct(k + 1, b':'),
        a.punct(k + 2, b'='),
    ) {
        (true, _, _) => Some(k + 2),
        (false, true, true) => Some(k + 3),
        _ => None,
    };
    let rest = value.map(|at| &a.t[at.min(a.t.len())..]);
    if name == "sql_mode" {
        Assigned {
            mode: Some(rest.map_or(ModeValue::Unknown, mode_value)),
            ..Assigned::default()
        }
    } else {
        Assigned {
            charset: Some(rest.map_or(Charset::ANY, |t| charset_value(t, false))),
            ..Assigned::default()
        }
    }
}

/// The readings a character set value may give (`gbk`, `'big5'`, `cp932 COLLATE cp932_bin`
/// after NAMES): one when the name is known, every one for DEFAULT, a number, an expression or
/// a name this classifier does not know.
fn charset_value(t: &[Tok<'_>], names: bool) -> u8 {
    let value = match t {
        [first, rest @ ..] if names && rest.first().is_none_or(|r| is_collate(r)) => first,
        [only] => only,
        _ => return Charset::ANY,
    };
    let name = match value {
        Tok::Word(w) | Tok::Ident(w) => Some(text(w).to_string()),
        Tok::Str(raw) => {
            // Read under both quote flags: only a value both readings agree on is known.
            let plain = string_value(raw, Mode::DEFAULT);
            let nbe = string_value(raw, Mode::DEFAULT.with_flags(1));
            plain.filter(|p| Some(p) == nbe.as_ref())
        }
        Tok::Punct(_) => None,
    };
    name.and_then(|n| Charset::of_name(&n))
        .map_or(Charset::ANY, |c| 1 << c.index())
}

fn is_collate(t: &Tok<'_>) -> bool {
    matches!(t, Tok::Word(w) if w.eq_ignore_ascii_case(b"collate"))
}

/// The `sql_mode` flags a value sets (a string, a bare name, DEFAULT).
fn mode_value(t: &[Tok<'_>]) -> ModeValue {
    match t {
        [Tok::Word(w)] if w.eq_ignore_ascii_case(b"default") => ModeValue::Default,
        [Tok::Word(w) | Tok::Ident(w)] if !w.iter().all(|b| b.is_ascii_digit()) => {
            super::super::mode_of(text(w)).map_or(ModeValue::Unknown, ModeValue::Known)
        }
        // Read under both quote flags: only a value both readings agree on is known.
        [Tok::Str(raw)] => {
            let plain = string_value(raw, Mode::DEFAULT);
            let nbe = string_value(raw, Mode::DEFAULT.with_flags(1));
            match (plain, nbe) {
                (Some(a), Some(b)) if a == b => {
                    super::super::mode_of(&a).map_or(ModeValue::Unknown, ModeValue::Known)
                }
                _ => ModeValue::Unknown,
            }
        }
        _ => ModeValue::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::{classify, Effect::*};

    #[test]
    fn lifting_the_statement_time_limit_is_server_level() {
        for (sql, want) in [
            ("SET max_statement_time = 0", Admin),
            ("SET SESSION max_statement_time = DEFAULT", Admin),
            ("SET @@max_execution_time = @x", Admin),
            (
                "SET STATEMENT max_statement_time=0 FOR SELECT SLEEP(600)",
                Admin,
            ),
            ("SET max_statement_time = 2.5", Session),
            ("SET STATEMENT max_statement_time=5 FOR SELECT 1", Read),
            ("SET @@session.max_execution_time = 1000", Session),
        ] {
            assert_eq!(classify(sql).effect, want, "{sql}");
        }
    }
}
