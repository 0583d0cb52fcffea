//! The forest plots that open a report: one row per comparison (a candidate against the
//! baseline at one setting), the change as a point, its 95% interval as a bar, on a log-ratio
//! axis with a zero line and, behind each row, its precision band: ±P of a study that ran
//! until precise (an interval inside it reads `equivalent`), else ± the minimum detectable
//! effect (a change inside it could not have been told from none).

use super::{Chart, Section};
use crate::compare::{Comparison, MetricComparison};
use crate::svg::dots::{Dot, DotAxis, DotChart};
use crate::svg::Size;

/// A setting's key in words: `threads=8 workload=oltp_read_write` → `oltp_read_write, 8
/// sessions`; `file_block_size=4K file_test_mode=rndrd threads=16` → `rndrd, 4K, 16 sessions`;
/// other swept settings stay `name=value` (see [`super::labels`]).
pub fn setting_words(key: &str) -> String {
    setting_parts(key).join(", ")
}

/// The parts of [`setting_words`]: what ran first, the sessions last.
fn setting_parts(key: &str) -> Vec<String> {
    let mut rest = super::labels::parts(key);
    if let Some(n) = key.split(' ').find_map(|kv| kv.strip_prefix("threads=")) {
        rest.push(format!("{n} session{}", if n == "1" { "" } else { "s" }));
    }
    rest
}

/// A setting's key for ordering: its numbers compared as numbers, so `threads=4` comes before
/// `threads=16`.
pub fn natural_key(key: &str) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut num: Option<u64> = None;
    for c in key.chars() {
        match (c.to_digit(10), num) {
            (Some(d), n) => num = Some(n.unwrap_or(0).saturating_mul(10).saturating_add(d.into())),
            (None, Some(n)) => {
                out.push((std::mem::take(&mut text), n));
                num = None;
                text.push(c);
            }
            (None, None) => text.push(c),
        }
    }
    out.push((text, num.unwrap_or(0)));
    out
}

/// A change's row: the comparison's words, the change and its interval, the precision band.
fn row(c: &Comparison, key: &str, m: &MetricComparison, color: usize) -> Dot {
    Dot {
        // Parts joined by " · ", so the parts every row shares are said once above the plot.
        label: std::iter::once(format!("{} vs {}", c.b, c.a))
            .chain(setting_parts(key))
            .collect::<Vec<_>>()
            .join(" · "),
        value: m.change_pct,
        interval: m.ci_low.zip(m.ci_high),
        // A study that ran until precise: ±P, where a whole interval makes `equivalent`.
        // Otherwise the MDE, symmetric on the log scale: a fall of 1/(1+mde) is as far from 0
        // as a rise of mde.
        band: match m.precision {
            Some(p) => Some((-p, p)),
            None => m
                .mde_pct
                .map(|d| ((1.0 / (1.0 + d / 100.0) - 1.0) * 100.0, d)),
        },
        color,
        style: 0,
    }
}

/// What the grey bands of `metric`'s rows are: the precision asked when every comparison has
/// one (one value said as a number), else the minimum detectable effect.
fn band_note(comparisons: &[Comparison], metric: &str) -> String {
    let precisions: Vec<Option<f64>> = comparisons
        .iter()
        .flat_map(|c| &c.points)
        .flat_map(|p| p.metrics.iter().filter(|m| m.metric == metric))
        .map(|m| m.precision)
        .collect();
    match precisions.first() {
        Some(Some(p)) if precisions.iter().all(|q| *q == Some(*p)) => format!(
            "grey: ±{p}%, the precision asked (an interval inside it: equivalent); line: no change"
        ),
        Some(Some(_)) if precisions.iter().all(Option::is_some) => {
            "grey: the precision asked (an interval inside it: equivalent); line: no change".into()
        }
        _ => "grey: the smallest change each comparison could detect (MDE); line: no change".into(),
    }
}

/// One forest plot per metric (throughput, then p99) that some comparison has.
pub(super) fn forest(variants: &[String], comparisons: &[Comparison]) -> Vec<Chart> {
    let mut out = Vec::new();
    for (id, metric, title) in [
        ("forest", "tps", "Throughput change against the baseline"),
        (
            "forest-p99",
            "p99",
            "p99 latency change against the baseline",
        ),
    ] {
        let rows: Vec<Dot> = comparisons
            .iter()
            .flat_map(|c| {
                let color = variants.iter().position(|v| *v == c.b).unwrap_or(0);
                let mut points: Vec<_> = c.points.iter().collect();
                points.sort_by_key(|p| natural_key(&p.key));
                points.into_iter().filter_map(move |p| {
                    let m = p.metrics.iter().find(|m| m.metric == metric)?;
                    Some(row(c, &p.key, m, color))
                })
            })
            .collect();
        let chart = DotChart {
            title: title.into(),
            x_label: "change, log scale (bars: 95% interval)".into(),
            axis: DotAxis::LogRatio,
            rows,
            note: band_note(comparisons, metric),
            size: Size::Full,
        };
        if chart.has_data() {
            out.push(Chart {
                id: id.into(),
                title: chart.title.clone(),
                section: Section::Summary,
                svg: chart.to_svg(),
                caption: String::new(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_read_as_words() {
        assert_eq!(
            setting_words("threads=8 workload=oltp_read_write"),
            "oltp_read_write, 8 sessions"
        );
        assert_eq!(setting_words("threads=1"), "1 session");
        assert_eq!(setting_words("rate=100 threads=4"), "rate=100, 4 sessions");
        let mut keys = ["threads=16 x=a", "threads=4 x=a", "threads=1 x=b"];
        keys.sort_by_key(|k| natural_key(k));
        assert_eq!(keys, ["threads=1 x=b", "threads=4 x=a", "threads=16 x=a"]);
    }
}
