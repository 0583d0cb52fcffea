//! The results store: every run qpslab measures, kept self-describing, in an SQLite file (the
//! default) or in a schema on a MariaDB or MySQL server (`--db mysql://...`, docs/store.md).
//!
//! A run is a [`RunMeta`] (plan, redacted target, server version and variables, host facts,
//! tool version) and its measured phases, each with per-interval samples, serialized HDR
//! histograms and telemetry. A phase measured live is written as it goes
//! ([`Store::begin_phase`], one small transaction per interval, [`Store::finish_phase`] at the
//! end), so a signal or a crash keeps every interval measured; a phase known only at its end is
//! written whole by [`Store::record_phase`] in one transaction. The schema is versioned
//! (`PRAGMA user_version` in a file, the `qpslab_store` table on a server) and migrated on open.
//!
//! Its parts, file by file (the crate map in docs/ARCHITECTURE.md points here): the one door to
//! the database (`db/`: `Conn`, `Tx`, `params!`, rows as values; `lite.rs` for SQLite,
//! `server.rs` for a server through qpslab's own client, `dialect.rs` for the few spellings that
//! differ); the `Store` handle (`handle.rs`) and its opening (`open.rs`: the path checked, WAL,
//! dead runs closed; `open_server.rs`: the URL, the schema created or checked
//! (`server_schema.rs`), refusing the server under test (`on_target.rs`)); schema, migrations,
//! phases written as they are measured (`write.rs`, `durable.rs`, `owner.rs`), leases of what a
//! process owns on a store shared by hosts (`lease.rs`), the restore trail kept in such a
//! store (`trail.rs`: what a command changed on a target server, held under a lease); reads
//! (`read.rs`), studies, cells and attempts (`study.rs`, `cell.rs`, `attempt.rs`), the one
//! JSON form of a run (`RunDoc`) and the one CSV writer (`export.rs`), a study's JSON form and
//! its cells' headline figures and CSV rows (`study_doc.rs`: `StudyDoc`, `CellFigures`, and
//! every study in one line, `StudySummary`), runs and studies copied between any two stores
//! with new ids and their origin kept (`import/`, following the written store's own catalogue
//! of tables and foreign keys).
//!
//! ```no_run
//! # fn demo(meta: qpslab_store::RunMeta, phase: qpslab_core::PhaseResult) -> Result<(), qpslab_store::Error> {
//! use qpslab_store::{RunStatus, Store};
//! let mut store = Store::open("qpslab.db".as_ref())?;
//! let id = store.record_phase(&meta, &phase, &[])?;
//! store.finish_run(&meta.uuid, RunStatus::Completed)?;
//! let run = store.load_run(id)?;
//! assert_eq!(run.phases.len(), 1);
//! # Ok(()) }
//! ```

mod actions;
mod attempt;
mod cell;
mod db;
mod durable;
mod error;
mod export;
mod handle;
mod hlog;
mod import;
mod lease;
pub use import::{ImportError, Imported, ImportedRun, ImportedStudy, Pick};
mod phase_csv;
pub use hlog::write_hlog;
pub use phase_csv::{phase_rows, CSV_PERCENTILES, PHASE_CSV_HEADER};
mod io_doc;
pub use export::{iso8601_utc, write_csv, PhaseDoc, RunDoc};
pub use io_doc::{IoDoc, IoInterval};
mod model;
mod on_target;
mod open;
mod open_server;
pub use on_target::allow_store_on_target;
mod owner;
mod read;
mod schema;
mod server_schema;
mod status;
mod study;
mod study_doc;
mod trail;
mod tune;
mod write;

pub use attempt::{AttemptStatus, CellAttempt};
pub use cell::{CellId, CellRecord, CellStatus};
pub use durable::PhaseHandle;
pub use error::Error;
pub use handle::Store;
pub use model::StudyId;
pub use model::{
    new_run_uuid, redact_url_passwords, unix_now, RunId, RunMeta, RunStatus, RunSummary,
    StoredPhase, StoredRun, TelemetrySample, UnixSeconds, UnknownStatus,
};
pub use read::summary_of_samples;
pub use schema::SCHEMA_VERSION;
pub use study::{Factor, NewStudy, StudyRecord, StudyStatus};
pub use study_doc::{
    AttemptDoc, CellDoc, CellFigures, StudyDoc, StudySummary, STUDY_CSV_HEADER,
    STUDY_LIST_CSV_HEADER,
};
pub use trail::TrailRecord;
pub use tune::TuneTrial;
