//! Markdown for pasting into a ticket: the summary first (one line per comparison with its
//! verdict), what changed, then the context (what ran, on what), the charts when asked, how the
//! client was placed per phase, then tables.

use super::context::{parts, placement, stability_line, OwnedTable};
use super::{
    actions_table, best_of_table, compared_rows, difference_cells, effects_table, is_io,
    limits_sides_lines, metric_header, phase_limits, results_table, summary, tpcc_failures,
    tpcc_table, Renderer, BEST_HEADING,
};
use crate::charts::Section;
use crate::compare::Comparison;
use crate::error::Error;
use crate::report::Report;
use std::fmt::Write;

/// Markdown renderer: tables only.
pub struct Markdown;

/// Markdown with the charts as images: the forest plots under the summary, the other charts in
/// a section of their own, each `![title](DIR/ID.png)` (see [`crate::png::write_pngs`], which
/// writes them), `dir` relative to the Markdown file.
pub struct MarkdownWithCharts<'a> {
    /// Where the PNG charts are, relative to the Markdown file.
    pub dir: &'a str,
}

impl Renderer for MarkdownWithCharts<'_> {
    fn render(&self, r: &Report) -> Result<String, Error> {
        markdown(r, Some(self.dir))
    }
}

/// `![title](dir/id.png)` of each chart of `section`, one per line.
fn images(o: &mut String, r: &Report, dir: &str, section: Section) {
    for c in r.charts.iter().filter(|c| c.section == section) {
        let _ = writeln!(o, "![{}]({dir}/{}.png)\n", c.title, c.id);
        if !c.caption.is_empty() {
            let _ = writeln!(o, "_{}_\n", c.caption);
        }
    }
}

fn row(cells: &[String]) -> String {
    let cells: Vec<String> = cells.iter().map(|c| c.replace('|', "\\|")).collect();
    format!("| {} |\n", cells.join(" | "))
}

fn table(out: &mut String, head: &[&str], rows: impl IntoIterator<Item = Vec<String>>) {
    let head: Vec<String> = head.iter().map(|h| h.to_string()).collect();
    out.push_str(&row(&head));
    out.push_str(&row(&vec!["---".to_string(); head.len()]));
    for r in rows {
        out.push_str(&row(&r));
    }
    out.push('\n');
}

/// One comparison as Markdown: a table per setting, its warnings, then the differences.
pub fn comparison_markdown(c: &Comparison) -> String {
    comparison_md(c, c.io)
}

/// [`comparison_markdown`], naming file I/O's figures as such when `io`.
fn comparison_md(c: &Comparison, io: bool) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "## {} vs {}\n", c.b, c.a);
    for p in &c.points {
        let _ = writeln!(o, "### {}\n", p.key);
        table(
            &mut o,
            &metric_header(&c.a, &c.b),
            compared_rows(&p.metrics, io),
        );
        o.push_str("What limited each side:\n\n");
        for l in limits_sides_lines(c, p) {
            let _ = writeln!(o, "- {l}");
        }
        o.push('\n');
    }
    // After the tables: the answer first, then what to read with it.
    for w in &c.warnings {
        let _ = writeln!(o, "> **warning:** {w}\n");
    }
    if !c.differences.is_empty() {
        o.push_str("Differences:\n\n");
        table(
            &mut o,
            &["setting", &c.a, &c.b],
            c.differences.iter().map(difference_cells),
        );
    }
    o
}

fn owned_table(out: &mut String, (head, rows): OwnedTable) {
    let head: Vec<&str> = head.iter().map(String::as_str).collect();
    table(out, &head, rows);
}

/// What ran, on what, how the client was placed, and who ran it when.
fn context(o: &mut String, r: &Report) {
    o.push_str("## Context\n\n");
    for p in parts(r) {
        if let Some((_, heading)) = p.heading {
            let _ = writeln!(o, "### {heading}\n");
        }
        if p.table.1.is_empty() && !p.when_empty.is_empty() {
            let _ = writeln!(o, "{}\n", p.when_empty);
        } else {
            owned_table(o, p.table);
        }
    }
}

impl Renderer for Markdown {
    fn render(&self, r: &Report) -> Result<String, Error> {
        markdown(r, None)
    }
}

/// The Markdown report, with the charts as images in `charts` when given.
fn markdown(r: &Report, charts: Option<&str>) -> Result<String, Error> {
    let mut o = String::new();
    let _ = writeln!(o, "# {}\n", r.title);
    let lines = summary::lines(r);
    if !lines.is_empty() {
        o.push_str("## Summary (95% confidence)\n\n");
        for l in lines {
            let _ = writeln!(o, "- {}", l.text);
        }
        // Many warnings (a busy machine's unstable phases) are counted here and listed with
        // their comparison below, so they do not bury the answer.
        let warnings = summary::warnings(r);
        if warnings.len() > 3 {
            let _ = writeln!(
                o,
                "\n> **{} warnings** to read before trusting these verdicts: see each comparison below.",
                warnings.len()
            );
        } else {
            for w in warnings {
                let _ = writeln!(o, "\n> **warning:** {w}");
            }
        }
        o.push('\n');
    }
    if let Some(dir) = charts {
        images(&mut o, r, dir, Section::Summary);
    }
    o.push_str("## What changed\n\n");
    for l in &r.what_changed {
        let _ = writeln!(o, "- {l}");
    }
    o.push('\n');
    let limits = phase_limits(r);
    if !limits.is_empty() {
        o.push_str("## What limited each phase\n\n");
        for (cell, line, unseen) in limits {
            let _ = writeln!(o, "- {cell}: {line}");
            if let Some(u) = unseen {
                let _ = writeln!(o, "  - {u}");
            }
        }
        o.push('\n');
    }
    context(&mut o, r);
    if let Some(dir) = charts {
        if r.charts.iter().any(|c| c.section != Section::Summary) {
            o.push_str("## Charts\n\n");
        }
        for section in [
            Section::Scaling,
            Section::Intervals,
            Section::Latency,
            Section::Server,
        ] {
            images(&mut o, r, dir, section);
        }
    }
    // A row per phase: below the charts, so it does not stand between the answer and them.
    if let Some(p) = placement(r) {
        if let Some((_, heading)) = p.heading {
            let _ = writeln!(o, "## {heading}\n");
        }
        owned_table(&mut o, p.table);
    }
    for c in &r.comparisons {
        o.push_str(&comparison_md(c, is_io(r)));
        for p in &c.points {
            if let Some(line) = stability_line(r, [&c.a, &c.b], &p.key) {
                let _ = writeln!(o, "{} {line}\n", p.key);
            }
        }
    }
    if !r.best_of.is_empty() {
        let _ = writeln!(o, "## {BEST_HEADING}\n");
        let (head, rows) = best_of_table(r);
        table(&mut o, head, rows);
    }
    if !r.actions.is_empty() {
        o.push_str("## Live actions\n\n");
        let (head, rows) = actions_table(r);
        table(&mut o, head, rows);
    }
    if !r.tpcc.is_empty() {
        o.push_str("## TPC-C\n\n");
        let (head, rows) = tpcc_table(r);
        table(&mut o, head, rows);
        for l in tpcc_failures(r) {
            let _ = writeln!(o, "- {}", l);
        }
    }
    if !r.effects.is_empty() {
        o.push_str("## Factor effects\n\n");
        let (head, rows) = effects_table(r);
        table(&mut o, head, rows);
    }
    o.push_str("## Results\n\n");
    let (head, rows) = results_table(r);
    table(&mut o, head, rows);
    Ok(o)
}
