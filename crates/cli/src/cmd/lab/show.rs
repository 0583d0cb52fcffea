//! `qpslab lab show`: the stored studies, or one study's cells and verdicts.

use super::study::{
    emit_study, load, precision_metric, print_cells, study_comparisons, verdict_text,
};
use crate::args::Format::{Csv, Json};
use crate::args::LabShowArgs;
use crate::error::user;
use crate::out::Output;
use crate::render::table;
use anyhow::Result;
use qpslab_store::{Store, StudySummary, STUDY_LIST_CSV_HEADER};
use std::path::Path;

fn study_name(arg: &str) -> Result<String> {
    let p = Path::new(arg);
    if arg.ends_with(".toml") && p.is_file() {
        return Ok(load(p)?.spec.name);
    }
    Ok(arg.to_string())
}

pub(super) fn show(a: &LabShowArgs) -> Result<()> {
    let mut out = a.output.clone();
    if a.csv {
        out.flags.format = Some(Csv);
    }
    let out = Output::new(&out, "lab show")?;
    let store = crate::db::open_to_read(&a.db.db)?;
    let Some(arg) = &a.study else {
        return list(&store, &out);
    };
    let name = study_name(arg)?;
    let s = store
        .study_by_name(&name)
        .map_err(|e| user(e.to_string()))?;
    let cells = store.study_cells(s.id)?;
    emit_study(&out, &store, &s, || {
        println!(
            "study '{}': {} ({} cells){}",
            s.name,
            s.status,
            cells.len(),
            if s.factors.is_empty() {
                String::new()
            } else {
                format!(
                    ", factors: {}",
                    s.factors
                        .iter()
                        .map(|f| format!("{} ({})", f.name, f.levels.join("/")))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
        );
        // A study the budget ended says so, with what it used and what the next cell needed.
        if let Some(reason) = s.env["budget"]["reason"].as_str() {
            println!("{reason}");
        }
        print_cells(&store, &s.name)?;
        let comparisons = study_comparisons(&store, &s)?;
        print!("{}", verdict_text(&comparisons, &precision_metric(&s)));
        Ok(())
    })
}

fn list(store: &Store, out: &Output) -> Result<()> {
    let studies = store.study_summaries()?;
    out.emit(|f| match f {
        Json => crate::out::json(&studies),
        Csv => crate::out::csv(
            STUDY_LIST_CSV_HEADER,
            studies.iter().map(StudySummary::csv_row),
        ),
        _ => Ok(list_table(store, &studies)),
    })
}

/// `lab show`'s table of studies.
fn list_table(store: &Store, studies: &[StudySummary]) -> String {
    if studies.is_empty() {
        format!("no studies stored in {}\n", store.path().display())
    } else {
        let header: Vec<String> = ["study", "status", "done", "failed"]
            .map(String::from)
            .to_vec();
        let rows: Vec<Vec<String>> = studies
            .iter()
            .map(|s| {
                vec![
                    s.name.clone(),
                    s.status.to_string(),
                    format!("{}/{}", s.done, s.cells),
                    s.failed.to_string(),
                ]
            })
            .collect();
        table(&header, &rows)
    }
}
