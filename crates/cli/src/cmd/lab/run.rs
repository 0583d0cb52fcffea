//! `qpslab lab run|resume`: executes a study (its stopping flags as the spec's top-level keys),
//! prints each cell as it ends, then the study's verdicts and cells.

use super::progress::{CellsEta, LabPrinter};
use super::study::{emit_study, precision_metric, print_cells, study_comparisons, verdict_text};
use crate::args::LabRunArgs;
use crate::error::fail;
use crate::out::Output;
use crate::printer::Printer;
use crate::signals::INTERRUPTED;
use crate::target::sandbox_home;
use anyhow::Result;
use qpslab_lab::study::{self, Mode};

/// The stopping flags of `lab run` as the spec's top-level keys, TOML values.
fn stop_keys(a: &LabRunArgs) -> Vec<(&'static str, String)> {
    let text = |v: &Option<String>| {
        v.as_ref()
            .map(|t| serde_json::Value::from(t.as_str()).to_string())
    };
    let int = |v: Option<u32>| v.map(|n| n.to_string());
    [
        ("precision", text(&a.precision)),
        ("precision_metric", text(&a.precision_metric)),
        ("budget", text(&a.budget)),
        ("min_repeats", int(a.min_repeats)),
        ("max_repeats", int(a.max_repeats)),
        ("look_every", int(a.look_every)),
    ]
    .into_iter()
    .filter_map(|(k, v)| Some((k, v?)))
    .collect()
}

pub(super) fn run(a: &LabRunArgs, mode: Mode) -> Result<()> {
    let output = Output::new(&a.output, "lab run")?;
    let l = study::load_with(&a.spec, &stop_keys(a)).map_err(fail)?;
    crate::db::check(&a.db.db)?;
    crate::db::accept(&a.on_target);
    let mut store = crate::db::open_to_write(&a.db.db)?;
    let command = std::env::args().collect::<Vec<_>>().join(" ");
    let exporter = crate::metrics::start(a.metrics_addr.as_deref())?;
    let started = std::time::Instant::now();
    let mut printer = LabPrinter {
        inner: Printer::with_metrics(exporter.as_ref()),
        eta: CellsEta::new(&l),
    };
    let out = study::run_study(
        &mut store,
        &l,
        &command,
        mode,
        &sandbox_home(&a.home),
        &mut printer,
        &INTERRUPTED,
    )
    .map_err(fail)?;
    println!(
        "\nstudy '{}' {}: {} cell(s) measured, {} failed, {} already done, {} not needed, in {:.0}s",
        out.study.name,
        out.study.status,
        out.done,
        out.failed,
        out.skipped,
        out.not_needed,
        started.elapsed().as_secs_f64()
    );
    if output.format() == crate::args::Format::Table {
        let comparisons = study_comparisons(&store, &out.study)?;
        print!(
            "{}",
            verdict_text(&comparisons, &precision_metric(&out.study))
        );
    }
    // The table was printed cell by cell; its cells again, or the study's document.
    emit_study(&output, &store, &out.study, || {
        print_cells(&store, &out.study.name)
    })?;
    println!(
        "stored in {}  (qpslab lab show {})",
        store.path().display(),
        out.study.name
    );
    crate::db::warn_on_target(&store);
    if out.failed > 0 {
        // The study ran to its end, but not every cell measured: a script must not take
        // that for success.
        return Err(anyhow::anyhow!(
            "{} of {} cell(s) failed in study '{}' (qpslab lab show {} gives each error)",
            out.failed,
            out.done + out.failed + out.skipped,
            out.study.name,
            out.study.name
        ));
    }
    Ok(())
}
