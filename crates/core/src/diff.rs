//! What `qpslab diff` measures on two servers, per class of a log: the raw measurements the lab
//! takes (per-round elapsed time per side, per-statement latencies, row checksums, EXPLAIN
//! facts, session counters), which the report crate turns into ratios, intervals and verdicts.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Side A (index 0) or side B (index 1) of a pair.
pub type Pair<T> = [T; 2];

/// One table access of an EXPLAIN plan, flattened from MariaDB's or MySQL's JSON shape.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TableFacts {
    /// The table (or its alias) as the plan names it.
    pub table: String,
    /// `ALL`, `index`, `range`, `ref`, `eq_ref`, `const`...
    pub access_type: Option<String>,
    /// The index used.
    pub key: Option<String>,
    /// The indexes considered.
    pub possible_keys: Vec<String>,
    /// The partitions read (empty: not partitioned).
    pub partitions: Vec<String>,
    /// Rows the optimizer expects to examine per scan.
    pub rows: Option<f64>,
    /// Percentage of those rows expected to pass the table's condition.
    pub filtered: Option<f64>,
    /// Whether the plan sorts with a filesort.
    pub using_filesort: bool,
    /// Whether the plan uses a temporary table.
    pub using_temporary: bool,
    /// Pages accessed per execution (MariaDB ≥ 10.9, from `ANALYZE FORMAT=JSON`).
    pub pages_accessed: Option<f64>,
}

/// Whether the sampled statements of a class return the same rows on both sides.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResultsCheck {
    /// Every sampled statement returned the same row count and row checksum on both sides.
    pub matched: bool,
    /// The first statement whose results differ.
    pub first_mismatch: Option<String>,
    /// What each side returned for it (`N rows, checksum HEX`, or the error).
    pub sides: Option<Pair<String>>,
}

/// What was measured of one class.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClassMeasure {
    /// The class's fingerprint.
    pub fingerprint: String,
    /// Its statements in the log.
    pub count: u64,
    /// The sampled statements (one round runs each once).
    pub sample: usize,
    /// Per measured round (warm-up excluded): elapsed µs of the sample on A and on B.
    pub rounds: Vec<Pair<u64>>,
    /// Per-statement latencies (µs) over the measured rounds, per side.
    pub latencies_us: Pair<Vec<u64>>,
    /// Row checksums compared.
    pub results: ResultsCheck,
    /// EXPLAIN of the class's representative statement, per side (empty: not a read).
    pub explain: Pair<Vec<TableFacts>>,
    /// Per-execution deltas of session counters (`Handler_*`), per side.
    pub counters: Pair<BTreeMap<String, f64>>,
    /// Why the class could not be measured (a statement failed on a side).
    pub error: Option<String>,
}

/// A class left out of the comparison, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedClass {
    /// The class's fingerprint.
    pub fingerprint: String,
    /// Its statements in the log.
    pub count: u64,
    /// Why (`write: --allow-writes runs it`, `DDL is never run`...).
    pub reason: String,
}

/// Everything `qpslab diff` measured.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DiffMeasurement {
    /// How each side was named (DSNs without passwords, or sandbox names).
    pub sides: Pair<String>,
    /// The server versions.
    pub versions: Pair<String>,
    /// The compared classes, in the log's order.
    pub classes: Vec<ClassMeasure>,
    /// Classes not compared.
    pub skipped: Vec<SkippedClass>,
}

/// The server's CPU spent by one thread class during a side's profiling pass.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClassCpu {
    /// The performance_schema thread class (`thread/sql/one_connection`), or `(unnamed)`.
    pub class: String,
    /// Its OS threads at the end of the pass.
    pub threads: usize,
    /// CPU used, percent of one CPU over the pass.
    pub cpu_pct: f64,
}

/// One side's profiling pass (`diff --profile DIR`): the side ran its sample alone while perf
/// recorded its server.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SideProfile {
    /// The side's name.
    pub side: String,
    /// The folded stacks, the flame graph and the event sampled.
    pub files: crate::telemetry::ProfileFiles,
    /// How long the pass ran, seconds.
    pub seconds: f64,
    /// Statements executed during the pass.
    pub statements: u64,
    /// The server's CPU by thread class, busiest first (empty without performance_schema).
    pub cpu: Vec<ClassCpu>,
}
