//! Reading a log file into a [`ReplayLog`] with `qpslab-sqllog`, and identifying it by content.
//!
//! Statements are judged for a server of unknown version in the default `sql_mode`, each
//! logged connection by its own classifier; once the target is reached, its caller judges them
//! again as that server reads them ([`ReplayLog::classify_for`], [`super::Reading::of`]).

use super::{Logged, Reading, ReplayLog, Sessions};
use qpslab_core::fault::Blame;
use qpslab_lab::ExecError;
use qpslab_sqllog::{fingerprint, Command, Effect, Entry, LogError, LogType, Verdict};
use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::io::Read;
use std::path::Path;

/// A log read for replay, and what identifies the file.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// The statements.
    pub log: ReplayLog,
    /// The file's size.
    pub bytes: u64,
    /// SHA-256 of its content, hex.
    pub sha256: String,
    /// `MariaDB` or `MySQL`.
    pub flavor: &'static str,
}

/// Reads the log at `path` (a `kind` log). A file that is missing or not such a log is the
/// user's error.
pub fn load(path: &Path, kind: LogType) -> Result<Loaded, ExecError> {
    let mut reader = qpslab_sqllog::open(path, kind).map_err(log_error)?;
    let flavor = reader.flavor().name();
    let mut log = ReplayLog::default();
    let mut sql_execute = HashSet::new();
    for entry in reader.by_ref() {
        let entry = entry.map_err(log_error)?;
        if expands_sql_execute(&entry, &mut sql_execute) {
            log.skipped_admin += 1;
            continue;
        }
        add(&mut log, entry);
    }
    log.skipped_unparsed = reader.skipped();
    // Each connection's statements in order: a `SET sql_mode` changes how later ones are read.
    // How the sessions will take them is not known yet: as any of them may.
    log.classify_for(&[Reading::unknown()], Sessions::Interleaved);
    let (bytes, sha256) = digest(path).map_err(|e| log_error(LogError::Io(e)))?;
    Ok(Loaded {
        log,
        bytes,
        sha256,
        flavor,
    })
}

fn log_error(e: LogError) -> ExecError {
    if e.is_user_error() {
        ExecError::Replay(e.to_string())
    } else {
        ExecError::Log(e.to_string())
    }
}

/// True for a general log's `Execute` line that repeats, expanded, the SQL-level `EXECUTE s
/// USING ...` just before it on the same connection (MariaDB writes both): the `EXECUTE` is
/// replayed (after its replayed `PREPARE`), so running the expansion too would run it twice.
/// Binary-protocol executions have only the `Execute` line and are kept. `after_execute` holds
/// the connections whose last entry was such an `EXECUTE`.
fn expands_sql_execute(e: &Entry, after_execute: &mut HashSet<u64>) -> bool {
    let conn = e.thread_id.unwrap_or(0);
    let follows = after_execute.remove(&conn);
    let is_sql_execute = e.command == Command::Query
        && e.sql
            .trim_ascii_start()
            .get(..8)
            .is_some_and(|w| w.eq_ignore_ascii_case(b"execute "));
    if is_sql_execute {
        after_execute.insert(conn);
    }
    follows && e.command == Command::Execute
}

/// A statement's verdict until [`ReplayLog::classify_for`] gives it its own: the worst kind a
/// statement may be, as for one that cannot be read.
const UNJUDGED: Verdict = Verdict {
    effect: Effect::Admin,
    why: "not judged yet",
};

/// One entry into the log: statements are replayed, connections shape the sessions, the rest is
/// counted as skipped.
fn add(log: &mut ReplayLog, e: Entry) {
    let conn = e.thread_id.unwrap_or(0);
    match e.command {
        Command::Query | Command::Execute => {
            log.add_statement(Logged {
                conn,
                start_us: e.at_us,
                query_s: e.query_time_s.unwrap_or(0.0),
                fingerprint: fingerprint(&e.sql),
                // Judged once the whole log is read, each connection in order (`load`).
                verdict: UNJUDGED,
                sql: e.sql,
                db: e.db,
            });
        }
        Command::Connect | Command::Quit => log.add_connection_event(conn, e.at_us),
        _ => log.skipped_admin += 1,
    }
}

/// The file's size and SHA-256.
fn digest(path: &Path) -> std::io::Result<(u64, String)> {
    let mut f = std::fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut bytes = 0u64;
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        bytes += n as u64;
        h.update(&buf[..n]);
    }
    let hex = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    Ok((bytes, hex))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::Kind;

    fn fixture(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../sqllog/tests/data")
            .join(name)
    }

    #[test]
    fn a_mariadb_slow_log_becomes_statements_by_connection() {
        let l = load(&fixture("mariadb-10.11-slow.log"), LogType::Slow).unwrap();
        assert_eq!(l.flavor, "MariaDB");
        assert_eq!(l.sha256.len(), 64);
        let first = &l.log.stmts[0];
        assert!(
            first.sql.starts_with(b"INSERT INTO sbtest1 VALUES"),
            "{first:?}"
        );
        assert_eq!((first.conn, first.kind), (6, Kind::Write));
        assert_eq!(first.db.as_deref(), Some("shop"));
        assert!(l.log.connections() >= 2);
    }

    #[test]
    fn a_general_logs_connects_shape_connections_and_admin_commands_are_skipped() {
        let l = load(&fixture("mariadb-10.11-general.log"), LogType::General).unwrap();
        let conn8: Vec<&str> = l
            .log
            .stmts
            .iter()
            .filter(|s| s.conn == 8)
            .map(|s| std::str::from_utf8(&s.sql).unwrap())
            .collect();
        assert_eq!(
            conn8[..2],
            ["SELECT DATABASE()", "UPDATE sbtest1 SET k=k+1 WHERE id=2"]
        );
        // `Init DB` is no statement, but the database it sets is carried.
        assert!(l.log.skipped_admin >= 1);
        // `EXECUTE s USING @a` runs once: its `Execute SELECT ...` expansion is not replayed.
        let conn9: Vec<&str> = l
            .log
            .stmts
            .iter()
            .filter(|s| s.conn == 9)
            .map(|s| std::str::from_utf8(&s.sql).unwrap())
            .collect();
        assert!(conn9.contains(&"EXECUTE s USING @a"), "{conn9:?}");
        assert!(
            !conn9.contains(&"SELECT c FROM shop.sbtest1 WHERE id=1"),
            "{conn9:?}"
        );
        let update = l
            .log
            .stmts
            .iter()
            .find(|s| s.sql.starts_with(b"UPDATE"))
            .unwrap();
        assert_eq!(
            (update.db.as_deref(), update.kind),
            (Some("shop"), Kind::Write)
        );
        assert!(l.log.spans.contains_key(&5) && l.log.spans.contains_key(&9));
    }

    #[test]
    fn a_general_log_read_as_slow_is_the_users_error() {
        let e = load(&fixture("mariadb-10.11-general.log"), LogType::Slow).unwrap_err();
        assert!(e.is_user_error(), "{e}");
        let e = load(&fixture("no-such.log"), LogType::Slow).unwrap_err();
        assert!(e.is_user_error(), "{e}");
    }
}
