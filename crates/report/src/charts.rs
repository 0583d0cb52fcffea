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
    let mut out = Vec::new();
    let mut add = |id: &str, chart: LineChart| {
        if chart.has_data() {
            out.push(Chart {
                id: id.into(),
                title: chart.title.clone(),
                svg: chart.to_svg(),
            });
        }
    };
    let series = |name: String, color: usize, dashed: bool, points: Vec<(f64, f64)>| Series {
        name,
        points,
        color,
        dashed,
    };
    add(
        "throughput-vs-sessions",
        LineChart {
            title: "Throughput vs sessions".into(),
            x_label: "sessions (log2)".into(),
            y_label: "transactions/s".into(),
            x_log2: true,
            series: lines
                .iter()
                .map(|l| {
                    series(
                        l.name.clone(),
                        l.color,
                        false,
                        metric_points(l, Metric::Tps),
                    )
                })
                .collect(),
            band: None,
        },
    );
    add(
        "latency-vs-sessions",
        LineChart {
            title: "p99 (solid) and p95 (dashed) latency vs sessions".into(),
            x_label: "sessions (log2)".into(),
            y_label: "ms".into(),
            x_log2: true,
            series: lines
                .iter()
                .flat_map(|l| {
                    [
                        series(
                            format!("{} p99", l.name),
                            l.color,
                            false,
                            metric_points(l, Metric::P99),
                        ),
                        series(
                            format!("{} p95", l.name),
                            l.color,
                            true,
                            metric_points(l, Metric::P95),
                        ),
                    ]
                })
                .filter(|s| !s.points.is_empty())
                .collect(),
            band: None,
        },
    );
    for (id, title, m, unit) in [
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
    ] {
        let (series_list, warmup) = over_time(&lines, m);
        add(
            id,
            LineChart {
                title: title.into(),
                x_label: "seconds since the measured phase began".into(),
                y_label: unit.into(),
                x_log2: false,
                series: series_list,
                band: (warmup > 0.0).then(|| (-warmup, 0.0, "warm-up (discarded)".to_string())),
            },
        );
    }
    let cpu = |rate: fn(&Point<'_>) -> Option<CpuRate>, title: &str| LineChart {
        title: title.into(),
        x_label: "sessions (log2)".into(),
        y_label: "% of one core".into(),
        x_log2: true,
        series: lines
            .iter()
            .flat_map(|l| {
                [
                    series(
                        format!("{} usr", l.name),
                        l.color,
                        false,
                        cpu_points(l, |p| rate(p).map(|c| 100.0 * c.user)),
                    ),
                    series(
                        format!("{} sys", l.name),
                        l.color,
                        true,
                        cpu_points(l, |p| rate(p).map(|c| 100.0 * c.sys)),
                    ),
                ]
            })
            .filter(|s| !s.points.is_empty())
            .collect(),
        band: None,
    };
    for (id, chart) in [
        (
            "server-cpu",
            cpu(
                metrics::server_cpu,
                "Server CPU usr (solid) / sys (dashed) vs sessions",
            ),
        ),
        (
            "client-cpu",
            cpu(
                |p| metrics::client_cpu(&p.phase.result),
                "Client CPU usr (solid) / sys (dashed) vs sessions",
            ),
        ),
    ] {
        add(id, chart);
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
