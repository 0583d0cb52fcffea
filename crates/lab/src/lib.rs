//! The lab: how qpslab measures a server. It takes a resolved plan or a study spec, drives the
//! engine, the probe and the sandboxes, and stores every phase as it is measured. The services
//! built on it live in crates of their own:
//!
//! - capture, replay and diff, which work from captured SQL: `qpslab-sql`;
//! - OS toggles (`os`), a setup's storage (`storage`) and fio (`io`), what qpslab does to the
//!   machine below the server: `qpslab-host` (below the lab: studies use it);
//! - the advisor: `qpslab-advise`; tuning with proof: `qpslab-tune`; every statistical
//!   formula: `qpslab-stats`.
//!
//! Its modules, grouped:
//!
//! - **Options.** [`options`] declares every workload and run option once and resolves flags or
//!   spec keys into a `RunPlan`; [`sizing`] sizes the client to the server's CPUs;
//!   [`password`] reads password files.
//! - **Measuring a run.** [`ready`] readies a server for `qpslab run` (facts, leftover
//!   settings, limits, dataset, replica lag monitor, thread placement) and runs `prepare` and
//!   `cleanup`; [`exec`] measures one phase with per-tick telemetry and stores it as it
//!   runs (dataset check included); [`phase`] is the one warm-up -> measure -> store step of a
//!   run's phase and a study cell's attempt; [`warmup`] is `--warmup auto`; [`sweep`] is `qpslab
//!   run`: settle, the phases of a sweep or a replica's rate search ([`rate_search`]), live
//!   actions judged, the run stored; [`live`] runs live actions inside a phase;
//!   [`client_bound`] and [`contention`] say whether the client or a neighbour limited a phase;
//!   [`unstored`] keeps a phase the store could not take.
//! - **Studies.** [`spec`] parses and checks the TOML spec (unknown keys name their line and the
//!   nearest valid key); [`expand`] turns it into setups (variants × factorial of factor levels)
//!   and cells (setups × the sweep's cross product × repeats), in execution order; [`study`]
//!   runs or resumes a whole study, starting each setup's sandbox ([`sandboxes`]) as needed and
//!   re-measuring unstable cells.
//! - **Server state.** [`settle`] drains and warms a server before it is measured; [`restore`]
//!   records a server's settings before a command changes them, so that what a killed process
//!   left changed is found and put back; [`control`] is the control connection of commands
//!   that change settings; [`placement`] pins a server's threads to CPUs; [`replica`] sets up
//!   replication between two sandboxes; [`server`] starts (placed, attached as a replica) and
//!   stops a lone sandbox for `qpslab server start|stop`.
//! - **The machine.** [`doctor`] finds every external part qpslab can use, with the fix for
//!   each missing one.
//! - **Errors.** [`error`]: the lab's typed errors, each saying whether it is the user's.
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

pub mod client_bound;
mod commands;
pub mod contention;
pub mod control;
pub mod doctor;
pub mod error;
pub mod exec;
pub mod expand;
pub mod live;
mod measured;
mod observer;
pub mod options;
pub mod password;
pub mod phase;
pub mod placement;
pub mod rate_search;
pub mod ready;
pub mod replica;
pub mod restore;
mod retry;
pub mod sandboxes;
pub mod server;
pub mod settle;
pub mod shard;
pub mod sizing;
pub mod spec;
pub mod study;
pub mod sweep;
mod tpcc_check;
pub mod unstored;
pub mod warmup;

pub use error::{ExecError, OptionError, SetupError, SpecError, StudyError};
