//! Carrying out one action on its own connection: one executor per kind of [`Action`], and
//! putting back what `set` changed.

use qpslab_core::live::{sql_literal, Action};
use qpslab_core::ConnectOptions;
use qpslab_wire::Conn;
use std::time::{Duration, Instant};

/// What one action did: its outcome, how long it took, and for `set` the value to restore.
pub(crate) struct Done {
    pub outcome: String,
    pub took_ms: f64,
    /// `(name, previous value as an SQL literal)` when a `set` succeeded.
    pub saved: Option<(String, String)>,
}

/// Runs `action` on a new connection to `target`.
pub(crate) fn run(target: &ConnectOptions, action: &Action) -> Done {
    let started = Instant::now();
    let result =
        Conn::connect(target)
            .map_err(|e| e.to_string())
            .and_then(|mut conn| match action {
                Action::Set { name, .. } => set(&mut conn, name, &action.sql()),
                Action::Sql { statement } => sql(&mut conn, statement),
            });
    let took_ms = started.elapsed().as_secs_f64() * 1e3;
    match result {
        Ok(saved) => Done {
            outcome: "ok".into(),
            took_ms,
            saved,
        },
        Err(e) => Done {
            outcome: e,
            took_ms,
            saved: None,
        },
    }
}

/// `set NAME=VALUE`: reads the global value first, so it can be put back.
fn set(conn: &mut Conn, name: &str, stmt: &str) -> Result<Option<(String, String)>, String> {
    let previous = conn
        .query(&format!("SELECT @@GLOBAL.{name}"))
        .map_err(|e| e.to_string())?;
    let previous = previous
        .first_value()
        .map_or_else(|| "NULL".to_string(), sql_literal);
    conn.execute(stmt).map_err(|e| e.to_string())?;
    Ok(Some((name.to_string(), previous)))
}

/// `sql STATEMENT`: the statement as written; a result set is read and dropped.
fn sql(conn: &mut Conn, statement: &str) -> Result<Option<(String, String)>, String> {
    conn.query(statement).map_err(|e| e.to_string())?;
    Ok(None)
}

/// How long a restore keeps trying while the server refuses (a buffer-pool resize still in
/// progress refuses another until it is done).
const RESTORE_PATIENCE: Duration = Duration::from_secs(30);

/// Puts `name` back to `value` (an SQL literal); the outcome in words.
pub(crate) fn restore(target: &ConnectOptions, name: &str, value: &str) -> String {
    let stmt = format!("SET GLOBAL {name} = {value}");
    let started = Instant::now();
    loop {
        let result = Conn::connect(target).and_then(|mut c| c.execute(&stmt));
        match result {
            Ok(_) => return format!("{name}={value} ok"),
            Err(e) if started.elapsed() < RESTORE_PATIENCE && busy(&e) => {
                std::thread::sleep(Duration::from_millis(250));
            }
            Err(e) => return format!("{name}={value} failed: {e}"),
        }
    }
}

/// Whether the server refused only because an earlier change is still being applied.
fn busy(e: &qpslab_wire::Error) -> bool {
    e.to_string().contains("in progress")
}
