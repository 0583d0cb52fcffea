//! Carrying out one action on its own connection: one executor per kind of [`Action`], and
//! putting back what `set` and `pin` changed.

use crate::server::control::put_back;
use qpslab_core::live::{sql_literal, Action};
use qpslab_core::placement::{Policy, Rule};
use qpslab_core::ConnectOptions;
use qpslab_probe::threads::Placer;
use qpslab_wire::Conn;
use std::time::Instant;

/// What an action changed that the end of the phase puts back.
pub(crate) enum Undo {
    /// A global variable: `(name, previous value as an SQL literal)`.
    Setting(String, String),
    /// Threads placed by a `pin`: given back the server's own CPUs and nice value.
    Pin(String, Placer),
}

/// What one action did: its outcome, how long it took, and what to put back.
pub(crate) struct Done {
    pub outcome: String,
    pub took_ms: f64,
    pub undo: Option<Undo>,
}

/// Runs `action` on a new connection to `target` (whose server is process `pid`, when known).
pub(crate) fn run(target: &ConnectOptions, pid: Option<u32>, action: &Action) -> Done {
    let started = Instant::now();
    let result =
        Conn::connect(target)
            .map_err(|e| e.to_string())
            .and_then(|mut conn| match action {
                Action::Set { name, value } => set(&mut conn, name, value),
                Action::Sql { statement } => sql(&mut conn, statement),
                Action::Pin { rule } => pin(&mut conn, pid, rule),
            });
    let took_ms = started.elapsed().as_secs_f64() * 1e3;
    match result {
        Ok((outcome, undo)) => Done {
            outcome,
            took_ms,
            undo,
        },
        Err(e) => Done {
            outcome: e,
            took_ms,
            undo: None,
        },
    }
}

type Outcome = Result<(String, Option<Undo>), String>;

/// `set NAME=VALUE`: reads the global value first, so it can be put back.
fn set(conn: &mut Conn, name: &str, value: &str) -> Outcome {
    let previous = conn
        .query(&format!("SELECT @@GLOBAL.{name}"))
        .map_err(|e| e.to_string())?;
    let previous = previous
        .first_value()
        .map_or_else(|| "NULL".to_string(), sql_literal);
    let stmt = format!("SET GLOBAL {name} = {}", sql_literal(value));
    conn.execute(&stmt).map_err(|e| e.to_string())?;
    Ok(("ok".into(), Some(Undo::Setting(name.to_string(), previous))))
}

/// `sql STATEMENT`: the statement as written; a result set is read and dropped.
fn sql(conn: &mut Conn, statement: &str) -> Outcome {
    conn.query(statement).map_err(|e| e.to_string())?;
    Ok(("ok".into(), None))
}

/// `pin CLASS=CPUS`: the class's threads placed now (as `--pin`), checked in `/proc`.
fn pin(conn: &mut Conn, pid: Option<u32>, rule: &str) -> Outcome {
    let pid = pid.ok_or(
        "pin needs the server's process: a sandbox of ours or a server on this machine \
         reached through its socket",
    )?;
    let rule = Rule::parse(rule).map_err(|e| e.to_string())?;
    let class = rule.class.clone();
    let policy = Policy { rules: vec![rule] };
    let mut placer = Placer::new(pid, conn, policy).map_err(|e| e.to_string())?;
    let applied = placer.tick(conn).map_err(|e| e.to_string())?;
    let failed = applied.failed().count();
    let outcome = match (applied.placed.len(), failed) {
        (0, _) => format!("no thread of {class} running"),
        (n, 0) => format!("ok ({n} thread(s) placed)"),
        (n, f) => format!("{f} of {n} thread(s) did not take the placement"),
    };
    Ok((outcome, Some(Undo::Pin(class, placer))))
}

/// Puts back what an action changed; the outcome in words.
pub(crate) fn undo(target: &ConnectOptions, u: Undo) -> String {
    match u {
        Undo::Setting(name, value) => restore(target, &name, &value),
        Undo::Pin(class, mut placer) => {
            placer.restore(true);
            format!("{class} back on the server's CPUs")
        }
    }
}

/// Puts `name` back to `value` (an SQL literal); the outcome in words.
fn restore(target: &ConnectOptions, name: &str, value: &str) -> String {
    match put_back(target, name, value) {
        Ok(()) => format!("{name}={value} ok"),
        Err(e) => format!("{name}={value} failed: {e}"),
    }
}
