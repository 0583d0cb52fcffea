//! What running a logged statement could do, and whether a replay may run it.
//!
//! [`classify`] reads SQL text (a logged statement, a fingerprint, several statements joined by
//! `;`) and gives a [`Verdict`]: the most harmful [`Effect`] of its statements and why. A
//! [`Policy`] (`--read-only`, `--allow-admin`, `--allow-destructive`) then says whether it runs.
//! Replay, diff and the digest's read/write column all take their answer from here.
//!
//! The text is lexed as the server would: comments (`/* */`, `-- `, `#`) and optimizer hints
//! (`/*+ */`) are dropped, the content of executable comments (`/*! */`, `/*!50001 */`,
//! MariaDB's `/*M! */`) is read as SQL (the server may run it), literals and quoted names never
//! count as keywords, leading parentheses are skipped, and every statement of a multi-statement
//! text is judged. `PREPARE s FROM '...'` and `EXECUTE IMMEDIATE '...'` are judged by the text
//! they prepare; dynamic SQL (from a variable or an expression) cannot be checked and counts as
//! server-level.
//!
//! Decisions a replay against a copy of production needs:
//! - locking reads (`SELECT ... FOR UPDATE`, `LOCK IN SHARE MODE`) change nothing: reads;
//! - `SELECT ... INTO @var` sets a session variable: a read; `INTO OUTFILE`/`DUMPFILE` writes a
//!   file on the server's host: server-level;
//! - a schema-qualified call (`db.f(...)`) is a stored function that may write: a write. An
//!   unqualified call cannot be told from a built-in one and is taken as a read (a stored
//!   function that writes then runs under `--read-only`); `NEXTVAL`/`SETVAL`/`NEXT VALUE FOR`
//!   advance a sequence: writes; the well-known command-running UDFs (`sys_exec`, `sys_eval`)
//!   are server-level;
//! - `CALL`, and anything not recognised, may write: writes;
//! - creating stored code (procedures, functions, triggers, events) and compound statements
//!   (`BEGIN NOT ATOMIC`, `IF`, `WHILE`...) hold statements that run later or cannot be checked
//!   one by one: server-level, as are UDFs loaded by `SONAME`;
//! - `DROP`/`TRUNCATE` of a database, schema or table (not a temporary one) are destructive.

/// What a statement may do, from the least to the most harmful.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Effect {
    /// Reads data: SELECT, SHOW, EXPLAIN, DESCRIBE, HANDLER, DO, CHECK.
    Read,
    /// Changes only this session: SET (session), USE, BEGIN/COMMIT/ROLLBACK, UNLOCK...
    Session,
    /// Changes rows inside a transaction: INSERT, UPDATE, DELETE, CALL, unknown statements.
    Write,
    /// Changes the schema or commits on its own: CREATE/ALTER, RENAME TABLE, LOCK TABLES...
    Ddl,
    /// Drops or empties a database or table: DROP DATABASE/SCHEMA/TABLE, TRUNCATE.
    Destructive,
    /// Acts on the server itself: SHUTDOWN, KILL, SET GLOBAL, accounts, privileges, plugins,
    /// FLUSH, RESET, replication, PURGE, files on the server's host, stored code.
    Admin,
}

/// A statement's safety verdict: its most harmful effect and a few words on why. (A diff
/// class's regression/improvement is `qpslab_report::diff::Change`.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict {
    /// The effect.
    pub effect: Effect,
    /// Why, in a few words (`SHUTDOWN stops the server`).
    pub why: &'static str,
}

const fn v(effect: Effect, why: &'static str) -> Verdict {
    Verdict { effect, why }
}

impl Verdict {
    /// The more harmful of `self` and `o` (`self` on a tie).
    fn or_worse(self, o: Verdict) -> Verdict {
        if o.effect > self.effect {
            o
        } else {
            self
        }
    }
}

/// Which statements a replay runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Policy {
    /// Run only reads and session statements.
    pub read_only: bool,
    /// Run server-level statements (never with `read_only`).
    pub allow_admin: bool,
    /// Run destructive DDL (never with `read_only`).
    pub allow_destructive: bool,
}

impl Policy {
    /// None when the policy runs a statement of verdict `v`; else why not, with the flag that
    /// would run it.
    pub fn refusal(&self, v: &Verdict) -> Option<String> {
        let read_only = || format!("{}: not run by --read-only", v.why);
        match v.effect {
            Effect::Read | Effect::Session => None,
            Effect::Admin if !self.allow_admin => {
                Some(format!("server-level, {}: --allow-admin runs it", v.why))
            }
            Effect::Destructive if !self.allow_destructive => Some(format!(
                "destructive, {}: --allow-destructive runs it",
                v.why
            )),
            _ => self.read_only.then(read_only),
        }
    }
}

/// The verdict on `sql`: its most harmful statement's (see the module documentation).
///
/// ```
/// use qpslab_sqllog::{classify, Effect};
/// assert_eq!(classify("/* app */ SELECT c FROM t WHERE id = 1 FOR UPDATE").effect, Effect::Read);
/// assert_eq!(classify("select 1; SHUTDOWN").effect, Effect::Admin);
/// ```
pub fn classify(sql: &str) -> Verdict {
    classify_at(sql, 0)
}

/// [`classify`] of text found inside a statement (`PREPARE ... FROM '...'`), `depth` levels down.
fn classify_at(sql: &str, depth: u32) -> Verdict {
    let toks = lex(sql);
    let mut worst: Option<Verdict> = None;
    for piece in toks.split(|t| *t == Tok::Punct(b';')) {
        if piece.is_empty() {
            continue;
        }
        let got = statement(piece, depth);
        worst = Some(worst.map_or(got, |w| w.or_worse(got)));
    }
    worst.unwrap_or(v(Effect::Session, "no statement"))
}

/// A token of SQL text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok<'a> {
    /// A keyword or an unquoted name (or a number).
    Word(&'a str),
    /// A backquoted name: never a keyword.
    Quoted,
    /// A quoted string's content (escapes left as they are).
    Str(&'a str),
    /// `@name`, `@@name`, `@@global.name`.
    Var(&'a str),
    /// Any other character.
    Punct(u8),
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80
}

/// The tokens of `sql`, comments dropped and executable comments opened.
fn lex(sql: &str) -> Vec<Tok<'_>> {
    let s = sql.as_bytes();
    let at = |i: usize| s.get(i).copied().unwrap_or(0);
    let mut toks = Vec::new();
    let mut i = 0;
    let mut open_exec = 0u32;
    while i < s.len() {
        let c = s[i];
        match c {
            _ if c.is_ascii_whitespace() => i += 1,
            b'#' => i = line_end(s, i),
            b'-' if at(i + 1) == b'-' && matches!(at(i + 2), 0..=b' ') => i = line_end(s, i),
            b'/' if at(i + 1) == b'*'
                && (at(i + 2) == b'!'
                    || matches!(s.get(i + 2..i + 4), Some([b'M' | b'm', b'!']))) =>
            {
                i += if at(i + 2) == b'!' { 3 } else { 4 };
                // The version (`?` in a fingerprint).
                while at(i).is_ascii_digit() || at(i) == b'?' {
                    i += 1;
                }
                open_exec += 1;
            }
            b'/' if at(i + 1) == b'*' => {
                i = memchr::memmem::find(&s[i + 2..], b"*/").map_or(s.len(), |n| i + 2 + n + 2)
            }
            b'*' if at(i + 1) == b'/' && open_exec > 0 => {
                open_exec -= 1;
                i += 2;
            }
            b'\'' | b'"' => {
                let (end, closed) = quoted_end(s, i, c);
                toks.push(Tok::Str(&sql[i + 1..end - usize::from(closed)]));
                i = end;
            }
            b'`' => {
                i = quoted_end(s, i, b'`').0;
                toks.push(Tok::Quoted);
            }
            b'@' if is_ident(at(i + 1)) || at(i + 1) == b'@' => {
                let start = i;
                i += 1 + usize::from(at(i + 1) == b'@');
                while is_ident(at(i)) || (at(i) == b'.' && is_ident(at(i + 1))) {
                    i += 1;
                }
                toks.push(Tok::Var(&sql[start..i]));
            }
            _ if is_ident(c) => {
                let start = i;
                while is_ident(at(i)) {
                    i += 1;
                }
                toks.push(Tok::Word(&sql[start..i]));
            }
            _ => {
                toks.push(Tok::Punct(c));
                i += 1;
            }
        }
    }
    toks
}

fn line_end(s: &[u8], i: usize) -> usize {
    memchr::memchr(b'\n', &s[i..]).map_or(s.len(), |n| i + n)
}

/// The index after the quoted run opened by `q` at `i` (`\` escapes, doubled quotes), and
/// whether its closing quote was found.
fn quoted_end(s: &[u8], i: usize, q: u8) -> (usize, bool) {
    let mut j = i + 1;
    while j < s.len() {
        let c = s[j];
        j += 1;
        if c == b'\\' && q != b'`' {
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

/// The tokens of one statement, read by keyword.
struct Stmt<'a, 'b> {
    t: &'b [Tok<'a>],
}

impl Stmt<'_, '_> {
    fn word(&self, i: usize) -> Option<&str> {
        match self.t.get(i) {
            Some(Tok::Word(w)) => Some(w),
            _ => None,
        }
    }

    fn is(&self, i: usize, kw: &str) -> bool {
        self.word(i).is_some_and(|w| w.eq_ignore_ascii_case(kw))
    }

    fn is_any(&self, i: usize, kws: &[&str]) -> bool {
        kws.iter().any(|k| self.is(i, k))
    }

    /// Whether keyword `kw` appears anywhere.
    fn has(&self, kw: &str) -> bool {
        (0..self.t.len()).any(|i| self.is(i, kw))
    }

    /// The first string literal after position `i`.
    fn string_after(&self, i: usize) -> Option<&str> {
        self.t.iter().skip(i).find_map(|t| match t {
            Tok::Str(s) => Some(*s),
            _ => None,
        })
    }
}

/// One statement's verdict (no `;` inside).
fn statement(t: &[Tok<'_>], depth: u32) -> Verdict {
    use Effect::*;
    let lead = t.iter().take_while(|x| **x == Tok::Punct(b'(')).count();
    let s = Stmt { t: &t[lead..] };
    if s.word(0).is_some() && s.t.get(1) == Some(&Tok::Punct(b':')) {
        return v(Admin, "a labelled compound statement cannot be checked");
    }
    let Some(first) = s.word(0).map(str::to_ascii_lowercase) else {
        return v(Write, "an unknown statement may write");
    };
    match first.as_str() {
        "select" | "values" | "table" | "with" | "do" => read_like(&s),
        "show" | "help" | "check" | "checksum" => v(Read, "reads"),
        "handler" => v(Read, "HANDLER reads"),
        "describe" | "desc" | "explain" if s.is(1, "analyze") => after(&s, 2, depth),
        "describe" | "desc" | "explain" => v(Read, "EXPLAIN does not run the statement"),
        "analyze" if s.is_any(1, &["table", "tables", "local", "no_write_to_binlog"]) => {
            v(Ddl, "ANALYZE TABLE rewrites statistics")
        }
        // MariaDB's ANALYZE [FORMAT=JSON] stmt runs stmt.
        "analyze" => after(&s, 1, depth),
        "begin" if s.is(1, "not") => v(Admin, "a compound statement cannot be checked"),
        "use" | "begin" | "commit" | "rollback" | "savepoint" | "release" | "xa" | "deallocate"
        | "get" | "signal" | "resignal" | "unlock" => v(Session, "changes only this session"),
        "start" if s.is(1, "transaction") => v(Session, "changes only this session"),
        "start" | "stop" => v(Admin, "START/STOP controls replication"),
        "set" => set(&s, depth),
        "prepare" => match s.string_after(1) {
            Some(text) if depth < 4 => classify_at(text, depth + 1),
            _ => v(Admin, "PREPARE of dynamic SQL cannot be checked"),
        },
        "execute" if s.is(1, "immediate") => match s.t.get(2) {
            Some(Tok::Str(text)) if depth < 4 => classify_at(text, depth + 1),
            _ => v(Admin, "EXECUTE IMMEDIATE of dynamic SQL cannot be checked"),
        },
        "execute" => v(Session, "runs a statement whose PREPARE was checked"),
        "insert" | "update" | "delete" | "replace" => v(Write, "changes rows"),
        "call" => v(Write, "CALL runs a stored procedure that may write"),
        "lock" if s.is_any(1, &["table", "tables"]) => v(Ddl, "LOCK TABLES blocks other sessions"),
        "lock" | "backup" => v(Admin, "a backup lock blocks the server"),
        "load" => v(
            Admin,
            "LOAD reads files on the server's host or fills a key cache",
        ),
        "create" | "alter" | "drop" => ddl(&s, &first),
        "rename" if s.is(1, "user") => v(Admin, "RENAME USER manages accounts"),
        "rename" => v(Ddl, "RENAME TABLE changes the schema"),
        "truncate" => v(Destructive, "TRUNCATE empties a table"),
        "optimize" | "repair" => v(Ddl, "rebuilds a table"),
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
    }
}

/// The statement that starts at token `i`, after a `FORMAT=...` (what EXPLAIN ANALYZE or
/// ANALYZE runs).
fn after(s: &Stmt<'_, '_>, i: usize, depth: u32) -> Verdict {
    let i = if s.is(i, "format") { i + 3 } else { i };
    match s.t.get(i..) {
        Some(rest) if !rest.is_empty() && depth < 4 => statement(rest, depth + 1),
        _ => v(Effect::Ddl, "ANALYZE TABLE rewrites statistics"),
    }
}

/// SELECT, VALUES, TABLE, WITH, DO: a read unless it writes a file, changes rows (`WITH ...
/// UPDATE`), advances a sequence or calls a stored function by its schema.
fn read_like(s: &Stmt<'_, '_>) -> Verdict {
    use Effect::*;
    let mut worst = v(Read, "reads");
    for i in 0..s.t.len() {
        let found = if s.is(i, "into") && s.is_any(i + 1, &["outfile", "dumpfile"]) {
            v(
                Admin,
                "INTO OUTFILE/DUMPFILE writes a file on the server's host",
            )
        } else if s.is_any(i, &["insert", "update", "delete", "replace"])
            && !(s.is(i, "update") && i > 0 && s.is(i - 1, "for"))
        {
            v(Write, "changes rows")
        } else if (s.is_any(i, &["nextval", "setval"]) && s.t.get(i + 1) == Some(&Tok::Punct(b'(')))
            || (s.is(i, "next") && s.is(i + 1, "value") && s.is(i + 2, "for"))
        {
            v(Write, "advances a sequence")
        } else if s.is_any(i, &["sys_exec", "sys_eval"]) {
            v(Admin, "calls a UDF that runs commands on the server's host")
        } else if matches!(s.t.get(i), Some(Tok::Word(_) | Tok::Quoted))
            && s.t.get(i + 1) == Some(&Tok::Punct(b'.'))
            && matches!(s.t.get(i + 2), Some(Tok::Word(_) | Tok::Quoted))
            && s.t.get(i + 3) == Some(&Tok::Punct(b'('))
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

/// SET: session unless it names a global or persisted scope, a password, roles, a resource
/// group or a replication variable; `SET STATEMENT ... FOR stmt` is also its statement.
fn set(s: &Stmt<'_, '_>, depth: u32) -> Verdict {
    use Effect::*;
    if s.is(1, "password") {
        return v(Admin, "SET PASSWORD changes an account's password");
    }
    if s.is(1, "default") && s.is(2, "role") {
        return v(Admin, "SET DEFAULT ROLE manages accounts");
    }
    if s.is(1, "resource") {
        return v(Admin, "SET RESOURCE GROUP changes server threads");
    }
    // SET STATEMENT var=value[, ...] FOR stmt: the assignments, then the statement.
    let inner = s
        .is(1, "statement")
        .then(|| (2..s.t.len()).find(|&i| s.is(i, "for")))
        .flatten();
    let assignments = &s.t[..inner.unwrap_or(s.t.len())];
    let mut worst = match inner {
        Some(i) if depth < 4 => statement(&s.t[i + 1..], depth + 1),
        Some(_) => v(Write, "an unknown statement may write"),
        None => v(Session, "changes only this session"),
    };
    for (i, t) in assignments.iter().enumerate() {
        // A system variable counts where it is assigned, not where it is read.
        let assigned = matches!(assignments.get(i + 1), Some(Tok::Punct(b'=' | b':')));
        let found = match t {
            Tok::Word(w)
                if ["global", "persist", "persist_only"]
                    .iter()
                    .any(|k| w.eq_ignore_ascii_case(k)) =>
            {
                v(Admin, "SET GLOBAL/PERSIST changes server settings")
            }
            Tok::Var(name) if assigned => {
                let lower = name.to_ascii_lowercase();
                let global = ["@@global.", "@@persist.", "@@persist_only."]
                    .iter()
                    .any(|p| lower.starts_with(p));
                let var = lower.rsplit(['.', '@']).next().unwrap_or_default();
                if global {
                    v(Admin, "SET GLOBAL/PERSIST changes server settings")
                } else if lower.starts_with("@@") && REPLICATION_VARS.contains(&var) {
                    v(Admin, "changes what reaches the binary log and replicas")
                } else {
                    continue;
                }
            }
            Tok::Word(w) if REPLICATION_VARS.iter().any(|k| w.eq_ignore_ascii_case(k)) => {
                v(Admin, "changes what reaches the binary log and replicas")
            }
            _ => continue,
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
    use Effect::*;
    let mut i = 1;
    let mut temporary = false;
    let object = loop {
        match s.t.get(i) {
            None => break None,
            Some(Tok::Word(w))
                if w.eq_ignore_ascii_case("definer")
                    && s.t.get(i + 1) == Some(&Tok::Punct(b'=')) =>
            {
                // DEFINER = user@host: the user is no object keyword.
                i += 3;
                while matches!(
                    s.t.get(i),
                    Some(Tok::Var(_) | Tok::Punct(b'@') | Tok::Str(_))
                ) {
                    i += 1;
                }
                continue;
            }
            Some(Tok::Word(w)) if w.eq_ignore_ascii_case("temporary") => temporary = true,
            Some(Tok::Word(w)) if w.eq_ignore_ascii_case("tables") => break Some("table"),
            Some(Tok::Word(w)) => {
                if let Some(o) = OBJECTS.iter().find(|o| w.eq_ignore_ascii_case(o)) {
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
    match object {
        Some("user" | "role") => v(Admin, "manages accounts"),
        Some("server") => v(
            Admin,
            "CREATE/ALTER/DROP SERVER changes federated connections",
        ),
        Some("instance" | "resource") => v(Admin, "changes the server instance"),
        Some("function") if s.has("soname") => v(Admin, "loads a shared library (UDF)"),
        Some("procedure" | "function" | "trigger" | "event" | "package") if !drop => v(
            Admin,
            "defines stored code whose statements cannot be checked",
        ),
        Some("database" | "schema") if drop => v(Destructive, "DROP DATABASE drops its tables"),
        Some("table") if drop && !temporary => v(Destructive, "DROP TABLE drops a table's rows"),
        Some("prepare") if drop => v(Session, "changes only this session"),
        Some(_) => v(Ddl, "changes the schema"),
        None => v(Write, "an unknown statement may write"),
    }
}

#[cfg(test)]
#[path = "safety_tests.rs"]
mod tests;
