//! A history as text (a terminal), Markdown, JSON or CSV. Every form carries the same facts:
//! each series' points (x, run, start, tps, p99, unstable ones marked), its change points
//! (where, the levels with their intervals, the relative change, the p-value, the runs either
//! side and what differed between them), and the note that unstable points were left out of
//! the search.

use super::gate::Verdict;
use super::{Change, History, Series};
use crate::Error;
use serde::Serialize;

/// The note every form carries on unstable points.
const UNSTABLE_NOTE: &str = "* unstable (its stability verdict, other than contention): shown, \
                             left out of the change point search";

/// The history as text for a terminal, with the gate's verdict when it was asked.
pub fn text(h: &History, gate: Option<&Verdict>) -> String {
    let mut out = String::new();
    for (i, s) in h.series.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&format!("series {}: {}\n", s.key, s.title));
        out.push_str(&format!("  {}\n", summary_line(h, s)));
        let rows: Vec<Vec<String>> = s
            .points
            .iter()
            .enumerate()
            .map(|(k, p)| {
                let mark = if p.unstable.is_some() { "*" } else { "" };
                vec![
                    format!("{}{}", p.x, change_mark(s, k)),
                    p.run.to_string(),
                    format!("{:.1}{mark}", p.tps),
                    p.p99_ms.map_or("-".into(), |v| format!("{v:.2}")),
                ]
            })
            .collect();
        out.push_str(&aligned(&[&h.by, "run", "tps", "p99 ms"], &rows));
        if s.points.iter().any(|p| p.unstable.is_some()) {
            out.push_str(&format!("  {UNSTABLE_NOTE}\n"));
        }
        for c in &s.change_points {
            out.push_str(&format!("  change point: {}\n", change_line(c)));
            out.push_str(&format!("    {}\n", differed(c)));
        }
    }
    if let Some(v) = gate {
        out.push_str(&format!("\n{}\n", gate_line(v)));
    }
    out
}

/// `gate: pass: no regression in ...` or `gate: FAIL: regression in ...`.
fn gate_line(v: &Verdict) -> String {
    let word = if v.passed() { "pass" } else { "FAIL" };
    format!("gate (margin {}%): {word}: {}", v.margin * 100.0, v.message)
}

/// The history as Markdown, with the gate's verdict when it was asked.
pub fn markdown(h: &History, gate: Option<&Verdict>) -> String {
    let mut out = String::from("# History\n");
    for s in &h.series {
        out.push_str(&format!(
            "\n## {} · `{}`\n\n{}\n\n",
            s.title,
            s.key,
            summary_line(h, s)
        ));
        out.push_str(&format!(
            "| {} | run | tps | p99 ms | unstable |\n|---|---:|---:|---:|---|\n",
            h.by
        ));
        for (k, p) in s.points.iter().enumerate() {
            out.push_str(&format!(
                "| {}{} | {} | {:.1} | {} | {} |\n",
                p.x,
                change_mark(s, k),
                p.run,
                p.tps,
                p.p99_ms.map_or("–".into(), |v| format!("{v:.2}")),
                p.unstable.as_deref().unwrap_or("")
            ));
        }
        if s.points.iter().any(|p| p.unstable.is_some()) {
            out.push_str(
                "\nUnstable points (their verdict in the last column, other than contention) \
                 are shown but left out of the change point search.\n",
            );
        }
        if !s.change_points.is_empty() {
            out.push_str("\n### Change points\n\n");
            for c in &s.change_points {
                out.push_str(&format!("- {}\n  - {}\n", change_line(c), differed(c)));
            }
        }
    }
    if let Some(v) = gate {
        out.push_str(&format!("\n## Gate\n\n{}\n", gate_line(v)));
    }
    out
}

/// The history as JSON (the one document `--format json` prints), with a `gate` member
/// holding the gate's verdict when it was asked.
pub fn json(h: &History, gate: Option<&Verdict>) -> Result<String, Error> {
    #[derive(Serialize)]
    struct Doc<'a> {
        #[serde(flatten)]
        history: &'a History,
        #[serde(skip_serializing_if = "Option::is_none")]
        gate: Option<&'a Verdict>,
    }
    Ok(serde_json::to_string_pretty(&Doc { history: h, gate })? + "\n")
}

/// The CSV header of [`csv_rows`].
pub const CSV_HEADER: &[&str] = &[
    "series",
    "title",
    "x",
    "run",
    "started",
    "tps",
    "p99_ms",
    "unstable",
    "change_pct",
    "change_p_value",
];

/// One row per point of every series; `change_pct` and `change_p_value` are set on the first
/// point after a change point.
pub fn csv_rows(h: &History) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for s in &h.series {
        for (k, p) in s.points.iter().enumerate() {
            let c = s.change_points.iter().find(|c| c.at == k);
            rows.push(vec![
                s.key.clone(),
                s.title.clone(),
                p.x.clone(),
                p.run.to_string(),
                p.started.clone(),
                format!("{:.3}", p.tps),
                p.p99_ms.map_or(String::new(), |v| format!("{v:.3}")),
                p.unstable.clone().unwrap_or_default(),
                c.map_or(String::new(), |c| {
                    format!("{:.2}", c.relative_change * 100.0)
                }),
                c.map_or(String::new(), |c| format!("{:.4}", c.p_value)),
            ]);
        }
    }
    rows
}

/// `28 points by label:build, 28 searched (E-divisive means ..., significance 0.01, changes
/// of 5% or more): 2 change points`.
fn summary_line(h: &History, s: &Series) -> String {
    let found = if s.searched < s.needed {
        format!("too few to search ({} needed)", s.needed)
    } else {
        match s.change_points.len() {
            0 => "no change point".to_string(),
            1 => "1 change point".to_string(),
            n => format!("{n} change points"),
        }
    };
    format!(
        "{} point(s), {} searched ({}, significance {}, changes of {}% or more): {found}",
        s.points.len(),
        s.searched,
        h.method,
        h.significance,
        h.min_change * 100.0
    )
}

/// ` ▼` or ` ▲` on the first point after a change point.
fn change_mark(s: &Series, k: usize) -> &'static str {
    match s.change_points.iter().find(|c| c.at == k) {
        Some(c) if c.relative_change < 0.0 => " ▼",
        Some(_) => " ▲",
        None => "",
    }
}

/// `at 13 (run 13): 5321.4 tps [5300.1, 5342.0] (12 runs) → 3100.2 tps [...] (8 runs),
/// -41.7%, p = 0.005`.
fn change_line(c: &Change) -> String {
    format!(
        "at {} (run {}): {:.1} tps [{:.1}, {:.1}] ({} runs) → {:.1} tps [{:.1}, {:.1}] ({} runs), \
         {:+.1}%, p = {:.3}",
        c.x_after,
        c.run_after,
        c.before.mean,
        c.before.lo,
        c.before.hi,
        c.before.n,
        c.after.mean,
        c.after.lo,
        c.after.hi,
        c.after.n,
        c.relative_change * 100.0,
        c.p_value
    )
}

/// What differed between the runs either side of `c`.
fn differed(c: &Change) -> String {
    let head = format!(
        "between run {} ({}) and run {} ({}): ",
        c.run_before, c.x_before, c.run_after, c.x_after
    );
    if c.differences.is_empty() {
        return head + "nothing differed in their plans, servers or hosts";
    }
    let items: Vec<String> = c
        .differences
        .iter()
        .map(|d| format!("{} {} → {}", d.name, dash(&d.a), dash(&d.b)))
        .collect();
    head + &items.join(", ")
}

fn dash(s: &str) -> &str {
    if s.is_empty() {
        "–"
    } else {
        s
    }
}

/// `header` and `rows` as columns two spaces apart, indented by two.
fn aligned(header: &[&str], rows: &[Vec<String>]) -> String {
    let width = |i: usize| {
        rows.iter()
            .map(|r| r[i].chars().count())
            .chain([header[i].chars().count()])
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..header.len()).map(width).collect();
    let line = |cells: Vec<&str>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (c, w))| {
                let pad = w - c.chars().count();
                if i == 0 {
                    format!("{c}{}", " ".repeat(pad))
                } else {
                    format!("{}{c}", " ".repeat(pad))
                }
            })
            .collect();
        format!("  {}\n", padded.join("  ").trim_end())
    };
    let mut out = line(header.to_vec());
    for r in rows {
        out.push_str(&line(r.iter().map(String::as_str).collect()));
    }
    out
}
