//! The report's charts: throughput and latency against sessions (log2), server and client CPU
//! against sessions; per-interval throughput and p99 over time for every session count (small
//! multiples, the discarded warm-up shaded, each line labelled with its phase's stability
//! verdict); the latency distribution of each session count ([`hdr`]); and the server's own
//! time series from the stored telemetry ([`server`]). A chart with nothing to draw is left out
//! rather than drawn empty.

mod hdr;
mod server;

use crate::compare::group_estimate;
use crate::metrics::{self, CpuRate, Metric};
use crate::model::Point;
use crate::svg::{LineChart, Series, Size, XAxis};
use qpslab_core::{Instability, Stability};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Where a chart belongs in the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Section {
    /// Against sessions: throughput, latency, CPU (full size).
    Scaling,
    /// Per interval over time, one chart per session count (small multiples).
    Intervals,
    /// Latency distributions, one per session count.
    Latency,
    /// The server's telemetry over time, one chart per metric and session count.
    Server,
}

/// One chart, as SVG.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Chart {
    /// A file-name-safe id, e.g. `throughput-vs-sessions`.
    pub id: String,
    /// Its title.
    pub title: String,
    /// The report section it belongs to.
    pub section: Section,
    /// The `<svg>` element.
    #[serde(skip)]
    pub svg: String,
}

/// A line of the charts: a variant at one setting of the other swept parameters, its points
/// keyed by sessions.
struct Line<'a> {
    name: String,
    color: usize,
    by_threads: BTreeMap<u32, Vec<Point<'a>>>,
}

impl<'a> Line<'a> {
    /// The line's first point (first repeat) at `threads`, if it measured there.
    fn first_at(&self, threads: u32) -> Option<&Point<'a>> {
        self.by_threads.get(&threads)?.first()
    }
}

/// The session counts measured by any line, in order.
fn thread_counts(lines: &[Line<'_>]) -> Vec<u32> {
    let mut out: Vec<u32> = lines
        .iter()
        .flat_map(|l| l.by_threads.keys().copied())
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// `1 session`, `4 sessions`.
fn sessions(threads: u32) -> String {
    format!("{threads} session{}", if threads == 1 { "" } else { "s" })
}

/// A phase's stability verdict in a word or two, for a legend: `stable`, `client-bound`,
/// `unstable`, or `not judged`.
pub fn verdict_word(s: Option<&Stability>) -> &'static str {
    match s {
        None => "not judged",
        Some(s) if s.is_stable() => "stable",
        Some(s)
            if s.reasons
                .iter()
                .any(|r| matches!(r, Instability::ClientBound { .. })) =>
        {
            "client-bound"
        }
        Some(_) => "unstable",
    }
}

fn lines<'a>(variants: &[String], points: &[Point<'a>]) -> Vec<Line<'a>> {
    let mut out: Vec<Line<'a>> = Vec::new();
    for p in points {
        let color = variants
            .iter()
            .position(|v| *v == p.subject.cell.variant)
            .unwrap_or(0);
        let rest: Vec<String> = p
            .key()
            .split(' ')
            .filter(|kv| !kv.starts_with("threads="))
            .map(str::to_string)
            .collect();
        let name = if rest.is_empty() {
            p.subject.cell.variant.clone()
        } else {
            format!("{} {}", p.subject.cell.variant, rest.join(" "))
        };
        let i = match out.iter().position(|l| l.name == name) {
            Some(i) => i,
            None => {
                out.push(Line {
                    name,
                    color,
                    by_threads: BTreeMap::new(),
                });
                out.len() - 1
            }
        };
        out[i].by_threads.entry(p.threads()).or_default().push(*p);
    }
    out
}

fn metric_points(l: &Line<'_>, m: Metric) -> Vec<(f64, f64)> {
    l.by_threads
        .iter()
        .filter_map(|(t, g)| Some((*t as f64, group_estimate(m, g)?.mean)))
        .collect()
}

fn cpu_points(l: &Line<'_>, f: impl Fn(&Point<'_>) -> Option<f64>) -> Vec<(f64, f64)> {
    l.by_threads
        .iter()
        .filter_map(|(t, g)| {
            let v: Vec<f64> = g.iter().filter_map(&f).collect();
            (!v.is_empty()).then(|| (*t as f64, v.iter().sum::<f64>() / v.len() as f64))
        })
        .collect()
}

/// Every chart that has data: the scaling charts, then per session count the per-interval
/// charts, the latency distributions and the server's time series.
pub fn charts(variants: &[String], points: &[Point<'_>]) -> Vec<Chart> {
    let lines = lines(variants, points);
    let threads = thread_counts(&lines);
    let mut out: Vec<(Section, String, LineChart)> = vec![
        (
            Section::Scaling,
            "throughput-vs-sessions".into(),
            throughput_vs_sessions(&lines),
        ),
        (
            Section::Scaling,
            "latency-vs-sessions".into(),
            latency_vs_sessions(&lines),
        ),
        (
            Section::Scaling,
            "server-cpu".into(),
            cpu_vs_sessions(
                &lines,
                metrics::server_cpu,
                "Server CPU usr (solid) / sys (dashed) vs sessions",
            ),
        ),
        (
            Section::Scaling,
            "client-cpu".into(),
            cpu_vs_sessions(
                &lines,
                |p| metrics::client_cpu(&p.phase.result),
                "Client CPU usr (solid) / sys (dashed) vs sessions",
            ),
        ),
    ];
    for &t in &threads {
        let per_interval = [
            (
                "throughput-over-time",
                "Throughput per interval",
                Metric::Tps,
                "transactions/s",
            ),
            (
                "p99-over-time",
                "p99 latency per interval",
                Metric::P99,
                "ms",
            ),
            (
                "replica-lag-over-time",
                "Replica lag per interval (heartbeat, largest)",
                Metric::ReplicaLag,
                "ms",
            ),
        ];
        for (id, title, m, unit) in per_interval {
            let chart = over_time_chart(&lines, title, m, unit, t);
            out.push((Section::Intervals, format!("{id}-{t}"), chart));
        }
    }
    for &t in &threads {
        out.push((
            Section::Latency,
            format!("latency-distribution-{t}"),
            hdr::distribution(&lines, t),
        ));
    }
    for (id, chart) in server::charts(&lines, &threads) {
        out.push((Section::Server, id, chart));
    }
    out.into_iter()
        .filter(|(_, _, chart)| chart.has_data())
        .map(|(section, id, chart)| Chart {
            id,
            title: chart.title.clone(),
            section,
            svg: chart.to_svg(),
        })
        .collect()
}

/// A chart against sessions on a log2 axis.
fn vs_sessions(title: &str, y_label: &str, series: Vec<Series>) -> LineChart {
    LineChart {
        title: title.into(),
        x_label: "sessions (log2)".into(),
        y_label: y_label.into(),
        x_axis: XAxis::Log2,
        size: Size::Full,
        series,
        band: None,
        markers: Vec::new(),
    }
}

/// Mean throughput of each line against sessions; a line with no estimate keeps its legend.
fn throughput_vs_sessions(lines: &[Line<'_>]) -> LineChart {
    let series = lines
        .iter()
        .map(|l| Series {
            name: l.name.clone(),
            points: metric_points(l, Metric::Tps),
            color: l.color,
            dashed: false,
        })
        .collect();
    vs_sessions("Throughput vs sessions", "transactions/s", series)
}

/// Mean p99 (solid) and p95 (dashed) of each line against sessions.
fn latency_vs_sessions(lines: &[Line<'_>]) -> LineChart {
    let series = solid_and_dashed(
        lines,
        ("p99", |l| metric_points(l, Metric::P99)),
        ("p95", |l| metric_points(l, Metric::P95)),
    );
    vs_sessions(
        "p99 (solid) and p95 (dashed) latency vs sessions",
        "ms",
        series,
    )
}

/// User (solid) and system (dashed) CPU of each line against sessions, in % of one core, with
/// `rate` picking whose CPU (the server's or the client's).
fn cpu_vs_sessions(
    lines: &[Line<'_>],
    rate: fn(&Point<'_>) -> Option<CpuRate>,
    title: &str,
) -> LineChart {
    let series = solid_and_dashed(
        lines,
        ("usr", |l| {
            cpu_points(l, |p| rate(p).map(|c| 100.0 * c.user))
        }),
        ("sys", |l| cpu_points(l, |p| rate(p).map(|c| 100.0 * c.sys))),
    );
    vs_sessions(title, "% of one core", series)
}

/// Two series per line in its colour, named by a suffix: a solid one and a dashed one; series
/// without points are left out.
fn solid_and_dashed<'a>(
    lines: &[Line<'a>],
    solid: (&str, impl Fn(&Line<'a>) -> Vec<(f64, f64)>),
    dashed: (&str, impl Fn(&Line<'a>) -> Vec<(f64, f64)>),
) -> Vec<Series> {
    let one = |l: &Line<'a>, suffix: &str, points: Vec<(f64, f64)>, dashed: bool| Series {
        name: format!("{} {suffix}", l.name),
        points,
        color: l.color,
        dashed,
    };
    lines
        .iter()
        .flat_map(|l| {
            [
                one(l, solid.0, solid.1(l), false),
                one(l, dashed.0, dashed.1(l), true),
            ]
        })
        .filter(|s| !s.points.is_empty())
        .collect()
}

/// A metric per interval over time at `threads` sessions (small), with the discarded warm-up
/// shaded before 0.
fn over_time_chart(
    lines: &[Line<'_>],
    title: &str,
    m: Metric,
    unit: &str,
    threads: u32,
) -> LineChart {
    let (series, warmup) = over_time(lines, m, threads);
    LineChart {
        markers: action_markers(lines, threads),
        title: format!("{title} · {}", sessions(threads)),
        x_label: "seconds since the measured phase began".into(),
        y_label: unit.into(),
        x_axis: XAxis::Linear,
        size: Size::Small,
        series,
        band: (warmup > 0.0).then(|| (-warmup, 0.0, "warm-up (discarded)".to_string())),
    }
}

/// The most characters of an action a marker's label shows.
const MARKER_LABEL: usize = 40;

/// One marker per live action (`run --at`) of the phases drawn at `threads`.
fn action_markers(lines: &[Line<'_>], threads: u32) -> Vec<(f64, String)> {
    let mut out: Vec<(f64, String)> = Vec::new();
    for p in lines.iter().filter_map(|l| l.first_at(threads)) {
        for a in &p.phase.result.actions {
            let mut label: String = a.action.chars().take(MARKER_LABEL).collect();
            if a.action.chars().count() > MARKER_LABEL {
                label.push('…');
            }
            if !out.iter().any(|(x, l)| *x == a.at_s && *l == label) {
                out.push((a.at_s, label));
            }
        }
    }
    out
}

/// Per-interval series of each line at `threads` sessions (first repeat), each named with its
/// phase's stability verdict, and the longest warm-up among them.
fn over_time(lines: &[Line<'_>], m: Metric, threads: u32) -> (Vec<Series>, f64) {
    let mut warmup = 0.0f64;
    let mut out = Vec::new();
    for l in lines {
        let Some(p) = l.first_at(threads) else {
            continue;
        };
        let samples = &p.phase.result.samples;
        let values = m.series(p.phase);
        // Percentile series skip idle intervals; pair values with the intervals that have them.
        let xs: Vec<f64> = samples
            .iter()
            .filter(|s| m != Metric::P99 || s.events > 0)
            .map(|s| s.elapsed_s)
            .collect();
        if values.is_empty() || xs.len() != values.len() {
            continue;
        }
        warmup = warmup.max(p.meta().plan.warmup_s);
        out.push(Series {
            name: format!(
                "{} ({})",
                l.name,
                verdict_word(p.phase.result.stability.as_ref())
            ),
            points: xs.into_iter().zip(values).collect(),
            color: l.color,
            dashed: false,
        });
    }
    (out, warmup)
}
