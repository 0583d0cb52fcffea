//! `qpslab history [SERIES|WORKLOAD...]`: the series of the store, their points and change
//! points, in every output format; `--check` gates CI on the newest points of one series.

use crate::args::{Format, HistoryArgs};
use crate::error::{fail, user};
use crate::out::Output;
use anyhow::Result;
use qpslab_report::history::{gate, history as build, render, By, Query};

/// Runs `qpslab history`.
pub fn history(a: HistoryArgs) -> Result<()> {
    let out = Output::new(&a.output, "history")?;
    let q = Query {
        wanted: a.series.clone(),
        by: By::parse(&a.by).map_err(fail)?,
        significance: a.significance,
        min_change: percent("--min-change", &a.min_change)?,
        since: a.since,
        until: a.until,
    };
    let margin = percent("--margin", &a.margin)?;
    let store = crate::db::open_to_read(&a.db.db)?;
    let h = build(&store, &q).map_err(fail)?;
    let verdict = if a.check {
        if h.series.len() != 1 {
            let keys: Vec<String> = h
                .series
                .iter()
                .map(|s| format!("{} ({})", s.key, s.title))
                .collect();
            return Err(user(format!(
                "--check gates one series; {} match: {} (name one by its key)",
                h.series.len(),
                keys.join(", ")
            )));
        }
        Some(gate::check(&h.series[0], margin).map_err(fail)?)
    } else {
        None
    };
    out.emit(|f| match f {
        Format::Json => Ok(render::json(&h, verdict.as_ref())?),
        Format::Csv => crate::out::csv(render::CSV_HEADER, render::csv_rows(&h)),
        Format::Md => Ok(render::markdown(&h, verdict.as_ref())),
        _ => Ok(render::text(&h, verdict.as_ref())),
    })?;
    match verdict {
        Some(v) if !v.passed() => Err(anyhow::anyhow!(v.message)),
        _ => Ok(()),
    }
}

/// `5`, `5%` or `0.5%` as a fraction; the user's error otherwise.
fn percent(flag: &str, t: &str) -> Result<f64> {
    let n = t.trim().trim_end_matches('%').trim().parse::<f64>().ok();
    match n.filter(|n| (0.0..100.0).contains(n)) {
        Some(n) => Ok(n / 100.0),
        None => Err(user(format!(
            "{flag}: a percentage from 0 to under 100 (5 or 5%), not '{t}'"
        ))),
    }
}
