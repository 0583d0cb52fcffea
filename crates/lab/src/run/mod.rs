//! Measuring a run, in the order it happens: [`ready`] readies the server (facts, leftover
//! settings, limits, the dataset, the replica's lag monitor, thread placement); [`sweep`] is
//! `qpslab run` itself: [`settle`], then the phases of a sweep or a replica's rate search
//! ([`rate_search`]), each the one warm-up -> measure -> store step of [`phase`] ([`warmup`]
//! for `--warmup auto`, [`exec`] for the phase with per-tick telemetry), live actions
//! ([`live`]) judged, the run stored. [`client_bound`] and [`contention`] say whether the client
//! or a neighbour limited a phase, and [`limits`] what limited it, with the evidence; [`unstored`] keeps a phase the store could not take;
//! [`sizing`] places the client's loops away from the server's CPUs; [`error`] says why a phase could
//! not be executed.

pub mod client_bound;
pub mod contention;
pub mod error;
pub mod exec;
pub mod limits;
pub mod live;
pub(crate) mod measured;
pub(crate) mod observer;
pub mod phase;
pub mod rate_search;
pub mod ready;
pub mod readying;
pub mod settle;
pub mod sizing;
pub mod sweep;
pub(crate) mod tpcc_check;
pub mod unstored;
pub mod warmup;

pub use error::ExecError;
