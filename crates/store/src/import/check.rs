//! What an import checks before it writes: the other store's file is someone else's, perhaps
//! damaged or hand-edited, and a run copied here as it is would make `show` and `report` fail
//! on this store. Every row copied has each JSON column parsed and each histogram decoded
//! ([`row`]); every run copied is read back whole from the other store as `show` reads it, its
//! histograms decoded, and their counts checked against the counts its summary gives
//! ([`run`]). Any failure refuses the import before its transaction commits.

use super::ImportError;
use crate::db::Value;
use crate::handle::Store;
use crate::model::RunId;
use qpslab_core::result::{HistogramBlob, LatencySummary};
use std::path::Path;

/// The other store's run `id`, read as `show` reads it: its plan, server and host facts, each
/// phase's summary, samples, actions and histograms, every count a histogram holds equal to the
/// count its summary gives.
pub(super) fn run(other: &Store, path: &Path, id: i64) -> Result<(), ImportError> {
    let damaged = |what: String| ImportError::Damaged {
        path: path.to_path_buf(),
        what: format!("run {id}: {what}"),
    };
    let run = other
        .load_run(RunId(id))
        .map_err(|e| damaged(e.to_string()))?;
    for p in &run.phases {
        let r = &p.result;
        let at = |what: String| damaged(format!("phase {}: {what}", p.seq));
        for h in &r.histograms {
            let summary = if h.name == "event" {
                Some(&r.latency)
            } else {
                r.statements
                    .iter()
                    .find(|s| s.kind == h.name)
                    .map(|s| &s.latency)
            };
            counted(h, summary).map_err(at)?;
        }
        for (k, s) in r.samples.iter().enumerate() {
            if let Some(h) = &s.histogram {
                counted(h, Some(&s.latency)).map_err(|e| at(format!("interval {}: {e}", k + 1)))?;
            }
        }
    }
    Ok(())
}

/// `h` decodes, and holds as many values as `summary` counts (a histogram an empty phase
/// left, with a summary of nothing, counts nothing either).
fn counted(h: &HistogramBlob, summary: Option<&LatencySummary>) -> Result<(), String> {
    let decoded = h
        .histogram()
        .ok_or_else(|| format!("histogram {} is not a V2 HDR histogram", h.name))?;
    match summary {
        Some(s) if s.count != decoded.len() => Err(format!(
            "histogram {} holds {} values, its summary counts {}",
            h.name,
            decoded.len(),
            s.count
        )),
        _ => Ok(()),
    }
}

/// One row of `table` about to be copied: each JSON column (`*json`) NULL or JSON, each
/// histogram column (`v2`, `histogram`) NULL or a V2 HDR histogram.
pub(super) fn row(table: &str, cols: &[String], row: &[Value]) -> Result<(), String> {
    for (col, v) in cols.iter().zip(row) {
        let bad = |what: &str| Err(format!("{table}.{col} holds {what}"));
        if col.ends_with("json") {
            match v {
                Value::Null => {}
                Value::Text(t) if serde_json::from_str::<serde_json::Value>(t).is_ok() => {}
                _ => return bad("something that is not JSON"),
            }
        } else if col == "v2" || col == "histogram" {
            match v {
                Value::Null => {}
                Value::Blob(b)
                    if (HistogramBlob {
                        name: String::new(),
                        v2: b.clone(),
                    })
                    .histogram()
                    .is_some() => {}
                _ => return bad("something that is not a V2 HDR histogram"),
            }
        }
    }
    Ok(())
}
