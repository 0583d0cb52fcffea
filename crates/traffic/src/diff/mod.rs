//! `qpslab diff`: the same logged SQL on two servers, per class, with the evidence.
//!
//! A log read by [`crate::replay::source`] becomes [`Work`]: per class (fingerprint) a sample of
//! up to `sample` logged statements spread over the log ([`sample`]). Each class is then
//! measured on both [`DiffSide`]s ([`rounds`]):
//!
//! - its results are compared first, statement by statement (row count and row checksum,
//!   [`check`]);
//! - after a warm-up round that is not counted, rounds run the sample on A then B, the order
//!   alternating each round (ABBA) so that drift
//!   and cache order cancel, until `--repeats` rounds, or until the caller's precision rule is
//!   met or the class's time is spent (at least [`MIN_ROUNDS`]);
//! - reads get their `EXPLAIN FORMAT=JSON` (and `ANALYZE FORMAT=JSON` on MariaDB) flattened into
//!   per-table facts ([`explain`]), and every class its per-execution session counters on a
//!   dedicated connection ([`counters`]).
//!
//! [`side`] resolves the two sides as the caller reached them (database, statement timeout,
//! the servers' pids for `perf`).
//!
//! Without `--allow-writes` a diff runs logged SQL read-only, as `replay --read-only` does: the
//! server refuses writes (an account that only reads, read-only transactions) and the
//! classifier is the second line; a class whose statement the server refuses is skipped, with
//! the server's reason.
//!
//! The lab returns raw measurements ([`qpslab_core::diff::DiffMeasurement`]); the statistics
//! (ratios, intervals, verdicts) are the report crate's. [`session::run_side`] runs a side alone
//! for a while, through the same per-class function the rounds use; [`profile`] does so for each
//! side under `perf record` (`--profile DIR`), and [`flame`] draws the sides' flame graphs and
//! their difference.

pub mod check;
pub mod counters;
pub mod explain;
pub mod flame;
pub mod profile;
pub mod rounds;
pub mod sample;
pub mod session;
pub mod side;

use qpslab_core::diff::{ClassMeasure, Pair};
use qpslab_core::ConnectOptions;
use std::time::Duration;

/// Rounds measured at least, whatever the precision: four AB/BA pairs, the units of the
/// interval.
pub const MIN_ROUNDS: usize = 8;

/// The ratio's 95% interval half-width, percent, at which the CLI's precision rule stops a
/// class's rounds (`qpslab diff` without `--repeats`).
pub const PRECISION_PCT: f64 = 3.0;

/// One of the two servers compared.
#[derive(Clone, Debug)]
pub struct DiffSide {
    /// How the user named it (a DSN without its password, or a sandbox name).
    pub label: String,
    /// How to connect. With a database, every statement runs there (the log's `use` and
    /// logged databases are mapped onto it); without, each runs in its logged database.
    pub options: ConnectOptions,
    /// The longest a statement may take before the side is called stalled (a locked table, a
    /// hung server); none: unbounded. It is also the server's limit on each statement of the
    /// side's sessions (see [`crate::replay::exec::limits`]).
    pub statement_timeout: Option<Duration>,
    /// Every session of the side runs in read-only transactions (`SET SESSION TRANSACTION READ
    /// ONLY`), as an account that only reads (see [`crate::replay::account`]): a statement the
    /// server refuses skips its class, with the server's reason.
    pub read_only: bool,
}

/// One logged statement of a class's sample.
#[derive(Clone, Debug, PartialEq)]
pub struct Sampled {
    /// The statement, as the log holds its bytes.
    pub sql: Vec<u8>,
    /// The database it ran in, as logged.
    pub db: Option<String>,
}

/// A class to compare.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassWork {
    /// Its fingerprint.
    pub fingerprint: String,
    /// Its statements in the log.
    pub count: u64,
    /// A write, run inside `BEGIN ... ROLLBACK`.
    pub write: bool,
    /// The statements a round runs.
    pub sample: Vec<Sampled>,
}

/// The classes to compare.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Work {
    /// In the log's order.
    pub classes: Vec<ClassWork>,
}

/// How to measure.
#[derive(Clone, Debug, PartialEq)]
pub struct DiffOptions {
    /// Statements sampled per class.
    pub sample: usize,
    /// Exactly this many rounds (none: until precise or out of time).
    pub repeats: Option<usize>,
    /// Time spent measuring a class's rounds, at most (after [`MIN_ROUNDS`]).
    pub max_time_per_class: Duration,
    /// Run writes (each in a transaction rolled back) instead of skipping them.
    pub allow_writes: bool,
}

impl Default for DiffOptions {
    fn default() -> Self {
        DiffOptions {
            sample: 20,
            repeats: None,
            max_time_per_class: Duration::from_secs(5),
            allow_writes: false,
        }
    }
}

/// What the caller decides and hears while classes are measured.
pub trait DiffObserver {
    /// Whether the rounds so far (elapsed µs on A and B) pin the ratio down well enough.
    fn precise_enough(&self, rounds: &[Pair<u64>]) -> bool;
    /// Class `i` (0-based) of `n` is measured.
    fn class_done(&mut self, _i: usize, _n: usize, _c: &ClassMeasure) {}
}
