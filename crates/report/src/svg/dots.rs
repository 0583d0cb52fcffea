//! Dot plots: one row per item, its value as a marker and its 95% interval as a bar, labels on
//! the left measured to fit. Two axes: a linear one from 0 (throughput at one setting, where a
//! line over a single x value would say nothing), and a log-ratio one for changes (a forest
//! plot: a zero line, each row's precision band, ticks labelled as percent changes, so +100%
//! and −50% lie equally far from 0).

use super::{esc, fmt_num, nice_ticks, text, write_mark, Size, COLORS, FONT};
use std::fmt::Write;

/// One row of a dot plot.
#[derive(Clone, Debug, PartialEq)]
pub struct Dot {
    /// The row's label.
    pub label: String,
    /// The value (a change in percent on a log-ratio axis).
    pub value: f64,
    /// Its 95% interval, when known.
    pub interval: Option<(f64, f64)>,
    /// A band drawn behind the row (a forest plot's ± minimum detectable effect), when known.
    pub band: Option<(f64, f64)>,
    /// Palette index (the variant's colour).
    pub color: usize,
    /// Marker style.
    pub style: usize,
}

/// How values map onto the x axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DotAxis {
    /// Linear from 0.
    Linear,
    /// Changes in percent, placed at `ln(1 + change/100)`, with a zero line.
    LogRatio,
}

/// A dot plot.
#[derive(Clone, Debug, PartialEq)]
pub struct DotChart {
    /// Title.
    pub title: String,
    /// What the x axis measures.
    pub x_label: String,
    /// The axis.
    pub axis: DotAxis,
    /// The rows, top to bottom.
    pub rows: Vec<Dot>,
    /// A line under the title (what the marks mean).
    pub note: String,
    /// Full width on its own (a forest plot), or small when charts stand two side by side.
    pub size: Size,
}

/// The picture's width on its own; small ones fit half a report's width at about their
/// natural size, so their 12 px text is not shrunk below 11 px on screen.
const W: f64 = 720.0;
const W_SMALL: f64 = 560.0;
const ROW: f64 = 24.0;
const FONT_PX: f64 = 12.0;
const TITLE_PX: f64 = 15.0;
/// Sets of changes the log-ratio axis may label, in percent, coarse to fine: the first that
/// puts four labels or more in the range is used.
const CHANGE_TICKS: [&[f64]; 5] = [
    &[
        -90.0, -75.0, -50.0, 0.0, 100.0, 200.0, 400.0, 900.0, 1900.0, 4900.0,
    ],
    &[-75.0, -50.0, -25.0, 0.0, 25.0, 50.0, 100.0, 200.0],
    &[-50.0, -25.0, -10.0, 0.0, 10.0, 25.0, 50.0],
    &[-20.0, -10.0, -5.0, 0.0, 5.0, 10.0, 20.0],
    &[-5.0, -2.0, -1.0, 0.0, 1.0, 2.0, 5.0],
];

impl DotChart {
    /// Whether there is a row to draw.
    pub fn has_data(&self) -> bool {
        !self.rows.is_empty()
    }

    /// `v` on the axis' scale.
    fn t(&self, v: f64) -> f64 {
        match self.axis {
            DotAxis::Linear => v,
            DotAxis::LogRatio => (1.0 + v / 100.0).max(1e-6).ln(),
        }
    }

    /// The shown range on the axis' scale and the ticks (values, not transformed).
    fn range(&self) -> ((f64, f64), Vec<f64>) {
        let values = self.rows.iter().flat_map(|r| {
            [
                Some(r.value),
                r.interval.map(|i| i.0),
                r.interval.map(|i| i.1),
            ]
            .into_iter()
            .chain([r.band.map(|b| b.0), r.band.map(|b| b.1)])
            .flatten()
        });
        let (lo, hi) = values.fold((0.0f64, 0.0f64), |(lo, hi), v| {
            (lo.min(self.t(v)), hi.max(self.t(v)))
        });
        match self.axis {
            DotAxis::Linear => {
                let (ticks, top) = nice_ticks(if hi > 0.0 { hi } else { 1.0 });
                ((0.0, top), ticks)
            }
            DotAxis::LogRatio => {
                let pad = ((hi - lo) * 0.08).max(0.01);
                let (lo, hi) = (lo - pad, hi + pad);
                let within = |set: &[f64]| -> Vec<f64> {
                    set.iter()
                        .copied()
                        .filter(|c| (lo..=hi).contains(&self.t(*c)))
                        .collect()
                };
                let ticks = CHANGE_TICKS
                    .iter()
                    .map(|set| within(set))
                    .find(|t| t.len() >= 4)
                    .unwrap_or_else(|| within(CHANGE_TICKS[4]));
                ((lo, hi), ticks)
            }
        }
    }

    /// A tick's label.
    fn tick_label(&self, v: f64) -> String {
        match self.axis {
            DotAxis::Linear => fmt_num(v),
            DotAxis::LogRatio if v == 0.0 => "0".into(),
            DotAxis::LogRatio => format!("{v:+}%"),
        }
    }

    /// The chart as one `<svg>` element.
    pub fn to_svg(&self) -> String {
        let (short, common) = text::drop_common(
            &self
                .rows
                .iter()
                .map(|r| r.label.clone())
                .collect::<Vec<_>>(),
        );
        let mut notes: Vec<String> = Vec::new();
        if !common.is_empty() {
            notes.push(format!("every row: {common}"));
        }
        if !self.note.is_empty() {
            notes.push(self.note.clone());
        }
        let w = match self.size {
            Size::Full => W,
            Size::Small => W_SMALL,
        };
        let room = w - 32.0;
        let widest = short
            .iter()
            .map(|l| text::width(l, FONT_PX))
            .fold(0.0, f64::max);
        let left = (widest + 24.0).clamp(80.0, w * 0.45);
        let (right, top) = (24.0, 40.0 + 16.0 * notes.len() as f64);
        let ph = ROW * self.rows.len() as f64 + 8.0;
        let h = top + ph + 48.0;
        let pw = w - left - right;
        let ((x0, x1), ticks) = self.range();
        let sx = |v: f64| left + (self.t(v) - x0) / (x1 - x0).max(1e-12) * pw;
        // Bars and bands stop at the plot's edges: an interval of a latency from few repeats can
        // reach below 0, where a linear axis of throughput or latency does not go.
        let inside = |v: f64| sx(v).clamp(left, left + pw);
        let mut s = String::new();
        let _ = write!(
            s,
            r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" font-family="{FONT}" font-size="{FONT_PX}" role="img" data-kind="dots"><title>{t}</title><rect width="{w}" height="{h}" fill="#ffffff"/><text x="16" y="24" font-size="{TITLE_PX}" font-weight="bold" fill="#222">{tt}</text>"##,
            t = esc(&self.title),
            tt = esc(&text::fit(&self.title, TITLE_PX * 1.1, room)),
        );
        for (i, n) in notes.iter().enumerate() {
            let _ = write!(
                s,
                r##"<text class="note" x="16" y="{y}" fill="#555">{n}</text>"##,
                y = 42.0 + 16.0 * i as f64,
                n = esc(&text::fit(n, FONT_PX, room))
            );
        }
        // Labels that would overlap a neighbour's are left out, from 0 outwards, so the zero
        // line's label and the ones near it stay.
        let mut kept: Vec<(f64, f64)> = Vec::new();
        let mut order: Vec<f64> = ticks.clone();
        order.sort_by(|a, b| self.t(*a).abs().total_cmp(&self.t(*b).abs()));
        let ticks: Vec<f64> = order
            .into_iter()
            .filter(|&v| {
                let half = text::width(&self.tick_label(v), FONT_PX) / 2.0 + 4.0;
                let (a, b) = (sx(v) - half, sx(v) + half);
                let free = kept.iter().all(|&(ka, kb)| b <= ka || a >= kb);
                if free {
                    kept.push((a, b));
                }
                free
            })
            .collect();
        for &v in &ticks {
            let x = sx(v);
            let half = text::width(&self.tick_label(v), FONT_PX) / 2.0;
            let anchor = if x + half > w - 2.0 { "end" } else { "middle" };
            let _ = write!(
                s,
                r##"<line x1="{x:.1}" x2="{x:.1}" y1="{top}" y2="{b}" stroke="#ececec"/><text x="{x:.1}" y="{ty}" text-anchor="{anchor}" fill="#444">{l}</text>"##,
                b = top + ph,
                ty = top + ph + 16.0,
                l = esc(&self.tick_label(v))
            );
        }
        let _ = write!(
            s,
            r##"<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#888"/><text x="{cx}" y="{by}" text-anchor="middle" fill="#222">{xl}</text>"##,
            cx = left + pw / 2.0,
            by = top + ph + 36.0,
            xl = esc(&text::fit(&self.x_label, FONT_PX, room))
        );
        if self.axis == DotAxis::LogRatio {
            let _ = write!(
                s,
                r##"<line class="zero" x1="{x:.1}" x2="{x:.1}" y1="{top}" y2="{b}" stroke="#222" stroke-width="1.2"/>"##,
                x = sx(0.0),
                b = top + ph
            );
        }
        let _ = write!(s, r#"<g class="rows" data-points="{}">"#, self.rows.len());
        for (i, (r, label)) in self.rows.iter().zip(&short).enumerate() {
            let y = top + 4.0 + ROW * (i as f64 + 0.5);
            let c = COLORS[r.color % COLORS.len()];
            if let Some((a, b)) = r.band {
                let _ = write!(
                    s,
                    r##"<rect class="band" x="{x:.1}" y="{y0:.1}" width="{w:.1}" height="{bh}" fill="#999999" fill-opacity="0.2"/>"##,
                    x = inside(a),
                    y0 = y - ROW / 2.0 + 3.0,
                    w = (inside(b) - inside(a)).max(0.0),
                    bh = ROW - 6.0
                );
            }
            if let Some((a, b)) = r.interval {
                let _ = write!(
                    s,
                    r##"<line class="interval" x1="{a:.1}" x2="{b:.1}" y1="{y:.1}" y2="{y:.1}" stroke="{c}" stroke-width="2.5"/>"##,
                    a = inside(a),
                    b = inside(b)
                );
            }
            write_mark(&mut s, (sx(r.value), y), r.color, r.style);
            let _ = write!(
                s,
                r##"<text x="{x}" y="{ty:.1}" text-anchor="end" fill="#222">{l}</text>"##,
                x = left - 8.0,
                ty = y + 4.0,
                l = esc(&text::fit(label, FONT_PX, left - 16.0))
            );
        }
        s.push_str("</g></svg>");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dot(label: &str, value: f64, interval: (f64, f64)) -> Dot {
        Dot {
            label: label.into(),
            value,
            interval: Some(interval),
            band: Some((-5.0, 5.26)),
            color: 1,
            style: 0,
        }
    }

    #[test]
    fn forest_plot_has_a_zero_line_percent_ticks_and_one_row_per_item() {
        let c = DotChart {
            title: "Throughput change".into(),
            x_label: "change".into(),
            axis: DotAxis::LogRatio,
            rows: vec![
                dot("tuned vs baseline · oltp_read_only", 36.0, (28.0, 44.0)),
                dot("tuned vs baseline · oltp_write_only", -24.0, (-31.0, -16.0)),
            ],
            note: String::new(),
            size: Size::Full,
        };
        let svg = c.to_svg();
        assert!(svg.contains(r#"class="zero""#), "{svg}");
        assert!(svg.contains(r#"data-points="2""#));
        assert!(svg.contains(">+25%<") && svg.contains(">-25%<") && svg.contains(">0<"));
        // The words both rows share are said once.
        assert!(svg.contains("every row: tuned vs baseline"), "{svg}");
        assert!(svg.contains(">oltp_read_only<"));
        assert_eq!(svg.matches(r#"class="interval""#).count(), 2);
    }

    #[test]
    fn linear_dots_start_at_zero() {
        let c = DotChart {
            title: "t".into(),
            x_label: "transactions/s".into(),
            axis: DotAxis::Linear,
            rows: vec![dot("a", 900.0, (850.0, 950.0))],
            note: String::new(),
            size: Size::Full,
        };
        let ((x0, x1), ticks) = c.range();
        assert_eq!(x0, 0.0);
        assert!(x1 >= 950.0 && ticks[0] == 0.0);
        // An interval reaching below 0 stops at the plot's left edge.
        let below = DotChart {
            rows: vec![dot("a", 10.0, (-5.0, 25.0))],
            ..c
        };
        let svg = below.to_svg();
        let left: f64 = svg
            .split(r#"<rect x=""#)
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let x1: f64 = svg
            .split(r#"class="interval" x1=""#)
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!((x1 - left).abs() < 0.1, "{x1} {left}: {svg}");
    }
}
