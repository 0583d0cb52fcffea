//! The report's charts: throughput and latency against sessions (log2), per-interval
//! throughput and p99 over time with the discarded warm-up shaded, and server and client CPU
//! against sessions. A chart with nothing to draw is left out rather than drawn empty.

use crate::compare::group_estimate;
use crate::metrics::{self, CpuRate, Metric};
use crate::model::Point;
use crate::svg::{LineChart, Series};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One chart, as SVG.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Chart {
    /// A file-name-safe id, e.g. `throughput-vs-sessions`.
    pub id: String,
    /// Its title.
    pub title: String,
    /// The `<svg>` element.
    #[serde(skip)]
    pub svg: String,
}

/// A line of the "against sessions" charts: a variant at one setting of the other swept
/// parameters, its points keyed by sessions.
struct Line<'a> {
    name: String,
    color: usize,
    by_threads: BTreeMap<u32, Vec<Point<'a>>>,
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

/// Every chart that has data.
pub fn charts(variants: &[String], points: &[Point<'_>]) -> Vec<Chart> {
    let lines = lines(variants, points);
    [
        ("throughput-vs-sessions", throughput_vs_sessions(&lines)),
        ("latency-vs-sessions", latency_vs_sessions(&lines)),
        (
            "throughput-over-time",
            over_time_chart(
                &lines,
                "Throughput per interval",
                Metric::Tps,
                "transactions/s",
            ),
        ),
        (
            "p99-over-time",
            over_time_chart(&lines, "p99 latency per interval", Metric::P99, "ms"),
        ),
        (
            "replica-lag-over-time",
            over_time_chart(
                &lines,
                "Replica lag per interval (heartbeat, largest)",
                Metric::ReplicaLag,
                "ms",
            ),
        ),
        (
            "server-cpu",
            cpu_vs_sessions(
                &lines,
                metrics::server_cpu,
                "Server CPU usr (solid) / sys (dashed) vs sessions",
            ),
        ),
        (
            "client-cpu",
            cpu_vs_sessions(
                &lines,
                |p| metrics::client_cpu(&p.phase.result),
                "Client CPU usr (solid) / sys (dashed) vs sessions",
            ),
        ),
    ]
    .into_iter()
    .filter(|(_, chart)| chart.has_data())
    .map(|(id, chart)| Chart {
        id: id.into(),
        title: chart.title.clone(),
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
        x_log2: true,
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

/// A metric per interval over time, with the discarded warm-up shaded before 0.
fn over_time_chart(lines: &[Line<'_>], title: &str, m: Metric, unit: &str) -> LineChart {
    let (series, warmup) = over_time(lines, m);
    LineChart {
        markers: action_markers(lines),
        title: title.into(),
        x_label: "seconds since the measured phase began".into(),
        y_label: unit.into(),
        x_log2: false,
        series,
        band: (warmup > 0.0).then(|| (-warmup, 0.0, "warm-up (discarded)".to_string())),
    }
}

/// The most characters of an action a marker's label shows.
const MARKER_LABEL: usize = 40;

/// One marker per live action (`run --at`) of the phases drawn over time.
fn action_markers(lines: &[Line<'_>]) -> Vec<(f64, String)> {
    let mut out: Vec<(f64, String)> = Vec::new();
    let drawn = lines
        .iter()
        .filter_map(|l| l.by_threads.values().next_back()?.first());
    for p in drawn {
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

/// Per-interval series of each line at its highest session count (first repeat), and the
/// longest warm-up among them.
fn over_time(lines: &[Line<'_>], m: Metric) -> (Vec<Series>, f64) {
    let mut warmup = 0.0f64;
    let mut out = Vec::new();
    for l in lines {
        let Some((threads, g)) = l.by_threads.iter().next_back() else {
            continue;
        };
        let Some(p) = g.first() else { continue };
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
            name: format!("{} @{threads}", l.name),
            points: xs.into_iter().zip(values).collect(),
            color: l.color,
            dashed: false,
        });
    }
    (out, warmup)
}
