//! Plain types shared by every qpslab crate.
//!
//! Nothing here performs I/O, with three exceptions that every caller needs the same way:
//! [`input`] reads the files a user names (regular files only, bounded), [`optfile`] reads
//! option files and the files they include, and [`cpus`] asks how many CPUs the machine has.
//! Results cross crate boundaries as these serde types: the engine produces
//! [`result::PhaseResult`]s, the store persists them, the CLI prints them.
//!
//! Its parts, file by file (the crate map in docs/ARCHITECTURE.md points here): serde types shared
//! by all: `ConnectOptions`/`Dsn` (password redacted), `RunPlan` (with `EngineKnobs`, and a
//! replay's `ReplayPlan`), `WorkloadOptions`, `PhaseResult`/`Sample`, the study `Cell`, typed
//! telemetry (`telemetry.rs`: `Reading`), status snapshots, the stability verdict and its judging
//! (`stability.rs`, `verdict.rs`), the limiter verdict (`limits/`: vocabulary and `Evidence` in
//! `mod.rs`, what was seen in `seen.rs`, thresholds and ranking in `decide.rs`), host and server
//! facts; and two readers of the machine: option files with `!include` (`optfile.rs`) and CPU
//! lists checked against the machine's CPUs (`cpus.rs`); every parser and printer of durations and
//! sizes (`units.rs`).
//!
//! ```
//! use qpslab_core::dsn::Dsn;
//! let dsn: Dsn = "mysql://bench:secret@127.0.0.1:3306/sbtest".parse().unwrap();
//! assert_eq!(dsn.to_string(), "mysql://bench@127.0.0.1:3306/sbtest");
//! ```

pub mod advise;
pub mod cell;
pub mod client;
pub mod cpus;
pub mod diff;
pub mod dsn;
pub mod env;
pub mod fault;
pub mod fileio;
pub mod files;
pub mod input;
pub mod latency;
pub mod limits;
pub mod literal;
pub mod live;
pub mod optfile;
mod phase_tpcc;
pub mod placement;
pub mod plan;
pub mod replay;
pub mod result;
pub mod secret;
pub mod shard;
pub mod stability;
pub mod status;
pub mod telemetry;
pub mod tpcc;
pub mod units;
mod verdict;
pub mod workload;

pub use cell::Cell;
pub use dsn::{ConnectOptions, Dsn, Endpoint, SslMode, Timeouts};
pub use env::{HostFacts, ProcessCpu, ServerInfo};
pub use plan::{
    AutoWarmup, EngineKnobs, RateSpec, RetryErrors, RunPlan, SettleReport, SettleSpec,
    StopCondition, DEFAULT_RETRY_CODES,
};
pub use result::{PhaseResult, Sample};
pub use secret::Secret;
pub use stability::{Instability, Stability};
pub use telemetry::{Reading, TelemetrySample};
pub use workload::{
    ConsistencyCondition, RandType, ScriptSource, Warehouses, WorkloadKind, WorkloadOptions,
};
