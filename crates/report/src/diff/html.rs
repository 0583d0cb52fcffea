//! The HTML report of a diff: one self-contained file laid out as the Markdown one (the
//! regressions with their evidence first, one class per section), plus the figures (e.g. flame
//! graphs) embedded with `<object>` from SVG files beside the report. Its
//! Content-Security-Policy allows nothing but those local objects.

use super::{
    latency_cells, profile_line, ratio_text, results_mark, scope_line, summary_line, Change,
    ClassDiff, DiffReport, PROFILE_CLASSES,
};
use crate::svg::esc;
use qpslab_core::units::latency_text;
use std::fmt::Write;

const STYLE: &str = "body{font-family:'DejaVu Sans',Arial,sans-serif;margin:24px auto;max-width:1180px;color:#222;line-height:1.4}\
h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ddd}h3{font-size:15px}code{font-size:13px}\
table{border-collapse:collapse;margin:8px 0 16px;font-size:13px}th,td{border:1px solid #ddd;padding:3px 8px;text-align:right}\
th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}.regression{color:#b3261e;font-weight:bold}\
.improvement{color:#0a7a2a;font-weight:bold}figure{margin:12px 0}figure img{width:100%;border:1px solid #eee}";

/// The report as HTML.
pub fn html(r: &DiffReport) -> String {
    let mut out = String::from("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    out.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src 'self' file: data:\">");
    let _ = write!(out, "<title>qpslab diff</title><style>{STYLE}</style></head><body>\n<h1>qpslab diff: A → B</h1>\n<ul>");
    for (name, i) in [("A", 0), ("B", 1)] {
        let _ = write!(
            out,
            "<li>{name}: {} ({})</li>",
            esc(&r.sides[i]),
            esc(&r.versions[i])
        );
    }
    let _ = writeln!(out, "<li>{}</li></ul>", esc(&scope_line(r)));
    for (title, v) in [
        ("Regressions", Change::Regression),
        ("Improvements", Change::Improvement),
    ] {
        let classes: Vec<&ClassDiff> = r.with_verdict(v).collect();
        let _ = writeln!(out, "<h2>{title} ({})</h2>", classes.len());
        for (i, c) in classes.iter().enumerate() {
            section(&mut out, i + 1, c);
        }
    }
    all_classes(&mut out, r);
    skipped(&mut out, r);
    profiles(&mut out, r);
    figures(&mut out, r);
    out.push_str("</body></html>\n");
    out
}

fn section(out: &mut String, n: usize, c: &ClassDiff) {
    let _ = writeln!(
        out,
        "<section><h3>{n}. <code>{}</code></h3><p>{}</p>",
        esc(&c.fingerprint),
        esc(&summary_line(c))
    );
    out.push_str("<table><tr><th></th><th>A</th><th>B</th></tr>");
    let mut row = |name: String, a: String, b: String| {
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{a}</td><td>{b}</td></tr>",
            esc(&name)
        );
    };
    row(
        "median".into(),
        latency_text(c.a.median_us),
        latency_text(c.b.median_us),
    );
    row(
        "p95".into(),
        latency_text(c.a.p95_us),
        latency_text(c.b.p95_us),
    );
    for (name, [a, b]) in &c.counters {
        row(
            format!("{name} per execution"),
            format!("{a:.1}"),
            format!("{b:.1}"),
        );
    }
    out.push_str("</table>\n");
    if !c.explain.is_empty() {
        out.push_str("<p>EXPLAIN differences (A → B):</p><ul>");
        for d in &c.explain {
            let _ = write!(out, "<li>{}</li>", esc(d));
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</section>\n");
}

fn all_classes(out: &mut String, r: &DiffReport) {
    out.push_str("<h2>All classes</h2><table><tr><th>class</th><th>count</th><th>A median</th><th>B median</th><th>B/A [95% CI]</th><th>verdict</th><th>results</th></tr>\n");
    for c in &r.classes {
        let cells = latency_cells(c);
        let _ = writeln!(
            out,
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"{v}\">{v}</td><td>{}</td></tr>",
            esc(&c.fingerprint),
            c.count,
            cells[0],
            cells[1],
            ratio_text(c),
            results_mark(c),
            v = c.verdict.as_str(),
        );
    }
    out.push_str("</table>\n");
}

fn skipped(out: &mut String, r: &DiffReport) {
    if r.skipped.is_empty() {
        return;
    }
    out.push_str("<h2>Skipped</h2><table><tr><th>class</th><th>count</th><th>why</th></tr>\n");
    for s in &r.skipped {
        let _ = writeln!(
            out,
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
            esc(&s.fingerprint),
            s.count,
            esc(&s.reason)
        );
    }
    out.push_str("</table>\n");
}

/// Each side's profiling pass and its server's CPU by thread class.
fn profiles(out: &mut String, r: &DiffReport) {
    if r.profiles.is_empty() {
        return;
    }
    out.push_str("<h2>Server profiles</h2>\n<ul>");
    for (name, p) in ["A", "B"].iter().zip(&r.profiles) {
        let _ = write!(out, "<li>{}</li>", esc(&profile_line(name, p)));
    }
    out.push_str("</ul>\n<table><tr><th>side</th><th>thread class</th><th>threads</th><th>CPU % of one CPU</th></tr>\n");
    for (name, p) in ["A", "B"].iter().zip(&r.profiles) {
        for c in p.cpu.iter().take(PROFILE_CLASSES) {
            let _ = writeln!(
                out,
                "<tr><td>{name}</td><td>{}</td><td>{}</td><td>{:.1}</td></tr>",
                esc(&c.class),
                c.threads,
                c.cpu_pct
            );
        }
    }
    out.push_str("</table>\n");
}

fn figures(out: &mut String, r: &DiffReport) {
    if r.figures.is_empty() {
        return;
    }
    out.push_str("<h2>Figures</h2>\n");
    for f in &r.figures {
        let _ = writeln!(
            out,
            "<figure><figcaption>{t}</figcaption><a href=\"{p}\"><img src=\"{p}\" alt=\"{t}\"></a></figure>",
            t = esc(&f.title),
            p = esc(&f.path)
        );
    }
}
