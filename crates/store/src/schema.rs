//! The schema and its migrations.
//!
//! A qpslab store is marked by `PRAGMA application_id` and versioned by `PRAGMA user_version`:
//! migration N (1-based) takes the store from version N-1 to N, and runs once, in a transaction.
//! Never edit a released migration; append a new one.

use crate::error::Error;
use rusqlite::{Connection, ErrorCode};
use std::path::Path;

/// `PRAGMA application_id` of a qpslab store: "qpsl" in ASCII.
pub const APPLICATION_ID: i32 = 0x7170_736c;

/// Ordered migrations; index 0 takes an empty file to version 1.
const MIGRATIONS: &[&str] = &[
    r#"
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
"#,
    r#"
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
"#,
    DURABLE_WRITES,
    CELL_ATTEMPTS,
    PHASE_ACTIONS,
    TUNE_TRIALS,
];

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

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Checks that `conn` is an empty file or a qpslab store this build can read, then applies the
/// missing migrations.
pub(crate) fn check_and_migrate(conn: &mut Connection, path: &Path) -> Result<(), Error> {
    let version = version(conn, path)?;
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
        let tx = conn.transaction()?;
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", i as i64 + 1)?;
        tx.pragma_update(None, "application_id", APPLICATION_ID)?;
        tx.commit()?;
    }
    Ok(())
}

/// The schema version of the store behind `conn`, after checking that it is a qpslab store
/// this build can read (0: a new, empty file). Reads only.
pub(crate) fn version(conn: &Connection, path: &Path) -> Result<i64, Error> {
    let not_db = |e: rusqlite::Error| match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) => Error::NotADatabase {
            path: path.to_path_buf(),
        },
        _ => Error::Sqlite(e),
    };
    let app_id: i32 = conn
        .pragma_query_value(None, "application_id", |r| r.get(0))
        .map_err(not_db)?;
    let version: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .map_err(not_db)?;
    if app_id != APPLICATION_ID {
        let objects: i64 = conn
            .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
            .map_err(not_db)?;
        if app_id != 0 || version != 0 || objects != 0 {
            return Err(Error::NotQpslab {
                path: path.to_path_buf(),
            });
        }
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
