//! Telemetry: what the host is, what the server is and does, and what processes spend.
//!
//! - [`host_facts`] reads the machine (CPU, memory, kernel, OS, THP, swappiness...) from `/proc`,
//!   `/sys` and `uname`; a missing source reads `unknown`, never an error.
//! - [`server_info`] reads the server's version and global variables, without any variable that
//!   could hold a credential, so the result can be stored with every run.
//! - [`global_status`] snapshots `SHOW GLOBAL STATUS`; [`StatusDelta`] is the difference of two.
//! - [`process_cpu`] and [`self_cpu`] read a process's CPU seconds and RSS from `/proc`;
//!   [`process_io`] its I/O bytes.
//! - [`Sampler`] takes all of these on every report tick of a phase, plus `perf stat` counters
//!   when the machine has them ([`perf`]), and an on-CPU profile of the server when asked
//!   ([`Sampler::profile_into`]; the recording itself is [`profile::Recording`]).
//! - [`threads`] lists a local server's threads by class (performance_schema joined with
//!   `/proc`) and places classes on CPUs (`--pin`).
//! - [`replica`] reads a replica's state and measures its lag during a run.
//! - [`storage_facts`] tells where a directory lives (mount options, I/O scheduler).
//!
//! Its parts, file by file (the crate map in docs/ARCHITECTURE.md points here): host and storage
//! facts, server version/variables/status, per-tick sampler writing typed readings (status deltas,
//! server and client CPU/RSS, /proc io, perf counters when the machine has them), a phase's
//! begin-and-finish readings for its limiter verdict (`why/`: CPU by thread class, waits, the
//! datadir's device, network, the thread pool's queue; docs/explain.md), and on request an on-CPU
//! profile of the server whose flame graph it draws as the recording stops (`profile/`, the
//! drawing in `profile/flame.rs`).
//!
//! ```no_run
//! # fn demo(conn: &mut qpslab_wire::Conn) -> Result<(), qpslab_probe::Error> {
//! use qpslab_probe::{global_status, StatusDelta};
//! let before = global_status(conn)?;
//! // ... one second of load ...
//! let after = global_status(conn)?;
//! let d = StatusDelta::between(&before, &after, 1.0);
//! println!("{} selects/s", d.per_second("Com_select").unwrap_or(0.0));
//! # Ok(()) }
//! ```

mod error;
mod host;
pub mod perf;
mod process;
pub mod profile;
pub mod replica;
mod sampler;
mod server;
mod storage;
pub mod threads;
mod why;

pub use error::Error;
pub use host::{host_facts, memory_available, memory_left};
pub use process::{process_cpu, self_cpu};
pub use qpslab_core::status::{is_gauge, status_from_rows, GlobalStatus, StatusDelta, StatusValue};
pub use sampler::{process_io, IoBytes, Sampler};
pub use server::{flavor, global_status, may_hold_secret, server_info, variables_from_rows};
pub use storage::{storage_facts, StorageFacts};
