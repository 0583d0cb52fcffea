//! fio's `json+` reports: each status report (cumulative since the job started) read into a
//! [`Snapshot`]; the phase's figures exactly as fio computed them, and per-interval samples
//! from the difference of two snapshots' latency histograms.

use qpslab_core::fileio::{IoFigures, MIB};
use qpslab_core::result::{LatencySummary, Percentile, PhaseResult, QueryCounts, Sample};
use serde_json::Value;
use std::collections::BTreeMap;

/// A fio report that cannot be read: what is missing or wrong in it (fio's failure, not the
/// user's).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FioReportError(pub String);

impl From<String> for FioReportError {
    fn from(message: String) -> FioReportError {
        FioReportError(message)
    }
}

impl From<&str> for FioReportError {
    fn from(message: &str) -> FioReportError {
        FioReportError(message.to_string())
    }
}

/// One direction's cumulative figures (read, write, or both: fio's `mixed`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Direction {
    /// Completed I/Os.
    pub ios: u64,
    /// Bytes transferred.
    pub bytes: u64,
    /// fio's bandwidth, bytes per second.
    pub bw_bytes: f64,
    /// Completion latency, ns: min, mean, max.
    pub min_ns: f64,
    pub mean_ns: f64,
    pub max_ns: f64,
    /// fio's percentiles: (p, ns).
    pub percentiles: Vec<(f64, f64)>,
    /// fio's full histogram: bucket value (ns) → count.
    pub bins: BTreeMap<u64, u64>,
}

/// One status report of the one (grouped) job.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Snapshot {
    /// `fio-3.33`.
    pub version: String,
    /// Milliseconds the job has run.
    pub runtime_ms: u64,
    pub read: Direction,
    pub write: Direction,
    pub mixed: Direction,
    /// fsync/fdatasync calls.
    pub fsyncs: u64,
}

fn num(v: &Value, key: &str) -> Result<f64, String> {
    v.get(key)
        .and_then(Value::as_f64)
        .filter(|n| n.is_finite() && *n >= 0.0)
        .ok_or_else(|| format!("fio's report has no number `{key}`"))
}

fn count(v: &Value, key: &str) -> Result<u64, String> {
    num(v, key).map(|n| n as u64)
}

fn direction(job: &Value, key: &str) -> Result<Direction, String> {
    let d = job
        .get(key)
        .ok_or_else(|| format!("fio's report has no `{key}` figures (unified_rw_reporting)"))?;
    let clat = d.get("clat_ns").ok_or("fio's report has no clat_ns")?;
    let mut percentiles: Vec<(f64, f64)> = match clat.get("percentile") {
        Some(Value::Object(m)) => m
            .iter()
            .map(|(p, ns)| Ok((p.parse::<f64>().map_err(|_| "bad percentile")?, ns)))
            .map(|r: Result<_, String>| r.and_then(|(p, ns)| Ok((p, ns_of(ns)?))))
            .collect::<Result<_, _>>()?,
        _ => Vec::new(),
    };
    percentiles.sort_by(|a, b| a.0.total_cmp(&b.0));
    let bins = match clat.get("bins") {
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, c)| match (k.parse::<u64>(), c.as_u64()) {
                (Ok(k), Some(c)) => Ok((k, c)),
                _ => Err(format!("fio's histogram has a bad bin {k}: {c}")),
            })
            .collect::<Result<_, _>>()?,
        _ => BTreeMap::new(),
    };
    Ok(Direction {
        ios: count(d, "total_ios")?,
        bytes: count(d, "io_bytes")?,
        bw_bytes: num(d, "bw_bytes")?,
        min_ns: num(clat, "min")?,
        mean_ns: num(clat, "mean")?,
        max_ns: num(clat, "max")?,
        percentiles,
        bins,
    })
}

fn ns_of(v: &Value) -> Result<f64, String> {
    v.as_f64()
        .filter(|n| n.is_finite() && *n >= 0.0)
        .ok_or_else(|| format!("fio's percentile is not a number: {v}"))
}

impl Snapshot {
    /// Reads one `json+` report of a single grouped job. A job error (fio's `error`) or a
    /// report of another shape is an error naming what is missing.
    pub fn parse(report: &Value) -> Result<Snapshot, FioReportError> {
        let version = report
            .get("fio version")
            .and_then(Value::as_str)
            .ok_or("not a fio report (no `fio version`)")?;
        let job = match report.get("jobs").and_then(Value::as_array) {
            Some(jobs) if jobs.len() == 1 => &jobs[0],
            _ => return Err("fio's report should hold exactly one (grouped) job".into()),
        };
        let error = count(job, "error")?;
        if error != 0 {
            return Err(format!("fio's job failed with error {error}").into());
        }
        let fsyncs = job.get("sync").map_or(Ok(0), |s| count(s, "total_ios"))?;
        Ok(Snapshot {
            version: version.to_string(),
            runtime_ms: count(job, "job_runtime")?,
            read: direction(job, "read")?,
            write: direction(job, "write")?,
            mixed: direction(job, "mixed")?,
            fsyncs,
        })
    }
}

/// The value at percentile `p` of a histogram the way fio computes it: the first bucket whose
/// cumulative count reaches `p`% of the total.
pub fn bins_percentile(bins: &BTreeMap<u64, u64>, p: f64) -> Option<u64> {
    let total: u64 = bins.values().sum();
    let rank = p / 100.0 * total as f64;
    let mut seen = 0u64;
    bins.iter().find_map(|(v, c)| {
        seen += c;
        (total > 0 && seen as f64 >= rank).then_some(*v)
    })
}

/// What `to` counted since `from`, bucket by bucket.
fn bins_since(from: &BTreeMap<u64, u64>, to: &BTreeMap<u64, u64>) -> BTreeMap<u64, u64> {
    to.iter()
        .map(|(v, c)| (*v, c.saturating_sub(from.get(v).copied().unwrap_or(0))))
        .filter(|(_, c)| *c > 0)
        .collect()
}

fn ms(ns: f64) -> f64 {
    ns / 1e6
}

/// The interval between two snapshots as a sample (latency from the histogram's difference).
pub fn sample(from: &Snapshot, to: &Snapshot) -> Sample {
    let bins = bins_since(&from.mixed.bins, &to.mixed.bins);
    let n: u64 = bins.values().sum();
    let sum: f64 = bins.iter().map(|(v, c)| *v as f64 * *c as f64).sum();
    let latency = LatencySummary {
        count: n,
        min_ms: bins.keys().next().map_or(0.0, |v| ms(*v as f64)),
        avg_ms: if n > 0 { ms(sum / n as f64) } else { 0.0 },
        max_ms: bins.keys().last().map_or(0.0, |v| ms(*v as f64)),
        percentiles: super::job::PERCENTILES
            .iter()
            .filter_map(|p| {
                bins_percentile(&bins, *p).map(|v| Percentile {
                    p: *p,
                    ms: ms(v as f64),
                })
            })
            .collect(),
    };
    Sample {
        elapsed_s: to.runtime_ms as f64 / 1000.0,
        interval_s: to.runtime_ms.saturating_sub(from.runtime_ms) as f64 / 1000.0,
        events: to.mixed.ios.saturating_sub(from.mixed.ios),
        queries: QueryCounts {
            read: to.read.ios.saturating_sub(from.read.ios),
            write: to.write.ios.saturating_sub(from.write.ios),
            other: to.fsyncs.saturating_sub(from.fsyncs),
        },
        latency,
        ..Default::default()
    }
}

/// The samples of a phase from its snapshots: one per report, except that a last interval
/// shorter than half of `interval_s` (the end of the run between two reports) joins the one
/// before it.
pub fn samples(snaps: &[Snapshot], interval_s: f64) -> Vec<Sample> {
    let mut cut: Vec<&Snapshot> = snaps.iter().collect();
    if let [.., before, last] = cut[..] {
        let tail_ms = last.runtime_ms.saturating_sub(before.runtime_ms) as f64;
        if tail_ms < 500.0 * interval_s {
            cut.remove(cut.len() - 2);
        }
    }
    let empty = Snapshot::default();
    let mut prev = &empty;
    cut.into_iter()
        .map(|s| {
            let out = sample(prev, s);
            prev = s;
            out
        })
        .collect()
}

/// The phase as fio reported it at the end (`last`): events are I/O operations, latency is
/// fio's completion latency with its own percentiles, the reads and writes are operations.
pub fn phase(
    threads: u32,
    last: &Snapshot,
    samples: Vec<Sample>,
    command: Vec<String>,
) -> PhaseResult {
    let m = &last.mixed;
    let duration_s = last.runtime_ms as f64 / 1000.0;
    PhaseResult {
        threads,
        duration_s,
        events: m.ios,
        queries: QueryCounts {
            read: last.read.ios,
            write: last.write.ios,
            other: last.fsyncs,
        },
        latency: LatencySummary {
            count: m.ios,
            min_ms: ms(m.min_ns),
            avg_ms: ms(m.mean_ns),
            max_ms: ms(m.max_ns),
            percentiles: m
                .percentiles
                .iter()
                .map(|(p, ns)| Percentile { p: *p, ms: ms(*ns) })
                .collect(),
        },
        samples,
        io: Some(IoFigures {
            read_ops: last.read.ios,
            write_ops: last.write.ios,
            read_bytes: last.read.bytes,
            write_bytes: last.write.bytes,
            read_mib_s: last.read.bw_bytes / MIB,
            write_mib_s: last.write.bw_bytes / MIB,
            fsyncs: last.fsyncs,
            fio_version: last.version.clone(),
            fio_command: command,
        }),
        ..Default::default()
    }
}

#[cfg(test)]
#[path = "report_tests.rs"]
mod tests;
