//! A store's tables on a MariaDB or MySQL server: the SQLite schema at [`SCHEMA_VERSION`], in
//! the server's types (`BIGINT`, `DOUBLE`, `LONGTEXT`, `LONGBLOB`, InnoDB, utf8mb4), created
//! at once in a new schema and marked in its own table, `qpslab_store`. A schema holding other
//! tables, or a newer qpslab's store, is refused as an SQLite file would be.
//!
//! Migrations after this version append here as they do to the SQLite list: each server step
//! beside its SQLite one, under the same version number.

use crate::db::{Behavior, Conn, OptionalExtension};
use crate::error::Error;
use crate::schema::{APPLICATION_ID, SCHEMA_VERSION};
use std::path::Path;

/// The tables, in the order their references need. Names and columns are the SQLite store's.
const TABLES: &[&str] = &[
    "CREATE TABLE runs (
    id             BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    uuid           VARCHAR(64) NOT NULL UNIQUE,
    started_at     DOUBLE NOT NULL,
    finished_at    DOUBLE,
    status         VARCHAR(16) NOT NULL,
    command        LONGTEXT NOT NULL,
    workload       VARCHAR(255) NOT NULL,
    plan_json      LONGTEXT NOT NULL,
    target         TEXT NOT NULL,
    server_version VARCHAR(255) NOT NULL,
    server_json    LONGTEXT NOT NULL,
    host_json      LONGTEXT NOT NULL,
    tool_version   VARCHAR(64) NOT NULL,
    study_id       VARCHAR(255),
    cell_label     TEXT,
    owner_pid      BIGINT,
    owner_boot_id  VARCHAR(64),
    owner_started  BIGINT,
    original_id    BIGINT,
    imported_from  TEXT,
    heartbeat_at   DOUBLE,
    KEY runs_started (started_at),
    KEY runs_study (study_id),
    KEY runs_running (status)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4",
    "CREATE TABLE phases (
    id                 BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    run_id             BIGINT NOT NULL,
    seq                BIGINT NOT NULL,
    recorded_at        DOUBLE NOT NULL,
    threads            BIGINT NOT NULL,
    duration_s         DOUBLE NOT NULL,
    events             BIGINT NOT NULL,
    `reads`            BIGINT NOT NULL,
    writes             BIGINT NOT NULL,
    other              BIGINT NOT NULL,
    errors_json        LONGTEXT NOT NULL,
    reconnects         BIGINT NOT NULL,
    tps                DOUBLE NOT NULL,
    qps                DOUBLE NOT NULL,
    lat_min_ms         DOUBLE NOT NULL,
    lat_avg_ms         DOUBLE NOT NULL,
    lat_max_ms         DOUBLE NOT NULL,
    percentiles_json   LONGTEXT NOT NULL,
    statements_json    LONGTEXT NOT NULL,
    client_cpu_user_s  DOUBLE NOT NULL,
    client_cpu_sys_s   DOUBLE NOT NULL,
    client_max_rss_kib BIGINT NOT NULL,
    rate_json          LONGTEXT,
    summary_json       LONGTEXT NOT NULL,
    status             VARCHAR(16) NOT NULL DEFAULT 'done',
    UNIQUE KEY (run_id, seq),
    FOREIGN KEY (run_id) REFERENCES runs (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4",
    "CREATE TABLE samples (
    phase_id            BIGINT NOT NULL,
    seq                 BIGINT NOT NULL,
    elapsed_s           DOUBLE NOT NULL,
    interval_s          DOUBLE NOT NULL,
    events              BIGINT NOT NULL,
    `reads`             BIGINT NOT NULL,
    writes              BIGINT NOT NULL,
    other               BIGINT NOT NULL,
    errors              BIGINT NOT NULL,
    reconnects          BIGINT NOT NULL,
    lat_count           BIGINT NOT NULL,
    lat_min_ms          DOUBLE NOT NULL,
    lat_avg_ms          DOUBLE NOT NULL,
    lat_max_ms          DOUBLE NOT NULL,
    p_json              LONGTEXT NOT NULL,
    client_cpu_user_s   DOUBLE NOT NULL,
    client_cpu_sys_s    DOUBLE NOT NULL,
    client_max_rss_kib  BIGINT NOT NULL,
    late_events         BIGINT NOT NULL,
    max_lag_ms          DOUBLE NOT NULL,
    client_late_events  BIGINT NOT NULL DEFAULT 0,
    client_max_late_ms  DOUBLE NOT NULL DEFAULT 0,
    stuck_sessions      BIGINT NOT NULL DEFAULT 0,
    longest_in_flight_s DOUBLE NOT NULL DEFAULT 0,
    histogram           LONGBLOB,
    PRIMARY KEY (phase_id, seq),
    FOREIGN KEY (phase_id) REFERENCES phases (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4",
    "CREATE TABLE histograms (
    phase_id BIGINT NOT NULL,
    seq      BIGINT NOT NULL,
    name     VARCHAR(255) NOT NULL,
    v2       LONGBLOB NOT NULL,
    PRIMARY KEY (phase_id, seq),
    FOREIGN KEY (phase_id) REFERENCES phases (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4",
    "CREATE TABLE telemetry (
    phase_id  BIGINT NOT NULL,
    seq       BIGINT NOT NULL,
    elapsed_s DOUBLE NOT NULL,
    source    VARCHAR(64) NOT NULL,
    json      LONGTEXT NOT NULL,
    PRIMARY KEY (phase_id, seq),
    FOREIGN KEY (phase_id) REFERENCES phases (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4",
    "CREATE TABLE studies (
    id            BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    name          VARCHAR(255) NOT NULL UNIQUE,
    spec_toml     LONGTEXT NOT NULL,
    spec_hash     VARCHAR(128) NOT NULL,
    created_at    DOUBLE NOT NULL,
    finished_at   DOUBLE,
    status        VARCHAR(16) NOT NULL,
    env_json      LONGTEXT NOT NULL,
    factors_json  LONGTEXT NOT NULL,
    owner_pid     BIGINT,
    owner_boot_id VARCHAR(64),
    owner_started BIGINT,
    original_id   BIGINT,
    imported_from TEXT,
    heartbeat_at  DOUBLE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4",
    "CREATE TABLE cells (
    id          BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    study_id    BIGINT NOT NULL,
    seq         BIGINT NOT NULL,
    label       VARCHAR(700) NOT NULL,
    variant     VARCHAR(255) NOT NULL,
    levels_json LONGTEXT NOT NULL,
    params_json LONGTEXT NOT NULL,
    `repeat`    BIGINT NOT NULL,
    status      VARCHAR(16) NOT NULL,
    run_id      BIGINT,
    error       LONGTEXT,
    log_tail    LONGTEXT,
    started_at  DOUBLE,
    finished_at DOUBLE,
    UNIQUE KEY (study_id, seq),
    UNIQUE KEY (study_id, label),
    FOREIGN KEY (study_id) REFERENCES studies (id) ON DELETE CASCADE,
    FOREIGN KEY (run_id) REFERENCES runs (id) ON DELETE SET NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4",
    "CREATE TABLE cell_attempts (
    id          BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    cell_id     BIGINT NOT NULL,
    attempt     BIGINT NOT NULL,
    run_id      BIGINT,
    status      VARCHAR(16) NOT NULL,
    reason      LONGTEXT,
    recorded_at DOUBLE NOT NULL,
    UNIQUE KEY (cell_id, attempt),
    FOREIGN KEY (cell_id) REFERENCES cells (id) ON DELETE CASCADE,
    FOREIGN KEY (run_id) REFERENCES runs (id) ON DELETE SET NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4",
    "CREATE TABLE phase_actions (
    id          BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    phase_id    BIGINT NOT NULL,
    seq         BIGINT NOT NULL,
    at_s        DOUBLE NOT NULL,
    action      LONGTEXT NOT NULL,
    outcome     LONGTEXT NOT NULL,
    took_ms     DOUBLE NOT NULL,
    judgment    TEXT NOT NULL,
    record_json LONGTEXT NOT NULL,
    UNIQUE KEY (phase_id, seq),
    FOREIGN KEY (phase_id) REFERENCES phases (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4",
    "CREATE TABLE tune_trials (
    id            BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    session       VARCHAR(255) NOT NULL,
    seq           BIGINT NOT NULL,
    phase         TEXT NOT NULL,
    settings_json LONGTEXT NOT NULL,
    tps           DOUBLE NOT NULL,
    duration_s    DOUBLE NOT NULL,
    run_id        BIGINT,
    recorded_at   DOUBLE NOT NULL,
    UNIQUE KEY (session, seq),
    FOREIGN KEY (run_id) REFERENCES runs (id) ON DELETE SET NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4",
    RESTORE_TRAIL,
];

/// The restore trail (migration 13, `schema.rs`'s `RESTORE_TRAIL`): one table, the same in a
/// new schema and in a step.
const RESTORE_TRAIL: &str = "CREATE TABLE restore_trail (
    server_key    VARCHAR(64) NOT NULL,
    account       VARCHAR(255) NOT NULL,
    record_json   LONGTEXT,
    owner_pid     BIGINT,
    owner_boot_id VARCHAR(64),
    owner_started BIGINT,
    heartbeat_at  DOUBLE,
    PRIMARY KEY (server_key, account)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4";

/// Views for other tools (Grafana's MySQL data source, a notebook): documented in
/// docs/store.md, stable across schema versions.
const VIEWS: &[&str] = &[
    "CREATE OR REPLACE VIEW qpslab_runs AS
SELECT r.id AS run_id, r.uuid, FROM_UNIXTIME(r.started_at) AS started, FROM_UNIXTIME(r.finished_at) AS finished,
       r.status, r.workload, r.target, r.server_version, r.tool_version,
       JSON_UNQUOTE(JSON_EXTRACT(r.host_json, '$.hostname')) AS host,
       r.study_id AS study, r.cell_label AS cell
FROM runs r",
    "CREATE OR REPLACE VIEW qpslab_phases AS
SELECT r.id AS run_id, p.seq AS phase, FROM_UNIXTIME(r.started_at) AS run_started, r.workload,
       r.server_version, JSON_UNQUOTE(JSON_EXTRACT(r.host_json, '$.hostname')) AS host,
       r.study_id AS study, r.cell_label AS cell, p.status, p.threads, p.duration_s, p.events,
       p.tps, p.qps, p.lat_min_ms, p.lat_avg_ms, p.lat_max_ms, p.errors_json, p.reconnects
FROM runs r JOIN phases p ON p.run_id = r.id",
    "CREATE OR REPLACE VIEW qpslab_series AS
SELECT r.id AS run_id, p.seq AS phase, r.workload, p.threads,
       FROM_UNIXTIME(r.started_at + s.elapsed_s) AS time, s.elapsed_s,
       CASE WHEN s.interval_s > 0 THEN s.events / s.interval_s ELSE 0 END AS tps,
       CASE WHEN s.interval_s > 0 THEN (s.`reads` + s.writes + s.other) / s.interval_s ELSE 0 END AS qps,
       s.lat_avg_ms, s.lat_max_ms, s.errors, s.reconnects
FROM runs r JOIN phases p ON p.run_id = r.id JOIN samples s ON s.phase_id = p.id",
];

/// The server's steps after the first server schema (version 11), each to the version named,
/// beside the SQLite migration of the same number.
const STEPS: &[(i64, &[&str])] = &[
    (
        12,
        &[
            "ALTER TABLE runs ADD COLUMN heartbeat_at DOUBLE",
            "ALTER TABLE studies ADD COLUMN heartbeat_at DOUBLE",
        ],
    ),
    (13, &[RESTORE_TRAIL]),
];

/// The table that marks a schema as a qpslab store and holds its version.
const MARK: &str = "CREATE TABLE qpslab_store (
    id             TINYINT NOT NULL PRIMARY KEY,
    application_id BIGINT NOT NULL,
    version        BIGINT NOT NULL
) ENGINE=InnoDB";

/// What a schema holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// No table.
    Empty,
    /// A store being created (its mark says version 0), or whose creator died half-way.
    Creating,
    /// A store of this version.
    Version(i64),
}

/// Checks that the schema behind `conn` is a qpslab store this build can read (migrating an
/// older one), or creates the store in an empty schema when `create` (under the store's write
/// lock: of several processes opening a new schema at once, the first creates it, the others
/// wait for it and find it made). `shown` names the store in errors.
pub(crate) fn check_and_create(conn: &mut Conn, shown: &Path, create: bool) -> Result<(), Error> {
    match state(conn, shown)? {
        State::Version(v) if v == SCHEMA_VERSION => return Ok(()),
        State::Empty if !create => {
            return Err(Error::Missing {
                path: shown.to_path_buf(),
            })
        }
        _ => {}
    }
    let tx = conn.transaction_with_behavior(Behavior::Immediate)?;
    // DDL commits by itself on MySQL: the write lock, not the transaction, keeps others out;
    // the mark comes first, so a reader never takes a half-made store for another program's.
    match state(&tx, shown)? {
        State::Empty | State::Creating => {
            tx.execute_batch(&MARK.replacen("CREATE TABLE ", "CREATE TABLE IF NOT EXISTS ", 1))?;
            tx.execute(
                "INSERT IGNORE INTO qpslab_store (id, application_id, version) VALUES (1, ?1, 0)",
                [i64::from(APPLICATION_ID)],
            )?;
            for sql in TABLES.iter() {
                tx.execute_batch(&sql.replacen("CREATE TABLE ", "CREATE TABLE IF NOT EXISTS ", 1))?;
            }
            for sql in VIEWS {
                tx.execute_batch(sql)?;
            }
            tx.execute(
                "UPDATE qpslab_store SET version = ?1 WHERE id = 1",
                [SCHEMA_VERSION],
            )?;
        }
        State::Version(found) => {
            for (to, sqls) in STEPS.iter().filter(|(to, _)| *to > found) {
                for sql in *sqls {
                    tx.execute_batch(sql)?;
                }
                tx.execute("UPDATE qpslab_store SET version = ?1 WHERE id = 1", [*to])?;
            }
        }
    }
    tx.commit()
}

/// What the schema holds; refuses a schema with other tables, another program's, or a newer
/// qpslab's.
fn state(conn: &Conn, shown: &Path) -> Result<State, Error> {
    let tables: i64 = conn.query_row(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = DATABASE()",
        [],
        |r| r.get(0),
    )?;
    if tables == 0 {
        return Ok(State::Empty);
    }
    let marked: i64 = conn.query_row(
        "SELECT count(*) FROM information_schema.tables
          WHERE table_schema = DATABASE() AND table_name = 'qpslab_store'",
        [],
        |r| r.get(0),
    )?;
    let row = if marked == 1 {
        conn.query_row(
            "SELECT application_id, version FROM qpslab_store WHERE id = 1",
            [],
            |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)),
        )
        .optional()?
    } else {
        None
    };
    let version = match row {
        // The mark made, its row not yet.
        None if marked == 1 && tables == 1 => return Ok(State::Creating),
        Some((app, v)) if app == i64::from(APPLICATION_ID) => v,
        _ => {
            return Err(Error::BadPath {
                path: shown.to_path_buf(),
                why: "the schema holds tables that are not a qpslab results store's".into(),
            })
        }
    };
    if version == 0 {
        return Ok(State::Creating);
    }
    if version > SCHEMA_VERSION {
        return Err(Error::NewerSchema {
            path: shown.to_path_buf(),
            found: version,
            supported: SCHEMA_VERSION,
        });
    }
    let first = STEPS.first().map_or(SCHEMA_VERSION, |(to, _)| to - 1);
    if version < first {
        return Err(Error::Corrupt(format!(
            "server store at schema version {version}, older than any this build migrates \
             ({first})"
        )));
    }
    Ok(State::Version(version))
}
