//! The digest as an aligned table or as Markdown (the JSON form is the report's serde form).

use crate::render::table as aligned;
use qpslab_core::units::binary_size;
use qpslab_sqllog::digest::{ClassSummary, Other, Report};
use std::fmt::Write;

/// The longest fingerprint a table row shows.
const CLASS_WIDTH: usize = 60;
/// The longest example the table shows (whitespace folded); Markdown shows more.
const EXAMPLE_WIDTH: usize = 200;
const MD_EXAMPLE_WIDTH: usize = 2000;

/// `text` on one line (whitespace runs folded), cut at `max` characters with `…`.
fn shorten(text: &str, max: usize) -> String {
    let folded = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if folded.chars().count() <= max {
        return folded;
    }
    folded.chars().take(max - 1).collect::<String>() + "…"
}

fn span(r: &Report) -> String {
    match (&r.first_seen, &r.last_seen, r.span_s) {
        (Some(f), Some(l), Some(s)) => format!("{f} to {l} ({s:.0} s)"),
        _ => "no timestamps".into(),
    }
}

fn timed(r: &Report) -> bool {
    r.top.iter().any(|c| c.query_time.is_some())
}

/// The facts above the classes, as (label, value) pairs.
fn facts(r: &Report, shown: usize) -> Vec<(&'static str, String)> {
    let order = if timed(r) {
        "total query time"
    } else {
        "count"
    };
    vec![
        (
            "log",
            format!(
                "{} · {} · {} log · {}",
                r.log,
                binary_size(r.size_bytes),
                r.log_type,
                r.flavor
            ),
        ),
        (
            "entries",
            format!(
                "{} ({} skipped) in {} classes{}",
                r.entries,
                r.skipped,
                r.classes,
                folded(r)
            ),
        ),
        ("time", span(r)),
        (
            "shown",
            format!("{} heaviest classes by {order}", shown.min(r.top.len())),
        ),
    ]
}

/// What the bound folded, after the class count: `` (at most 1000 kept; 5 entries of 12
/// classes folded into other)``; nothing when nothing was folded.
fn folded(r: &Report) -> String {
    let o = &r.other;
    if o.tallies == 0 {
        return String::new();
    }
    let at_most = r
        .max_classes
        .map_or(String::new(), |m| format!("at most {m} kept; "));
    format!(
        " ({at_most}{} entries of {} classes folded into other)",
        o.count, o.tallies
    )
}

/// The other row's cells (sums only: its classes' histograms and maxima are gone).
fn other_cells(o: &Other, timed: bool) -> Vec<String> {
    let mut row = vec!["-".to_string(), o.count.to_string()];
    if timed {
        let dash = || "-".to_string();
        row.push(o.query_time_s.map_or_else(dash, |t| format!("{t:.3}")));
        row.push(
            o.query_time_s
                .map_or_else(dash, |t| format!("{:.3}", t * 1e3 / o.count.max(1) as f64)),
        );
        row.extend([dash(), dash()]);
        row.push(o.lock_time_s.map_or_else(dash, |s| format!("{s:.3}")));
        for rows in [o.rows_sent, o.rows_examined] {
            row.push(rows.map_or_else(dash, |r| r.to_string()));
            row.push(
                rows.map_or_else(dash, |r| format!("{:.1}", r as f64 / o.count.max(1) as f64)),
            );
        }
    }
    row
}

/// The other row's class cell.
fn other_label(r: &Report) -> String {
    format!("other ({} classes folded)", r.other.tallies)
}

/// The numbers of one class, as the table's cells (time columns only when `timed`).
fn cells(rank: usize, c: &ClassSummary, timed: bool) -> Vec<String> {
    let mut row = vec![rank.to_string(), c.count.to_string()];
    if timed {
        let t = c.query_time.as_ref();
        let ms = |f: fn(&qpslab_sqllog::digest::Timing) -> f64| {
            t.map_or("-".into(), |t| format!("{:.3}", f(t) * 1e3))
        };
        row.push(t.map_or("-".into(), |t| format!("{:.3}", t.total_s)));
        row.extend([ms(|t| t.avg_s), ms(|t| t.p95_s), ms(|t| t.max_s)]);
        row.push(c.lock_time_s.map_or("-".into(), |s| format!("{s:.3}")));
        for rows in [&c.rows_sent, &c.rows_examined] {
            row.push(rows.as_ref().map_or("-".into(), |r| r.total.to_string()));
            row.push(
                rows.as_ref()
                    .map_or("-".into(), |r| format!("{:.1}", r.avg)),
            );
        }
    }
    row
}

fn header(timed: bool) -> Vec<String> {
    let mut h = vec!["#", "count"];
    if timed {
        h.extend([
            "total s", "avg ms", "p95 ms", "max ms", "lock s", "sent", "sent/q", "examined",
            "exam/q",
        ]);
    }
    h.push("class");
    h.into_iter().map(String::from).collect()
}

/// Where and when a class was seen.
fn seen(c: &ClassSummary) -> String {
    let dbs = if c.databases.is_empty() {
        "-".to_string()
    } else {
        c.databases.join(", ")
    };
    let when = match (&c.first_seen, &c.last_seen) {
        (Some(f), Some(l)) => format!(" · first {f} · last {l}"),
        _ => String::new(),
    };
    let partial = if c.partial {
        " · folded once, seen again: some entries in other"
    } else {
        ""
    };
    format!("{} · db {dbs}{when}{partial}", c.kind)
}

fn example_label(c: &ClassSummary) -> String {
    match c.example.query_time_s {
        Some(t) => format!("slowest (line {}, {:.3} ms)", c.example.line, t * 1e3),
        None => format!("first (line {})", c.example.line),
    }
}

/// The aligned table, then each class's details and example.
pub fn table(r: &Report, shown: usize) -> String {
    let mut out = String::new();
    for (label, value) in facts(r, shown) {
        let _ = writeln!(out, "{label:<8} {value}");
    }
    let top = &r.top[..shown.min(r.top.len())];
    if top.is_empty() {
        out.push_str("\nno statements in this log\n");
        return out;
    }
    let timed = timed(r);
    let rows: Vec<Vec<String>> = top
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut row = cells(i + 1, c, timed);
            row.push(shorten(&c.fingerprint, CLASS_WIDTH));
            row
        })
        .chain((r.other.tallies > 0).then(|| {
            let mut row = other_cells(&r.other, timed);
            row.push(other_label(r));
            row
        }))
        .collect();
    out.push('\n');
    out.push_str(&aligned(&header(timed), &rows));
    for (i, c) in top.iter().enumerate() {
        let _ = writeln!(
            out,
            "\n{}. {}",
            i + 1,
            shorten(&c.fingerprint, EXAMPLE_WIDTH)
        );
        let _ = writeln!(out, "   {}", seen(c));
        let example = shorten(&c.example.sql, EXAMPLE_WIDTH);
        let line = format!("   {}: {example}", example_label(c));
        let _ = writeln!(out, "{}", line.trim_end());
    }
    out
}

fn md_cell(text: &str) -> String {
    text.replace('|', "\\|")
}

/// The digest as Markdown: the facts, the table of classes, each class's example.
pub fn markdown(r: &Report, shown: usize) -> String {
    let mut out = format!("# Digest of `{}`\n\n", r.log);
    for (label, value) in facts(r, shown) {
        let _ = writeln!(out, "- {label}: {}", md_cell(&value));
    }
    let top = &r.top[..shown.min(r.top.len())];
    if top.is_empty() {
        out.push_str("\nNo statements in this log.\n");
        return out;
    }
    let timed = timed(r);
    let head = header(timed);
    let _ = writeln!(out, "\n| {} |", head.join(" | "));
    let align: Vec<&str> = head
        .iter()
        .map(|h| if h == "class" { ":---" } else { "---:" })
        .collect();
    let _ = writeln!(out, "|{}|", align.join("|"));
    for (i, c) in top.iter().enumerate() {
        let mut row = cells(i + 1, c, timed);
        row.push(format!(
            "`{}`",
            md_cell(&shorten(&c.fingerprint, CLASS_WIDTH))
        ));
        let _ = writeln!(out, "| {} |", row.join(" | "));
    }
    if r.other.tallies > 0 {
        let mut row = other_cells(&r.other, timed);
        row.push(other_label(r));
        let _ = writeln!(out, "| {} |", row.join(" | "));
    }
    for (i, c) in top.iter().enumerate() {
        let _ = writeln!(out, "\n## {}. `{}`\n", i + 1, md_cell(&c.fingerprint));
        let _ = writeln!(out, "{}; {}:\n", seen(c), example_label(c));
        let fence = if c.example.sql.contains("```") {
            "~~~~"
        } else {
            "```"
        };
        let sql = c
            .example
            .sql
            .chars()
            .take(MD_EXAMPLE_WIDTH)
            .collect::<String>();
        let cut = if sql.len() < c.example.sql.len() {
            "\n…"
        } else {
            ""
        };
        let _ = writeln!(out, "{fence}sql\n{sql}{cut}\n{fence}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortening() {
        assert_eq!(shorten("select\n  a\tfrom t", 100), "select a from t");
        assert_eq!(shorten("abcdef", 4), "abc…");
    }
}
