//! What limited a phase: at most two named limiters, each with the figures behind it, or that
//! no figure stands out; and what the lab could not see. Plain data, decided once when the
//! phase ends ([`decide`]) and stored with it (`PhaseResult::limits`), so every surface shows
//! the same verdict. Thresholds are the constants below; docs/explain.md gives each with its
//! reason.
//!
//! ```
//! use qpslab_core::limits::{decide, Evidence, Kind};
//! let e = Evidence {
//!     duration_s: 10.0,
//!     events: 50_000,
//!     sessions: 8,
//!     server_cpus_used: Some(0.97),
//!     server_cpus_allowed: Some(1.0),
//!     ..Evidence::default()
//! };
//! let limits = decide(e);
//! assert_eq!(limits.limiters[0].kind, Kind::ServerCpu);
//! assert_eq!(limits.to_string(), "server CPU (97% of its 1 CPU)");
//! ```

mod decide;
mod seen;

pub use decide::{decide, thresholds};
pub use seen::{Class, ClassCpu, DiskUse, NetUse, ThreadCpu, WaitKind, WaitTime, Waits};

use serde::{Deserialize, Serialize};
use std::fmt;

/// The verdict on one phase.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    /// At most two, the strongest first.
    pub limiters: Vec<Limiter>,
    /// Why no limiter is named, when none is: the figure nearest its threshold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unclear: Option<String>,
    /// What could not be seen, and why (performance_schema off, no perf counters, a remote
    /// server's host).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unseen: Vec<String>,
    /// Every figure the verdict looked at.
    pub evidence: Evidence,
}

/// One named limiter.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Limiter {
    pub kind: Kind,
    /// The latch's name, for [`Kind::Latch`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// How far past its threshold (1.0: at it); ranks the limiters.
    pub strength: f64,
    /// The figures that name it, in words ("97% of its 1 CPU").
    pub evidence: Vec<String>,
}

impl Limiter {
    /// How reports name it: `server CPU`, `latch: lock_latch`...
    pub fn label(&self) -> String {
        match (&self.kind, &self.name) {
            (Kind::Latch, Some(n)) => format!("latch: {n}"),
            (k, _) => k.label().to_string(),
        }
    }
}

/// The vocabulary of limiters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// The client (its event loops or its CPUs), not the server.
    Client,
    /// The CPUs the server may run on were busy.
    ServerCpu,
    /// Sessions waited on one mutex or rwlock.
    Latch,
    /// Sessions waited on row locks.
    RowLocks,
    /// Commits waited on the redo log's writes and fsyncs.
    RedoLog,
    /// The datadir's device was busy with data reads and writes.
    DataIo,
    /// Pages were read from disk (or waited for a free page) on most transactions.
    BufferPool,
    /// Sessions queued for a thread (the thread pool) or a connection.
    ThreadPool,
    /// The network stack's CPU or retransmits.
    Network,
    /// Other processes took the machine's CPUs.
    Neighbour,
    /// A paced run kept its schedule far below what the server can do.
    UnderCapacity,
}

impl Kind {
    /// How reports name it.
    pub fn label(self) -> &'static str {
        match self {
            Kind::Client => "client",
            Kind::ServerCpu => "server CPU",
            Kind::Latch => "latch",
            Kind::RowLocks => "row locks",
            Kind::RedoLog => "redo log / fsync",
            Kind::DataIo => "data I/O",
            Kind::BufferPool => "buffer pool",
            Kind::ThreadPool => "connections / thread pool",
            Kind::Network => "network",
            Kind::Neighbour => "neighbour",
            Kind::UnderCapacity => "under capacity",
        }
    }
}

/// Every figure a verdict looks at, each `None` where it could not be read. Built by the lab
/// from the phase and its telemetry.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// The measured phase's seconds, events and sessions.
    pub duration_s: f64,
    pub events: u64,
    pub sessions: u32,
    /// CPUs the server used (CPU seconds per second) and may run on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpus_used: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpus_allowed: Option<f64>,
    /// CPUs the client used, and the CPUs of the machine.
    #[serde(default)]
    pub client_cpus_used: f64,
    #[serde(default)]
    pub machine_cpus: f64,
    /// The client's event loops that were busy at least 90% of the phase, of how many, and
    /// the busiest one's share of a CPU (a load-loop phase).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_loops: Option<(u32, u32, f64)>,
    /// Whether the client check named the client (loops saturated, or the client kept the
    /// machine busy or out-spent the server).
    #[serde(default)]
    pub client_limited: bool,
    /// Share (0..1) of the machine other processes used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_share: Option<f64>,
    /// The server's CPU by thread class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<ThreadCpu>,
    /// The sessions' waits in the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waits: Option<Waits>,
    /// Status counters over the phase: row lock wait seconds, redo log waits, fsyncs (data and
    /// log), buffer pool reads from disk, buffer pool free-page waits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row_lock_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_waits: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fsyncs: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool_reads: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool_read_requests: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool_wait_free: Option<u64>,
    /// How full the redo log was: the mean over report ticks of the checkpoint age against
    /// the age at which InnoDB flushes for it (`Innodb_checkpoint_age` /
    /// `Innodb_checkpoint_max_age`), and that largest age in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint_fill: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint_max_age: Option<u64>,
    /// The thread pool (MariaDB's `pool-of-threads`): its size (groups) and the mean
    /// connections queued for a thread over the phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_pool: Option<ThreadPool>,
    /// The datadir's device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk: Option<DiskUse>,
    /// The network's cost (TCP phases).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub net: Option<NetUse>,
    /// Hardware counters per event (`instructions`, `cycles`, `cache-misses`...), and IPC.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub perf_per_event: std::collections::BTreeMap<String, f64>,
    /// The server's hottest functions on CPU (their share of the profile's samples as the
    /// innermost frame), when `--profile` recorded the phase.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub top_functions: Vec<(String, f64)>,
    /// Why there are no hardware counters, when there are none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub perf_reason: Option<String>,
    /// Whether the server is on another host (no /proc for it).
    #[serde(default)]
    pub remote: bool,
    /// A paced phase's target and achieved events per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paced: Option<(f64, f64)>,
}

/// MariaDB's thread pool over a phase.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ThreadPool {
    /// `thread_pool_size`: groups, each running one statement at a time unless stalled.
    pub size: u32,
    /// Mean connections waiting in the groups' queues at the report ticks.
    pub queued: f64,
}

/// The `n` functions most often innermost in folded stacks (`frame;frame;frame count` per
/// line), with their share of all samples, largest first.
pub fn top_functions<'a>(
    folded: impl IntoIterator<Item = &'a str>,
    n: usize,
) -> Vec<(String, f64)> {
    let mut by: std::collections::HashMap<&str, u64> = std::collections::HashMap::new();
    let mut total = 0u64;
    for line in folded {
        let Some((stack, count)) = line.trim_end().rsplit_once(' ') else {
            continue;
        };
        let Ok(count) = count.parse::<u64>() else {
            continue;
        };
        let leaf = stack.rsplit(';').next().unwrap_or(stack);
        *by.entry(leaf).or_insert(0) += count;
        total += count;
    }
    if total == 0 {
        return Vec::new();
    }
    let mut top: Vec<(&str, u64)> = by.into_iter().collect();
    top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    top.into_iter()
        .take(n)
        .map(|(f, c)| (f.to_string(), c as f64 / total as f64))
        .collect()
}

impl Evidence {
    /// Events per second.
    pub fn tps(&self) -> f64 {
        if self.duration_s <= 0.0 {
            return 0.0;
        }
        self.events as f64 / self.duration_s
    }

    /// Session-seconds: the time the sessions had, against which waits are a share.
    pub fn session_s(&self) -> f64 {
        self.duration_s * f64::from(self.sessions.max(1))
    }

    /// `n` per event, when there were events.
    pub fn per_event(&self, n: u64) -> Option<f64> {
        (self.events > 0).then(|| n as f64 / self.events as f64)
    }
}

impl fmt::Display for Limits {
    /// One line: `server CPU (97% of its 1 CPU); row locks (…)`, or `no clear limiter (…)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.limiters.is_empty() {
            return match &self.unclear {
                Some(why) => write!(f, "no clear limiter ({why})"),
                None => write!(f, "no clear limiter"),
            };
        }
        for (i, l) in self.limiters.iter().enumerate() {
            if i > 0 {
                write!(f, "; ")?;
            }
            write!(f, "{}", l.label())?;
            if let Some(first) = l.evidence.first() {
                write!(f, " ({first})")?;
            }
        }
        Ok(())
    }
}

impl Limits {
    /// The labels of its limiters, `no clear limiter` when none (for tables).
    pub fn short(&self) -> String {
        if self.limiters.is_empty() {
            return "no clear limiter".into();
        }
        self.limiters
            .iter()
            .map(Limiter::label)
            .collect::<Vec<_>>()
            .join(" + ")
    }
}
