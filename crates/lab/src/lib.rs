//! The lab: how qpslab measures a server. It takes a resolved plan or a study spec, drives the
//! engine, the probe and the sandboxes, and stores every phase as it is measured. The services
//! built on it live in crates of their own:
//!
//! - capture, replay and diff, which work from captured SQL: `qpslab-traffic`;
//! - OS toggles (`os`), a setup's storage (`storage`) and fio (`io`), what qpslab does to the
//!   machine below the server: `qpslab-host` (below the lab: studies use it);
//! - the advisor: `qpslab-advise`; tuning with proof: `qpslab-tune`; every statistical
//!   formula: `qpslab-stats`.
//!
//! Its folders, in the order of the flow:
//!
//! - **[`options`]** declares every workload and run option once and resolves flags or spec
//!   keys into a `RunPlan` (password files included).
//! - **[`request`]**: a whole command as one call: `qpslab run`'s request (profile checks,
//!   store, ready, sweep), the outcome to render and its error, which says whose fault it is.
//! - **[`run`]** measures a run: ready the server, settle it, warm up, measure and store each
//!   phase of a sweep or a rate search, live actions judged.
//! - **[`dataset`]**: the one home of the dataset: made present (built on a sandbox of ours,
//!   only checked on the user's server), `prepare` and `cleanup`, its loaders sized.
//! - **[`server`]**: a server's state: settings recorded and restored, the control connection,
//!   thread placement, replication, a lone sandbox started and stopped.
//! - **[`study`]**: the TOML spec, its expansion into setups and cells, and a whole study run
//!   or resumed, unstable cells re-measured.
//! - **[`shard`]**: one run split over several client processes, met and merged.
//! - **[`doctor`]** finds every external part qpslab can use, with the fix for each missing one.
//! - **[`error`]**: the lab's typed errors, each saying whose fault it is.
//!
//! Its parts, file by file (the crate map in docs/ARCHITECTURE.md points here): in folders that
//! read as the flow: `options/`, the run options declared once (what an option is in `def.rs`, the
//! workload's, run's and study's keys in `workload_keys.rs`/`run_keys.rs`, reading a value from a
//! flag or a TOML value in `value.rs`, the single resolver to a `RunPlan` in
//! `resolve.rs`/`builder.rs`, password files in `password.rs`); `run/`, measuring a run: the
//! server readied (`ready.rs`, what it takes and how it fails in `readying.rs`), `qpslab run`'s
//! settle, phases, rate search, live-action judging and closing of the run (`sweep.rs`, progress
//! through `SweepObserver`; `settle.rs`, `rate_search.rs`), the one warm-up → measure → store step
//! of a run's phase and a study attempt (`phase.rs`, auto warm-up in `warmup.rs`), one measured
//! phase with per-tick telemetry (`exec.rs`), whether the client or a neighbour limited a phase
//! (`client_bound.rs`, `contention.rs`), the phase's limiter evidence and verdict (`limits.rs`),
//! live actions inside a phase (`live/`), a phase the store could not take (`unstored.rs`), the
//! client's loops placed away from the server's CPUs (`sizing.rs`); `dataset/`, the one home of
//! the dataset: made present before a run or a cell (`check.rs`: built on a sandbox of ours, only
//! checked on the user's server), with its sandbox held, and `prepare`, `cleanup` and `check tpcc`
//! (`ready.rs`), its loaders sized to the server's CPUs (`loaders.rs`), the commands that build it
//! on the user's server (`commands.rs`); `server/`, a server's state: settings recorded before a
//! command changes them and put back after `kill -9` (`restore/`), the control connection of
//! commands that change settings (`control.rs`), threads placed on CPUs (`placement.rs`),
//! replication between sandboxes (`replica.rs`), a lone sandbox's start and stop for `server
//! start` and `server stop` (`lone.rs`: placed, attached as a replica); `study/`, studies: TOML
//! specs (`spec.rs`), expansion of variants × factorial × sweep × repeats into planned cells, each
//! point's setups back to back or each setup's points in one block (`expand.rs`), each setup's
//! sandbox (`sandboxes.rs`), running and resuming a study (the entry points and the runner in
//! `mod.rs`, the cell loop in `cell.rs`, each setup's server in `server.rs`, fileio cells in
//! `io_cell.rs`, what `lab plan` shows in `plan.rs`, the rounds a study with a precision runs and
//! where its budget goes in `rounds.rs`, `lab plan`'s estimate from earlier runs or a pilot in
//! `estimate.rs`), re-measuring unstable cells (`retry.rs`); `shard/`, one run split over several
//! client processes; `request/`, whole commands as one call (`run.rs`: `qpslab run`, what it says
//! on failure in `error.rs`; the server a command asks for, the embedded sandbox started and
//! stopped, in `target.rs`); the machine's external parts for `qpslab doctor` (`doctor.rs`, each
//! found by its command's own finder); the lab's typed errors (`error.rs`); its `lib.rs` walks the
//! folders.
//!
//! ```no_run
//! # fn demo(store: &mut qpslab_store::Store) -> Result<(), Box<dyn std::error::Error>> {
//! use qpslab_lab::{run::exec::Quiet, study};
//! let loaded = study::load("examples/bp-vs-stock.toml".as_ref())?;
//! for c in &loaded.expanded.cells {
//!     println!("{:>3} {}", c.cell.seq, c.cell.label);
//! }
//! # struct Q; impl qpslab_lab::run::exec::Observer for Q {} impl study::StudyObserver for Q {}
//! let lab = qpslab_sandbox::SandboxHome::default_location();
//! let stop = std::sync::atomic::AtomicBool::new(false);
//! let out = study::run_study(store, &loaded, "qpslab lab run", study::Mode::Run, &lab, &mut Q, &stop)?;
//! println!("{} cells done", out.done);
//! # let _ = Quiet; Ok(()) }
//! ```

pub mod dataset;
pub mod doctor;
pub mod error;
pub mod options;
pub mod request;
pub mod run;
pub mod server;
pub mod shard;
pub mod study;

pub use error::{OptionError, SpecError, StudyError};
pub use run::ExecError;
pub use study::spec::SetupError;
