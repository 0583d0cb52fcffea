//! The report's charts, chosen from the study's shape: first the forest plots of the
//! comparisons ([`forest`]); then, with three or more session counts, throughput, latency and
//! CPU against sessions (log2) as lines, and with fewer, a dot plot with intervals per session
//! count (a line over one or two x values says nothing); per-interval throughput and p99 over
//! time for every session count whose phases have enough intervals to show a shape (small
//! multiples, the discarded warm-up shaded, each line labelled with its phase's stability
//! verdict); the latency distribution of each session count ([`hdr`]); and the server's own
//! time series from the stored telemetry ([`server`]). A chart with nothing to draw is left out
//! rather than drawn empty.
//!
//! A line is a variant at one setting of the other swept parameters: its colour is the
//! variant's (the same in every chart), its style (dash and marker) that setting's, so no two
//! lines of a chart look alike.

pub mod forest;
mod hdr;
pub(crate) mod labels;
mod scaling;

pub(crate) use scaling::round_list;
mod server;

use crate::compare::group_estimate;
use crate::compare::Comparison;
use crate::metrics::Metric;
use crate::model::Point;
use crate::svg::{LineChart, Series, Size, XAxis};
use qpslab_core::{Instability, Stability};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Where a chart belongs in the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Section {
    /// The answer: forest plots of the comparisons.
    Summary,
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
    /// What the chart shows and what it does not decide, shown under it (empty: its title
    /// says enough).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub caption: String,
}

/// A line of the charts: a variant at one setting of the other swept parameters, its points
/// keyed by sessions.
struct Line<'a> {
    name: String,
    /// The variant it measures.
    variant: String,
    /// Its setting of the other swept parameters, as in its name (` · ` between parts).
    rest: String,
    /// The variant's palette index.
    color: usize,
    /// The style of its setting of the other swept parameters.
    style: usize,
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
    let mut settings: Vec<Vec<String>> = Vec::new();
    for p in points {
        let color = variants
            .iter()
            .position(|v| *v == p.subject.cell.variant)
            .unwrap_or(0);
        // Short values, what ran first: a label cut to fit still says it.
        let rest = labels::parts(&p.key());
        let style = match settings.iter().position(|r| *r == rest) {
            Some(i) => i,
            None => {
                settings.push(rest.clone());
                settings.len() - 1
            }
        };
        // Parts joined by " · ", so a chart can say once what all its lines share.
        let name = std::iter::once(p.subject.cell.variant.clone())
            .chain(rest.iter().cloned())
            .collect::<Vec<_>>()
            .join(" · ");
        let i = match out.iter().position(|l| l.name == name) {
            Some(i) => i,
            None => {
                out.push(Line {
                    name,
                    variant: p.subject.cell.variant.clone(),
                    rest: rest.join(" · "),
                    color,
                    style,
                    by_threads: BTreeMap::new(),
                });
                out.len() - 1
            }
        };
        out[i].by_threads.entry(p.threads()).or_default().push(*p);
    }
    // The same order in every chart whichever setup ran first in a round: the variants in
    // their order (the baseline first), each one's settings in the order first measured.
    out.sort_by_key(|l| (l.color, l.style));
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

/// The fewest intervals a phase needs for its per-interval chart to show a shape.
pub const MIN_INTERVALS: usize = 5;

/// Every chart that has data: the forest plots of `comparisons`, the scaling charts, then per
/// session count the per-interval charts, the latency distributions and the server's time
/// series.
pub fn charts(variants: &[String], points: &[Point<'_>], comparisons: &[Comparison]) -> Vec<Chart> {
    let lines = lines(variants, points);
    let threads = thread_counts(&lines);
    let mut out = forest::forest(variants, comparisons);
    out.extend(scaling::charts(&lines, &threads, comparisons));
    let mut drawn: Vec<(Section, String, LineChart)> = Vec::new();
    let events_unit = labels::throughput_unit(&lines);
    for &t in &threads {
        let per_interval = [
            (
                "throughput-over-time",
                "Throughput per interval",
                Metric::Tps,
                events_unit,
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
            drawn.push((Section::Intervals, format!("{id}-{t}"), chart));
        }
    }
    for &t in &threads {
        drawn.push((
            Section::Latency,
            format!("latency-distribution-{t}"),
            hdr::distribution(&lines, t),
        ));
    }
    for (id, chart) in server::charts(&lines, &threads) {
        drawn.push((Section::Server, id, chart));
    }
    out.extend(
        drawn
            .into_iter()
            .filter(|(section, _, chart)| match section {
                // A series over time needs enough intervals to show a shape.
                Section::Intervals | Section::Server => {
                    chart.series.iter().any(|s| s.points.len() >= MIN_INTERVALS)
                }
                _ => chart.has_data(),
            })
            .map(|(section, id, chart)| Chart {
                id,
                title: chart.title.clone(),
                section,
                svg: chart.to_svg(),
                caption: match &chart.band {
                    Some((_, _, label)) if section == Section::Intervals => {
                        if label == "unkept warm-up" {
                            UNKEPT_WARMUP_CAPTION.into()
                        } else {
                            WARMUP_CAPTION.into()
                        }
                    }
                    _ => String::new(),
                },
            }),
    );
    out
}

/// A metric per interval over time at `threads` sessions (small), with the warm-up shaded
/// before 0: its intervals drawn there where the store kept them.
fn over_time_chart(
    lines: &[Line<'_>],
    title: &str,
    m: Metric,
    unit: &str,
    threads: u32,
) -> LineChart {
    let (series, warmup, drawn) = over_time(lines, m, threads);
    let label = if drawn { "warm-up" } else { "unkept warm-up" };
    LineChart {
        markers: action_markers(lines, threads),
        title: format!("{title} · {}", sessions(threads)),
        x_label: "seconds since the measured phase began".into(),
        y_label: unit.into(),
        x_axis: XAxis::Linear,
        size: Size::Small,
        series,
        band: (warmup > 0.0).then(|| (-warmup, 0.0, label.to_string())),
    }
}

/// What the shaded band before 0 of a per-interval chart is, with its intervals drawn.
const WARMUP_CAPTION: &str = "The shaded band before 0 is the warm-up: its intervals are drawn \
     there, and none of them counts in any figure of this report; the measured phase starts at 0.";

/// What the shaded band is where the store kept none of the warm-up's intervals.
const UNKEPT_WARMUP_CAPTION: &str = "The shaded band before 0 is the warm-up: it ran, and its \
     intervals were not kept in the results store (runs stored before warm-ups were kept), so \
     the band has no line; the measured phase starts at 0.";

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
/// phase's stability verdict and led by its warm-up's intervals where they were kept; the
/// longest warm-up among them; whether any warm-up interval is drawn.
fn over_time(lines: &[Line<'_>], m: Metric, threads: u32) -> (Vec<Series>, f64, bool) {
    let mut warmup = 0.0f64;
    let mut drawn = false;
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
        let warm = warm_points(m, &p.phase.result.warmup);
        drawn |= !warm.is_empty();
        out.push(Series {
            name: format!(
                "{} · ({})",
                l.name,
                verdict_word(p.phase.result.stability.as_ref())
            ),
            points: warm.into_iter().chain(xs.into_iter().zip(values)).collect(),
            color: l.color,
            style: l.style,
        });
    }
    (out, warmup, drawn)
}

/// The warm-up's intervals of metric `m` as points before 0 (none where the metric is not the
/// client's own, or where its percentiles have holes).
fn warm_points(m: Metric, warmup: &[qpslab_core::result::Sample]) -> Vec<(f64, f64)> {
    let percentile = m.percentile().is_some();
    let xs: Vec<f64> = warmup
        .iter()
        .filter(|s| {
            if percentile {
                s.events > 0
            } else {
                s.interval_s > 0.0
            }
        })
        .map(|s| s.elapsed_s)
        .collect();
    match m.of_samples(warmup) {
        Some(values) if values.len() == xs.len() => xs.into_iter().zip(values).collect(),
        _ => Vec::new(),
    }
}
