//! Telemetry readings taken while a phase runs, stored with the phase.
//!
//! A [`TelemetrySample`] is a time and a typed [`Reading`]. Serialized, it is
//! `{"elapsed_s": 1.0, "source": "tick", "values": {...}}`: the `source` names the variant and
//! `values` holds its fields, the shape stores have always held, so older rows read back as
//! these types.
//!
//! ```
//! use qpslab_core::telemetry::{Reading, TelemetrySample};
//! let text = r#"{"elapsed_s": 2.0, "source": "server_proc",
//!                "values": {"user_s": 1.5, "sys_s": 0.5, "rss_kib": 1024}}"#;
//! let t: TelemetrySample = serde_json::from_str(text).unwrap();
//! assert!(matches!(t.reading, Reading::ServerProc(p) if p.cpu_s() == 2.0));
//! ```

use crate::env::ProcessCpu;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub use crate::status::StatusDelta;

/// One telemetry reading taken during a phase.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TelemetrySample {
    /// Seconds since the measured phase began.
    pub elapsed_s: f64,
    /// What was read.
    #[serde(flatten)]
    pub reading: Reading,
}

impl TelemetrySample {
    /// The server process's usage over the phase, if this is that reading.
    pub fn server_proc(&self) -> Option<&ProcUsage> {
        match &self.reading {
            Reading::ServerProc(p) => Some(p),
            _ => None,
        }
    }

    /// The client's usage over the phase, if this is that reading.
    pub fn client_proc(&self) -> Option<&ProcUsage> {
        match &self.reading {
            Reading::ClientProc(p) => Some(p),
            _ => None,
        }
    }

    /// The change over a report tick, if this is a tick that has one.
    pub fn tick_change(&self) -> Option<&TickChange> {
        match &self.reading {
            Reading::Tick(t) => t.change(),
            _ => None,
        }
    }
}

/// What a telemetry sample holds; serialized as `source` (the variant's name in snake case)
/// and `values` (its fields).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "source", content = "values", rename_all = "snake_case")]
pub enum Reading {
    /// One report tick: the change since the previous reading.
    Tick(Tick),
    /// A span without readings (the server was unreachable), recorded when it ends.
    Gap(Gap),
    /// The whole phase's status change: summed counters, the last gauges.
    ServerStatusDelta(StatusDelta),
    /// The server process's CPU, memory and I/O over the whole phase.
    ServerProc(ProcUsage),
    /// The client's own CPU and memory over the whole phase.
    ClientProc(ProcUsage),
    /// `perf stat` counters of the server over the phase, or why there are none.
    Perf(Perf),
    /// The telemetry's own account of the phase.
    Telemetry(Account),
    /// Where the server's CPU profile of the phase was written (`run --profile`).
    Profile(ProfileFiles),
    /// A replica's lag over one report tick (`run --replica`).
    ReplicaLag(ReplicaLag),
    /// The replica server process's CPU and memory over the whole phase (a local replica).
    ReplicaProc(ProcUsage),
    /// The server's CPU by thread class over the whole phase.
    Threads(crate::limits::ThreadCpu),
    /// The sessions' waits in the server over the whole phase.
    Waits(crate::limits::Waits),
    /// The datadir's device over the whole phase.
    Disk(crate::limits::DiskUse),
    /// The host's network cost over the whole phase (TCP phases).
    Net(crate::limits::NetUse),
    /// MariaDB's thread pool over the whole phase (`thread_handling=pool-of-threads`).
    Pool(crate::limits::ThreadPool),
}

impl Reading {
    /// The name stored as the sample's `source`.
    pub fn source(&self) -> &'static str {
        match self {
            Reading::Tick(_) => "tick",
            Reading::Gap(_) => "gap",
            Reading::ServerStatusDelta(_) => "server_status_delta",
            Reading::ServerProc(_) => "server_proc",
            Reading::ClientProc(_) => "client_proc",
            Reading::Perf(_) => "perf",
            Reading::Telemetry(_) => "telemetry",
            Reading::Profile(_) => "profile",
            Reading::ReplicaLag(_) => "replica_lag",
            Reading::ReplicaProc(_) => "replica_proc",
            Reading::Threads(_) => "threads",
            Reading::Waits(_) => "waits",
            Reading::Disk(_) => "disk",
            Reading::Net(_) => "net",
            Reading::Pool(_) => "pool",
        }
    }

    /// The reading's fields, as stored beside its [`Reading::source`].
    pub fn values(&self) -> Result<serde_json::Value, serde_json::Error> {
        let mut v = serde_json::to_value(self)?;
        Ok(v.get_mut("values")
            .map(serde_json::Value::take)
            .unwrap_or_default())
    }

    /// The reading stored as `source` and `values`.
    pub fn from_parts(
        source: &str,
        values: serde_json::Value,
    ) -> Result<Reading, serde_json::Error> {
        serde_json::from_value(serde_json::json!({"source": source, "values": values}))
    }
}

/// The largest and the latest value seen over one report interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct MaxLast {
    /// The largest value of the interval.
    pub max: f64,
    /// The last value of the interval.
    pub last: f64,
}

impl MaxLast {
    /// A first value.
    pub fn new(v: f64) -> MaxLast {
        MaxLast { max: v, last: v }
    }

    /// `v` seen after the values so far.
    pub fn push(slot: &mut Option<MaxLast>, v: f64) {
        *slot = Some(match *slot {
            Some(m) => MaxLast {
                max: m.max.max(v),
                last: v,
            },
            None => MaxLast::new(v),
        });
    }
}

/// A replica's lag over one report interval, from three sources on one clock: a heartbeat row
/// written on the primary (corrected for the write interval), the time a GTID position of the
/// primary took to be applied (`MASTER_GTID_WAIT`), and `Seconds_Behind_Master`. A source
/// without a value in the interval is absent.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReplicaLag {
    /// Heartbeat lag, milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heartbeat_lag_ms: Option<MaxLast>,
    /// Commit-to-apply lag from GTIDs, milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gtid_lag_ms: Option<MaxLast>,
    /// `Seconds_Behind_Master` (whole seconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sbm_s: Option<MaxLast>,
    /// `replica stopped: ...`, in the first interval after the replica stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl ReplicaLag {
    /// The best lag figure of the interval, milliseconds: the heartbeat's, else the GTIDs'.
    pub fn headline_ms(&self) -> Option<f64> {
        self.heartbeat_lag_ms.or(self.gtid_lag_ms).map(|m| m.max)
    }
}

/// One report tick's reading.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Tick {
    /// The change since the previous good reading.
    Change(TickChange),
    /// No reading: why.
    Failed {
        /// The error that prevented it.
        error: String,
    },
    /// A reading with nothing before it to compare to.
    First {},
}

impl Tick {
    /// The change, when the tick has one.
    pub fn change(&self) -> Option<&TickChange> {
        match self {
            Tick::Change(c) => Some(c),
            _ => None,
        }
    }
}

/// What changed over one report tick.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TickChange {
    /// Seconds between this reading and the previous one.
    pub interval_s: f64,
    /// The status variables that changed, and every gauge.
    pub status: StatusCounts,
    /// The server process's usage, when it runs on this machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ProcUsage>,
    /// The client's own usage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ProcUsage>,
}

/// Status counters (changes) and gauges (levels), by variable name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StatusCounts {
    /// Running totals' changes.
    pub counters: BTreeMap<String, i64>,
    /// Levels, the later value.
    pub gauges: BTreeMap<String, u64>,
}

/// A span of a phase without readings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Gap {
    /// The last good reading before it (`elapsed_s`).
    pub from_s: f64,
    /// The first reading after it, or the phase's end.
    pub to_s: f64,
    /// Why there were no readings.
    pub reason: String,
    /// Whether readings came back before the phase ended.
    pub readings_resumed: bool,
}

/// CPU, memory and I/O of one process over an interval.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcUsage {
    /// User CPU seconds.
    pub user_s: f64,
    /// System CPU seconds.
    pub sys_s: f64,
    /// The later reading's resident memory.
    pub rss_kib: u64,
    /// Bytes read and written, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io: Option<IoBytes>,
}

impl ProcUsage {
    /// `b` since `a`; `same` is false when `b` is another process (a restarted server), whose
    /// figures then all belong to the interval. No I/O.
    pub fn between(a: &ProcessCpu, b: &ProcessCpu, same: bool) -> ProcUsage {
        let (u0, s0) = if same {
            (a.user_s, a.sys_s)
        } else {
            (0.0, 0.0)
        };
        ProcUsage {
            user_s: (b.user_s - u0).max(0.0),
            sys_s: (b.sys_s - s0).max(0.0),
            rss_kib: b.rss_kib,
            io: None,
        }
    }

    /// User plus system CPU seconds.
    pub fn cpu_s(&self) -> f64 {
        self.user_s + self.sys_s
    }
}

/// Bytes a process read and wrote, from `/proc/PID/io`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoBytes {
    /// Bytes read through any syscall (`rchar`).
    pub rchar: u64,
    /// Bytes written through any syscall (`wchar`).
    pub wchar: u64,
    /// Bytes fetched from storage (`read_bytes`).
    pub read_bytes: u64,
    /// Bytes sent to storage (`write_bytes`).
    pub write_bytes: u64,
}

impl IoBytes {
    /// This reading minus an earlier one (never negative).
    pub fn since(&self, before: &IoBytes) -> IoBytes {
        IoBytes {
            rchar: self.rchar.saturating_sub(before.rchar),
            wchar: self.wchar.saturating_sub(before.wchar),
            read_bytes: self.read_bytes.saturating_sub(before.read_bytes),
            write_bytes: self.write_bytes.saturating_sub(before.write_bytes),
        }
    }

    /// The sum of two intervals.
    pub fn plus(&self, other: &IoBytes) -> IoBytes {
        IoBytes {
            rchar: self.rchar.saturating_add(other.rchar),
            wchar: self.wchar.saturating_add(other.wchar),
            read_bytes: self.read_bytes.saturating_add(other.read_bytes),
            write_bytes: self.write_bytes.saturating_add(other.write_bytes),
        }
    }
}

/// `perf stat` counters of the server over a phase, or why there are none.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Perf {
    /// Whether counters were read.
    pub supported: bool,
    /// The counters by event name (`instructions`, `cycles`...).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub counters: BTreeMap<String, u64>,
    /// Why there are no counters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// How many server processes the counters cover, when more than one (a restart).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processes: Option<usize>,
}

impl Perf {
    /// No counters, and why.
    pub fn unsupported(reason: impl Into<String>) -> Perf {
        Perf {
            reason: Some(reason.into()),
            ..Perf::default()
        }
    }
}

/// The files of a phase's on-CPU profile of the server (`perf record -g`), and how it was taken.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProfileFiles {
    /// The folded stacks (`frame;frame;frame count` per line).
    pub folded: std::path::PathBuf,
    /// The flame graph drawn from them.
    pub svg: std::path::PathBuf,
    /// The perf event sampled (`cycles`, or `cpu-clock` without hardware counters).
    pub event: String,
    /// Why that event (`cpu-clock: hardware counters not supported here...`).
    pub event_reason: String,
    /// Stacks sampled.
    pub samples: u64,
    /// Why the flame graph could not be drawn, when it could not (the folded stacks are kept
    /// either way). Known to the run that drew it, not stored: the files are the record.
    #[serde(skip)]
    pub not_drawn: Option<String>,
}

/// The telemetry's own account of a phase.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Account {
    /// Connections re-established.
    pub reconnects: u64,
    /// Spans without readings.
    pub gaps: u64,
}

#[cfg(test)]
mod tests;
