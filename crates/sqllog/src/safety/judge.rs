//! One statement's tokens to a verdict, and what it changes in how later text is read.

mod set;

use super::lex::{Mode, Tok};
use super::{v, Effect, Verdict};
use set::{read_write, set, READ_WRITE};
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

pub(super) fn judged(verdict: Verdict) -> Judged {
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
pub(super) fn text(w: &[u8]) -> &str {
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
