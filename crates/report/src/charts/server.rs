//! What the server did while each phase ran, from the telemetry stored per report tick: CPU,
//! InnoDB reads from storage, rows read and written (InnoDB's counters, else the server's), dirty pages and threads running, one small
//! chart per metric and session count with a line per setup (first repeat).

use super::{sessions, Line};
use crate::svg::{LineChart, Series, Size, XAxis};
use qpslab_core::telemetry::TickChange;
use qpslab_store::StoredPhase;

/// A server metric drawn over time: id, title, unit and its value in one tick.
struct ServerMetric {
    id: &'static str,
    title: &'static str,
    unit: &'static str,
    value: fn(&TickChange) -> Option<f64>,
}

/// A counter's change over the tick, per second (a counter absent from the tick did not change).
fn per_s(t: &TickChange, names: &[&str]) -> Option<f64> {
    (t.interval_s > 0.0).then(|| {
        let n: i64 = names
            .iter()
            .map(|n| t.status.counters.get(*n).copied().unwrap_or(0))
            .sum();
        n as f64 / t.interval_s
    })
}

/// [`per_s`] of the first of `choices` whose counters the tick has (MariaDB 10.6+ dropped
/// `Innodb_rows_*`; the server-wide counters stand in), 0 per second when it has none.
fn per_s_of_first(t: &TickChange, choices: &[&[&str]]) -> Option<f64> {
    let names = choices
        .iter()
        .find(|names| names.iter().any(|n| t.status.counters.contains_key(*n)))
        .or(choices.first())?;
    per_s(t, names)
}

/// A gauge's level at the end of the tick.
fn gauge(t: &TickChange, name: &str) -> Option<f64> {
    t.status.gauges.get(name).map(|v| *v as f64)
}

const METRICS: &[ServerMetric] = &[
    ServerMetric {
        id: "server-cpu-over-time",
        title: "Server CPU",
        unit: "% of one core",
        value: |t| {
            let s = t.server?;
            (t.interval_s > 0.0).then(|| 100.0 * s.cpu_s() / t.interval_s)
        },
    },
    ServerMetric {
        id: "innodb-reads-over-time",
        title: "InnoDB reads from storage",
        unit: "page reads/s",
        value: |t| per_s(t, &["Innodb_buffer_pool_reads"]),
    },
    ServerMetric {
        id: "rows-read-over-time",
        title: "Rows read",
        unit: "rows/s",
        value: |t| per_s_of_first(t, &[&["Innodb_rows_read"], &["Rows_read"]]),
    },
    ServerMetric {
        id: "rows-changed-over-time",
        title: "Rows inserted, updated, deleted",
        unit: "rows/s",
        value: |t| {
            per_s_of_first(
                t,
                &[
                    &[
                        "Innodb_rows_inserted",
                        "Innodb_rows_updated",
                        "Innodb_rows_deleted",
                    ],
                    &["Handler_write", "Handler_update", "Handler_delete"],
                ],
            )
        },
    },
    ServerMetric {
        id: "dirty-pages-over-time",
        title: "Dirty pages in the buffer pool",
        unit: "pages",
        value: |t| gauge(t, "Innodb_buffer_pool_pages_dirty"),
    },
    ServerMetric {
        id: "threads-running-over-time",
        title: "Threads running",
        unit: "threads",
        value: |t| gauge(t, "Threads_running"),
    },
];

/// `(seconds since the phase began, value)` of every tick that has the metric.
fn series_of(phase: &StoredPhase, m: &ServerMetric) -> Vec<(f64, f64)> {
    phase
        .telemetry
        .iter()
        .filter_map(|t| Some((t.elapsed_s, (m.value)(t.tick_change()?)?)))
        .collect()
}

/// One chart per metric and session count, with the chart's id; charts without points are
/// left for the caller to drop.
pub(super) fn charts(lines: &[Line<'_>], threads: &[u32]) -> Vec<(String, LineChart)> {
    let mut out = Vec::new();
    for m in METRICS {
        for &t in threads {
            let series = lines
                .iter()
                .filter_map(|l| {
                    let p = l.first_at(t)?;
                    Some(Series {
                        name: l.name.clone(),
                        points: series_of(p.phase, m),
                        color: l.color,
                        style: l.style,
                    })
                })
                .filter(|s| !s.points.is_empty())
                .collect();
            let chart = LineChart {
                title: format!("{} · {}", m.title, sessions(t)),
                x_label: "seconds since the measured phase began".into(),
                y_label: m.unit.into(),
                x_axis: XAxis::Linear,
                size: Size::Small,
                series,
                band: None,
                markers: Vec::new(),
            };
            out.push((format!("{}-{t}", m.id), chart));
        }
    }
    out
}
