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

pub use error::{ExecError, OptionError, SetupError, SpecError, StudyError};
