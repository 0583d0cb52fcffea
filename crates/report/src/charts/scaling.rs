//! How each setup fares against sessions, drawn as the sweep allows: with three or more session
//! counts, lines on a log2 axis (throughput, p99 and p95 latency, server and client CPU); with
//! one or two, a dot plot with 95% intervals per session count (throughput and p99), since a
//! line needs x values to run between. File I/O's throughput is drawn twice, in MiB/s and in
//! IOPS.

use super::labels::{is_io, mib_per_op, throughput_unit};
use super::{cpu_points, metric_points, sessions, Chart, Line, Section};
use crate::compare::{group_estimate, short_verdict, Comparison, MetricComparison};
use crate::metrics::{self, CpuRate, Metric};
use crate::model::Point;
use crate::svg::dots::{Dot, DotAxis, DotChart};
use crate::svg::{LineChart, Series, Size, XAxis};
use qpslab_stats::t_quantile;

/// The fewest session counts drawn as lines.
const MIN_LINE_POINTS: usize = 3;

/// The scaling charts of `lines` measured at `threads`; a dot plot's caption says what its
/// per-setup intervals are and gives the paired figure of `comparisons` that decides.
pub(super) fn charts(
    lines: &[Line<'_>],
    threads: &[u32],
    comparisons: &[Comparison],
) -> Vec<Chart> {
    if threads.len() >= MIN_LINE_POINTS {
        return line_charts(lines);
    }
    let mut out = Vec::new();
    // File I/O: MiB/s (its IOPS times its block size) and IOPS.
    let io = is_io(lines);
    let mut kinds = vec![
        ("throughput-at", "Throughput", Metric::Tps, None),
        ("p99-at", "p99 latency", Metric::P99, None),
    ];
    if io {
        kinds.insert(0, ("mib-s-at", "Throughput", Metric::Tps, Some("MiB/s")));
        kinds[1].1 = "I/O operations";
    }
    for &t in threads {
        for &(id, title, m, mib) in &kinds {
            let unit = match (mib, m) {
                (Some(u), _) => u,
                (None, Metric::Tps) => throughput_unit(lines),
                _ => "ms",
            };
            let rows: Vec<(&Line<'_>, Dot)> = lines
                .iter()
                .filter_map(|l| {
                    let d = dot(l, m, t)?;
                    match mib {
                        Some(_) => Some((l, scaled(d, mib_per_op(l)?))),
                        None => Some((l, d)),
                    }
                })
                .collect();
            let chart = DotChart {
                title: format!("{title} · {}", sessions(t)),
                x_label: format!("{unit} (bars: each setup's 95% interval)"),
                axis: DotAxis::Linear,
                note: if comparisons.is_empty() {
                    String::new()
                } else {
                    "each setup alone; the verdict rests on the paired rounds".into()
                },
                rows: rows.iter().map(|(_, d)| d.clone()).collect(),
                // Two side by side: throughput and p99 at one session count.
                size: Size::Small,
            };
            if chart.has_data() {
                out.push(Chart {
                    id: format!("{id}-{t}"),
                    title: chart.title.clone(),
                    section: Section::Scaling,
                    svg: chart.to_svg(),
                    caption: per_setup_caption(&rows, m, t, comparisons),
                });
            }
        }
    }
    out
}

/// What a per-setup dot plot is and is not: each setup's own runs and their 95% interval, not
/// the verdict, which rests on the paired rounds (each round's ratio, and the interval of
/// their mean), given here for every comparison at `threads` sessions; and, where the setups'
/// intervals do not overlap but the paired interval does not decide, that it does not.
fn per_setup_caption(
    rows: &[(&Line<'_>, Dot)],
    m: Metric,
    threads: u32,
    comparisons: &[Comparison],
) -> String {
    if comparisons.is_empty() {
        return String::new();
    }
    let mut paired = Vec::new();
    let mut apart_undecided = Vec::new();
    let mut any_rounds = false;
    for c in comparisons {
        for p in &c.points {
            if !p
                .key
                .split(' ')
                .any(|kv| kv == format!("threads={threads}"))
            {
                continue;
            }
            let Some(mc) = p.metrics.iter().find(|x| x.metric == m.name()) else {
                continue;
            };
            let rest = rest_of_key(&p.key);
            let label = if rest.is_empty() {
                format!("{} vs {}", c.b, c.a)
            } else {
                format!("{} vs {} · {rest}", c.b, c.a)
            };
            any_rounds |= mc.rounds.is_some();
            let mut figure = format!("{label}: {}", short_verdict(mc));
            if let Some(r) = round_list(mc) {
                figure.push_str(&format!(" (rounds: {r})"));
            }
            paired.push(figure);
            let interval = |v: &str| {
                rows.iter()
                    .find(|(l, _)| l.variant == v && l.rest == rest)
                    .and_then(|(_, d)| d.interval)
            };
            if let (Some(a), Some(b)) = (interval(&c.a), interval(&c.b)) {
                let apart = a.1 < b.0 || b.1 < a.0;
                if apart && !mc.significant {
                    apart_undecided.push(label);
                }
            }
        }
    }
    let mut out = String::from(
        "Each setup's own runs and their 95% interval: they describe each setup and do not \
         decide.",
    );
    if any_rounds {
        out.push_str(
            " The verdict rests on the paired rounds (each round's ratio of the two setups run \
             side by side, and the anytime-valid interval of their mean), which is wider because \
             it covers the variation between rounds.",
        );
    } else {
        out.push_str(" The verdict is the comparison's interval of the change.");
    }
    if !paired.is_empty() {
        let what = if any_rounds { "Paired" } else { "Compared" };
        out.push_str(&format!(" {what}: {}.", paired.join("; ")));
    }
    if !apart_undecided.is_empty() {
        out.push_str(&format!(
            " Here the setups' intervals do not overlap, yet the interval of the change does not decide \
             ({}): the chart alone does not show a difference between the setups.",
            apart_undecided.join("; ")
        ));
    }
    out
}

/// A comparison key's settings other than sessions, as a line's name writes them.
fn rest_of_key(key: &str) -> String {
    super::labels::parts(key).join(" · ")
}

/// A row's value and interval times `k` (IOPS to MiB/s: times MiB per operation).
fn scaled(d: Dot, k: f64) -> Dot {
    Dot {
        value: d.value * k,
        interval: d.interval.map(|(a, b)| (a * k, b * k)),
        ..d
    }
}

/// `1.21, 0.98, 1.35`: each paired round's ratio, the first dozen and `…` for more.
pub(crate) fn round_list(m: &MetricComparison) -> Option<String> {
    const SHOWN: usize = 12;
    if m.round_ratios.is_empty() {
        return None;
    }
    let mut parts: Vec<String> = m
        .round_ratios
        .iter()
        .take(SHOWN)
        .map(|r| format!("{r:.2}"))
        .collect();
    if m.round_ratios.len() > SHOWN {
        parts.push("…".into());
    }
    Some(parts.join(", "))
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
    let mib = |l: &Line<'_>| -> Vec<(f64, f64)> {
        let Some(k) = mib_per_op(l) else {
            return Vec::new();
        };
        let points = metric_points(l, Metric::Tps);
        points.into_iter().map(|(x, y)| (x, y * k)).collect()
    };
    let charts = [
        (
            "mib-s-vs-sessions",
            vs_sessions("Throughput vs sessions", "MiB/s", lines, mib),
        ),
        (
            "throughput-vs-sessions",
            vs_sessions(
                if is_io(lines) {
                    "I/O operations vs sessions"
                } else {
                    "Throughput vs sessions"
                },
                throughput_unit(lines),
                lines,
                |l| metric_points(l, Metric::Tps),
            ),
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
            caption: String::new(),
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
