//! The Markdown report of a diff: the regressions with their evidence first, one class per
//! section, then the improvements, the table of every class and the skipped classes.

use super::{
    latency_cells, profile_line, ratio_text, results_mark, scope_line, summary_line, Change,
    ClassDiff, DiffReport, PROFILE_CLASSES,
};
use qpslab_core::units::latency_text;
use std::fmt::Write;

/// The report as Markdown.
pub fn markdown(r: &DiffReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# qpslab diff: A → B\n");
    for (name, i) in [("A", 0), ("B", 1)] {
        let _ = writeln!(out, "- {name}: {} ({})", r.sides[i], r.versions[i]);
    }
    let _ = writeln!(out, "- {}\n", scope_line(r));
    for (title, v) in [
        ("Regressions", Change::Regression),
        ("Improvements", Change::Improvement),
    ] {
        let classes: Vec<&ClassDiff> = r.with_verdict(v).collect();
        let _ = writeln!(out, "## {title} ({})\n", classes.len());
        for (i, c) in classes.iter().enumerate() {
            section(&mut out, i + 1, c);
        }
    }
    all_classes(&mut out, r);
    profiles(&mut out, r);
    if !r.skipped.is_empty() {
        let _ = writeln!(out, "## Skipped\n\n| class | count | why |\n|---|---:|---|");
        for s in &r.skipped {
            let _ = writeln!(out, "| `{}` | {} | {} |", s.fingerprint, s.count, s.reason);
        }
        out.push('\n');
    }
    out
}

/// Each side's profiling pass: its files and its server's CPU by thread class.
fn profiles(out: &mut String, r: &DiffReport) {
    if r.profiles.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "## Server profiles
"
    );
    for (name, p) in ["A", "B"].iter().zip(&r.profiles) {
        let _ = writeln!(out, "- {}", profile_line(name, p));
        let _ = writeln!(
            out,
            "  - stacks `{}`, flame graph `{}`",
            p.files.folded.display(),
            p.files.svg.display()
        );
    }
    for f in &r.figures {
        let _ = writeln!(out, "- {}: `{}`", f.title, f.path);
    }
    let _ = writeln!(
        out,
        "\n| side | thread class | threads | CPU % of one CPU |\n|---|---|---:|---:|"
    );
    for (name, p) in ["A", "B"].iter().zip(&r.profiles) {
        for c in p.cpu.iter().take(PROFILE_CLASSES) {
            let _ = writeln!(
                out,
                "| {name} | `{}` | {} | {:.1} |",
                c.class, c.threads, c.cpu_pct
            );
        }
    }
    out.push('\n');
}

/// One class with its evidence.
fn section(out: &mut String, n: usize, c: &ClassDiff) {
    let _ = writeln!(out, "### {n}. `{}`\n\n{}\n", c.fingerprint, summary_line(c));
    let _ = writeln!(out, "| | A | B |\n|---|---:|---:|");
    let _ = writeln!(
        out,
        "| median | {} | {} |",
        latency_text(c.a.median_us),
        latency_text(c.b.median_us)
    );
    let _ = writeln!(
        out,
        "| p95 | {} | {} |",
        latency_text(c.a.p95_us),
        latency_text(c.b.p95_us)
    );
    for (name, [a, b]) in &c.counters {
        let _ = writeln!(out, "| {name} per execution | {a:.1} | {b:.1} |");
    }
    out.push('\n');
    if !c.explain.is_empty() {
        let _ = writeln!(out, "EXPLAIN differences (A → B):\n");
        for d in &c.explain {
            let _ = writeln!(out, "- {d}");
        }
        out.push('\n');
    }
}

fn all_classes(out: &mut String, r: &DiffReport) {
    let _ = writeln!(
        out,
        "## All classes\n\n| class | count | A median | B median | B/A [95% CI] | verdict | results |\n|---|---:|---:|---:|---|---|---|"
    );
    for c in &r.classes {
        let cells = latency_cells(c);
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {} | {} | {} |",
            c.fingerprint,
            c.count,
            cells[0],
            cells[1],
            ratio_text(c),
            c.verdict.as_str(),
            results_mark(c)
        );
    }
    out.push('\n');
}
