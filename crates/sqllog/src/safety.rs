//! What running a logged statement could do, and whether a replay may run it.
//!
//! [`classify`] reads SQL text (a logged statement, a fingerprint, several statements joined by
//! `;`) and gives a [`Verdict`]: the most harmful [`Effect`] of its statements and why. A
//! [`Policy`] (`--read-only`, `--allow-admin`, `--allow-destructive`) then says whether it runs.
//! Replay, diff and the digest's read/write column all take their answer from here.
//!
//! [`Classifier`] is the same for one logged connection read in order: it knows the target's
//! [`Dialect`] (version, MariaDB or MySQL) and follows the session's `sql_mode` and current
//! database as the log sets them. [`classify`] is a fresh classifier for an unknown server in the
//! default `sql_mode`.
//!
//! # What is read how
//! The text is lexed as the server would, one statement (up to a `;`) at a time:
//! - comments (`/* */`, `-- ` with a space or control character after it, `#`, also under
//!   `ANSI_QUOTES`) and optimizer hints (`/*+ */`) are dropped; a comment ends at its first `*/`;
//! - executable comments: `/*! ...*/` always runs; `/*!NNNNN ...*/` runs on a server of version
//!   NNNNN or later (MariaDB reads 5 or 6 digits and skips MySQL 5.7+ versions 50700-99999),
//!   `/*M!NNNNNN ...*/` the same on MariaDB only; otherwise they are comments. Where the dialect
//!   does not settle it (unknown version or flavor, a fingerprint's `/*!?`, a lowercase `/*m!`,
//!   a six-digit version on MySQL) every reading is judged and the worst kept;
//! - strings: `\` escapes unless `NO_BACKSLASH_ESCAPES`, doubled quotes always; `"x"` is a name
//!   under `ANSI_QUOTES`; adjacent literals (`'a' 'b'`) are one string;
//! - `sql_mode` follows `SET [SESSION|LOCAL|@@|@@session.]sql_mode = ...` (a string, a name,
//!   DEFAULT). A value from an expression, a number or an unknown name leaves both readings of
//!   each flag open; so does any SET that may fail or not run (it sets more than `sql_mode`, it
//!   is not the whole text): the session may then be in either mode, and both are judged.
//!   `SET STATEMENT sql_mode=... FOR stmt` changes no session state; its stmt is judged in both
//!   modes;
//! - literals and quoted names never count as keywords; quoted names count as names (``SET
//!   @@global.`x` ``, `` `mysql`.t ``); leading parentheses are skipped (no recursion: 100,000
//!   of them cost what 100,000 letters do); every statement of a multi-statement text is judged.
//!
//! Every reading is a linear pass; a text whose readings would cost more than 64 passes (many
//! distinct comment versions, many `SET sql_mode` to unknown values) is server-level: "too many
//! possible readings".
//!
//! # Decisions
//! - locking reads (`SELECT ... FOR UPDATE`, `LOCK IN SHARE MODE`) change nothing: reads;
//! - `SELECT ... INTO @var` sets a session variable: a read; `INTO OUTFILE`/`DUMPFILE` writes a
//!   file on the server's host and `LOAD_FILE` reads one: server-level;
//! - a schema-qualified call (`db.f(...)`, in any statement: SELECT, SET, SHOW ... WHERE,
//!   EXPLAIN) is a stored function that may write: a write. An unqualified call cannot be told
//!   from a built-in one and is taken as a read (a stored function that writes then runs under
//!   `--read-only`: the server's read-only transaction and account are what stop it);
//!   `NEXTVAL`/`SETVAL`/`NEXT VALUE FOR` advance a sequence: writes; the well-known
//!   command-running UDFs (`sys_exec`, `sys_eval`) are server-level;
//! - `CALL`, and anything not recognised, may write: writes;
//! - dynamic SQL (PREPARE, EXECUTE, EXECUTE IMMEDIATE, whatever the text) runs text the log does
//!   not show: server-level;
//! - creating stored code (procedures, functions, triggers), events (CREATE/ALTER EVENT: they
//!   schedule work) and compound statements (`BEGIN NOT ATOMIC`, `BEGIN` followed by anything
//!   but `WORK`, `IF`, `WHILE`...) hold statements that run later or cannot be checked one by
//!   one: server-level, as are UDFs loaded by `SONAME`;
//! - writes of any kind to a system schema (`mysql`, `performance_schema`, `sys`, named or the
//!   current database) change accounts, privileges or server settings: server-level;
//! - what makes the session's transactions writable again (`SET [SESSION] TRANSACTION ... READ
//!   WRITE`, `START TRANSACTION READ WRITE`, `tx_read_only`/`transaction_read_only` set to
//!   anything but 1) would undo the read-only transaction `--read-only` runs in: writes;
//! - XA START/END: session; XA PREPARE leaves a transaction that outlives the session, and XA
//!   COMMIT/ROLLBACK may finish one another session prepared: writes (never under
//!   `--read-only`, run by default like any transaction's commit); XA RECOVER: a read;
//! - destructive (data lost or rewritten): `DROP`/`TRUNCATE` of a database, schema, table or
//!   sequence (not a temporary one), `CREATE OR REPLACE` of a database, table, view, sequence
//!   (it drops what it replaces), any `ALTER` of a table, view, database or sequence (it may drop
//!   columns or change the engine; `DISCARD TABLESPACE` deletes the data file, `IMPORT
//!   TABLESPACE` replaces it), `OPTIMIZE` and `REPAIR` (which may drop rows it cannot read).

mod dialect;
mod judge;
mod lex;
mod modes;

use std::collections::HashSet;

pub use dialect::Dialect;
use judge::ModeValue;
use lex::{Charset, Lexer, Mode};
pub(crate) use modes::mode_of;
use modes::ANSI_QUOTES_MODES;

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

/// Every session state: 16 modes (4 `sql_mode` flag pairs in 4 character set readings), system
/// database or not.
const ALL_STATES: u32 = u32::MAX;

/// The bit of a session state in a set of them.
fn state_bit(mode: Mode, system_db: bool) -> u32 {
    1 << (mode.index() + 16 * u8::from(system_db))
}

/// The session states in a set of them.
fn states_of(set: u32) -> impl Iterator<Item = (Mode, bool)> {
    (0..32u8)
        .filter(move |b| set & (1 << b) != 0)
        .map(|b| (Mode::from_index(b % 16), b >= 16))
}

/// The modes of `flags` (a set of [`Mode::flags`]) crossed with `charsets` (a set of
/// [`Charset::index`]).
fn modes(flags: u8, charsets: u8) -> impl Iterator<Item = Mode> {
    Mode::all()
        .filter(move |m| flags & (1 << m.flags()) != 0 && charsets & (1 << m.cs.index()) != 0)
}

/// Reads the statements of one logged connection in order, as its server would: the target's
/// [`Dialect`] settles executable comments, and the session's `sql_mode` and current database
/// follow what the log sets (see the module documentation).
///
/// ```
/// use qpslab_sqllog::{Classifier, Dialect, Effect};
/// let mut c = Classifier::new(Dialect::new(Some(101100), true));
/// assert_eq!(c.classify("/*!999999 EXPLAIN */ DELETE FROM t").effect, Effect::Write);
/// c.classify("SET sql_mode='NO_BACKSLASH_ESCAPES'");
/// assert_eq!(c.classify(r"SELECT '\', db.f_del() #'").effect, Effect::Write);
/// ```
#[derive(Debug, Clone)]
pub struct Classifier {
    dialect: Dialect,
    /// The `sql_mode` flags `SET sql_mode = DEFAULT` may restore (a set of [`Mode::flags`]).
    global_modes: u8,
    /// The states the session may be in (a set of [`state_bit`]s).
    states: u32,
}

impl Classifier {
    /// A classifier for a new session on a server of `dialect`, in the default `sql_mode`
    /// (neither `ANSI_QUOTES` nor `NO_BACKSLASH_ESCAPES`), in a client character set that is
    /// not known (every reading is judged; see [`Classifier::with_charset`]).
    pub fn new(dialect: Dialect) -> Classifier {
        Classifier {
            dialect,
            global_modes: 1,
            states: modes(1, Charset::ANY).fold(0, |a, m| a | state_bit(m, false)),
        }
    }

    /// The session starts in the server's `sql_mode` (its `@@sql_mode`); None when it is not
    /// known (both readings of each flag are then judged).
    pub fn with_sql_mode(mut self, sql_mode: Option<&str>) -> Classifier {
        let flags = match sql_mode {
            Some(text) => {
                // The server's own value: names this classifier does not know change nothing.
                let mut m = Mode::DEFAULT;
                for item in text.split(',').map(str::trim) {
                    let item = item.to_ascii_uppercase();
                    m.nbe |= item == "NO_BACKSLASH_ESCAPES";
                    m.ansi |= ANSI_QUOTES_MODES.contains(&item.as_str());
                }
                1 << m.flags()
            }
            None => 0x0f,
        };
        self.global_modes = flags;
        self.states = states_of(self.states)
            .flat_map(|(m, sys)| modes(flags, 1 << m.cs.index()).map(move |m| (m, sys)))
            .fold(0, |a, (m, sys)| a | state_bit(m, sys));
        self
    }

    /// The session starts in this client character set (its `@@character_set_client`, by
    /// name); None when it is not known, or a name this classifier does not know: every
    /// reading is then judged.
    pub fn with_charset(mut self, charset: Option<&str>) -> Classifier {
        let set = charset
            .and_then(Charset::of_name)
            .map_or(Charset::ANY, |c| 1 << c.index());
        self.states = states_of(self.states)
            .flat_map(|(m, sys)| modes(1 << m.flags(), set).map(move |m| (m, sys)))
            .fold(0, |a, (m, sys)| a | state_bit(m, sys));
        self
    }

    /// The session may also be in any state `other` may be in (a session that may have been
    /// reset, or that runs statements of several logged connections).
    pub fn absorb(&mut self, other: &Classifier) {
        self.states |= other.states;
        self.global_modes |= other.global_modes;
    }

    /// The session's current database, as the log gives it for an entry (None: unchanged).
    pub fn set_database(&mut self, db: Option<&str>) {
        let Some(db) = db else { return };
        let sys = ["mysql", "performance_schema", "sys"]
            .iter()
            .any(|s| db.eq_ignore_ascii_case(s));
        self.states = states_of(self.states).fold(0, |a, (m, _)| a | state_bit(m, sys));
    }

    /// The verdict on `sql` (bytes as the client sends them) run next in this session; the
    /// session's state follows what it sets (`SET sql_mode`, `SET NAMES`, `USE`).
    pub fn classify(&mut self, sql: impl AsRef<[u8]>) -> Verdict {
        let (verdict, after) = self.walk(sql.as_ref());
        self.states = if after == 0 { ALL_STATES } else { after };
        verdict
    }

    /// The verdict on `sql` in the session's current state, which it leaves as it is.
    pub fn peek(&self, sql: impl AsRef<[u8]>) -> Verdict {
        self.walk(sql.as_ref()).0
    }

    /// The `sql_mode` flags a value may give (a set of [`Mode::flags`]).
    fn modes_of(&self, value: ModeValue) -> u8 {
        match value {
            ModeValue::Known(m) => 1 << m.flags(),
            ModeValue::Default => self.global_modes,
            ModeValue::Unknown => 0x0f,
        }
    }

    /// The worst verdict over every reading of `sql` that the session's possible states and
    /// the dialect leave open, and the states the session may be in after it.
    fn walk(&self, sql: &[u8]) -> (Verdict, u32) {
        let too_complex = (
            v(
                Effect::Admin,
                "too many possible readings to judge the statement",
            ),
            ALL_STATES,
        );
        let Some(servers) = self.dialect.servers(sql) else {
            return too_complex;
        };
        // Every reading is a linear pass; together they may read the text a bounded number of
        // times.
        let mut budget = sql.len().saturating_mul(64).saturating_add(1 << 16);
        let mut worst: Option<Verdict> = None;
        let mut ends = 0u32;
        // Where no byte can be read two ways, every character set reads the text alike: one
        // reading stands for them all (the states keep their own character sets).
        let one_charset = !lex::charset_matters(sql);
        let mut toks = Vec::new();
        let mut probe = Vec::new();
        for server in servers {
            let mut seen = HashSet::new();
            let mut stack: Vec<Path> = states_of(self.states)
                .map(|(mode, system_db)| Path {
                    pos: 0,
                    mode,
                    session_mode: mode,
                    system_db,
                    open_exec: 0,
                    first: true,
                })
                .collect();
            while let Some(p) = stack.pop() {
                if !seen.insert((
                    p.pos,
                    p.mode,
                    p.session_mode,
                    p.system_db,
                    p.open_exec,
                    p.first,
                )) {
                    continue;
                }
                let lexed = if one_charset {
                    Mode {
                        cs: Charset::Ascii,
                        ..p.mode
                    }
                } else {
                    p.mode
                };
                let mut lx = Lexer::new(sql, p.pos, server, lexed, p.open_exec);
                lx.statement(&mut toks);
                let Some(left) = budget.checked_sub(lx.pos - p.pos + 1) else {
                    return too_complex;
                };
                budget = left;
                if toks.is_empty() {
                    if lx.pos >= sql.len() {
                        ends |= state_bit(p.session_mode, p.system_db);
                        if p.first {
                            // A reading with no statement at all (all of it a comment).
                            let none = v(Effect::Session, "no statement");
                            worst = Some(worst.map_or(none, |w| w.or_worse(none)));
                        }
                    } else {
                        stack.push(Path { pos: lx.pos, ..p });
                    }
                    continue;
                }
                let j = judge::statement(&toks, 0, p.system_db);
                worst = Some(worst.map_or(j.verdict, |w| w.or_worse(j.verdict)));
                // What this statement sets is known only when it is the whole text and does
                // nothing else (else it may fail, or not run): else the session may be in
                // either state.
                let whole = j.change.pure && p.first && {
                    let mut rest = Lexer::new(sql, lx.pos, server, lexed, lx.open_exec);
                    loop {
                        rest.statement(&mut probe);
                        if !probe.is_empty() {
                            break false;
                        }
                        if rest.pos >= sql.len() {
                            break true;
                        }
                    }
                };
                let now = p.session_mode;
                let (flags, charsets) = (1u8 << now.flags(), 1u8 << now.cs.index());
                let mut next: u16 = modes(
                    j.change.mode.map_or(flags, |m| self.modes_of(m)),
                    j.change.charset.unwrap_or(charsets),
                )
                .fold(0, |a, m| a | 1 << m.index());
                if !whole {
                    next |= 1 << now.index();
                }
                let mut systems = j.change.system_db.map_or(0, |s| 1u8 << u8::from(s));
                if !whole || systems == 0 {
                    systems |= 1 << u8::from(p.system_db);
                }
                // SET STATEMENT sql_mode=..., character_set_client=... FOR stmt: stmt read
                // under those too.
                if j.change.statement_mode.is_some() || j.change.statement_charset.is_some() {
                    let flags = j.change.statement_mode.map_or(flags, |m| self.modes_of(m));
                    let charsets = j.change.statement_charset.unwrap_or(charsets);
                    for mode in modes(flags, charsets) {
                        stack.push(Path {
                            mode,
                            session_mode: p.session_mode,
                            ..p
                        });
                    }
                }
                for mode in Mode::all().filter(|m| next & (1 << m.index()) != 0) {
                    for system_db in [false, true] {
                        if systems & (1 << u8::from(system_db)) != 0 {
                            stack.push(Path {
                                pos: lx.pos,
                                mode,
                                session_mode: mode,
                                system_db,
                                open_exec: lx.open_exec,
                                first: false,
                            });
                        }
                    }
                }
            }
        }
        (worst.unwrap_or(v(Effect::Session, "no statement")), ends)
    }
}

/// Where one reading of a text stands.
#[derive(Debug, Clone, Copy)]
struct Path {
    pos: usize,
    /// The mode the next statement is read under.
    mode: Mode,
    /// The session's mode (differs from `mode` where `SET STATEMENT sql_mode=... FOR` has its
    /// statement read under another).
    session_mode: Mode,
    system_db: bool,
    open_exec: u32,
    first: bool,
}

/// The verdict on `sql`: its most harmful statement's, for a server of unknown version and
/// flavor in the default `sql_mode` (see the module documentation and [`Classifier`]).
///
/// ```
/// use qpslab_sqllog::{classify, Effect};
/// assert_eq!(classify("/* app */ SELECT c FROM t WHERE id = 1 FOR UPDATE").effect, Effect::Read);
/// assert_eq!(classify("select 1; SHUTDOWN").effect, Effect::Admin);
/// assert_eq!(classify("/*!999999 EXPLAIN */ SHUTDOWN").effect, Effect::Admin);
/// ```
pub fn classify(sql: impl AsRef<[u8]>) -> Verdict {
    Classifier::new(Dialect::UNKNOWN).classify(sql)
}

#[cfg(test)]
mod charset_tests;
#[cfg(test)]
mod hostile_tests;
#[cfg(test)]
#[path = "safety_tests.rs"]
mod tests;
