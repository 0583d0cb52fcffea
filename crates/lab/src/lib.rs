//! Studies: a spec file expanded into cells, executed in an order that spreads machine drift,
//! stored cell by cell so that an interrupted study resumes where it stopped.
//!
//! - [`spec`] parses and checks the TOML spec (unknown keys name their line and the nearest
//!   valid key);
//! - [`expand`] turns it into setups (variants × factorial of factor levels) and cells (setups ×
//!   the sweep's cross product × repeats), in execution order;
//! - [`exec`] measures one cell: dataset check, phase with per-tick telemetry, store (also used
//!   by `qpslab run`); [`phase`] is the one warm-up -> measure -> store step of a run's phase
//!   and a study cell's attempt;
//! - [`ready`] readies a server for `qpslab run` (facts, leftover settings, limits, dataset,
//!   replica lag monitor, thread placement); [`sweep`] then measures it: settle, the phases of a sweep or a replica's rate search
//!   ([`rate_search`]), live actions judged, the client checked ([`client_bound`]), the run
//!   stored;
//! - [`study`] runs or resumes a whole study, starting each setup's sandbox as needed;
//! - [`os`] applies OS-level toggles (THP) reversibly;
//! - [`storage`] puts a setup's datadir on a filesystem of its own (loop image or scratch
//!   device, mount options, scheduler, read-ahead) and undoes it;
//! - [`replica`] sets up replication between two sandboxes;
//! - [`capture`] logs every statement of a server for a window and restores its settings;
//! - [`restore`] records a server's settings before a command changes them, so that what a
//!   killed process left changed is found and put back.
//!
//! ```no_run
//! # fn demo(store: &mut qpslab_store::Store) -> Result<(), Box<dyn std::error::Error>> {
//! use qpslab_lab::{exec::Quiet, study};
//! let loaded = study::load("examples/bp-vs-stock.toml".as_ref())?;
//! for c in &loaded.expanded.cells {
//!     println!("{:>3} {}", c.cell.seq, c.cell.label);
//! }
//! # struct Q; impl qpslab_lab::exec::Observer for Q {} impl study::StudyObserver for Q {}
//! let lab = qpslab_sandbox::SandboxHome::default_location();
//! let stop = std::sync::atomic::AtomicBool::new(false);
//! let out = study::run_study(store, &loaded, "qpslab lab run", study::Mode::Run, &lab, &mut Q, &stop)?;
//! println!("{} cells done", out.done);
//! # let _ = Quiet; Ok(()) }
//! ```

pub mod advise;
pub mod capture;
pub mod client_bound;
mod commands;
pub mod contention;
pub mod control;
pub mod diff;
pub mod error;
pub mod exec;
pub mod expand;
pub mod io;
pub mod live;
mod measured;
pub mod options;
pub mod os;
pub mod password;
pub mod phase;
pub mod placement;
pub mod rate_search;
pub mod ready;
pub mod replay;
pub mod replica;
pub mod restore;
mod retry;
pub mod sandboxes;
pub mod settle;
pub mod sizing;
pub mod spec;
pub mod storage;
pub mod study;
pub mod sweep;
pub mod unstored;
pub mod warmup;

pub use error::{ExecError, SpecError, StudyError};
