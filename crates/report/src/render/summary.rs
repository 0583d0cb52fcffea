//! The answer first: one line per comparison (a candidate against the baseline at one
//! setting) in words and numbers, e.g. `tuned vs baseline, oltp_read_write, 8 sessions:
//! throughput +36.0% [+28.0, +44.0] improvement; p99 -24.0% [-31.0, -16.0] improvement`, and the
//! warnings a reader must see before trusting them.

use crate::charts::forest::{natural_key, setting_words};
use crate::charts::round_list;
use crate::compare::{MetricComparison, Stopped};
use crate::report::Report;

/// One line of the summary and how its verdict reads: `improvement`, `regression` or neither.
pub(crate) struct SummaryLine {
    /// The line.
    pub text: String,
    /// The throughput verdict's class: `better`, `worse` or empty.
    pub class: &'static str,
}

/// `+36.0% [+28.0, +44.0] improvement`, or `+3.0% (no interval)` without one.
fn change(m: &MetricComparison) -> String {
    match (m.ci_low, m.ci_high) {
        (Some(l), Some(h)) => format!("{:+.1}% [{l:+.1}, {h:+.1}] {}", m.change_pct, m.verdict),
        _ => format!("{:+.1}% ({})", m.change_pct, m.verdict),
    }
}

/// `6 rounds paired, 1 dropped, stopped: precise` of a round-paired comparison: how much its
/// interval rests on and why no more rounds ran.
fn rounds(m: &MetricComparison) -> Option<String> {
    let r = m.rounds?;
    let mut out = format!(
        "{} round{} paired",
        r.used,
        if r.used == 1 { "" } else { "s" }
    );
    if r.dropped > 0 {
        out.push_str(&format!(", {} dropped", r.dropped));
    }
    if let Some(s) = m.stopped {
        out.push_str(match s {
            Stopped::Precise => ", stopped: precise",
            Stopped::Budget => ", stopped: budget",
            Stopped::MaxRepeats => ", stopped: max_repeats",
        });
    }
    Some(out)
}

/// Every comparison's line, in the comparisons' order.
pub(crate) fn lines(r: &Report) -> Vec<SummaryLine> {
    let mut out = Vec::new();
    for c in &r.comparisons {
        if c.points.is_empty() {
            out.push(SummaryLine {
                text: format!("{} vs {}: no setting measured by both", c.b, c.a),
                class: "",
            });
        }
        let mut points: Vec<_> = c.points.iter().collect();
        points.sort_by_key(|p| natural_key(&p.key));
        for p in points {
            let metric = |name: &str| p.metrics.iter().find(|m| m.metric == name);
            let mut parts = Vec::new();
            if let Some(m) = metric("tps") {
                // Each round's ratio beside the interval computed from them.
                let rounds = round_list(m).map_or_else(String::new, |r| format!(" (rounds: {r})"));
                parts.push(format!("throughput {}{rounds}", change(m)));
            }
            if let Some(m) = metric("p99") {
                parts.push(format!("p99 {}", change(m)));
            }
            if let Some(r) = metric("tps").and_then(rounds) {
                parts.push(r);
            }
            let class = match metric("tps").map(|m| m.verdict.as_str()) {
                Some("improvement") => "better",
                Some("regression") => "worse",
                _ => "",
            };
            out.push(SummaryLine {
                text: format!(
                    "{} vs {}, {}: {}",
                    c.b,
                    c.a,
                    setting_words(&p.key),
                    if parts.is_empty() {
                        "nothing both measured".to_string()
                    } else {
                        parts.join("; ")
                    }
                ),
                class,
            });
        }
    }
    out
}

/// The comparisons' warnings, each as `B vs A: warning`.
pub(crate) fn warnings(r: &Report) -> Vec<String> {
    r.comparisons
        .iter()
        .flat_map(|c| {
            c.warnings
                .iter()
                .map(move |w| format!("{} vs {}: {w}", c.b, c.a))
        })
        .collect()
}
