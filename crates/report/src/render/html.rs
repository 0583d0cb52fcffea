//! One self-contained HTML file: inline CSS and SVG, no script, and a Content-Security-Policy
//! that forbids every fetch, so the file reads the same offline and cannot leak a request.

use super::{
    actions_table, best_of_table, difference_cells, effects_table, metric_cells, metric_header,
    results_table, Renderer,
};
use crate::error::Error;
use crate::report::Report;
use crate::svg::esc;
use std::fmt::Write;

/// HTML renderer.
pub struct Html;

const STYLE: &str = "body{font-family:'DejaVu Sans',Arial,sans-serif;margin:24px auto;max-width:1180px;color:#222;line-height:1.4}\
h1{font-size:24px;margin-bottom:4px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ddd}h3{font-size:15px}\
table{border-collapse:collapse;margin:8px 0 16px;font-size:13px}th,td{border:1px solid #ddd;padding:3px 8px;text-align:right}\
th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}.verdicts li{font-size:15px;margin:3px 0}\
.better{color:#0a7a2a;font-weight:bold}.worse{color:#b3261e;font-weight:bold}.charts{display:flex;flex-wrap:wrap;gap:12px}\
.chart{border:1px solid #eee}.muted{color:#666;font-size:13px}.warning{color:#8a5300;background:#fff6e0;padding:4px 8px}";

fn table(out: &mut String, head: &[&str], rows: impl IntoIterator<Item = Vec<String>>) {
    out.push_str("<table><tr>");
    for h in head {
        let _ = write!(out, "<th>{}</th>", esc(h));
    }
    out.push_str("</tr>");
    for r in rows {
        out.push_str("<tr>");
        for c in r {
            let class = match c.as_str() {
                "improvement" => " class=\"better\"",
                "regression" => " class=\"worse\"",
                _ => "",
            };
            let _ = write!(out, "<td{class}>{}</td>", esc(&c));
        }
        out.push_str("</tr>");
    }
    out.push_str("</table>\n");
}

fn verdict_class(line: &str) -> &'static str {
    match (line.contains(" improvement"), line.contains(" regression")) {
        (true, false) => "better",
        (false, true) => "worse",
        _ => "",
    }
}

impl Renderer for Html {
    fn render(&self, r: &Report) -> Result<String, Error> {
        let mut o = String::new();
        let _ = write!(
            o,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\
             <meta name=\"viewport\" content=\"width=device-width\"><title>{t}</title><style>{STYLE}</style></head><body>\n\
             <h1>{t}</h1><p class=\"muted\">runs {runs}</p>\n<h2>What changed</h2><ul>",
            t = esc(&r.title),
            runs = r.runs.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", ")
        );
        for l in &r.what_changed {
            let _ = write!(o, "<li>{}</li>", esc(l));
        }
        o.push_str("</ul>\n");
        if !r.verdicts.is_empty() {
            o.push_str("<h2>Verdicts (95% confidence)</h2><ul class=\"verdicts\">");
            for l in &r.verdicts {
                let _ = write!(o, "<li class=\"{}\">{}</li>", verdict_class(l), esc(l));
            }
            o.push_str("</ul>\n");
        }
        o.push_str("<h2>Charts</h2><div class=\"charts\">\n");
        for c in &r.charts {
            let _ = writeln!(
                o,
                "<figure class=\"chart\" id=\"{}\">{}</figure>",
                esc(&c.id),
                c.svg
            );
        }
        o.push_str("</div>\n");
        for c in &r.comparisons {
            let _ = write!(o, "<h2>{} vs {}</h2>", esc(&c.b), esc(&c.a));
            for w in &c.warnings {
                let _ = write!(o, "<p class=\"warning\">warning: {}</p>", esc(w));
            }
            for p in &c.points {
                let _ = write!(o, "<h3>{}</h3>", esc(&p.key));
                table(
                    &mut o,
                    &metric_header(&c.a, &c.b),
                    p.metrics.iter().map(|m| metric_cells(m).to_vec()),
                );
            }
            if !c.differences.is_empty() {
                o.push_str("<h3>Differences</h3>");
                table(
                    &mut o,
                    &["setting", &c.a, &c.b],
                    c.differences.iter().map(difference_cells),
                );
            }
        }
        if !r.best_of.is_empty() {
            o.push_str("<h2>Best result per variant</h2>");
            let (head, rows) = best_of_table(r);
            table(&mut o, head, rows);
        }
        if !r.actions.is_empty() {
            o.push_str("<h2>Live actions</h2>");
            let (head, rows) = actions_table(r);
            table(&mut o, head, rows);
        }
        if !r.effects.is_empty() {
            o.push_str("<h2>Factor effects</h2>");
            let (head, rows) = effects_table(r);
            table(&mut o, head, rows);
        }
        o.push_str("<h2>Results</h2>");
        let (head, rows) = results_table(r);
        table(&mut o, head, rows);
        o.push_str("<p class=\"muted\">Intervals: 95%, of the ratio of the means on the log scale (Welch's t, exact for fractional degrees of freedom); with repeats, from the variation between repeats; with one run a side, from per-interval means with an effective sample size corrected for autocorrelation (within-run noise only). MDE: the smallest change this many runs with this spread call significant at the 5% level with 80% power; a comparison that finds nothing with an MDE above 10% is inconclusive.</p>\n</body></html>\n");
        Ok(o)
    }
}
