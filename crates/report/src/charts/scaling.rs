//! How each setup fares against sessions, drawn as the sweep allows: with three or more session
//! counts, lines on a log2 axis (throughput, p99 and p95 latency, server and client CPU); with
//! one or two, a dot plot with 95% intervals per session count (throughput and p99), since a
//! line needs x values to run between.

use super::{cpu_points, metric_points, sessions, Chart, Line, Section};
use crate::compare::group_estimate;
use crate::metrics::{self, CpuRate, Metric};
use crate::model::Point;
use crate::svg::dots::{Dot, DotAxis, DotChart};
use crate::svg::{LineChart, Series, Size, XAxis};
use qpslab_stats::t_quantile;

/// The fewest session counts drawn as lines.
const MIN_LINE_POINTS: usize = 3;

/// The scaling charts of `lines` measured at `threads`.
pub(super) fn charts(lines: &[Line<'_>], threads: &[u32]) -> Vec<Chart> {
    if threads.len() >= MIN_LINE_POINTS {
        return line_charts(lines);
    }
    let mut out = Vec::new();
    for &t in threads {
        for (id, title, m, unit) in [
            ("throughput-at", "Throughput", Metric::Tps, "transactions/s"),
            ("p99-at", "p99 latency", Metric::P99, "ms"),
        ] {
            let chart = DotChart {
                title: format!("{title} · {}", sessions(t)),
                x_label: format!("{unit} (bars: 95% interval)"),
                axis: DotAxis::Linear,
                rows: lines.iter().filter_map(|l| dot(l, m, t)).collect(),
                note: String::new(),
                // Two side by side: throughput and p99 at one session count.
                size: Size::Small,
            };
            if chart.has_data() {
                out.push(Chart {
                    id: format!("{id}-{t}"),
                    title: chart.title.clone(),
                    section: Section::Scaling,
                    svg: chart.to_svg(),
                });
            }
        }
    }
    out
}

/// The line's estimate of `m` at `threads` sessions as a row, with its 95% interval when the
/// estimate has an uncertainty.
fn dot(l: &Line<'_>, m: Metric, threads: u32) -> Option<Dot> {
    let e = group_estimate(m, l.by_threads.get(&threads)?)?;
    let interval = e.has_uncertainty().then(|| {
        let half = t_quantile(0.975, e.df()) * e.se;
        (e.mean - half, e.mean + half)
    });
    Some(Dot {
        label: l.name.clone(),
        value: e.mean,
        interval,
        band: None,
        color: l.color,
        style: l.style,
    })
}

/// The charts against sessions, each kept when it has data.
fn line_charts(lines: &[Line<'_>]) -> Vec<Chart> {
    let server = |p: &Point<'_>| metrics::server_cpu(p);
    let client = |p: &Point<'_>| metrics::client_cpu(&p.phase.result);
    let charts = [
        (
            "throughput-vs-sessions",
            vs_sessions("Throughput vs sessions", "transactions/s", lines, |l| {
                metric_points(l, Metric::Tps)
            }),
        ),
        (
            "latency-vs-sessions",
            vs_sessions("p99 latency vs sessions", "ms", lines, |l| {
                metric_points(l, Metric::P99)
            }),
        ),
        (
            "p95-vs-sessions",
            vs_sessions("p95 latency vs sessions", "ms", lines, |l| {
                metric_points(l, Metric::P95)
            }),
        ),
        (
            "server-cpu",
            cpu_chart("Server CPU, user", lines, server, |c| c.user),
        ),
        (
            "server-cpu-sys",
            cpu_chart("Server CPU, system", lines, server, |c| c.sys),
        ),
        (
            "client-cpu",
            cpu_chart("Client CPU, user", lines, client, |c| c.user),
        ),
        (
            "client-cpu-sys",
            cpu_chart("Client CPU, system", lines, client, |c| c.sys),
        ),
    ];
    charts
        .into_iter()
        .filter(|(_, c)| c.has_data())
        .map(|(id, c)| Chart {
            id: id.into(),
            title: c.title.clone(),
            section: Section::Scaling,
            svg: c.to_svg(),
        })
        .collect()
}

/// A chart against sessions on a log2 axis, one series per line with the points `of` gives.
fn vs_sessions(
    title: &str,
    y_label: &str,
    lines: &[Line<'_>],
    of: impl Fn(&Line<'_>) -> Vec<(f64, f64)>,
) -> LineChart {
    LineChart {
        title: title.into(),
        x_label: "sessions (log2)".into(),
        y_label: y_label.into(),
        x_axis: XAxis::Log2,
        // The charts stand two side by side.
        size: Size::Small,
        series: lines
            .iter()
            .map(|l| Series {
                name: l.name.clone(),
                points: of(l),
                color: l.color,
                style: l.style,
            })
            .filter(|s| !s.points.is_empty())
            .collect(),
        band: None,
        markers: Vec::new(),
    }
}

/// One part (`part`: user or system) of whose CPU `rate` picks, in % of one core, against
/// sessions.
fn cpu_chart(
    title: &str,
    lines: &[Line<'_>],
    rate: impl Fn(&Point<'_>) -> Option<CpuRate>,
    part: fn(&CpuRate) -> f64,
) -> LineChart {
    vs_sessions(
        &format!("{title} vs sessions"),
        "% of one core",
        lines,
        |l| cpu_points(l, |p| rate(p).map(|c| 100.0 * part(&c))),
    )
}
