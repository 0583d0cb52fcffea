//! Renderers: one per format, each behind [`Renderer`].

mod context;
mod html;
mod json;
#[cfg(test)]
mod layout_tests;
mod md;
mod summary;

pub use html::Html;
pub(crate) use html::STYLE;
pub use json::Json;
pub use md::{comparison_markdown, Markdown, MarkdownWithCharts};

use crate::compare::MetricComparison;
use crate::error::Error;
use crate::report::Report;

/// Lays a [`Report`] out as one document.
pub trait Renderer {
    /// The document's text.
    fn render(&self, report: &Report) -> Result<String, Error>;
}

/// A report format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Self-contained HTML with inline SVG charts.
    Html,
    /// Markdown tables, for pasting into a ticket.
    Markdown,
    /// The report's data (no charts).
    Json,
}

impl Format {
    /// The renderer of this format.
    pub fn renderer(self) -> Box<dyn Renderer> {
        match self {
            Format::Html => Box::new(Html),
            Format::Markdown => Box::new(Markdown),
            Format::Json => Box::new(Json),
        }
    }
}

/// A number with a precision that suits its size.
pub(crate) fn num(v: f64) -> String {
    let a = v.abs();
    if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

/// Header of a compared metric's cells, with the two sides' names.
pub fn metric_header<'a>(a: &'a str, b: &'a str) -> [&'a str; 7] {
    ["metric", a, b, "change", "95% CI", "MDE", "verdict"]
}

/// The cells of one compared metric: name (unit), a, b, change, 95% CI, minimum detectable
/// effect, verdict.
pub fn metric_cells(m: &MetricComparison) -> [String; 7] {
    let ci = match (m.ci_low, m.ci_high) {
        (Some(l), Some(h)) => format!("[{l:+.1}%, {h:+.1}%]"),
        _ => "–".into(),
    };
    [
        format!("{} ({})", m.metric, m.unit),
        num(m.a),
        num(m.b),
        format!("{:+.1}%", m.change_pct),
        ci,
        m.mde_pct.map_or_else(|| "–".into(), |x| format!("{x:.1}%")),
        m.verdict.clone(),
    ]
}

/// The cells of one configuration difference: setting, a, b.
pub fn difference_cells(d: &crate::compare::Difference) -> Vec<String> {
    vec![d.name.clone(), d.a.clone(), d.b.clone()]
}

/// The lines of a point's "What limited each side" block (see [`crate::limits::lines`]).
pub fn limits_sides_lines(
    c: &crate::compare::Comparison,
    p: &crate::PointComparison,
) -> Vec<String> {
    crate::limits::lines(&p.limits, &c.a, &c.b)
}

/// Each phase's verdict, in the order of the results: the cell it measured (`run 1 ·
/// threads=4`; a study's `variant · threads=4 · repeat 2 (run 7)`), its `limited by:` line
/// and its `not seen:` line. Empty when no phase carries a verdict (runs stored before they
/// were kept).
pub(crate) fn phase_limits(r: &Report) -> Vec<(String, String, Option<String>)> {
    if r.results.iter().all(|x| x.limits.is_none()) {
        return Vec::new();
    }
    let repeats = r.results.iter().any(|x| x.repeat > 1);
    r.results
        .iter()
        .map(|x| {
            let mut cell = format!("{} · {}", x.variant, x.key);
            if repeats {
                cell.push_str(&format!(" · repeat {}", x.repeat));
            }
            if x.variant != format!("run {}", x.run_id) {
                cell.push_str(&format!(" (run {})", x.run_id));
            }
            match &x.limits {
                Some(l) => {
                    let (line, unseen) = crate::limits::verdict_lines(l);
                    (cell, line, unseen)
                }
                None => (cell, "limited by: – (no verdict stored)".into(), None),
            }
        })
        .collect()
}

/// `Some(x)` as a number, `None` as a dash.
pub(crate) fn opt(v: Option<f64>) -> String {
    v.map_or_else(|| "–".into(), num)
}

/// A table as header and rows, for the renderers to format each in its own syntax.
pub(crate) type Table = (&'static [&'static str], Vec<Vec<String>>);

/// The rows of a point's compared metrics ([`metric_cells`]); with `io` (file I/O) its events
/// are I/O operations, named so, and its queries, the same operations counted again, left out.
pub fn compared_rows(metrics: &[MetricComparison], io: bool) -> Vec<Vec<String>> {
    metrics
        .iter()
        .filter(|m| !(io && m.metric == "qps"))
        .map(|m| {
            let mut cells = metric_cells(m).to_vec();
            if io && m.metric == "tps" {
                cells[0] = "IOPS".into();
            }
            cells
        })
        .collect()
}

/// Whether the report measured file I/O: its throughput is IOPS and MiB/s, not tps and qps.
pub(crate) fn is_io(r: &Report) -> bool {
    r.results.iter().any(|x| x.mib_s.is_some())
}

/// The heading of the best results: only stable settings may be a best result.
pub(crate) const BEST_HEADING: &str = "Best result per variant, among stable settings";

/// Each variant's best stable result (a setting none of whose phases was unstable), or a row
/// that says none was stable; file I/O in IOPS and MiB/s.
pub(crate) fn best_of_table(r: &Report) -> Table {
    let io = is_io(r);
    let rows = r
        .best_of
        .iter()
        .map(|b| {
            if b.key.is_empty() {
                let none = "none: no setting was stable".to_string();
                return vec![b.variant.clone(), none, "–".into(), "–".into(), "–".into()];
            }
            let second = if io { opt(b.mib_s) } else { num(b.qps) };
            vec![
                b.variant.clone(),
                b.key.clone(),
                num(b.tps),
                second,
                opt(b.p99_ms),
            ]
        })
        .collect();
    if io {
        (&["variant", "at", "IOPS", "MiB/s", "p99 ms"], rows)
    } else {
        (&["variant", "at", "tps", "qps", "p99 ms"], rows)
    }
}

/// Factorial main effects and interactions.
pub(crate) fn effects_table(r: &Report) -> Table {
    let rows = r
        .effects
        .iter()
        .map(|e| {
            vec![
                e.key.clone(),
                e.metric.clone(),
                e.term.clone(),
                num(e.effect),
                format!("{:+.1}%", e.effect_pct),
                match (e.ci_low, e.ci_high) {
                    (Some(l), Some(h)) => format!("[{}, {}]", num(l), num(h)),
                    _ => "–".into(),
                },
                if e.significant { "yes" } else { "no" }.into(),
            ]
        })
        .collect();
    (
        &[
            "at",
            "metric",
            "term",
            "effect",
            "effect %",
            "95% CI",
            "significant",
        ],
        rows,
    )
}

/// Every measured point; a stability column when any phase was judged.
/// The live actions with their before/after judgment on throughput.
pub(crate) fn actions_table(r: &Report) -> Table {
    const HEAD: &[&str] = &[
        "run",
        "point",
        "at (s)",
        "action",
        "outcome",
        "tps before",
        "tps after",
        "change",
        "95% CI",
        "verdict",
    ];
    let rows = r
        .actions
        .iter()
        .map(|a| {
            let x = &a.record;
            let t = x.tps.as_ref();
            vec![
                a.run_id.to_string(),
                a.point.clone(),
                format!("{:.1}", x.at_s),
                x.action.clone(),
                x.outcome.clone(),
                t.map_or_else(String::new, |t| num(t.before)),
                t.map_or_else(String::new, |t| num(t.after)),
                t.map_or_else(String::new, |t| format!("{:+.1}%", t.change_pct)),
                t.map_or_else(String::new, |t| {
                    format!("[{:+.1}%, {:+.1}%]", t.ci_low, t.ci_high)
                }),
                x.judgment.clone(),
            ]
        })
        .collect();
    (HEAD, rows)
}

/// TPC-C's figures per point, with the consistency check stored with it.
pub(crate) fn tpcc_table(r: &Report) -> Table {
    const HEAD: &[&str] = &[
        "run",
        "point",
        "mode",
        "NewOrder/min",
        "server NOPM",
        "tpmC",
        "retries",
        "consistency",
    ];
    let rows = r
        .tpcc
        .iter()
        .map(|t| {
            vec![
                t.run_id.to_string(),
                t.point.clone(),
                t.mode.clone(),
                num(t.new_orders_per_min),
                opt(t.server_nopm),
                opt(t.tpmc),
                t.retries.to_string(),
                t.verdict(),
            ]
        })
        .collect();
    (HEAD, rows)
}

/// The failed consistency conditions' lines, `run N point: condition ...: FAIL: ...`.
pub(crate) fn tpcc_failures(r: &Report) -> Vec<String> {
    r.tpcc
        .iter()
        .flat_map(|t| {
            t.failures()
                .map(move |l| format!("run {} {}: {l}", t.run_id, t.point))
        })
        .collect()
}

pub(crate) fn results_table(r: &Report) -> Table {
    let judged = r.results.iter().any(|x| x.stability.is_some());
    let io = is_io(r);
    let rows = r
        .results
        .iter()
        .map(|x| {
            let mut row = vec![
                x.variant.clone(),
                x.key.clone(),
                x.repeat.to_string(),
                x.run_id.to_string(),
                num(x.tps),
                if io { opt(x.mib_s) } else { num(x.qps) },
                opt(x.p50_ms),
                opt(x.p95_ms),
                opt(x.p99_ms),
                opt(x.max_ms),
                opt(x.server_cpu_pct),
                opt(x.client_cpu_pct),
            ];
            if judged {
                row.push(
                    x.stability
                        .as_ref()
                        .map_or_else(String::new, |s| s.to_string()),
                );
            }
            row
        })
        .collect();
    const HEAD: &[&str] = &[
        "variant",
        "at",
        "repeat",
        "run",
        "tps",
        "qps",
        "p50 ms",
        "p95 ms",
        "p99 ms",
        "max ms",
        "server CPU %",
        "client CPU %",
        "stability",
    ];
    const IO_HEAD: &[&str] = &[
        "variant",
        "at",
        "repeat",
        "run",
        "IOPS",
        "MiB/s",
        "p50 ms",
        "p95 ms",
        "p99 ms",
        "max ms",
        "server CPU %",
        "client CPU %",
        "stability",
    ];
    let all = if io { IO_HEAD } else { HEAD };
    let head = if judged { all } else { &all[..all.len() - 1] };
    (head, rows)
}
