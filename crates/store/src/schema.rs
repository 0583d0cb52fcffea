//! The schema and its migrations.
//!
//! A qpslab store is marked by `PRAGMA application_id` and versioned by `PRAGMA user_version`:
//! migration N (1-based) takes the store from version N-1 to N. The missing migrations run
//! together in one `BEGIN IMMEDIATE` transaction that checks the version again under the write
//! lock, so processes creating one new store at the same time all succeed: the first creates it,
//! the others find it made. Never edit a released migration; append a new one.

use crate::error::Error;
use rusqlite::{Connection, ErrorCode, OptionalExtension, Transaction, TransactionBehavior};
use std::path::Path;

/// One step of the schema: SQL, or code for what SQL alone cannot say (rebuilding a table).
enum Migration {
    Sql(&'static str),
    Code(fn(&Transaction<'_>) -> Result<(), Error>),
}
use Migration::{Code, Sql};

/// `PRAGMA application_id` of a qpslab store: "qpsl" in ASCII.
pub const APPLICATION_ID: i32 = 0x7170_736c;

/// Ordered migrations; index 0 takes an empty file to version 1.
const MIGRATIONS: &[Migration] = &[
    Sql(r#"
CREATE TABLE runs (
    id             INTEGER PRIMARY KEY,
    uuid           TEXT NOT NULL UNIQUE,
    started_at     REAL NOT NULL,          -- Unix seconds, UTC
    finished_at    REAL,                   -- Unix seconds, NULL until finished
    status         TEXT NOT NULL CHECK (status IN ('running','completed','failed','interrupted')),
    command        TEXT NOT NULL,          -- argv, without secrets
    workload       TEXT NOT NULL,
    plan_json      TEXT NOT NULL,          -- qpslab_core::RunPlan
    target         TEXT NOT NULL,          -- user@host:port/db, never a password
    server_version TEXT NOT NULL,
    server_json    TEXT NOT NULL,          -- qpslab_core::env::ServerInfo
    host_json      TEXT NOT NULL,          -- qpslab_core::env::HostFacts
    tool_version   TEXT NOT NULL,
    study_id       TEXT,
    cell_label     TEXT
);
CREATE INDEX runs_started ON runs (started_at);
CREATE INDEX runs_study ON runs (study_id) WHERE study_id IS NOT NULL;

CREATE TABLE phases (
    id                 INTEGER PRIMARY KEY,
    run_id             INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq                INTEGER NOT NULL,   -- 1, 2, ... within the run
    recorded_at        REAL NOT NULL,      -- Unix seconds, when the phase was written
    threads            INTEGER NOT NULL,
    duration_s         REAL NOT NULL,
    events             INTEGER NOT NULL,
    reads              INTEGER NOT NULL,
    writes             INTEGER NOT NULL,
    other              INTEGER NOT NULL,
    errors_json        TEXT NOT NULL,      -- {"1213": 4, ...}: retried errors by code
    reconnects         INTEGER NOT NULL,
    tps                REAL NOT NULL,
    qps                REAL NOT NULL,
    lat_min_ms         REAL NOT NULL,
    lat_avg_ms         REAL NOT NULL,
    lat_max_ms         REAL NOT NULL,
    percentiles_json   TEXT NOT NULL,      -- [{"p": 95.0, "ms": 1.2}, ...]
    statements_json    TEXT NOT NULL,      -- latency per statement kind
    client_cpu_user_s  REAL NOT NULL,
    client_cpu_sys_s   REAL NOT NULL,
    client_max_rss_kib INTEGER NOT NULL,
    rate_json          TEXT,               -- fixed-rate statistics, NULL without --rate
    summary_json       TEXT NOT NULL,      -- the whole PhaseResult minus samples and histograms
    UNIQUE (run_id, seq)
);

CREATE TABLE samples (
    phase_id           INTEGER NOT NULL REFERENCES phases (id) ON DELETE CASCADE,
    seq                INTEGER NOT NULL,
    elapsed_s          REAL NOT NULL,
    interval_s         REAL NOT NULL,
    events             INTEGER NOT NULL,
    reads              INTEGER NOT NULL,
    writes             INTEGER NOT NULL,
    other              INTEGER NOT NULL,
    errors             INTEGER NOT NULL,
    reconnects         INTEGER NOT NULL,
    lat_count          INTEGER NOT NULL,
    lat_min_ms         REAL NOT NULL,
    lat_avg_ms         REAL NOT NULL,
    lat_max_ms         REAL NOT NULL,
    p_json             TEXT NOT NULL,      -- percentiles of this interval
    client_cpu_user_s  REAL NOT NULL,
    client_cpu_sys_s   REAL NOT NULL,
    client_max_rss_kib INTEGER NOT NULL,
    late_events        INTEGER NOT NULL,
    max_lag_ms         REAL NOT NULL,
    PRIMARY KEY (phase_id, seq)
) WITHOUT ROWID;

CREATE TABLE histograms (
    phase_id INTEGER NOT NULL REFERENCES phases (id) ON DELETE CASCADE,
    seq      INTEGER NOT NULL,             -- 0 is `event`, then statement kinds
    name     TEXT NOT NULL,
    v2       BLOB NOT NULL,                -- HdrHistogram V2 serialization, microseconds
    PRIMARY KEY (phase_id, seq)
);

CREATE TABLE telemetry (
    phase_id  INTEGER NOT NULL REFERENCES phases (id) ON DELETE CASCADE,
    seq       INTEGER NOT NULL,
    elapsed_s REAL NOT NULL,
    source    TEXT NOT NULL,               -- server_status, server_proc, client_proc, ...
    json      TEXT NOT NULL,
    PRIMARY KEY (phase_id, seq)
) WITHOUT ROWID;

-- For people reading the file with the sqlite3 shell.
CREATE VIEW phase_overview AS
SELECT r.id AS run_id, datetime(r.started_at, 'unixepoch') AS started_utc, r.workload,
       r.target, r.server_version, r.status, p.seq AS phase, p.threads, p.duration_s,
       round(p.tps, 2) AS tps, round(p.qps, 2) AS qps, p.lat_avg_ms, p.lat_max_ms
FROM runs r JOIN phases p ON p.run_id = r.id
ORDER BY r.id, p.seq;
"#),
    Sql(r#"
CREATE TABLE studies (
    id           INTEGER PRIMARY KEY,
    name         TEXT UNIQUE NOT NULL,
    spec_toml    TEXT NOT NULL,            -- the spec file as given
    spec_hash    TEXT NOT NULL,            -- hash of the normalized spec (resume checks it)
    created_at   REAL NOT NULL,            -- Unix seconds, UTC
    finished_at  REAL,
    status       TEXT NOT NULL CHECK (status IN ('running','done','failed','interrupted')),
    env_json     TEXT NOT NULL,            -- host facts, OS settings, servers
    factors_json TEXT NOT NULL             -- [{"name": .., "levels": [..]}]
);

CREATE TABLE cells (
    id          INTEGER PRIMARY KEY,
    study_id    INTEGER NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,          -- execution order, from 1
    label       TEXT NOT NULL,             -- e.g. "bp1g/threads=8/r2"
    variant     TEXT NOT NULL,
    levels_json TEXT NOT NULL,             -- {"factor": "level"}, {} unless factorial
    params_json TEXT NOT NULL,             -- the swept settings of this cell
    repeat      INTEGER NOT NULL,          -- from 1
    status      TEXT NOT NULL CHECK (status IN ('pending','running','done','failed')),
    run_id      INTEGER REFERENCES runs (id) ON DELETE SET NULL,
    error       TEXT,
    log_tail    TEXT,
    started_at  REAL,
    finished_at REAL,
    UNIQUE (study_id, seq),
    UNIQUE (study_id, label)
);
"#),
    Sql(DURABLE_WRITES),
    Sql(CELL_ATTEMPTS),
    Sql(PHASE_ACTIONS),
    Sql(TUNE_TRIALS),
    Code(keep_every_run),
    Sql(CLIENT_LATENESS),
    Sql(STUCK_SESSIONS),
    Sql(IMPORT_ORIGINS),
    Sql(SAMPLE_HISTOGRAMS),
    Sql(LEASES),
    Sql(RESTORE_TRAIL),
];

/// The restore trail of a store shared by hosts (a server's): per target server (`server_key`,
/// the lab's hash of its `@@hostname` and `@@datadir`) and account (`''` for its settings,
/// else the first account a command created there), the record of what a command changed
/// (JSON, NULL while held with nothing recorded) and the process holding it, judged as a run's
/// owner is (`trail.rs`). A file's store keeps its trail in the lab directory's files.
const RESTORE_TRAIL: &str = r#"
CREATE TABLE restore_trail (
    server_key    TEXT NOT NULL,
    account       TEXT NOT NULL,
    record_json   TEXT,
    owner_pid     INTEGER,
    owner_boot_id TEXT,
    owner_started INTEGER,
    heartbeat_at  REAL,
    PRIMARY KEY (server_key, account)
);
"#;

/// When a run's or a study's owner last said it was alive (Unix seconds, by the store's
/// clock): on a store shared by hosts (a server's), an owner on another host is judged by it
/// (`lease.rs`). NULL where it never said (a file's store, rows written before).
const LEASES: &str = r#"
ALTER TABLE runs ADD COLUMN heartbeat_at REAL;
ALTER TABLE studies ADD COLUMN heartbeat_at REAL;
"#;

/// Per interval, its serialized event histogram (HDR V2, µs), kept for sharded runs so that
/// `qpslab merge` computes each merged interval's percentiles exactly; NULL otherwise.
const SAMPLE_HISTOGRAMS: &str = r#"
ALTER TABLE samples ADD COLUMN histogram BLOB;
"#;

/// Where an imported run or study came from (`qpslab import`): its id in the store it was
/// measured in (the first store, when imported again from a store that imported it) and that
/// store's file as given; NULL for what was measured into this store.
const IMPORT_ORIGINS: &str = r#"
ALTER TABLE runs ADD COLUMN original_id INTEGER;
ALTER TABLE runs ADD COLUMN imported_from TEXT;
ALTER TABLE studies ADD COLUMN original_id INTEGER;
ALTER TABLE studies ADD COLUMN imported_from TEXT;
"#;

/// Per interval, the sessions stuck at its end (a request waiting longer than the stuck
/// bound) and the longest any request had waited then, s (when at least 1 s); 0 in samples
/// stored before they were kept.
const STUCK_SESSIONS: &str = r#"
ALTER TABLE samples ADD COLUMN stuck_sessions INTEGER NOT NULL DEFAULT 0;
ALTER TABLE samples ADD COLUMN longest_in_flight_s REAL NOT NULL DEFAULT 0;
"#;

/// Per interval of a fixed-rate phase, how many events the client itself sent late (more than
/// 1 ms after they were due with a session free) and its largest such lateness, ms; 0 in
/// samples stored before it was kept.
const CLIENT_LATENESS: &str = r#"
ALTER TABLE samples ADD COLUMN client_late_events INTEGER NOT NULL DEFAULT 0;
ALTER TABLE samples ADD COLUMN client_max_late_ms REAL NOT NULL DEFAULT 0;
"#;

/// Results written as they are measured: a phase row exists from its start (`status` running),
/// samples and telemetry ticks are appended per interval, and the summary is filled in at the end
/// (`done`) or from the stored samples when the phase is cut short (`interrupted`). A run records
/// the process writing it (pid, boot id, process start time), so a run whose process died can be
/// told from one still being measured.
const DURABLE_WRITES: &str = r#"
ALTER TABLE phases ADD COLUMN status TEXT NOT NULL DEFAULT 'done'
    CHECK (status IN ('running','done','interrupted'));
ALTER TABLE runs ADD COLUMN owner_pid INTEGER;          -- NULL: written before owners were kept
ALTER TABLE runs ADD COLUMN owner_boot_id TEXT;         -- /proc/sys/kernel/random/boot_id
ALTER TABLE runs ADD COLUMN owner_started INTEGER;      -- the owner's start time, clock ticks
CREATE INDEX runs_running ON runs (status) WHERE status = 'running';
"#;

/// Every measurement of a study cell: the first stable one is the cell's run; the others are
/// kept with the reason they were measured again.
const CELL_ATTEMPTS: &str = r#"
CREATE TABLE cell_attempts (
    id          INTEGER PRIMARY KEY,
    cell_id     INTEGER NOT NULL REFERENCES cells (id) ON DELETE CASCADE,
    attempt     INTEGER NOT NULL,          -- from 1, in the order measured
    run_id      INTEGER REFERENCES runs (id) ON DELETE SET NULL,
    status      TEXT NOT NULL CHECK (status IN ('done','unstable')),
    reason      TEXT,                      -- the stability verdict when unstable
    recorded_at REAL NOT NULL,
    UNIQUE (cell_id, attempt)
);
"#;

/// Live actions of a phase (`run --at`): when each was due, what it was, what happened and how
/// long it took, the verdict of its before/after judgment in words, and the whole record
/// (segment means, change and its interval, the restore) as JSON.
const PHASE_ACTIONS: &str = r#"
CREATE TABLE phase_actions (
    id          INTEGER PRIMARY KEY,
    phase_id    INTEGER NOT NULL REFERENCES phases (id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,          -- from 0, in time order
    at_s        REAL NOT NULL,             -- seconds from the start of the measured phase
    action      TEXT NOT NULL,             -- set NAME=VALUE, sql STATEMENT
    outcome     TEXT NOT NULL,             -- ok, or the server's error
    took_ms     REAL NOT NULL,
    judgment    TEXT NOT NULL,             -- gain, loss, no significant change, too short to judge
    record_json TEXT NOT NULL,             -- qpslab_core::live::ActionRecord
    UNIQUE (phase_id, seq)
);
"#;

/// The trials of `qpslab tune`: each measured configuration of a tune session, in order, with
/// the settings it changed from the baseline, its throughput and, when it was stored as a run
/// (the confirmation, which is also the session's proof study), that run.
const TUNE_TRIALS: &str = r#"
CREATE TABLE tune_trials (
    id            INTEGER PRIMARY KEY,
    session       TEXT NOT NULL,              -- the tune session (its proof study's name)
    seq           INTEGER NOT NULL,           -- from 1, in the order measured
    phase         TEXT NOT NULL,              -- rung N, random, confirm baseline, confirm tuned
    settings_json TEXT NOT NULL,              -- {"variable": "value"} changed from the baseline
    tps           REAL NOT NULL,
    duration_s    REAL NOT NULL,              -- measured seconds
    run_id        INTEGER REFERENCES runs (id) ON DELETE SET NULL,
    recorded_at   REAL NOT NULL,
    UNIQUE (session, seq)
);
"#;

/// Nothing measured is lost and no run id is given twice: runs get `AUTOINCREMENT` ids (a run
/// removed because it measured nothing no longer frees its id for the next run); a cell's
/// attempt cut short by a signal or a crash is kept as an `interrupted` attempt; a study records
/// the process driving it (as runs do), so a second process cannot drive it at the same time.
fn keep_every_run(tx: &Transaction<'_>) -> Result<(), Error> {
    rebuild(
        tx,
        "runs",
        &[(
            "id             INTEGER PRIMARY KEY,",
            "id             INTEGER PRIMARY KEY AUTOINCREMENT,",
        )],
    )?;
    rebuild(
        tx,
        "cell_attempts",
        &[(
            "CHECK (status IN ('done','unstable'))",
            "CHECK (status IN ('done','unstable','interrupted'))",
        )],
    )?;
    tx.execute_batch(
        "ALTER TABLE studies ADD COLUMN owner_pid INTEGER;     -- the process driving it, if any
         ALTER TABLE studies ADD COLUMN owner_boot_id TEXT;
         ALTER TABLE studies ADD COLUMN owner_started INTEGER;",
    )?;
    Ok(())
}

/// Rebuilds `table` with its stored definition changed by `edits` (each `(from, to)` must match
/// exactly once), keeping every row, column (whatever later migrations added), index and view:
/// SQLite's way of changing what `ALTER TABLE` cannot. Needs `foreign_keys` off (see
/// [`check_and_migrate`]); the foreign keys are checked at the end.
fn rebuild(tx: &Transaction<'_>, table: &str, edits: &[(&str, &str)]) -> Result<(), Error> {
    let mut sql: String = tx.query_row(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?1",
        [table],
        |r| r.get(0),
    )?;
    let new = format!("{table}_rebuilt");
    let head = format!("CREATE TABLE {table} (");
    for (from, to) in std::iter::once((head.as_str(), &*format!("CREATE TABLE {new} (")))
        .chain(edits.iter().copied())
    {
        if sql.matches(from).count() != 1 {
            return Err(Error::Corrupt(format!(
                "table {table} is not as this migration expects ({from})"
            )));
        }
        sql = sql.replacen(from, to, 1);
    }
    let list = |kind: &str| -> Result<Vec<(String, String)>, Error> {
        let mut st = tx.prepare(
            "SELECT name, sql FROM sqlite_master WHERE type = ?1 AND sql IS NOT NULL
               AND (?1 = 'view' OR tbl_name = ?2)",
        )?;
        let rows = st.query_map([kind, table], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    };
    let (indexes, views) = (list("index")?, list("view")?);
    // A view naming the table would stop the rename below: views go and come back.
    for (name, _) in &views {
        tx.execute_batch(&format!("DROP VIEW \"{name}\""))?;
    }
    tx.execute_batch(&sql)?;
    tx.execute_batch(&format!(
        "INSERT INTO {new} SELECT * FROM {table};
         DROP TABLE {table};
         ALTER TABLE {new} RENAME TO {table};"
    ))?;
    for (_, sql) in indexes.iter().chain(&views) {
        tx.execute_batch(sql)?;
    }
    let broken: Option<String> = tx
        .query_row("SELECT \"table\" FROM pragma_foreign_key_check", [], |r| {
            r.get(0)
        })
        .optional()?;
    if let Some(t) = broken {
        return Err(Error::Corrupt(format!(
            "rebuilding {table} broke a reference from {t}"
        )));
    }
    Ok(())
}

/// Creates, in the empty file behind `conn`, a store as the build before `qpslab import`'s
/// columns left it (tests of reading older stores).
#[cfg(test)]
pub(crate) fn create_before_import(conn: &mut Connection) -> Result<(), Error> {
    let version = MIGRATIONS
        .iter()
        .position(|m| matches!(m, Sql(s) if *s == IMPORT_ORIGINS))
        .unwrap_or(MIGRATIONS.len());
    conn.pragma_update(None, "foreign_keys", false)?;
    let tx = conn.transaction()?;
    for m in &MIGRATIONS[..version] {
        match m {
            Sql(sql) => tx.execute_batch(sql)?,
            Code(f) => f(&tx)?,
        }
    }
    tx.pragma_update(None, "user_version", version as i64)?;
    tx.pragma_update(None, "application_id", APPLICATION_ID)?;
    tx.commit()?;
    Ok(())
}

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// What a store file says of itself: `application_id`, `user_version` and how many schema
/// objects it has, read in one statement (one consistent snapshot).
fn header(conn: &Connection, path: &Path) -> Result<(i32, i64, i64), Error> {
    conn.query_row(
        "SELECT (SELECT application_id FROM pragma_application_id),
                (SELECT user_version FROM pragma_user_version),
                (SELECT count(*) FROM sqlite_master)",
        [],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )
    .map_err(|e| match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) => Error::NotADatabase {
            path: path.to_path_buf(),
        },
        _ => Error::Sqlite(e),
    })
}

/// Checks a header read by [`header`]: an empty file, or a qpslab store this build can read.
fn check(path: &Path, (app_id, version, objects): (i32, i64, i64)) -> Result<i64, Error> {
    if app_id != APPLICATION_ID && (app_id != 0 || version != 0 || objects != 0) {
        return Err(Error::NotQpslab {
            path: path.to_path_buf(),
        });
    }
    if version < 0 {
        return Err(Error::Corrupt(format!("negative schema version {version}")));
    }
    if version > SCHEMA_VERSION {
        return Err(Error::NewerSchema {
            path: path.to_path_buf(),
            found: version,
            supported: SCHEMA_VERSION,
        });
    }
    Ok(version)
}

/// The schema version of the store behind `conn`, after checking that it is a qpslab store
/// this build can read (0: a new, empty file). Reads only.
pub(crate) fn version(conn: &Connection, path: &Path) -> Result<i64, Error> {
    check(path, header(conn, path)?)
}

/// Checks that `conn` is an empty file or a qpslab store this build can read, then applies the
/// missing migrations, all in one transaction that holds the write lock from its start (a
/// process that finds the store being created waits, then sees it created).
pub(crate) fn check_and_migrate(conn: &mut Connection, path: &Path) -> Result<(), Error> {
    if check(path, header(conn, path)?)? == SCHEMA_VERSION {
        return Ok(());
    }
    // A table rebuild drops the old table: its references must not cascade (the pragma is a
    // no-op inside a transaction; `Store::open` turns it back on).
    conn.pragma_update(None, "foreign_keys", false)?;
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let version = check(path, header(&tx, path)?)?;
    for (i, m) in MIGRATIONS.iter().enumerate().skip(version as usize) {
        match m {
            Sql(sql) => tx.execute_batch(sql)?,
            Code(f) => f(&tx)?,
        }
        tx.pragma_update(None, "user_version", i as i64 + 1)?;
    }
    tx.pragma_update(None, "application_id", APPLICATION_ID)?;
    tx.commit()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store as the build before `keep_every_run` left it, with a run, its phase, a study, a
    /// cell and an attempt.
    fn version_6(path: &Path) -> Connection {
        let conn = Connection::open(path).unwrap();
        for m in &MIGRATIONS[..6] {
            let Sql(sql) = m else {
                panic!("only SQL before 7")
            };
            conn.execute_batch(sql).unwrap();
        }
        conn.pragma_update(None, "user_version", 6).unwrap();
        conn.pragma_update(None, "application_id", APPLICATION_ID)
            .unwrap();
        conn.execute_batch(
            "INSERT INTO runs (id, uuid, started_at, status, command, workload, plan_json, target,
                               server_version, server_json, host_json, tool_version, study_id,
                               cell_label, owner_pid)
             VALUES (5, 'u5', 1.0, 'interrupted', 'c', 'w', '{}', 't', 'v', '{}', '{}', '0', 's',
                     'a', 42);
             INSERT INTO phases (run_id, seq, recorded_at, threads, duration_s, events, reads,
                                 writes, other, errors_json, reconnects, tps, qps, lat_min_ms,
                                 lat_avg_ms, lat_max_ms, percentiles_json, statements_json,
                                 client_cpu_user_s, client_cpu_sys_s, client_max_rss_kib,
                                 summary_json)
             VALUES (5, 1, 1.0, 4, 1.0, 10, 0, 0, 0, '{}', 0, 10.0, 10.0, 1, 1, 1, '[]', '[]',
                     0, 0, 0, '{}');
             INSERT INTO studies (id, name, spec_toml, spec_hash, created_at, status, env_json,
                                  factors_json)
             VALUES (1, 's', '', '', 1.0, 'interrupted', '{}', '[]');
             INSERT INTO cells (id, study_id, seq, label, variant, levels_json, params_json,
                                repeat, status, run_id)
             VALUES (1, 1, 1, 'a', 'v', '{}', '{}', 1, 'done', 5);
             INSERT INTO cell_attempts (cell_id, attempt, run_id, status, recorded_at)
             VALUES (1, 1, 5, 'done', 1.0);",
        )
        .unwrap();
        conn
    }

    #[test]
    fn keep_every_run_migrates_a_store_keeping_its_rows_references_and_view() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v6.db");
        drop(version_6(&path));
        let mut conn = Connection::open(&path).unwrap();
        check_and_migrate(&mut conn, &path).unwrap();
        conn.pragma_update(None, "foreign_keys", true).unwrap();
        let version: i64 = conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        let owner: i64 = conn
            .query_row("SELECT owner_pid FROM runs WHERE id = 5", [], |r| r.get(0))
            .unwrap();
        assert_eq!(owner, 42, "the columns a later migration added are kept");
        let overview: f64 = conn
            .query_row("SELECT tps FROM phase_overview WHERE run_id = 5", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(overview, 10.0);
        let indexes: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'runs'
                   AND name IN ('runs_started', 'runs_study', 'runs_running')",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(indexes, 3);
        // An interrupted attempt can be recorded; a removed last run frees no id.
        conn.execute(
            "INSERT INTO cell_attempts (cell_id, attempt, run_id, status, recorded_at)
             VALUES (1, 2, 5, 'interrupted', 2.0)",
            [],
        )
        .unwrap();
        conn.execute_batch(
            "INSERT INTO runs (uuid, started_at, status, command, workload, plan_json, target,
                               server_version, server_json, host_json, tool_version)
             VALUES ('u6', 1.0, 'completed', 'c', 'w', '{}', 't', 'v', '{}', '{}', '0');
             DELETE FROM runs WHERE uuid = 'u6';
             INSERT INTO runs (uuid, started_at, status, command, workload, plan_json, target,
                               server_version, server_json, host_json, tool_version)
             VALUES ('u7', 1.0, 'completed', 'c', 'w', '{}', 't', 'v', '{}', '{}', '0');",
        )
        .unwrap();
        let id: i64 = conn
            .query_row("SELECT id FROM runs WHERE uuid = 'u7'", [], |r| r.get(0))
            .unwrap();
        assert_eq!(id, 7);
        // The phases still reference runs: deleting the run takes its phase with it.
        conn.execute("DELETE FROM cells", []).unwrap();
        conn.execute("DELETE FROM runs WHERE id = 5", []).unwrap();
        let phases: i64 = conn
            .query_row("SELECT count(*) FROM phases", [], |r| r.get(0))
            .unwrap();
        assert_eq!(phases, 0);
    }
}
