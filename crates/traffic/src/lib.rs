//! The services that work from captured SQL, above the lab whose measuring and errors they use.
//!
//! - [`capture`] logs every statement of a server for a window (the slow log with
//!   `long_query_time=0`) and restores every variable it changed (`qpslab capture`);
//! - [`replay`] reads a slow or general log once ([`replay::source`]), plans its sessions
//!   ([`replay::lanes`]), runs them at the log's pace or as fast as possible
//!   ([`replay::exec`]) and tallies each statement class ([`replay::tally`]); measured like any
//!   phase through `qpslab_lab::run::exec` (`qpslab replay`);
//! - [`diff`] runs a sample of each class of a log on two servers ([`diff::DiffSide`]) in
//!   alternating rounds, comparing results, timings, counters and plans (`qpslab diff`).
//!
//! Its parts, file by file (the crate map in docs/ARCHITECTURE.md points here): the services that
//! work from a server's captured traffic (SQL), on the lab's measuring and errors: capturing a
//! server's statements for a window and restoring what it changed (`capture/`), replaying a log
//! (`replay/`: the log read once in `source.rs`, sessions planned in `lanes.rs`, the blocking
//! replay loop in `exec.rs`, per-class tallies in `tally.rs`), the same log's classes on two
//! servers (`diff/`: the sample, ABBA rounds, result checks, counters, plans, profiles; each
//! server a `DiffSide`).
//!
//! ```no_run
//! # fn demo() -> Result<(), qpslab_lab::ExecError> {
//! use qpslab_sqllog::LogType;
//! let loaded = qpslab_traffic::replay::source::load("slow.log".as_ref(), LogType::Slow)?;
//! println!("{} statements from {}", loaded.log.stmts.len(), loaded.flavor);
//! # Ok(()) }
//! ```

pub mod capture;
pub mod diff;
pub mod replay;
