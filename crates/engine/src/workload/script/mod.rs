//! Script workloads: pgbench's custom-script convention for MySQL/MariaDB.
//!
//! A script is SQL statements ending with `;` plus meta-commands on their own line:
//! `\set NAME EXPR` and `\sleep N [us|ms|s]`. `:NAME` in a statement is a parameter bound as
//! an integer. [`ScriptSet::parse`] checks everything before anything connects (unknown
//! variables, bad syntax, distribution parameters), naming `FILE:LINE`; each statement becomes
//! a [`StatementDef`] named `FILE:LINE`. One run of a script is one event: the session's
//! [`ScriptGen`] picks a script by weight, evaluates its `\set`s in order and fills the event
//! with its statements' calls (and sleeps) up front, since nothing depends on a reply.
//!
//! Whatever the text, checking it is bounded: a script larger than [`SCRIPT_LIMIT`] is refused,
//! a `\set` expression nesting deeper than [`expr::MAX_NESTING`] or longer than
//! [`expr::MAX_TOKENS`] tokens is an error (never a stack overflow), and an error quotes at
//! most [`qpslab_core::input::EXCERPT_CHARS`] characters of the script.

mod dist;
mod expr;
mod gen;
mod init;
mod split;

pub use expr::EvalError;
pub(crate) use gen::ScriptGen;
pub use gen::SLEEP_CALL;
pub use init::{init_statements, run_init};

use super::{ParamKind, StatementDef, StmtClass};
use expr::Expr;
use qpslab_core::input::{excerpt, size_text, SCRIPT_LIMIT};
use qpslab_core::workload::ScriptSource;
use split::Piece;
use std::collections::HashMap;
use std::sync::Arc;

/// A script that cannot run, located at `file:line`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{}{message}", if *.line > 0 { format!("{line}: ") } else { " ".into() })]
pub struct ScriptError {
    /// The script's name (its file's base name).
    pub file: String,
    /// 1-based line; 0 when the error is about the script as a whole.
    pub line: u32,
    /// What is wrong.
    pub message: String,
}

/// How long a `\sleep` lasts.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Amount {
    Lit(i64),
    Var(u32),
}

/// One step of a script, in order.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Step {
    /// `\set`: evaluate into a variable slot.
    Set { line: u32, slot: u32, expr: Expr },
    /// A statement: index into the statements, and the slot of each parameter.
    Stmt { stmt: u32, params: Vec<u32> },
    /// `\sleep`: an amount in units of `unit_us` microseconds.
    Sleep {
        line: u32,
        amount: Amount,
        unit_us: i64,
    },
}

/// One parsed script.
#[derive(Clone, Debug)]
pub(crate) struct Script {
    pub name: String,
    pub weight: u32,
    pub steps: Vec<Step>,
}

/// Every script of a workload, with the statements they run.
#[derive(Clone, Debug)]
pub struct ScriptSet {
    pub(crate) scripts: Vec<Script>,
    pub(crate) statements: Vec<StatementDef>,
    /// How many variable slots a session needs.
    pub(crate) slots: usize,
    /// Sum of the weights (more than 0).
    pub(crate) total_weight: u64,
}

impl ScriptSet {
    /// Parses and checks every script.
    pub fn parse(sources: &[ScriptSource]) -> Result<ScriptSet, ScriptError> {
        let mut b = Builder::default();
        let mut scripts = Vec::with_capacity(sources.len());
        for src in sources {
            scripts.push(b.script(src)?);
        }
        let total_weight: u64 = scripts.iter().map(|s| u64::from(s.weight)).sum();
        if total_weight == 0 {
            let file = sources.first().map_or_else(String::new, |s| s.name.clone());
            let message = "the scripts' total weight must be more than 0".into();
            return Err(ScriptError {
                file,
                line: 0,
                message,
            });
        }
        Ok(ScriptSet {
            scripts,
            statements: b.statements,
            slots: b.slots.len(),
            total_weight,
        })
    }

    /// The statements, in the order calls index them.
    pub fn statements(&self) -> &[StatementDef] {
        &self.statements
    }
}

/// A statement's text and, when it holds a literal `?`, its placeholders' offsets.
struct Sql {
    sql: String,
    placeholders: Option<Vec<u32>>,
}

#[derive(Default)]
struct Builder {
    statements: Vec<StatementDef>,
    slots: HashMap<String, u32>,
}

impl Builder {
    fn script(&mut self, src: &ScriptSource) -> Result<Script, ScriptError> {
        let err = |line, message| ScriptError {
            file: src.name.clone(),
            line,
            message,
        };
        check_size(src)?;
        let pieces = split::split(&src.text).map_err(|(l, m)| err(l, m))?;
        // Variables this script has set so far: a use before any `\set` is an error.
        let mut known: Vec<bool> = vec![false; self.slots.len()];
        let mut steps = Vec::with_capacity(pieces.len());
        for piece in pieces {
            let step = match piece {
                Piece::Sql {
                    line,
                    sql,
                    params,
                    placeholders,
                } => {
                    let sql = Sql { sql, placeholders };
                    self.stmt(&src.name, line, sql, &params, &known)
                }
                Piece::Meta { line, cmd, args } => self.meta(line, &cmd, &args, &mut known),
            };
            steps.push(step.map_err(|(l, m)| err(l, m))?);
        }
        if !steps.iter().any(|s| matches!(s, Step::Stmt { .. })) {
            return Err(err(0, "the script has no SQL statement".into()));
        }
        Ok(Script {
            name: src.name.clone(),
            weight: src.weight,
            steps,
        })
    }

    fn known_slot(&self, name: &str, known: &[bool]) -> Result<u32, String> {
        match self.slots.get(name) {
            Some(&s) if known.get(s as usize) == Some(&true) => Ok(s),
            _ => Err(format!(
                "unknown variable ':{}' (no \\set before this line)",
                excerpt(name)
            )),
        }
    }

    fn stmt(
        &mut self,
        file: &str,
        line: u32,
        sql: Sql,
        params: &[String],
        known: &[bool],
    ) -> Result<Step, (u32, String)> {
        let slots = params
            .iter()
            .map(|p| self.known_slot(p, known))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|m| (line, m))?;
        let class = class_of(&sql.sql);
        self.statements.push(StatementDef {
            kind: Arc::from(format!("{file}:{line}")),
            table: 0,
            sql: sql.sql,
            placeholders: sql.placeholders,
            params: vec![ParamKind::Int; slots.len()],
            class,
            text_only: false,
        });
        let stmt = u32::try_from(self.statements.len() - 1)
            .map_err(|_| (line, "too many statements".into()))?;
        Ok(Step::Stmt {
            stmt,
            params: slots,
        })
    }

    fn meta(
        &mut self,
        line: u32,
        cmd: &str,
        args: &str,
        known: &mut Vec<bool>,
    ) -> Result<Step, (u32, String)> {
        match cmd {
            "set" => self.set(line, args, known),
            "sleep" => self.sleep(line, args, known),
            _ => Err((
                line,
                format!(
                    "unknown meta-command '\\{}' (known: \\set, \\sleep)",
                    excerpt(cmd)
                ),
            )),
        }
    }

    fn set(&mut self, line: u32, args: &str, known: &mut Vec<bool>) -> Result<Step, (u32, String)> {
        let (name, text) = args.split_once(char::is_whitespace).unwrap_or((args, ""));
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err((
                line,
                format!(
                    "\\set needs a variable name and an expression (got '{}')",
                    excerpt(args)
                ),
            ));
        }
        let expr = expr::parse(text, &mut |n| self.known_slot(n, known)).map_err(|m| (line, m))?;
        let next = self.slots.len() as u32;
        let slot = *self.slots.entry(name.to_string()).or_insert(next);
        known.resize(self.slots.len(), false);
        known[slot as usize] = true;
        Ok(Step::Set { line, slot, expr })
    }

    fn sleep(&self, line: u32, args: &str, known: &[bool]) -> Result<Step, (u32, String)> {
        let mut words = args.split_whitespace();
        let (Some(n), unit, None) = (words.next(), words.next(), words.next()) else {
            return Err((
                line,
                "\\sleep takes a number or :variable and an optional unit (us, ms, s)".into(),
            ));
        };
        // `\sleep 10ms` as well as pgbench's `\sleep 10 ms`.
        let split = n
            .find(|c: char| c.is_ascii_alphabetic())
            .filter(|_| !n.starts_with(':'));
        let (n, unit) = match (split, unit) {
            (Some(i), None) => (&n[..i], Some(&n[i..])),
            _ => (n, unit),
        };
        let unit_us = match unit.unwrap_or("s") {
            "us" => 1,
            "ms" => 1_000,
            "s" => 1_000_000,
            u => {
                let u = excerpt(u);
                return Err((line, format!("unknown \\sleep unit '{u}' (us, ms or s)")));
            }
        };
        let amount = match n.strip_prefix(':') {
            Some(var) => Amount::Var(self.known_slot(var, known).map_err(|m| (line, m))?),
            None => match n.parse::<i64>() {
                Ok(v) if v >= 0 => Amount::Lit(v),
                _ => {
                    return Err((
                        line,
                        format!(
                            "\\sleep: '{}' is not a non-negative integer or :variable",
                            excerpt(n)
                        ),
                    ))
                }
            },
        };
        Ok(Step::Sleep {
            line,
            amount,
            unit_us,
        })
    }
}

/// Refuses a script larger than [`SCRIPT_LIMIT`] (read from a file, it was refused before; a
/// script from a stored run or built in code is checked here).
fn check_size(src: &ScriptSource) -> Result<(), ScriptError> {
    if src.text.len() as u64 <= SCRIPT_LIMIT {
        return Ok(());
    }
    Err(ScriptError {
        file: src.name.clone(),
        line: 0,
        message: format!(
            "is larger than {}, the limit for a script",
            size_text(SCRIPT_LIMIT)
        ),
    })
}

/// How sysbench would count the statement, from its first keyword.
fn class_of(sql: &str) -> StmtClass {
    let mut s = sql.trim_start_matches(|c: char| c == '(' || c.is_whitespace());
    while let Some(rest) = s.strip_prefix("/*") {
        s = rest.split_once("*/").map_or("", |(_, r)| r).trim_start();
    }
    let word: String = s
        .chars()
        .take_while(char::is_ascii_alphabetic)
        .collect::<String>()
        .to_ascii_uppercase();
    match word.as_str() {
        "SELECT" | "WITH" | "SHOW" | "TABLE" | "VALUES" | "DESC" | "DESCRIBE" | "EXPLAIN" => {
            StmtClass::Read
        }
        "INSERT" | "UPDATE" | "DELETE" | "REPLACE" | "LOAD" => StmtClass::Write,
        _ => StmtClass::Other,
    }
}

#[cfg(test)]
mod tests;
