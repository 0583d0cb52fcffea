//! A series drawn (`qpslab report --history`): each run's throughput in the series' order, the
//! levels the change point search found between its change points as a step line, and each
//! change point marked with its relative change; the page around the charts names every change
//! point with its levels, intervals and runs, as `qpslab history` does.

use super::{History, Series};
use crate::charts::{Chart, Section};
use crate::svg::{esc, fmt_num, LineChart, Series as Line, Size, XAxis};
use std::fmt::Write;

/// The chart of series `s`, ordered along `by`.
pub fn chart(s: &Series, by: &str) -> Chart {
    let points: Vec<(f64, f64)> = s
        .points
        .iter()
        .enumerate()
        .map(|(i, p)| ((i + 1) as f64, p.tps))
        .collect();
    let mut lines = vec![Line {
        name: "throughput of each run (tps)".into(),
        points,
        color: 0,
        style: 0,
    }];
    let levels = levels(s);
    if !levels.is_empty() {
        lines.push(Line {
            name: "level between change points (mean)".into(),
            points: levels,
            color: 1,
            style: 1,
        });
    }
    let markers = s
        .change_points
        .iter()
        .map(|c| {
            (
                c.at as f64 + 0.5,
                format!("{:+.1}% at {}", c.relative_change * 100.0, c.x_after),
            )
        })
        .collect();
    let chart = LineChart {
        title: s.title.clone(),
        x_label: format!("runs, in the order of {by}"),
        y_label: "transactions/s".into(),
        x_axis: XAxis::Linear,
        size: Size::Full,
        series: lines,
        band: None,
        markers,
    };
    let left_out = s.points.iter().filter(|p| p.unstable.is_some()).count();
    let mut caption = format!(
        "{} run(s); {} change point(s) found among the {} searched",
        s.points.len(),
        s.change_points.len(),
        s.searched
    );
    if left_out > 0 {
        let _ = write!(
            caption,
            "; {left_out} unstable run(s) drawn but left out of the search"
        );
    }
    if s.searched < s.needed {
        let _ = write!(
            caption,
            "; the search needs {} stable runs, so none was made",
            s.needed
        );
    }
    caption.push('.');
    Chart {
        id: format!("history-{}", slug(&s.key)),
        title: s.title.clone(),
        section: Section::Intervals,
        svg: chart.to_svg(),
        caption,
    }
}

/// The step line of the levels: each segment's mean from its first point to its last, joined
/// at the change points.
fn levels(s: &Series) -> Vec<(f64, f64)> {
    let n = s.points.len();
    if s.change_points.is_empty() || n == 0 {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut start = 1.0;
    for c in &s.change_points {
        let end = c.at as f64 + 0.5;
        out.push((start, c.before.mean));
        out.push((end, c.before.mean));
        start = end;
    }
    let last = s.change_points.last().map_or(0.0, |c| c.after.mean);
    out.push((start, last));
    out.push((n as f64, last));
    out
}

/// A file-name-safe id from a series key.
fn slug(key: &str) -> String {
    key.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// The history as one HTML page: per series, its change points in words and its chart.
pub fn html(h: &History) -> String {
    let mut o = String::new();
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\
         <meta name=\"viewport\" content=\"width=device-width\"><title>History</title><style>{}</style></head><body>\n\
         <h1>History</h1><p class=\"muted\">ordered by {}; change points by {} at significance {}, \
         changes of {}% or more</p>\n",
        crate::render::STYLE,
        esc(&h.by),
        esc(h.method),
        fmt_num(h.significance),
        fmt_num(h.min_change * 100.0)
    );
    for s in &h.series {
        let _ = write!(o, "<h2>{}</h2>", esc(&s.title));
        if s.change_points.is_empty() {
            o.push_str("<p>No change point.</p>");
        } else {
            o.push_str("<ul>");
            for c in &s.change_points {
                let _ = write!(
                    o,
                    "<li>{:+.1}% between run {} ({}) and run {} ({}): {} [{}, {}] → {} [{}, {}] tps, p = {}</li>",
                    c.relative_change * 100.0,
                    c.run_before,
                    esc(&c.x_before),
                    c.run_after,
                    esc(&c.x_after),
                    fmt_num(c.before.mean),
                    fmt_num(c.before.lo),
                    fmt_num(c.before.hi),
                    fmt_num(c.after.mean),
                    fmt_num(c.after.lo),
                    fmt_num(c.after.hi),
                    fmt_num(c.p_value)
                );
            }
            o.push_str("</ul>");
        }
        let c = chart(s, &h.by);
        let _ = writeln!(
            o,
            "<figure class=\"chart\" id=\"{}\">{}<figcaption>{}</figcaption></figure>",
            esc(&c.id),
            c.svg,
            esc(&c.caption)
        );
    }
    o.push_str("</body></html>\n");
    o
}

/// Every series' chart, for `--png`.
pub fn charts(h: &History) -> Vec<Chart> {
    h.series.iter().map(|s| chart(s, &h.by)).collect()
}
