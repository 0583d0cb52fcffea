//! The legend below a chart's plot, laid out in rows that wrap within the picture's width
//! (each entry measured with [`super::text`]), and the marker shapes that tell series of one
//! colour apart in the plot and in the legend.

use super::{color, dash, esc, text, Geom, Series, COLORS, DASHES};
use std::fmt::Write;

/// Height of one legend row.
pub(super) const LEGEND_ROW: f64 = 18.0;
/// Width of a legend entry's sample of the line, and the gap before its text.
pub(super) const SAMPLE: f64 = 22.0;
pub(super) const SAMPLE_GAP: f64 = 6.0;
/// Space between two legend entries of a row.
const ENTRY_GAP: f64 = 18.0;

/// Where each legend entry goes: `(x, row)`, rows wrapping within the picture's width, and the
/// text each shows (cut to the width when a name alone is wider).
pub(super) fn legend_layout(g: &Geom, names: &[String]) -> Vec<(f64, usize, String)> {
    let (x0, x1) = (g.left.min(24.0), g.w - 8.0);
    let room = x1 - x0 - SAMPLE - SAMPLE_GAP;
    let (mut x, mut row) = (x0, 0usize);
    let mut out = Vec::new();
    for name in names {
        let label = text::fit(name, g.font, room);
        let w = SAMPLE + SAMPLE_GAP + text::width(&label, g.font);
        if x > x0 && x + w > x1 {
            (x, row) = (x0, row + 1);
        }
        out.push((x, row, label));
        x += w + ENTRY_GAP;
    }
    out
}

/// A marker of style `style` (circle, square, triangle, diamond, triangle down, cross) centred
/// at `(x, y)`.
pub(crate) fn write_mark(s: &mut String, (x, y): (f64, f64), color: usize, style: usize) {
    let c = COLORS[color % COLORS.len()];
    let r = 3.8;
    let poly = |pts: &[(f64, f64)]| {
        let p: Vec<String> = pts
            .iter()
            .map(|(dx, dy)| format!("{:.1},{:.1}", x + dx * r, y + dy * r))
            .collect();
        format!(
            r#"<polygon class="mark" points="{}" fill="{c}"/>"#,
            p.join(" ")
        )
    };
    let m = match style % DASHES.len() {
        0 => format!(r#"<circle class="mark" cx="{x:.1}" cy="{y:.1}" r="{r}" fill="{c}"/>"#),
        1 => poly(&[(-0.9, -0.9), (0.9, -0.9), (0.9, 0.9), (-0.9, 0.9)]),
        2 => poly(&[(0.0, -1.2), (1.1, 0.9), (-1.1, 0.9)]),
        3 => poly(&[(0.0, -1.2), (1.2, 0.0), (0.0, 1.2), (-1.2, 0.0)]),
        4 => poly(&[(0.0, 1.2), (1.1, -0.9), (-1.1, -0.9)]),
        _ => format!(
            r#"<path class="mark" d="M{:.1},{:.1}L{:.1},{:.1}M{:.1},{:.1}L{:.1},{:.1}" stroke="{c}" stroke-width="2.2"/>"#,
            x - r,
            y - r,
            x + r,
            y + r,
            x - r,
            y + r,
            x + r,
            y - r
        ),
    };
    s.push_str(&m);
}

/// One legend entry at `(x, y)`: a short line drawn like the series, its marker, and its label.
pub(super) fn write_legend_entry(
    s: &mut String,
    g: &Geom,
    (x, y): (f64, f64),
    se: &Series,
    label: &str,
) {
    let _ = write!(
        s,
        r##"<line x1="{x:.1}" x2="{x2:.1}" y1="{y}" y2="{y}" stroke="{color}" stroke-width="2"{dash}/>"##,
        x2 = x + SAMPLE,
        color = color(se),
        dash = dash(se),
    );
    write_mark(s, (x + SAMPLE / 2.0, y), se.color, se.style);
    let _ = write!(
        s,
        r##"<text x="{tx:.1}" y="{ty:.1}" fill="#222">{name}</text>"##,
        tx = x + SAMPLE + SAMPLE_GAP,
        ty = y + g.font / 3.0,
        name = esc(label)
    );
}
