//! One self-contained HTML file: inline CSS and SVG, no script, and a Content-Security-Policy
//! that forbids every fetch, so the file reads the same offline and cannot leak a request.
//! Sections, each with an `id`: the summary (one line per comparison with its verdict, and the
//! forest plots), what changed, context (what ran, on what, who ran it when), charts against
//! sessions, per-interval small multiples, latency distributions, the server over time, how the
//! client was placed per phase (folded: a row per phase), comparisons, best stable results, live
//! actions, TPC-C
//! (NewOrder/min, the server's NOPM, the consistency check),
//! factor effects and every phase's results with its stability verdict.

use super::context::{parts, placement, stability_line, OwnedTable};
use super::{
    actions_table, best_of_table, compared_rows, difference_cells, effects_table, is_io,
    limits_sides_lines, metric_header, phase_limits, results_table, summary, tpcc_failures,
    tpcc_table, Renderer, BEST_HEADING,
};
use crate::charts::Section;
use crate::error::Error;
use crate::report::Report;
use crate::svg::esc;
use std::fmt::Write;

/// HTML renderer.
pub struct Html;

pub(crate) const STYLE: &str = "body{font-family:'DejaVu Sans',Arial,sans-serif;margin:24px auto;max-width:1180px;color:#222;line-height:1.4}\
h1{font-size:24px;margin-bottom:4px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ddd}h3{font-size:15px}\
table{border-collapse:collapse;margin:8px 0 16px;font-size:13px}th,td{border:1px solid #ddd;padding:3px 8px;text-align:right}\
th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}.verdicts li{font-size:15px;margin:3px 0}\
.better{color:#0a7a2a;font-weight:bold}.worse{color:#b3261e;font-weight:bold}\
.chart{border:1px solid #eee;margin:0}.forest{max-width:900px;margin:8px 0}.chart svg{width:100%;height:auto}.chart figcaption{font-size:12px;color:#555;padding:4px 8px}.charts{display:grid;grid-template-columns:repeat(2,minmax(0,1fr));gap:10px}\
.muted{color:#666;font-size:13px}.warning{color:#8a5300;background:#fff6e0;padding:4px 8px}\
td.unstable{color:#b3261e;font-weight:bold}td.stable{color:#0a7a2a}.context td,.context th{text-align:left;max-width:760px;overflow-wrap:break-word}";

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
                "stable" => " class=\"stable\"",
                c if c.starts_with("unstable") => " class=\"unstable\"",
                _ => "",
            };
            let _ = write!(out, "<td{class}>{}</td>", esc(&c));
        }
        out.push_str("</tr>");
    }
    out.push_str("</table>\n");
}

fn owned_table(out: &mut String, (head, rows): OwnedTable) {
    let head: Vec<&str> = head.iter().map(String::as_str).collect();
    table(out, &head, rows);
}

/// What ran, on what, how the client was placed, and who ran it when.
fn context(o: &mut String, r: &Report) {
    o.push_str("<h2 id=\"context\">Context</h2><div class=\"context\">");
    for p in parts(r) {
        if let Some((id, heading)) = p.heading {
            let _ = write!(o, "<h3 id=\"{id}\">{heading}</h3>");
        }
        if p.table.1.is_empty() && !p.when_empty.is_empty() {
            let _ = write!(o, "<p>{}</p>", esc(p.when_empty));
        } else {
            owned_table(o, p.table);
        }
    }
    o.push_str("</div>\n");
}

/// The client's placement and each phase's verdict, a row per phase, folded under a line that
/// counts them (open on demand).
fn placement_block(o: &mut String, r: &Report) {
    let Some(p) = placement(r) else {
        return;
    };
    if let Some((id, heading)) = p.heading {
        let _ = write!(o, "<h2 id=\"{id}\">{heading}</h2>");
    }
    let n = p.table.1.len();
    let _ = write!(
        o,
        "<details class=\"context placement\"><summary>{n} phase{}: where the client ran, how busy its loops were, each phase's stability verdict</summary>",
        if n == 1 { "" } else { "s" }
    );
    owned_table(o, p.table);
    o.push_str("</details>\n");
}

/// The answer first: one line per comparison, the warnings to read with them, and the forest
/// plots.
fn summary(o: &mut String, r: &Report) {
    let lines = summary::lines(r);
    let forests: Vec<_> = r
        .charts
        .iter()
        .filter(|c| c.section == Section::Summary)
        .collect();
    if lines.is_empty() && forests.is_empty() {
        return;
    }
    o.push_str("<h2 id=\"summary\">Summary (95% confidence)</h2><ul class=\"verdicts\">");
    for l in lines {
        let _ = write!(o, "<li class=\"{}\">{}</li>", l.class, esc(&l.text));
    }
    o.push_str("</ul>\n");
    for c in forests {
        let _ = writeln!(
            o,
            "<figure class=\"chart forest\" id=\"{}\">{}</figure>",
            esc(&c.id),
            c.svg
        );
    }
    warnings_block(
        o,
        &summary::warnings(r),
        "to read before trusting these verdicts",
    );
}

/// A few warnings are read as they are; many (a busy machine's unstable phases) are folded
/// under one line that counts them (`what`: what they are for), so they do not push the answer
/// off the screen.
fn warnings_block(o: &mut String, warnings: &[String], what: &str) {
    if warnings.len() > FOLD_WARNINGS {
        let _ = write!(
            o,
            "<details class=\"warning\"><summary>{} warnings {what}</summary><ul>",
            warnings.len()
        );
        for w in warnings {
            let _ = write!(o, "<li>{}</li>", esc(w));
        }
        o.push_str("</ul></details>\n");
    } else {
        for w in warnings {
            let _ = write!(o, "<p class=\"warning\">warning: {}</p>", esc(w));
        }
    }
}

/// The most warnings a block shows unfolded.
const FOLD_WARNINGS: usize = 3;

/// The charts, each section under its heading (sections without charts left out).
fn charts(o: &mut String, r: &Report) {
    let sections = [
        (Section::Scaling, "scaling", "Throughput, latency and CPU vs sessions", ""),
        (
            Section::Intervals,
            "intervals",
            "Per interval, every session count",
            "Each line is labelled with its phase's stability verdict.",
        ),
        (
            Section::Latency,
            "latency-distribution",
            "Latency distribution",
            "Latency by percentile as HdrHistogram plots it: the x axis is 1/(1-p) on a log scale (50%, 90%, 99%, 99.9%...), the latency on a log scale; repeats merged.",
        ),
        (
            Section::Server,
            "server",
            "The server meanwhile",
            "From the server's status and process readings stored at every report interval.",
        ),
    ];
    for (section, id, title, note) in sections {
        let charts: Vec<_> = r.charts.iter().filter(|c| c.section == section).collect();
        if charts.is_empty() {
            continue;
        }
        // With fewer session counts than a line needs, the scaling charts are dot plots.
        let title = if section == Section::Scaling && charts.iter().any(|c| c.id.contains("-at-")) {
            "Throughput and latency at each session count"
        } else {
            title
        };
        let _ = write!(o, "<h2 id=\"{id}\">{title}</h2>");
        if !note.is_empty() {
            let _ = write!(o, "<p class=\"muted\">{note}</p>");
        }
        o.push_str("<div class=\"charts\">\n");
        for c in charts {
            let caption = if c.caption.is_empty() {
                String::new()
            } else {
                format!("<figcaption>{}</figcaption>", esc(&c.caption))
            };
            let _ = writeln!(
                o,
                "<figure class=\"chart\" id=\"{}\">{}{caption}</figure>",
                esc(&c.id),
                c.svg
            );
        }
        o.push_str("</div>\n");
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
             <h1>{t}</h1><p class=\"muted\">runs {runs}</p>\n",
            t = esc(&r.title),
            runs = crate::context::id_ranges(&r.runs)
        );
        summary(&mut o, r);
        o.push_str("<h2 id=\"what-changed\">What changed</h2><ul>");
        for l in &r.what_changed {
            let _ = write!(o, "<li>{}</li>", esc(l));
        }
        o.push_str("</ul>\n");
        let limits = phase_limits(r);
        if !limits.is_empty() {
            o.push_str("<h2 id=\"limits\">What limited each phase</h2><ul class=\"limits\">");
            for (cell, line, unseen) in limits {
                let _ = write!(o, "<li>{}: {}", esc(&cell), esc(&line));
                if let Some(u) = unseen {
                    let _ = write!(o, "<br><span class=\"muted\">{}</span>", esc(&u));
                }
                o.push_str("</li>");
            }
            o.push_str("</ul>\n");
        }
        context(&mut o, r);
        charts(&mut o, r);
        placement_block(&mut o, r);
        for c in &r.comparisons {
            let _ = write!(o, "<h2>{} vs {}</h2>", esc(&c.b), esc(&c.a));
            // The tables (the answer) first, then what to read with them.
            for p in &c.points {
                let _ = write!(o, "<h3>{}</h3>", esc(&p.key));
                if let Some(line) = stability_line(r, [&c.a, &c.b], &p.key) {
                    let _ = write!(o, "<p class=\"muted stability\">{}</p>", esc(&line));
                }
                table(
                    &mut o,
                    &metric_header(&c.a, &c.b),
                    compared_rows(&p.metrics, is_io(r)),
                );
                o.push_str("<p class=\"limits\">What limited each side:</p><ul class=\"limits\">");
                for l in limits_sides_lines(c, p) {
                    let _ = write!(o, "<li>{}</li>", esc(&l));
                }
                o.push_str("</ul>\n");
            }
            warnings_block(&mut o, &c.warnings, "about these phases");
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
            let _ = write!(o, "<h2 id=\"best\">{BEST_HEADING}</h2>");
            let (head, rows) = best_of_table(r);
            table(&mut o, head, rows);
        }
        if !r.actions.is_empty() {
            o.push_str("<h2>Live actions</h2>");
            let (head, rows) = actions_table(r);
            table(&mut o, head, rows);
        }
        if !r.tpcc.is_empty() {
            o.push_str("<h2 id=\"tpcc\">TPC-C</h2>");
            let (head, rows) = tpcc_table(r);
            table(&mut o, head, rows);
            for l in tpcc_failures(r) {
                let _ = write!(o, "<p class=\"warning\">{}</p>", esc(&l));
            }
        }
        if !r.effects.is_empty() {
            o.push_str("<h2>Factor effects</h2>");
            let (head, rows) = effects_table(r);
            table(&mut o, head, rows);
        }
        o.push_str("<h2 id=\"results\">Results and stability</h2>");
        let (head, rows) = results_table(r);
        table(&mut o, head, rows);
        o.push_str("<p class=\"muted\">Intervals: 95%, of the ratio of the means on the log scale. Rounds of a study where both setups ran are paired (the mean over rounds of ln(b/a), so drift between rounds cancels): with a fixed number of rounds, the paired t interval; in a study that ran rounds until precise, a confidence sequence (valid at every round, so stopping when precise does not make it too narrow), or, in one that decided only at planned looks, the repeated confidence interval at its last look (valid at every planned look). Otherwise Welch's t over repeats, or with one run a side per-interval means with an effective sample size corrected for autocorrelation (within-run noise only). Verdicts: improvement or regression when the interval excludes zero; equivalent within ±P% when it lies inside the precision asked; undecided when neither within the budget. MDE: the smallest change this many runs with this spread call significant at the 5% level with 80% power.</p>\n</body></html>\n");
        Ok(o)
    }
}
