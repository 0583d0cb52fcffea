//! A stored study as `lab run` and `lab show` print it: its cells, each setup's comparison
//! with the first and the precision metric's verdicts, or its JSON and CSV forms.

use crate::args::Format::{Csv, Json};
use crate::error::fail;
use crate::out::Output;
use crate::render::table;
use anyhow::Result;
use qpslab_lab::study::Loaded;
use qpslab_report::{compare_with, model::points, Comparison, ReportInput};
use qpslab_store::{CellFigures, Store, StudyRecord, STUDY_CSV_HEADER};
use std::path::Path;

/// A study spec, loaded and expanded.
pub(super) fn load(path: &Path) -> Result<Loaded> {
    qpslab_lab::study::load(path).map_err(fail)
}

/// Each setup of study `s` against its first setup, at the study's precision and rounds;
/// setups without a measured cell are left out.
pub(super) fn study_comparisons(store: &Store, s: &StudyRecord) -> Result<Vec<Comparison>> {
    let mut variants: Vec<String> = Vec::new();
    for c in store.study_cells(s.id)? {
        if !variants.contains(&c.cell.variant) {
            variants.push(c.cell.variant);
        }
    }
    let Some((base, rest)) = variants.split_first() else {
        return Ok(Vec::new());
    };
    let seq = crate::cmd::report::sequential(store, [&s.name, &s.name]);
    let input = |v: &str| {
        qpslab_report::side(store, &format!("{}/{v}", s.name))
            .ok()
            .map(|subjects| ReportInput {
                subjects,
                ..Default::default()
            })
    };
    let Some(ia) = input(base) else {
        return Ok(Vec::new());
    };
    Ok(rest
        .iter()
        .filter_map(|v| {
            let ib = input(v)?;
            compare_with(base, &points(&ia), v, &points(&ib), &seq).ok()
        })
        .collect())
}

/// One line per comparison and setting: the precision metric's verdict, interval, rounds.
pub(super) fn verdict_text(comparisons: &[Comparison], metric: &str) -> String {
    let mut out = String::new();
    for c in comparisons {
        for p in &c.points {
            let Some(m) = p.metrics.iter().find(|m| m.metric == metric) else {
                continue;
            };
            let interval = match (m.ci_low, m.ci_high) {
                (Some(l), Some(h)) => format!(" [{l:+.1}, {h:+.1}]"),
                _ => String::new(),
            };
            let rounds = match (m.rounds, m.stopped) {
                (Some(r), Some(st)) => format!(
                    " ({} round(s), {} dropped, stopped: {})",
                    r.used,
                    r.dropped,
                    serde_json::to_value(st)
                        .ok()
                        .and_then(|v| v.as_str().map(String::from))
                        .unwrap_or_default()
                ),
                _ => String::new(),
            };
            out.push_str(&format!(
                "{} vs {} at {}: {metric} {:+.1}%{interval} {}{rounds}\n",
                c.b, c.a, p.key, m.change_pct, m.verdict
            ));
        }
    }
    out
}

/// The precision metric of a stored study (`tps` unless its spec says).
pub(super) fn precision_metric(s: &StudyRecord) -> String {
    qpslab_lab::study::spec::parse(&s.name, &s.spec_toml)
        .ok()
        .and_then(|spec| spec.stop_rule().ok())
        .map_or_else(|| "tps".into(), |r| r.metric)
}

/// A cell's headline figures with `decimals` places, empty where it has none.
fn headline(f: &CellFigures, decimals: usize) -> [String; 7] {
    f.headline()
        .map(|v| v.map_or(String::new(), |v| format!("{v:.decimals$}")))
}

/// A fileio cell's MiB/s and IOPS as `qpslab io` prints them, then its average and p99
/// latency in ms to the microsecond ([`crate::render::io::latency_ms`]); empty where it has none.
fn io_headline(f: &CellFigures) -> [String; 4] {
    use crate::render::io::latency_ms;
    let Some(h) = f.io() else {
        return Default::default();
    };
    [
        format!("{:.2}", h.mib_s),
        format!("{:.2}", h.iops),
        latency_ms(h.lat_avg_ms),
        h.p99_ms.map_or(String::new(), latency_ms),
    ]
}

pub(super) fn print_cells(store: &Store, name: &str) -> Result<()> {
    let s = store.study_by_name(name)?;
    let cells = store.cell_figures(s.id)?;
    // A fileio study's cells are MiB/s, IOPS and sub-millisecond latencies, not transactions.
    let io = CellFigures::is_io_study(&cells);
    let figures: &[&str] = if io {
        &["MiB/s", "IOPS", "avg ms", "p99 ms"]
    } else {
        &[
            "tps", "qps", "avg ms", "p50 ms", "p95 ms", "p99 ms", "max ms",
        ]
    };
    let header: Vec<String> = ["seq", "cell", "status", "tries"]
        .iter()
        .chain(figures)
        .chain(&["run"])
        .map(|h| h.to_string())
        .collect();
    let rows: Vec<Vec<String>> = cells
        .iter()
        .map(|f| {
            let c = &f.cell;
            let mut row = vec![
                c.cell.seq.to_string(),
                c.cell.label.clone(),
                match &c.error {
                    Some(e) if c.status == qpslab_store::CellStatus::Failed => {
                        format!("failed: {}", e.chars().take(60).collect::<String>())
                    }
                    _ => match f.phase.as_ref().and_then(|p| p.stability.as_ref()) {
                        Some(v) if !v.is_stable() => v.to_string().chars().take(70).collect(),
                        _ => c.status.to_string(),
                    },
                },
                f.attempts.to_string(),
            ];
            if io {
                row.extend(io_headline(f));
            } else {
                row.extend(headline(f, 2));
            }
            row.push(c.run_id.map_or(String::new(), |r| r.to_string()));
            row
        })
        .collect();
    print!("{}", table(&header, &rows));
    Ok(())
}

/// Writes study `s` as `out` asks: its JSON form, its cells as CSV, or `table` (which prints
/// the table form as `lab run` prints it, cell by cell).
pub(super) fn emit_study(
    out: &Output,
    store: &Store,
    s: &StudyRecord,
    table: impl Fn() -> Result<()>,
) -> Result<()> {
    out.emit(|f| match f {
        Json => {
            // Through a Value: its keys are in order.
            let mut doc = serde_json::to_value(store.study_doc(s)?)?;
            if let Some(o) = doc.as_object_mut() {
                let comparisons = study_comparisons(store, s)?;
                if !comparisons.is_empty() {
                    o.insert("comparisons".into(), serde_json::to_value(comparisons)?);
                }
            }
            let text = crate::out::json(&doc)?;
            // Studies stored by an older qpslab may hold a target's password: never print it.
            Ok(qpslab_store::redact_url_passwords(&text))
        }
        Csv => {
            let cells = store.cell_figures(s.id)?;
            let (header, row): (_, fn(&CellFigures) -> _) = if CellFigures::is_io_study(&cells) {
                (CellFigures::IO_CSV_HEADER, CellFigures::io_csv_row)
            } else {
                (STUDY_CSV_HEADER, CellFigures::csv_row)
            };
            let rows = cells.iter().map(row).collect::<Result<Vec<_>, _>>()?;
            crate::out::csv(header, rows)
        }
        _ => table().map(|()| String::new()),
    })
}
