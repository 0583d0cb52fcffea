//! Hand-written SVG line charts: axes with round ticks (linear, log2 for sessions, or
//! HdrHistogram's percentile axis), one path and its markers per series, a legend below the plot
//! that wraps, and an optional shaded band (the discarded warm-up). Charts come in two sizes:
//! full, and small for small multiples (one chart per session count or per server metric, side
//! by side). [`dots`] draws dot plots with intervals (a forest plot of comparisons, values at one
//! setting); [`text`] measures text so every label stays inside its chart.
//!
//! A series has a colour (its variant's, the same in every chart) and a style (dash pattern and
//! marker shape), so two series of one chart never look alike. Words every series name shares
//! are dropped from the legend and said once, under the title.
//!
//! Plain SVG 1.1 with inline attributes only, so the same text renders in a browser, inside a
//! Markdown viewer and through resvg to PNG. Every series path carries `class="series"` and
//! `data-points="N"`, which lets tests check that a chart really drew data.

pub mod dots;
mod legend;
pub mod text;
mod ticks;

pub(crate) use legend::write_mark;
use legend::{legend_layout, write_legend_entry, LEGEND_ROW};
use std::fmt::Write;
pub use ticks::fmt_num;
use ticks::{fmt_small, log_ticks, nice_step, nice_ticks, percentile_label};

/// Colour-blind-safe palette (Okabe–Ito).
pub(crate) const COLORS: [&str; 8] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442",
];
/// Dash patterns of the styles, solid first.
const DASHES: [&str; 6] = ["", "7 4", "2 3", "10 3 2 3", "14 5", "4 2 1 2 1 2"];
pub(crate) const FONT: &str = "DejaVu Sans, Liberation Sans, Arial, sans-serif";

/// One line of a chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// `(x, y)` points in x order.
    pub points: Vec<(f64, f64)>,
    /// Palette index: series of the same variant share a colour.
    pub color: usize,
    /// Style index: its dash pattern (0 solid) and marker shape; series of one colour in a
    /// chart each take another.
    pub style: usize,
}

/// How a chart's x values map onto its axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum XAxis {
    /// Linear, with round ticks.
    #[default]
    Linear,
    /// Log2 (sessions: 1, 2, 4 ... 1024), ticks at powers of two.
    Log2,
    /// HdrHistogram's percentile axis: x is `1/(1-p)` on a log10 scale, ticks labelled as
    /// percentiles (0%, 50%, 90%, 99%, 99.9%...); the latency against it is drawn on a log10
    /// y axis.
    Percentile,
}

/// How a chart's y values map onto its axis: chosen by its x axis (see [`LineChart::y_axis`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum YAxis {
    /// Linear from 0, with round ticks.
    Linear,
    /// Log10 over the values' range, ticks at 1, 2 and 5 times powers of ten: a latency
    /// distribution, whose tail is tens or hundreds of times its median, keeps its median
    /// readable.
    Log10,
}

/// A chart's size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Size {
    /// A chart on its own.
    #[default]
    Full,
    /// One of several side by side (small multiples).
    Small,
}

/// The picture's dimensions and margins around the plot area. The legend goes below the plot,
/// so the plot spans the width and the picture grows by the legend's rows.
struct Geom {
    w: f64,
    h: f64,
    left: f64,
    right: f64,
    top: f64,
    /// The plot area's height.
    ph: f64,
    font: f64,
    title_font: f64,
}

impl Geom {
    /// The geometry of a chart of `size`, with a line of notes under the title when `note`,
    /// before the legend's rows are known.
    fn of(size: Size, note: bool) -> Geom {
        let mut g = match size {
            Size::Full => Geom {
                w: 720.0,
                h: 0.0,
                left: 70.0,
                right: 20.0,
                top: 36.0,
                ph: 292.0,
                font: 12.0,
                title_font: 15.0,
            },
            Size::Small => Geom {
                w: 560.0,
                h: 0.0,
                left: 58.0,
                right: 16.0,
                top: 32.0,
                ph: 204.0,
                // Two charts share a report's width (about 580 px each at 1400 px), so a small
                // chart is shown near its natural size: 12 px here is 12 px on screen.
                font: 12.0,
                title_font: 14.0,
            },
        };
        if note {
            g.top += 16.0;
        }
        g.h = g.top + g.ph + 48.0;
        g
    }

    /// The plot area's width.
    fn pw(&self) -> f64 {
        self.w - self.left - self.right
    }

    /// The plot area's height.
    fn ph(&self) -> f64 {
        self.ph
    }

    /// The y of the first legend row's line.
    fn legend_top(&self) -> f64 {
        self.top + self.ph + 56.0
    }
}

/// A chart's description.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct LineChart {
    /// Title drawn above the plot.
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// Y axis label.
    pub y_label: String,
    /// The x axis' scale.
    pub x_axis: XAxis,
    /// Full or small.
    pub size: Size,
    /// Lines.
    pub series: Vec<Series>,
    /// A shaded x range and its label.
    pub band: Option<(f64, f64, String)>,
    /// Vertical markers at an x with a short label (a live action of `run --at`).
    pub markers: Vec<(f64, String)>,
}

impl LineChart {
    /// The y axis' scale: log10 under a percentile axis (a latency distribution, whose tail is
    /// tens or hundreds of times its median: on a linear axis the median and p99 share a few
    /// pixels), linear from 0 otherwise.
    fn y_axis(&self) -> YAxis {
        match self.x_axis {
            XAxis::Percentile => YAxis::Log10,
            XAxis::Linear | XAxis::Log2 => YAxis::Linear,
        }
    }

    /// Whether any series has a point to draw.
    pub fn has_data(&self) -> bool {
        self.series.iter().any(|s| !s.points.is_empty())
    }

    /// The chart as one `<svg>` element.
    pub fn to_svg(&self) -> String {
        let names: Vec<String> = self.series.iter().map(|se| se.name.clone()).collect();
        let (short, common) = text::drop_common(&names);
        let note = if common.is_empty() {
            String::new()
        } else {
            format!("every line: {common}")
        };
        let mut frame = Frame::fit(self, !note.is_empty());
        let legend = legend_layout(&frame.g, &short);
        let rows = legend.iter().map(|(_, r, _)| r + 1).max().unwrap_or(0);
        if rows > 0 {
            frame.g.h = frame.g.legend_top() + LEGEND_ROW * (rows - 1) as f64 + 12.0;
        }
        let mut s = String::new();
        self.write_header(&mut s, &frame.g, &note);
        if let Some(band) = &self.band {
            frame.write_band(&mut s, band);
        }
        frame.write_grid(&mut s);
        for (i, marker) in self.markers.iter().enumerate() {
            frame.write_marker(&mut s, i, marker);
        }
        self.write_border_and_labels(&mut s, &frame.g);
        for (se, (x, row, label)) in self.series.iter().zip(&legend) {
            frame.write_series(&mut s, se);
            let y = frame.g.legend_top() + LEGEND_ROW * *row as f64;
            write_legend_entry(&mut s, &frame.g, (*x, y), se, label);
        }
        s.push_str("</svg>");
        s
    }

    /// The opening `<svg>`, its white background, the title and the note under it, each cut
    /// to the picture's width.
    fn write_header(&self, s: &mut String, g: &Geom, note: &str) {
        let room = g.w - g.left.min(24.0) - 8.0;
        let x = g.left.min(24.0);
        let title = if text::bold_width(&self.title, g.title_font) > room {
            text::fit(&self.title, g.title_font * 1.1, room)
        } else {
            self.title.clone()
        };
        let _ = write!(
            s,
            r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" font-family="{FONT}" font-size="{f}" role="img" data-kind="line"><title>{t}</title><rect width="{w}" height="{h}" fill="#ffffff"/><text x="{x}" y="{ty}" font-size="{tf}" font-weight="bold" fill="#222">{tt}</text>"##,
            w = g.w,
            h = g.h,
            f = g.font,
            ty = if note.is_empty() {
                g.top - 14.0
            } else {
                g.top - 30.0
            },
            tf = g.title_font,
            t = esc(&self.title),
            tt = esc(&title)
        );
        if !note.is_empty() {
            let _ = write!(
                s,
                r##"<text class="note" x="{x}" y="{ny}" fill="#555">{n}</text>"##,
                ny = g.top - 12.0,
                n = esc(&text::fit(note, g.font, room))
            );
        }
    }

    /// The plot's border and the axis labels.
    fn write_border_and_labels(&self, s: &mut String, g: &Geom) {
        let _ = write!(
            s,
            r##"<rect x="{l}" y="{t}" width="{pw}" height="{ph}" fill="none" stroke="#888"/><text x="{cx}" y="{by}" text-anchor="middle" fill="#222">{xl}</text><text transform="translate(16 {cy}) rotate(-90)" text-anchor="middle" fill="#222">{yl}</text>"##,
            l = g.left,
            t = g.top,
            pw = g.pw(),
            ph = g.ph(),
            cx = g.left + g.pw() / 2.0,
            by = g.top + g.ph() + 36.0,
            cy = g.top + g.ph() / 2.0,
            xl = esc(&text::fit(&self.x_label, g.font, g.w - 16.0)),
            yl = esc(&text::fit(&self.y_label, g.font, g.ph() + g.top))
        );
    }
}

/// The data ranges the plot area shows and how a data point maps into it.
struct Frame {
    /// The picture's dimensions.
    g: Geom,
    /// The x axis' scale.
    x_axis: XAxis,
    /// The x range, after the log2 transform when there is one.
    x0: f64,
    x1: f64,
    /// The y axis' scale.
    y_axis: YAxis,
    /// Round y ticks (values, not transformed): from 0 on a linear axis, the last one the top
    /// of the plot.
    y_ticks: Vec<f64>,
    /// The y range, after the log10 transform when there is one.
    y0: f64,
    y1: f64,
}

impl Frame {
    /// The frame that holds every point and the band of `chart`; on a linear axis y starts
    /// at 0.
    fn fit(chart: &LineChart, note: bool) -> Frame {
        let mut frame = Frame {
            g: Geom::of(chart.size, note),
            x_axis: chart.x_axis,
            x0: f64::MAX,
            x1: f64::MIN,
            y_axis: chart.y_axis(),
            y_ticks: Vec::new(),
            y0: 0.0,
            y1: 1.0,
        };
        let (mut ymin, mut y1) = (f64::MAX, 0.0f64);
        for (x, y) in chart.series.iter().flat_map(|s| s.points.iter().copied()) {
            frame.x0 = frame.x0.min(frame.tx(x));
            frame.x1 = frame.x1.max(frame.tx(x));
            y1 = y1.max(y);
            if y > 0.0 {
                ymin = ymin.min(y);
            }
        }
        if let Some((a, b, _)) = &chart.band {
            frame.x0 = frame.x0.min(frame.tx(*a));
            frame.x1 = frame.x1.max(frame.tx(*b));
        }
        if frame.x0 > frame.x1 {
            (frame.x0, frame.x1) = (0.0, 1.0);
        }
        if frame.x1 - frame.x0 < 1e-9 {
            (frame.x0, frame.x1) = (frame.x0 - 1.0, frame.x1 + 1.0);
        }
        match frame.y_axis {
            YAxis::Linear => {
                let ymax;
                (frame.y_ticks, ymax) = nice_ticks(if y1 > 0.0 { y1 } else { 1.0 });
                frame.y1 = ymax;
            }
            YAxis::Log10 => {
                let (lo, hi) = if ymin <= y1 { (ymin, y1) } else { (1.0, 1.0) };
                let (ticks, a, b) = log_ticks(lo, hi);
                (frame.y_ticks, frame.y0, frame.y1) = (ticks, a.log10(), b.log10());
            }
        }
        frame
    }

    /// `y` on the axis' scale (its log10 on a log axis, where a value at or below 0 sits at the
    /// bottom).
    fn ty(&self, y: f64) -> f64 {
        match self.y_axis {
            YAxis::Linear => y,
            YAxis::Log10 if y > 0.0 => y.log10(),
            YAxis::Log10 => self.y0,
        }
    }

    /// `x` on the axis' scale (its log2 on a log2 axis, its log10 on a percentile axis).
    fn tx(&self, x: f64) -> f64 {
        match self.x_axis {
            XAxis::Linear => x,
            XAxis::Log2 => x.max(1e-9).log2(),
            XAxis::Percentile => x.max(1.0).log10(),
        }
    }

    /// The horizontal position of `x` in the picture.
    fn sx(&self, x: f64) -> f64 {
        self.g.left + (self.tx(x) - self.x0) / (self.x1 - self.x0) * self.g.pw()
    }

    /// The vertical position of `y` in the picture.
    fn sy(&self, y: f64) -> f64 {
        let f = (self.ty(y) - self.y0) / (self.y1 - self.y0);
        self.g.top + self.g.ph() - f * self.g.ph()
    }

    /// A shaded x range from `a` to `b` with its label centred at the top.
    fn write_band(&self, s: &mut String, (a, b, label): &(f64, f64, String)) {
        let (xa, xb) = (self.sx(*a), self.sx(*b));
        let _ = write!(
            s,
            r##"<rect class="band" x="{xa:.1}" y="{top}" width="{w:.1}" height="{ph}" fill="#999999" fill-opacity="0.18"/><text x="{tx:.1}" y="{ty}" font-size="11" fill="#555" text-anchor="middle">{l}</text>"##,
            top = self.g.top,
            ph = self.g.ph(),
            w = (xb - xa).max(0.0),
            tx = (xa + xb) / 2.0,
            ty = self.g.top + 14.0,
            l = esc(&text::fit(label, 11.0, (xb - xa).max(0.0)))
        );
    }

    /// A vertical dashed line at `x` with its label at the top, staggered so neighbours' labels
    /// do not overlap.
    fn write_marker(&self, s: &mut String, i: usize, (x, label): &(f64, String)) {
        let sx = self.sx(*x);
        let _ = write!(
            s,
            r##"<line class="marker" x1="{sx:.1}" y1="{top}" x2="{sx:.1}" y2="{b}" stroke="#B22222" stroke-width="1.2" stroke-dasharray="5 3"/><text x="{tx:.1}" y="{ty}" font-size="11" fill="#B22222">{l}</text>"##,
            top = self.g.top,
            b = self.g.top + self.g.ph(),
            tx = sx + 4.0,
            ty = self.g.top + 28.0 + 14.0 * (i % 3) as f64,
            l = esc(&text::fit(label, 11.0, (self.g.w - sx - 8.0).max(0.0)))
        );
    }

    /// Grid lines and tick labels: horizontal ones for y, then vertical ones for x.
    fn write_grid(&self, s: &mut String) {
        for &v in &self.y_ticks {
            let y = self.sy(v);
            let _ = write!(
                s,
                r##"<line x1="{l}" x2="{x2}" y1="{y:.1}" y2="{y:.1}" stroke="#e4e4e4"/><text x="{tx}" y="{ty:.1}" text-anchor="end" fill="#444">{v}</text>"##,
                l = self.g.left,
                x2 = self.g.left + self.g.pw(),
                tx = self.g.left - 6.0,
                ty = y + 4.0,
                v = match self.y_axis {
                    YAxis::Linear => fmt_num(v),
                    YAxis::Log10 => fmt_small(v),
                }
            );
        }
        for v in self.x_ticks() {
            let x = self.sx(v);
            let label = match self.x_axis {
                XAxis::Percentile => percentile_label(v),
                _ => fmt_num(v),
            };
            // A label at either end of the axis is anchored so it stays inside the picture.
            let half = text::width(&label, self.g.font) / 2.0;
            let anchor = if x + half > self.g.w - 2.0 {
                "end"
            } else if x - half < 2.0 {
                "start"
            } else {
                "middle"
            };
            let _ = write!(
                s,
                r##"<line x1="{x:.1}" x2="{x:.1}" y1="{top}" y2="{y2}" stroke="#f0f0f0"/><text x="{x:.1}" y="{ty}" text-anchor="{anchor}" fill="#444">{label}</text>"##,
                top = self.g.top,
                y2 = self.g.top + self.g.ph(),
                ty = self.g.top + self.g.ph() + 16.0,
            );
        }
    }

    /// Round x ticks over the frame's range: powers of two on a log2 axis, the median and
    /// powers of ten of `1/(1-p)` (0%, 50%, 90%, 99%...) on a percentile axis.
    fn x_ticks(&self) -> Vec<f64> {
        let (x0, x1) = (self.x0, self.x1);
        if self.x_axis == XAxis::Percentile {
            let (a, b) = (x0.ceil().max(0.0) as i32, (x1 + 1e-9).floor() as i32);
            let mut out: Vec<f64> = (a..=b).map(|e| 10f64.powi(e)).collect();
            // The median, between 0% and 90%.
            if (x0..=x1).contains(&2f64.log10()) {
                out.push(2.0);
                out.sort_by(f64::total_cmp);
            }
            out
        } else if self.x_axis == XAxis::Log2 {
            // Powers of two over the transformed range, thinned to at most 12 labels.
            let (a, b) = (x0.floor() as i32, x1.ceil() as i32);
            let step = (((b - a) as f64 / 11.0).ceil() as i32).max(1);
            (a..=b)
                .step_by(step as usize)
                .map(|e| 2f64.powi(e))
                .filter(|v| v.log2() >= x0 - 1e-9 && v.log2() <= x1 + 1e-9)
                .collect()
        } else {
            let step = nice_step((x1 - x0) / 8.0);
            let mut v = (x0 / step).ceil() * step;
            let mut out = Vec::new();
            while v <= x1 + 1e-9 {
                out.push(if v.abs() < 1e-9 { 0.0 } else { v });
                v += step;
            }
            out
        }
    }

    /// One series' path, and its markers when its points are few.
    fn write_series(&self, s: &mut String, se: &Series) {
        let d: Vec<String> = se
            .points
            .iter()
            .enumerate()
            .map(|(j, &(x, y))| {
                let op = if j == 0 { "M" } else { "L" };
                format!("{op}{:.1},{:.1}", self.sx(x), self.sy(y))
            })
            .collect();
        let _ = write!(
            s,
            r#"<path class="series" data-points="{n}" d="{d}" fill="none" stroke="{color}" stroke-width="2"{dash}/>"#,
            n = se.points.len(),
            d = d.join(" "),
            color = color(se),
            dash = dash(se)
        );
        // Markers only where points are sparse enough to tell apart.
        if se.points.len() <= 24 {
            for &(x, y) in &se.points {
                write_mark(s, (self.sx(x), self.sy(y)), se.color, se.style);
            }
        }
    }
}

/// The series' stroke colour from the palette.
fn color(se: &Series) -> &'static str {
    COLORS[se.color % COLORS.len()]
}

/// The stroke attribute of the series' dash pattern; nothing for a solid one.
fn dash(se: &Series) -> String {
    match DASHES[se.style % DASHES.len()] {
        "" => String::new(),
        d => format!(r#" stroke-dasharray="{d}""#),
    }
}

/// Escapes text for XML.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
#[path = "svg_tests.rs"]
mod tests;
