//! `qpslab lab plan`: a study's cells in the order they will run, and an estimate of its time
//! (from the store's earlier runs of the same setups, or from a pilot study run first).

use super::progress::{CellsEta, LabPrinter};
use super::study::load;
use crate::args::Format::{Csv, Json};
use crate::args::LabSpecArgs;
use crate::error::fail;
use crate::out::Output;
use crate::printer::Printer;
use crate::render::table;
use crate::signals::INTERRUPTED;
use crate::target::sandbox_home;
use anyhow::Result;
use qpslab_lab::study::{self, Loaded, Mode};
use std::path::Path;

/// The columns of `lab plan`.
const PLAN_HEADER: [&str; 6] = [
    "seq",
    "cell",
    "variant",
    "workload",
    "threads",
    "warm-up+time",
];

pub(super) fn plan(a: &LabSpecArgs) -> Result<()> {
    let out = Output::new(&a.output, "lab plan")?;
    let l = load(&a.spec)?;
    let estimate = plan_estimate(a, &l)?;
    let plan = l.plan();
    let rows: Vec<Vec<String>> = plan
        .cells
        .iter()
        .map(|c| {
            vec![
                c.cell.seq.to_string(),
                c.cell.label.clone(),
                c.cell.variant.clone(),
                c.workload.clone(),
                c.threads.to_string(),
                format!("{:.0}s", c.seconds),
            ]
        })
        .collect();
    out.emit(|f| match f {
        // Through a Value: its keys are in order.
        Json => {
            let mut doc = serde_json::to_value(l.plan_doc())?;
            if let Some(o) = doc.as_object_mut() {
                o.insert("estimate".into(), serde_json::to_value(&estimate)?);
            }
            crate::out::json(&doc)
        }
        Csv => crate::out::csv(&PLAN_HEADER, rows.clone()),
        _ => Ok(format!(
            "study '{}': {} setup(s), {} cell(s)\n{}{} server start(s); at least {:.0}s of \
             warm-up and measurement\n{}",
            plan.name,
            plan.setups,
            plan.cells.len(),
            table(&PLAN_HEADER.map(String::from), &rows),
            plan.restarts,
            plan.seconds,
            estimate.text()
        )),
    })
}

/// `lab plan`'s estimate: from the store's earlier runs of the same setups, or from the
/// pilot `--pilot` runs first (resumed if it was cut, reused if it ran).
fn plan_estimate(a: &LabSpecArgs, l: &Loaded) -> Result<study::Estimate> {
    let prefer = a.pilot.then(|| study::pilot_name(&l.spec.name));
    if a.pilot {
        let dir = a.spec.parent().unwrap_or(Path::new(""));
        let p = study::pilot(l, dir).map_err(fail)?;
        crate::db::check(&a.db.db)?;
        let mut store = crate::db::open_to_write(&a.db.db)?;
        let mode = match store.study_by_name(&p.spec.name) {
            Ok(s) if s.status == qpslab_store::StudyStatus::Done => None,
            Ok(_) => Some(Mode::Resume),
            Err(_) => Some(Mode::Run),
        };
        if let Some(mode) = mode {
            let mut printer = LabPrinter {
                inner: Printer::new(),
                eta: CellsEta::new(&p),
            };
            let command = std::env::args().collect::<Vec<_>>().join(" ");
            let home = sandbox_home(&a.home);
            study::run_study(
                &mut store,
                &p,
                &command,
                mode,
                &home,
                &mut printer,
                &INTERRUPTED,
            )
            .map_err(fail)?;
        }
    }
    let store = match a.db.db.exists() {
        true => Some(crate::db::open_to_read(&a.db.db)?),
        false => None,
    };
    study::estimate(store.as_ref(), l, prefer.as_deref()).map_err(anyhow::Error::msg)
}
