//! One statement's tokens to a verdict, and what it changes in how later text is read.

use super::lex::{string_value, Charset, Mode, Tok};
use super::{v, Effect, Verdict};
use Effect::*;

/// A value given to `sql_mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ModeValue {
    /// A value whose two flags are known.
    Known(Mode),
    /// `DEFAULT`: the server's global value.
    Default,
    /// An expression, a number, a name this classifier does not know.
    Unknown,
}

/// What a statement changes in the session, as far as reading later text goes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Change {
    /// `SET [SESSION] sql_mode = ...`.
    pub mode: Option<ModeValue>,
    /// `SET STATEMENT sql_mode = ... FOR`: the statement may be read under this mode too.
    pub statement_mode: Option<ModeValue>,
    /// `SET NAMES`, `SET CHARACTER SET`, `SET character_set_client`: the client character sets
    /// the session may read text in afterwards (a set of [`Charset::index`] bits).
    pub charset: Option<u8>,
    /// `SET STATEMENT character_set_client = ... FOR`: the statement may be read in these too.
    pub statement_charset: Option<u8>,
    /// `USE db`: whether db is a system schema.
    pub system_db: Option<bool>,
    /// The statement does nothing else (a SET of `sql_mode` or the character set alone, a
    /// `USE`): when it is the whole text and its value is known, the session's state after it
    /// is known.
    pub pure: bool,
}

/// A statement's verdict and session change.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Judged {
    pub verdict: Verdict,
    pub change: Change,
}

fn judged(verdict: Verdict) -> Judged {
    Judged {
        verdict,
        change: Change::default(),
    }
}

/// Schemas whose rows are the server's configuration: accounts, privileges, instrumentation.
const SYSTEM_SCHEMAS: [&str; 3] = ["mysql", "performance_schema", "sys"];

/// The tokens of one statement, read by keyword.
pub(crate) struct Stmt<'a, 'b> {
    pub t: &'b [Tok<'a>],
}

/// A word's text: keywords and the names compared here are ASCII, so a word that is not UTF-8
/// (bytes of another character set) is a name that matches none of them.
fn text(w: &[u8]) -> &str {
    std::str::from_utf8(w).unwrap_or("\u{fffd}")
}

impl<'a> Stmt<'a, '_> {
    fn word(&self, i: usize) -> Option<&'a str> {
        match self.t.get(i) {
            Some(Tok::Word(w)) => Some(text(w)),
            _ => None,
        }
    }

    /// A name, quoted or not.
    fn name(&self, i: usize) -> Option<&'a str> {
        match self.t.get(i) {
            Some(Tok::Word(w) | Tok::Ident(w)) => Some(text(w)),
            _ => None,
        }
    }

    fn is(&self, i: usize, kw: &str) -> bool {
        self.word(i).is_some_and(|w| w.eq_ignore_ascii_case(kw))
    }

    fn is_any(&self, i: usize, kws: &[&str]) -> bool {
        kws.iter().any(|k| self.is(i, k))
    }

    fn punct(&self, i: usize, c: u8) -> bool {
        self.t.get(i) == Some(&Tok::Punct(c))
    }

    /// Whether keyword `kw` appears anywhere.
    fn has(&self, kw: &str) -> bool {
        (0..self.t.len()).any(|i| self.is(i, kw))
    }

    /// Whether a system schema is named as a qualifier (`mysql.user`, `` `mysql`.x ``).
    fn names_system_schema(&self) -> bool {
        (0..self.t.len()).any(|i| {
            self.punct(i + 1, b'.')
                && self
                    .name(i)
                    .is_some_and(|n| SYSTEM_SCHEMAS.iter().any(|s| n.eq_ignore_ascii_case(s)))
        })
    }
}

/// One statement's verdict (no `;` inside); `system_db` says whether the current database may be
/// a system schema.
pub(crate) fn statement(t: &[Tok<'_>], depth: u32, system_db: bool) -> Judged {
    let lead = t.iter().take_while(|x| **x == Tok::Punct(b'(')).count();
    let s = Stmt { t: &t[lead..] };
    let mut j = by_keyword(&s, depth, system_db);
    j.verdict = j.verdict.or_worse(calls(&s));
    if j.verdict.effect >= Write && (system_db || s.names_system_schema()) {
        j.verdict = j.verdict.or_worse(v(
            Admin,
            "changes a system schema (accounts, privileges, server settings)",
        ));
    }
    j
}

fn by_keyword(s: &Stmt<'_, '_>, depth: u32, system_db: bool) -> Judged {
    if s.name(0).is_some() && s.punct(1, b':') {
        return judged(v(Admin, "a labelled compound statement cannot be checked"));
    }
    let Some(first) = s.word(0).map(str::to_ascii_lowercase) else {
        return judged(v(Write, "an unknown statement may write"));
    };
    let dynamic = v(Admin, "dynamic SQL runs text the log does not show");
    judged(match first.as_str() {
        "select" | "values" | "table" | "with" | "do" => rows_changed(s),
        "show" | "help" | "check" | "checksum" => v(Read, "reads"),
        "handler" => v(Read, "HANDLER reads"),
        "describe" | "desc" | "explain" if s.is(1, "analyze") => {
            return after(s, 2, depth, system_db)
        }
        "describe" | "desc" | "explain" => v(Read, "EXPLAIN does not run the statement"),
        "analyze" if s.is_any(1, &["table", "tables", "local", "no_write_to_binlog"]) => {
            v(Ddl, "ANALYZE TABLE rewrites statistics")
        }
        // MariaDB's ANALYZE [FORMAT=JSON] stmt runs stmt.
        "analyze" => return after(s, 1, depth, system_db),
        // BEGIN [WORK] starts a transaction; anything else after BEGIN is a block (BEGIN NOT
        // ATOMIC, sql_mode=ORACLE's anonymous blocks).
        "begin" if s.t.len() == 1 || (s.t.len() == 2 && s.is(1, "work")) => {
            v(Session, "changes only this session")
        }
        "begin" => v(Admin, "a compound statement cannot be checked"),
        "xa" => xa(s),
        "use" => {
            let sys = s
                .name(1)
                .is_some_and(|n| SYSTEM_SCHEMAS.iter().any(|k| n.eq_ignore_ascii_case(k)));
            return Judged {
                verdict: v(Session, "changes only this session"),
                change: Change {
                    system_db: Some(sys),
                    pure: s.t.len() == 2,
                    ..Change::default()
                },
            };
        }
        "commit" | "rollback" | "savepoint" | "release" | "deallocate" | "get" | "signal"
        | "resignal" | "unlock" => v(Session, "changes only this session"),
        "start" if s.is(1, "transaction") && read_write(&s.t[2..]) => READ_WRITE,
        "start" if s.is(1, "transaction") => v(Session, "changes only this session"),
        "start" | "stop" => v(Admin, "START/STOP controls replication"),
        "set" => return set(s, depth, system_db),
        "prepare" | "execute" => dynamic,
        "insert" | "update" | "delete" | "replace" => v(Write, "changes rows"),
        "call" => v(Write, "CALL runs a stored procedure that may write"),
        "lock" if s.is_any(1, &["table", "tables"]) => v(Ddl, "LOCK TABLES blocks other sessions"),
        "lock" | "backup" => v(Admin, "a backup lock blocks the server"),
        "load" => v(
            Admin,
            "LOAD reads files on the server's host or fills a key cache",
        ),
        "create" | "alter" | "drop" => ddl(s, &first),
        "rename" if s.is(1, "user") => v(Admin, "RENAME USER manages accounts"),
        "rename" => v(Ddl, "RENAME TABLE changes the schema"),
        "truncate" => v(Destructive, "TRUNCATE empties a table"),
        "optimize" | "repair" => v(
            Destructive,
            "OPTIMIZE/REPAIR rewrite a table (REPAIR may drop rows it cannot read)",
        ),
        "import" => v(Ddl, "IMPORT TABLE changes the schema"),
        "grant" | "revoke" => v(Admin, "GRANT/REVOKE change privileges"),
        "install" | "uninstall" => v(Admin, "INSTALL/UNINSTALL load or unload server code"),
        "flush" => v(Admin, "FLUSH acts on the whole server"),
        "reset" => v(
            Admin,
            "RESET clears server state (logs, caches, replication)",
        ),
        "change" => v(Admin, "CHANGE MASTER/REPLICATION changes replication"),
        "purge" => v(Admin, "PURGE deletes binary logs"),
        "kill" => v(Admin, "KILL ends sessions"),
        "shutdown" | "restart" => v(Admin, "SHUTDOWN/RESTART stops the server"),
        "binlog" => v(Admin, "BINLOG applies binary log events"),
        "cache" => v(Admin, "CACHE INDEX changes a key cache"),
        "clone" => v(Admin, "CLONE replaces the server's data"),
        "if" | "while" | "loop" | "repeat" | "case" | "declare" | "for" => {
            v(Admin, "a compound statement cannot be checked")
        }
        _ => v(Write, "an unknown statement may write"),
    })
}

/// XA: START/END are the session's own; PREPARE leaves a transaction that outlives the session
/// and COMMIT/ROLLBACK may finish one another session prepared, so they count as writes (never
/// under `--read-only`); RECOVER lists.
fn xa(s: &Stmt<'_, '_>) -> Verdict {
    if s.is(1, "recover") {
        v(Read, "XA RECOVER lists prepared transactions")
    } else if s.is_any(1, &["start", "begin", "end"]) {
        v(Session, "changes only this session")
    } else if s.is(1, "prepare") {
        v(
            Write,
            "XA PREPARE leaves a transaction that outlives the session",
        )
    } else {
        v(
            Write,
            "XA COMMIT/ROLLBACK may finish a transaction another session prepared",
        )
    }
}

/// The statement that starts at token `i`, after a `FORMAT=...` (what EXPLAIN ANALYZE or
/// ANALYZE runs).
fn after(s: &Stmt<'_, '_>, i: usize, depth: u32, system_db: bool) -> Judged {
    let i = if s.is(i, "format") { i + 3 } else { i };
    match s.t.get(i..) {
        Some(rest) if !rest.is_empty() && depth < 4 => {
            let mut j = statement(rest, depth + 1, system_db);
            j.change = Change::default();
            j
        }
        Some(rest) if !rest.is_empty() => judged(v(Write, "an unknown statement may write")),
        _ => judged(v(Ddl, "ANALYZE TABLE rewrites statistics")),
    }
}

/// SELECT, VALUES, TABLE, WITH, DO: whether they hold a statement that changes rows (`WITH ...
/// UPDATE`).
fn rows_changed(s: &Stmt<'_, '_>) -> Verdict {
    let dml = (0..s.t.len()).any(|i| {
        s.is_any(i, &["insert", "update", "delete", "replace"])
            && !(s.is(i, "update") && i > 0 && s.is(i - 1, "for"))
    });
    if dml {
        v(Write, "changes rows")
    } else {
        v(Read, "reads")
    }
}

/// What any statement's expressions may do: write a file on the server's host, advance a
/// sequence, call a stored function by its schema, run a command-running UDF, read a file.
fn calls(s: &Stmt<'_, '_>) -> Verdict {
    let mut worst = v(Read, "reads");
    for i in 0..s.t.len() {
        let found = if s.is(i, "into") && s.is_any(i + 1, &["outfile", "dumpfile"]) {
            v(
                Admin,
                "INTO OUTFILE/DUMPFILE writes a file on the server's host",
            )
        } else if (s.is_any(i, &["nextval", "setval", "lastval"]) && s.punct(i + 1, b'('))
            || (s.is(i, "next") && s.is(i + 1, "value") && s.is(i + 2, "for"))
        {
            v(Write, "advances a sequence")
        } else if s.is_any(i, &["sys_exec", "sys_eval"]) {
            v(Admin, "calls a UDF that runs commands on the server's host")
        } else if s.is(i, "load_file") {
            v(Admin, "LOAD_FILE reads a file on the server's host")
        } else if s.name(i).is_some()
            && s.punct(i + 1, b'.')
            && s.name(i + 2).is_some()
            && s.punct(i + 3, b'(')
        {
            v(Write, "calls a stored function that may write")
        } else {
            continue;
        };
        worst = worst.or_worse(found);
    }
    worst
}

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

/// The verdict on what makes the session's transactions writable again: under `--read-only`
/// it would undo the read-only transaction the replay runs in.
const READ_WRITE: Verdict = v(
    Write,
    "READ WRITE undoes the session's read-only transaction",
);

/// The variables that make transactions read-only: setting them to anything but 1 (ON, TRUE)
/// is [`READ_WRITE`].
const READ_ONLY_VARS: [&str; 2] = ["tx_read_only", "transaction_read_only"];

/// Whether the words `READ WRITE` follow each other in `t`.
fn read_write(t: &[Tok<'_>]) -> bool {
    let s = Stmt { t };
    (0..t.len()).any(|i| s.is(i, "read") && s.is(i + 1, "write"))
}

/// SET: session unless it names a global or persisted scope, a password, roles, a resource
/// group or a replication variable; `SET STATEMENT ... FOR stmt` is also its statement.
fn set(s: &Stmt<'_, '_>, depth: u32, system_db: bool) -> Judged {
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
            super::mode_of(text(w)).map_or(ModeValue::Unknown, ModeValue::Known)
        }
        // Read under both quote flags: only a value both readings agree on is known.
        [Tok::Str(raw)] => {
            let plain = string_value(raw, Mode::DEFAULT);
            let nbe = string_value(raw, Mode::DEFAULT.with_flags(1));
            match (plain, nbe) {
                (Some(a), Some(b)) if a == b => {
                    super::mode_of(&a).map_or(ModeValue::Unknown, ModeValue::Known)
                }
                _ => ModeValue::Unknown,
            }
        }
        _ => ModeValue::Unknown,
    }
}

/// The kinds of object CREATE, ALTER and DROP name (the first of these words after the verb).
const OBJECTS: [&str; 21] = [
    "database",
    "schema",
    "table",
    "view",
    "index",
    "procedure",
    "function",
    "trigger",
    "event",
    "sequence",
    "user",
    "role",
    "server",
    "tablespace",
    "logfile",
    "package",
    "instance",
    "resource",
    "undo",
    "prepare",
    "spatial",
];

/// CREATE, ALTER, DROP by the kind of object they name.
fn ddl(s: &Stmt<'_, '_>, verb: &str) -> Verdict {
    let mut i = 1;
    let mut temporary = false;
    let object = loop {
        match s.t.get(i) {
            None => break None,
            Some(Tok::Word(w)) if w.eq_ignore_ascii_case(b"definer") && s.punct(i + 1, b'=') => {
                // DEFINER = user@host (or CURRENT_USER[()]): the user is no object keyword.
                i += 3;
                if s.punct(i, b'(') && s.punct(i + 1, b')') {
                    i += 2;
                }
                if s.punct(i, b'@') {
                    i += 2;
                }
                continue;
            }
            Some(Tok::Word(w)) if w.eq_ignore_ascii_case(b"temporary") => temporary = true,
            Some(Tok::Word(w)) if w.eq_ignore_ascii_case(b"tables") => break Some("table"),
            Some(Tok::Word(w)) => {
                if let Some(o) = OBJECTS
                    .iter()
                    .find(|o| w.eq_ignore_ascii_case(o.as_bytes()))
                {
                    break Some(*o);
                }
            }
            _ => {}
        }
        i += 1;
        if i > 16 {
            break None;
        }
    };
    let drop = verb == "drop";
    let alter = verb == "alter";
    let replace = verb == "create" && s.is(1, "or") && s.is(2, "replace");
    match object {
        Some("user" | "role") => v(Admin, "manages accounts"),
        Some("server") => v(
            Admin,
            "CREATE/ALTER/DROP SERVER changes federated connections",
        ),
        Some("instance" | "resource") => v(Admin, "changes the server instance"),
        Some("function") if s.has("soname") => v(Admin, "loads a shared library (UDF)"),
        Some("event") if !drop => v(Admin, "an event schedules statements to run later"),
        Some("procedure" | "function" | "trigger" | "package") if !drop => v(
            Admin,
            "defines stored code whose statements cannot be checked",
        ),
        Some("prepare") if drop => v(Session, "changes only this session"),
        Some("database" | "schema") if drop => v(Destructive, "DROP DATABASE drops its tables"),
        // Stored code and views hold no rows, but their definitions are as lost as a table's
        // rows: nothing in the log can recreate them.
        Some("procedure" | "function" | "trigger" | "package" | "event" | "view") if drop => v(
            Destructive,
            "DROP of stored code or a view loses its definition",
        ),
        Some("tablespace" | "logfile") if drop => {
            v(Destructive, "DROP TABLESPACE drops the tables' space")
        }
        Some("table" | "sequence") if drop && !temporary => {
            v(Destructive, "DROP TABLE drops a table's rows")
        }
        Some("table") if alter && s.has("discard") => v(
            Destructive,
            "DISCARD TABLESPACE deletes the table's data file",
        ),
        Some("table") if alter && s.has("import") => v(
            Destructive,
            "IMPORT TABLESPACE replaces the table's data with a file on the server's host",
        ),
        Some(_) if alter => v(
            Destructive,
            "ALTER rewrites an object and may drop its data",
        ),
        Some(_) if replace && !temporary => v(
            Destructive,
            "CREATE OR REPLACE drops the object it replaces",
        ),
        Some(_) => v(Ddl, "changes the schema"),
        None => v(Write, "an unknown statement may write"),
    }
}
