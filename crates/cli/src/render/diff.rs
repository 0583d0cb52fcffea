//! `qpslab diff`'s terminal table (one line per class, then the regressions' evidence) and its
//! JSON form.

use qpslab_report::diff::{
    latency_cells, profile_line, ratio_text, results_mark, shorten, summary_line, Change,
    ClassDiff, DiffReport, PROFILE_CLASSES,
};
use std::fmt::Write;

/// Characters of a fingerprint shown in the table.
const FINGERPRINT_WIDTH: usize = 48;

/// The table: one line per class by impact, the regressions' evidence, the skipped classes.
pub fn table(r: &DiffReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "A: {} ({})", r.sides[0], r.versions[0]);
    let _ = writeln!(out, "B: {} ({})\n", r.sides[1], r.versions[1]);
    let _ = writeln!(
        out,
        "{:>3}  {:<w$}  {:>7}  {:>9}  {:>9}  {:>9}  {:>9}  {:<24}  {:<11}  results",
        "#",
        "class",
        "count",
        "A median",
        "B median",
        "A p95",
        "B p95",
        "B/A [95% CI]",
        "verdict",
        w = FINGERPRINT_WIDTH
    );
    for (i, c) in r.classes.iter().enumerate() {
        let [a_median, b_median, a_p95, b_p95] = latency_cells(c);
        let _ = writeln!(
            out,
            "{:>3}  {:<w$}  {:>7}  {:>9}  {:>9}  {:>9}  {:>9}  {:<24}  {:<11}  {}",
            i + 1,
            shorten(&c.fingerprint, FINGERPRINT_WIDTH),
            c.count,
            a_median,
            b_median,
            a_p95,
            b_p95,
            ratio_text(c),
            c.verdict.as_str(),
            results_mark(c),
            w = FINGERPRINT_WIDTH
        );
    }
    for c in r.with_verdict(Change::Regression) {
        evidence(&mut out, c);
    }
    for c in r.with_verdict(Change::Error) {
        let _ = writeln!(
            out,
            "\nnot measured: {}\n  {}",
            c.fingerprint,
            summary_line(c)
        );
    }
    for s in &r.skipped {
        let _ = writeln!(
            out,
            "\nskipped: {} ({}): {}",
            s.fingerprint, s.count, s.reason
        );
    }
    profiles(&mut out, r);
    out
}

/// Each side's profiling pass, its busiest thread classes and the flame graphs.
fn profiles(out: &mut String, r: &DiffReport) {
    for (name, p) in ["A", "B"].iter().zip(&r.profiles) {
        let _ = writeln!(out, "\nprofile {}", profile_line(name, p));
        for c in p.cpu.iter().take(PROFILE_CLASSES) {
            let _ = writeln!(
                out,
                "  {:>6.1}% CPU  {} ({} thread(s))",
                c.cpu_pct, c.class, c.threads
            );
        }
    }
    for f in &r.figures {
        let _ = writeln!(out, "flame graph: {} ({})", f.path, f.title);
    }
}

/// A regression's evidence: summary, EXPLAIN differences, counters.
fn evidence(out: &mut String, c: &ClassDiff) {
    let _ = writeln!(
        out,
        "\nregression: {}\n  {}",
        c.fingerprint,
        summary_line(c)
    );
    for d in &c.explain {
        let _ = writeln!(out, "  explain: {d}");
    }
    for (name, [a, b]) in &c.counters {
        let _ = writeln!(out, "  {name} per execution: {a:.1} → {b:.1}");
    }
}

/// The whole analysis as pretty JSON.
pub fn json(r: &DiffReport) -> String {
    // A report of plain numbers and strings always serializes.
    let mut s = serde_json::to_string_pretty(r).unwrap_or_default();
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::tests::golden;
    use qpslab_core::diff::{ClassCpu, DiffMeasurement, SideProfile};
    use qpslab_core::telemetry::ProfileFiles;
    use qpslab_report::diff::{analyze, Figure};

    /// A measurement of the partitioned-table case: a date range that reads every partition on
    /// B, a point lookup that does not change, a class that failed, a skipped write.
    fn report() -> DiffReport {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/diff_measurement.json");
        let m: DiffMeasurement =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let mut r = analyze(&m, 5.0);
        r.figures = vec![Figure {
            title: "Flame graph, side B".into(),
            path: "flame/b.svg".into(),
        }];
        r.profiles = ["range", "hash"]
            .iter()
            .enumerate()
            .map(|(i, side)| SideProfile {
                side: (*side).into(),
                files: ProfileFiles {
                    folded: format!("flame/{}.folded", ["a", "b"][i]).into(),
                    svg: format!("flame/{}.svg", ["a", "b"][i]).into(),
                    event: "cpu-clock".into(),
                    event_reason: "cpu-clock: hardware counters not supported here".into(),
                    samples: 4_000 + i as u64 * 900,
                    not_drawn: None,
                },
                seconds: 10.0,
                statements: 2_500 - i as u64 * 1_100,
                cpu: vec![
                    ClassCpu {
                        class: "thread/sql/one_connection".into(),
                        threads: 3,
                        cpu_pct: 61.5 + i as f64 * 20.0,
                    },
                    ClassCpu {
                        class: "thread/innodb/page_cleaner_thread".into(),
                        threads: 1,
                        cpu_pct: 1.2,
                    },
                ],
            })
            .collect();
        r
    }

    #[test]
    fn the_analysis_flags_the_range_and_not_the_lookup() {
        let r = report();
        let verdicts: Vec<&str> = r.classes.iter().map(|c| c.verdict.as_str()).collect();
        assert_eq!(verdicts, ["regression", "same", "error"]);
    }

    #[test]
    fn diff_table_golden() {
        golden("diff_table.txt", &table(&report()));
    }

    #[test]
    fn diff_json_golden() {
        golden("diff.json", &json(&report()));
    }

    #[test]
    fn diff_markdown_golden() {
        golden("diff.md", &qpslab_report::diff::md::markdown(&report()));
    }

    #[test]
    fn diff_html_golden() {
        golden("diff.html", &qpslab_report::diff::html::html(&report()));
    }
}
