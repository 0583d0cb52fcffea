//! Comparisons of two variants (or two runs): per metric the two values, the change, its 95%
//! confidence interval and a verdict, for every setting both were measured at; and what differs
//! between their configurations and environments.

use crate::metrics::Metric;
use crate::model::{Point, Subject};
use crate::stats::{self, Estimate};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// Confidence level of every interval.
pub const LEVEL: f64 = 0.95;

/// One metric compared.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricComparison {
    /// Which metric (`tps`, `p99`...).
    pub metric: String,
    /// Unit of `a` and `b`.
    pub unit: String,
    /// Baseline value (mean over the measured intervals, or over repeats).
    pub a: f64,
    /// Candidate value.
    pub b: f64,
    /// `(b - a) / a`, in percent.
    pub change_pct: f64,
    /// Lower end of the 95% confidence interval of the change, in percent (`None`: no
    /// per-interval data to build one).
    pub ci_low: Option<f64>,
    /// Upper end, in percent.
    pub ci_high: Option<f64>,
    /// Whether the interval excludes zero.
    pub significant: bool,
    /// `better`, `worse`, `no significant change` or `no interval`.
    pub verdict: String,
}

/// Two variants compared at one setting of the swept parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointComparison {
    /// The swept settings, e.g. `threads=16`.
    pub key: String,
    /// Runs of the baseline at this setting.
    pub a_runs: Vec<i64>,
    /// Runs of the candidate.
    pub b_runs: Vec<i64>,
    /// One entry per metric both sides have.
    pub metrics: Vec<MetricComparison>,
}

impl PointComparison {
    /// The throughput comparison, if any.
    pub fn tps(&self) -> Option<&MetricComparison> {
        self.metrics.iter().find(|m| m.metric == "tps")
    }
}

/// A setting that differs between the two sides.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Difference {
    /// Where it comes from and its name, e.g. `server.innodb_buffer_pool_size`.
    pub name: String,
    /// The baseline's value (empty when absent).
    pub a: String,
    /// The candidate's value.
    pub b: String,
}

/// Variant B against baseline A.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Baseline name.
    pub a: String,
    /// Candidate name.
    pub b: String,
    /// One entry per setting both were measured at.
    pub points: Vec<PointComparison>,
    /// Configuration and environment differences (only what differs).
    pub differences: Vec<Difference>,
}

impl Comparison {
    /// One line: the throughput verdict at each setting.
    pub fn headline(&self) -> String {
        let parts: Vec<String> = self
            .points
            .iter()
            .filter_map(|p| {
                let m = p.tps()?;
                Some(format!("{}: {}", p.key, short_verdict(m)))
            })
            .collect();
        if parts.is_empty() {
            format!("{} vs {}: no setting measured by both", self.b, self.a)
        } else {
            format!("{} vs {}: throughput {}", self.b, self.a, parts.join("; "))
        }
    }
}

/// `+12.3% [+8.1, +16.4] better` or `-0.4% [-2.0, +1.2] no significant change`.
pub fn short_verdict(m: &MetricComparison) -> String {
    match (m.ci_low, m.ci_high) {
        (Some(l), Some(h)) => format!("{:+.1}% [{l:+.1}, {h:+.1}] {}", m.change_pct, m.verdict),
        _ => format!("{:+.1}% ({})", m.change_pct, m.verdict),
    }
}

/// Compares the points of variant `b` with those of `a`, matched by their swept settings.
pub fn compare(a_name: &str, a: &[Point<'_>], b_name: &str, b: &[Point<'_>]) -> Comparison {
    let ga = by_key(a);
    let gb = by_key(b);
    let points = ga
        .iter()
        .filter_map(|(key, pa)| {
            let pb = gb.get(key)?;
            Some(PointComparison {
                key: key.clone(),
                a_runs: run_ids(pa),
                b_runs: run_ids(pb),
                metrics: Metric::ALL
                    .iter()
                    .filter_map(|&m| compare_metric(m, pa, pb))
                    .collect(),
            })
        })
        .collect();
    let differences = match (a.first(), b.first()) {
        (Some(x), Some(y)) => differences(x.subject, y.subject),
        _ => Vec::new(),
    };
    Comparison {
        a: a_name.to_string(),
        b: b_name.to_string(),
        points,
        differences,
    }
}

/// Points grouped by their swept settings, in order of first appearance of each thread count.
pub fn by_key<'a>(points: &[Point<'a>]) -> BTreeMap<String, Vec<Point<'a>>> {
    let mut out: BTreeMap<String, Vec<Point<'a>>> = BTreeMap::new();
    for p in points {
        out.entry(p.key()).or_default().push(*p);
    }
    out
}

fn run_ids(ps: &[Point<'_>]) -> Vec<i64> {
    let mut ids: Vec<i64> = ps.iter().map(|p| p.subject.run.id.0).collect();
    ids.dedup();
    ids
}

/// The estimate of a metric over the repeats of one setting: with two or more repeats, their
/// means are the observations (run-to-run noise is what matters); with one, its intervals,
/// corrected for autocorrelation; without intervals, the phase-level value alone.
pub fn group_estimate(metric: Metric, ps: &[Point<'_>]) -> Option<Estimate> {
    let series: Vec<Vec<f64>> = ps.iter().map(|p| metric.series(p.phase)).collect();
    if ps.len() >= 2 {
        let means: Option<Vec<f64>> = ps
            .iter()
            .zip(&series)
            .map(|(p, s)| {
                stats::estimate(s)
                    .map(|e| e.mean)
                    .or_else(|| metric.phase_value(p))
            })
            .collect();
        return stats::estimate_independent(&means?);
    }
    let p = ps.first()?;
    match stats::estimate(&series[0]) {
        Some(e) if e.has_uncertainty() => Some(e),
        _ => metric.phase_value(p).map(Estimate::single),
    }
}

fn compare_metric(m: Metric, a: &[Point<'_>], b: &[Point<'_>]) -> Option<MetricComparison> {
    let ea = group_estimate(m, a)?;
    let eb = group_estimate(m, b)?;
    if ea.mean == 0.0 {
        return None;
    }
    let pct = |x: f64| 100.0 * x / ea.mean;
    let d = stats::difference(&ea, &eb, LEVEL);
    let significant = d.is_some_and(|d| d.excludes_zero());
    let verdict = match d {
        None => "no interval",
        Some(_) if !significant => "no significant change",
        Some(d) if (d.diff > 0.0) == m.higher_is_better() => "better",
        Some(_) => "worse",
    };
    Some(MetricComparison {
        metric: m.name().into(),
        unit: m.unit().into(),
        a: ea.mean,
        b: eb.mean,
        change_pct: pct(eb.mean - ea.mean),
        ci_low: d.map(|d| pct(d.low)),
        ci_high: d.map(|d| pct(d.high)),
        significant,
        verdict: verdict.into(),
    })
}

/// Server variables that differ between any two sandboxes by construction (paths, ports, ids):
/// listing them would bury the differences that matter.
const INCIDENTAL: &[&str] = &[
    "port",
    "socket",
    "datadir",
    "pid_file",
    "log_error",
    "general_log_file",
    "slow_query_log_file",
    "log_bin_basename",
    "log_bin_index",
    "relay_log_basename",
    "relay_log_index",
    "relay_log_info_file",
    "innodb_data_home_dir",
    "innodb_log_group_home_dir",
    "tmpdir",
    "server_uid",
    "hostname",
    "report_port",
    "timestamp",
    "gtid_binlog_pos",
    "gtid_current_pos",
    "gtid_binlog_state",
    "wsrep_node_name",
];

/// What differs between two runs' plans, servers and hosts, ignoring the thread sweep (points
/// are matched on it) and incidental paths and ports.
pub fn differences(a: &Subject, b: &Subject) -> Vec<Difference> {
    let (ma, mb) = (&a.run.meta, &b.run.meta);
    let mut fa = BTreeMap::new();
    let mut fb = BTreeMap::new();
    for (meta, f) in [(ma, &mut fa), (mb, &mut fb)] {
        let plan = serde_json::to_value(&meta.plan).unwrap_or(Value::Null);
        flatten("plan", &plan, f);
        f.remove("plan.threads");
        // Each run draws its own seed from the clock unless one was given: not a setting.
        f.remove("plan.workload.rand.seed");
        // What settling found and how long auto warm-up took are measurements, not settings.
        f.retain(|k, _| !k.starts_with("plan.settle.report.") && k != "plan.warmup_auto.took_s");
        f.insert("server.version".into(), meta.server.version.clone());
        // Paths inside the server's own directory (its datadir's parent: a sandbox's home)
        // differ between any two sandboxes; compare them relative to it.
        let home = meta
            .server
            .variables
            .get("datadir")
            .map(|d| d.trim_end_matches('/'))
            .and_then(|d| d.rsplit_once('/'))
            .map(|(parent, _)| parent.to_string())
            .filter(|p| p.len() > 1);
        for (k, v) in &meta.server.variables {
            if !INCIDENTAL.contains(&k.as_str()) {
                let v = match &home {
                    Some(h) => v.replace(h.as_str(), "<server dir>"),
                    None => v.clone(),
                };
                f.insert(format!("server.{k}"), v);
            }
        }
        let host = serde_json::to_value(&meta.host).unwrap_or(Value::Null);
        flatten("host", &host, f);
    }
    for (s, f) in [(a, &mut fa), (b, &mut fb)] {
        for (k, v) in &s.levels {
            f.insert(format!("factor.{k}"), v.clone());
        }
    }
    let keys: std::collections::BTreeSet<&String> = fa.keys().chain(fb.keys()).collect();
    keys.into_iter()
        .filter_map(|k| {
            let (x, y) = (fa.get(k), fb.get(k));
            (x != y).then(|| Difference {
                name: k.clone(),
                a: x.cloned().unwrap_or_default(),
                b: y.cloned().unwrap_or_default(),
            })
        })
        .collect()
}

fn flatten(prefix: &str, v: &Value, out: &mut BTreeMap<String, String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                flatten(&format!("{prefix}.{k}"), x, out);
            }
        }
        Value::Null => {}
        other => {
            out.insert(prefix.to_string(), crate::model::value_text(other));
        }
    }
}
