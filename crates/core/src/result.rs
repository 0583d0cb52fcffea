//! What a measured phase produced: per-interval samples and the phase summary.
//!
//! The engine fills these; the store persists them; the CLI and reports read them.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A latency percentile.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Percentile {
    /// Which percentile (e.g. 99.0).
    pub p: f64,
    /// Its value in milliseconds.
    pub ms: f64,
}

/// Latency of events (or of one statement kind) over a span of time.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    pub count: u64,
    pub min_ms: f64,
    pub avg_ms: f64,
    pub max_ms: f64,
    pub percentiles: Vec<Percentile>,
}

/// Queries by sysbench's classes: reads (SELECT), writes (INSERT/UPDATE/DELETE), other
/// (BEGIN/COMMIT and the like).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueryCounts {
    pub read: u64,
    pub write: u64,
    pub other: u64,
}

impl QueryCounts {
    /// All queries.
    pub fn total(&self) -> u64 {
        self.read + self.write + self.other
    }
}

/// CPU time and memory of the client process over a span.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuUsage {
    /// User CPU seconds.
    pub user_s: f64,
    /// System CPU seconds.
    pub sys_s: f64,
    /// Peak resident set size in KiB (0 when unknown).
    pub max_rss_kib: u64,
}

/// Fixed-rate bookkeeping: how far behind its intended schedule the client ran.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RateStats {
    /// Requested events per second.
    pub target_per_s: f64,
    /// Events per second actually started.
    pub achieved_per_s: f64,
    /// Events that started later than 1 ms after their intended start.
    pub late_events: u64,
    /// Mean schedule lag (actual start - intended start), ms.
    pub mean_lag_ms: f64,
    /// Maximum schedule lag, ms.
    pub max_lag_ms: f64,
    /// Events the client itself started more than 1 ms after they were due with a session
    /// free (its event loop was busy or woke late): the client's lateness, not the server's.
    /// The rest of the schedule lag is time waiting for a free session, that is for the
    /// server. Zero where not measured (replays, runs stored before it was kept).
    #[serde(default)]
    pub client_late_events: u64,
    /// Mean of the client's own lateness (from due with a session free to sent), ms.
    #[serde(default)]
    pub client_mean_late_ms: f64,
    /// Median of the client's own lateness, ms.
    #[serde(default)]
    pub client_p50_late_ms: f64,
    /// 99th percentile of the client's own lateness, ms.
    #[serde(default)]
    pub client_p99_late_ms: f64,
    /// Largest of the client's own lateness, ms.
    #[serde(default)]
    pub client_max_late_ms: f64,
}

/// One report interval of a measured phase.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Seconds since the measured phase began, at the end of this interval.
    pub elapsed_s: f64,
    /// Length of the interval in seconds.
    pub interval_s: f64,
    /// Events (transactions) completed.
    pub events: u64,
    /// Queries completed, by class.
    pub queries: QueryCounts,
    /// Errors that were retried or ignored (deadlocks, lock waits...), all codes.
    pub errors: u64,
    /// Connections re-established after a loss.
    pub reconnects: u64,
    /// Event latency percentiles over this interval.
    pub latency: LatencySummary,
    /// Client CPU spent in this interval.
    pub client_cpu: CpuUsage,
    /// Events behind schedule in fixed-rate mode (0 otherwise).
    pub late_events: u64,
    /// Maximum schedule lag in this interval, ms (fixed-rate mode).
    pub max_lag_ms: f64,
    /// Of `late_events`, those late by the client's own doing: sent more than 1 ms after they
    /// were due with a session free (see [`RateStats::client_late_events`]).
    #[serde(default)]
    pub client_late_events: u64,
    /// The client's largest own lateness in this interval, ms (fixed-rate mode).
    #[serde(default)]
    pub client_max_late_ms: f64,
    /// Sessions stuck at the end of this interval: their request had been waiting for its
    /// reply longer than the stuck bound (the larger of 1 s and 100× the phase's p99 so far).
    /// Absent (0) in runs stored before it was kept.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub stuck_sessions: u32,
    /// The longest any request had been waiting for its reply at the end of this interval, s,
    /// when that was at least 1 s (0: none waited that long; the floor keeps the field out of
    /// ordinary runs).
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub longest_in_flight_s: f64,
    /// The interval's event latency histogram, so that the intervals of several shards merge
    /// exactly (kept for sharded runs; none otherwise and in runs stored before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram: Option<HistogramBlob>,
}

fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}

fn is_zero_f64(x: &f64) -> bool {
    *x == 0.0
}

/// A serialized HDR histogram (V2 format, microsecond values, 3 significant digits).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistogramBlob {
    /// `event` for whole events, or the statement kind (`point_selects`, `begin`...).
    pub name: String,
    /// The V2-serialized histogram.
    #[serde(with = "hex_bytes")]
    pub v2: Vec<u8>,
}

/// Latency of one statement kind over the phase.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StatementLatency {
    /// Statement kind, by sysbench's names (`point_selects`, `simple_ranges`, `begin`...).
    pub kind: String,
    pub latency: LatencySummary,
}

/// The result of one measured phase (one thread count of a sweep).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseResult {
    /// Sessions.
    pub threads: u32,
    /// Measured seconds (warm-up excluded).
    pub duration_s: f64,
    /// Events (transactions) completed.
    pub events: u64,
    /// Queries by class.
    pub queries: QueryCounts,
    /// Retried or ignored errors by server error code.
    pub errors: BTreeMap<u16, u64>,
    /// Connections re-established after a loss.
    pub reconnects: u64,
    /// Event latency over the phase.
    pub latency: LatencySummary,
    /// Latency per statement kind.
    pub statements: Vec<StatementLatency>,
    /// One sample per report interval.
    pub samples: Vec<Sample>,
    /// The warm-up's whole report intervals, drawn but never counted in anything above: each
    /// sample's `elapsed_s` is where its interval ended, in seconds before measurement began
    /// (negative; 0 for the last). Empty without a warm-up, for phases measured by other tools
    /// and for phases stored before warm-ups were kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warmup: Vec<Sample>,
    /// Client CPU and memory over the measured phase.
    pub client_cpu: CpuUsage,
    /// Fixed-rate statistics, when `--rate` was used.
    pub rate: Option<RateStats>,
    /// Serialized histograms: `event` first, then one per statement kind.
    pub histograms: Vec<HistogramBlob>,
    /// Whether the phase is fit to compare (none: not judged, e.g. stored before verdicts).
    #[serde(default)]
    pub stability: Option<crate::verdict::Stability>,
    /// What a replay did per class of statements (`qpslab replay` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<crate::replay::ReplayOutcome>,
    /// What the live actions (`--at`) did and how they were judged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<crate::live::ActionRecord>,
    /// An I/O phase's operations, bytes and fio's identity (`qpslab io` only; its events are
    /// I/O operations, its queries' reads and writes the read and write operations).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io: Option<crate::fileio::IoFigures>,
    /// Where the client's event loops ran and how busy each was (none: not a load-loop phase,
    /// or stored before loops were measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<crate::client::ClientLoops>,
    /// What a TPC-C phase measured besides its events: the server's New-Orders, retries per
    /// transaction type, the consistency check after it (none: not a TPC-C phase).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpcc: Option<crate::tpcc::TpccFigures>,
    /// A shard's measured start and end (Unix seconds), or a merged phase's shards (none: an
    /// ordinary run's phase).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::shard::ShardPhase>,
    /// How evenly the sessions shared the events and their time (sysbench's "Threads
    /// fairness"; none: not a load-loop phase, a merged one, or stored before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fairness: Option<Fairness>,
    /// What limited the phase, with the figures behind it (none: stored before verdicts were
    /// kept, or a phase that is not a load: an I/O phase, a merged one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<crate::limits::Limits>,
}

/// How evenly a phase's sessions shared its events, as sysbench's "Threads fairness" block
/// reports it: the mean and the population standard deviation over the sessions of the events
/// each completed and of the seconds its events took (the sum of their latencies).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Fairness {
    pub events_avg: f64,
    pub events_stddev: f64,
    pub time_avg_s: f64,
    pub time_stddev_s: f64,
}

impl Fairness {
    /// The figures of sessions that each completed `events` taking `busy_s` seconds in all,
    /// `(events, busy_s)` per session; none for no session.
    pub fn of(sessions: &[(u64, f64)]) -> Option<Fairness> {
        if sessions.is_empty() {
            return None;
        }
        let n = sessions.len() as f64;
        let mean_sd = |v: &mut dyn Iterator<Item = f64>| {
            let v: Vec<f64> = v.collect();
            let mean = v.iter().sum::<f64>() / n;
            let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
            (mean, var.sqrt())
        };
        let (events_avg, events_stddev) = mean_sd(&mut sessions.iter().map(|s| s.0 as f64));
        let (time_avg_s, time_stddev_s) = mean_sd(&mut sessions.iter().map(|s| s.1));
        Some(Fairness {
            events_avg,
            events_stddev,
            time_avg_s,
            time_stddev_s,
        })
    }
}

impl PhaseResult {
    /// Events per second.
    pub fn tps(&self) -> f64 {
        per_second(self.events, self.duration_s)
    }
    /// Queries per second.
    pub fn qps(&self) -> f64 {
        per_second(self.queries.total(), self.duration_s)
    }
    /// All retried/ignored errors.
    pub fn error_total(&self) -> u64 {
        self.errors.values().sum()
    }
    /// Client CPU microseconds per query (user + sys), if any query ran.
    pub fn client_cpu_us_per_query(&self) -> Option<f64> {
        let q = self.queries.total();
        (q > 0).then(|| (self.client_cpu.user_s + self.client_cpu.sys_s) * 1e6 / q as f64)
    }
}

fn per_second(n: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        n as f64 / secs
    } else {
        0.0
    }
}

mod hex_bytes {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(b: &[u8], s: S) -> Result<S::Ok, S::Error> {
        let mut out = String::with_capacity(b.len() * 2);
        for byte in b {
            out.push_str(&format!("{byte:02x}"));
        }
        s.serialize_str(&out)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let s = String::deserialize(d)?;
        if s.len() % 2 != 0 {
            return Err(serde::de::Error::custom("odd hex length"));
        }
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).map_err(serde::de::Error::custom))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fairness_is_the_mean_and_population_deviation_over_sessions() {
        assert_eq!(Fairness::of(&[]), None);
        let f = Fairness::of(&[(10, 1.0), (30, 3.0)]).unwrap();
        assert_eq!((f.events_avg, f.events_stddev), (20.0, 10.0));
        assert_eq!((f.time_avg_s, f.time_stddev_s), (2.0, 1.0));
    }

    #[test]
    fn rates_and_hex_round_trip() {
        let r = PhaseResult {
            duration_s: 2.0,
            events: 10,
            queries: QueryCounts {
                read: 30,
                write: 8,
                other: 2,
            },
            histograms: vec![HistogramBlob {
                name: "event".into(),
                v2: vec![0, 1, 254, 255],
            }],
            ..Default::default()
        };
        assert_eq!(r.tps(), 5.0);
        assert_eq!(r.qps(), 20.0);
        let json = serde_json::to_string(&r).unwrap();
        assert!(json.contains("\"0001feff\""), "{json}");
        let back: PhaseResult = serde_json::from_str(&json).unwrap();
        assert_eq!(back, r);
    }
}
