//! `qpslab lab run|plan|resume|show`: studies over servers, configs and workloads, from a spec
//! file (see `qpslab_lab::study::spec`). This module only parses, prints and maps errors; the lab crate
//! expands, orders, executes and resumes.

use crate::args::Format::{Csv, Json};
use crate::args::{LabCommand, LabRunArgs, LabShowArgs, LabSpecArgs};
use crate::error::{fail, user};
use crate::out::Output;
use crate::printer::Printer;
use crate::render::table;
use crate::signals::INTERRUPTED;
use crate::target::sandbox_home;
use anyhow::Result;
use qpslab_lab::study::{self, Loaded, Mode};
use qpslab_report::{compare_with, model::points, Comparison, ReportInput};
use qpslab_store::{
    CellFigures, Store, StudyRecord, StudySummary, STUDY_CSV_HEADER, STUDY_LIST_CSV_HEADER,
};
use std::path::Path;

/// Runs a `lab` subcommand.
pub fn lab(c: LabCommand) -> Result<()> {
    match c {
        LabCommand::Plan(a) => plan(&a),
        LabCommand::Run(a) => run(&a, Mode::Run),
        LabCommand::Resume(a) => run(&a, Mode::Resume),
        LabCommand::Show(a) => show(&a),
    }
}

mod progress;
use progress::{CellsEta, LabPrinter};

fn load(path: &Path) -> Result<Loaded> {
    study::load(path).map_err(fail)
}

/// The columns of `lab plan`.
const PLAN_HEADER: [&str; 6] = [
    "seq",
    "cell",
    "variant",
    "workload",
    "threads",
    "warm-up+time",
];

fn plan(a: &LabSpecArgs) -> Result<()> {
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

/// Each setup of study `s` against its first setup, at the study's precision and rounds;
/// setups without a measured cell are left out.
fn study_comparisons(store: &Store, s: &StudyRecord) -> Result<Vec<Comparison>> {
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
fn verdict_text(comparisons: &[Comparison], metric: &str) -> String {
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
fn precision_metric(s: &StudyRecord) -> String {
    qpslab_lab::study::spec::parse(&s.name, &s.spec_toml)
        .ok()
        .and_then(|spec| spec.stop_rule().ok())
        .map_or_else(|| "tps".into(), |r| r.metric)
}

fn run(a: &LabRunArgs, mode: Mode) -> Result<()> {
    let output = Output::new(&a.output, "lab run")?;
    let l = study::load_with(&a.spec, &stop_keys(a)).map_err(fail)?;
    crate::db::check(&a.db.db)?;
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

/// A cell's headline figures with `decimals` places, empty where it has none.
fn headline(f: &CellFigures, decimals: usize) -> [String; 7] {
    f.headline()
        .map(|v| v.map_or(String::new(), |v| format!("{v:.decimals$}")))
}

fn print_cells(store: &Store, name: &str) -> Result<()> {
    let s = store.study_by_name(name)?;
    let header: Vec<String> = [
        "seq", "cell", "status", "tries", "tps", "qps", "avg ms", "p50 ms", "p95 ms", "p99 ms",
        "max ms", "run",
    ]
    .map(String::from)
    .to_vec();
    let rows: Vec<Vec<String>> = store
        .cell_figures(s.id)?
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
            row.extend(headline(f, 2));
            row.push(c.run_id.map_or(String::new(), |r| r.to_string()));
            row
        })
        .collect();
    print!("{}", table(&header, &rows));
    Ok(())
}

fn study_name(arg: &str) -> Result<String> {
    let p = Path::new(arg);
    if arg.ends_with(".toml") && p.is_file() {
        return Ok(load(p)?.spec.name);
    }
    Ok(arg.to_string())
}

fn show(a: &LabShowArgs) -> Result<()> {
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
        print_cells(&store, &s.name)?;
        let comparisons = study_comparisons(&store, &s)?;
        print!("{}", verdict_text(&comparisons, &precision_metric(&s)));
        Ok(())
    })
}

/// Writes study `s` as `out` asks: its JSON form, its cells as CSV, or `table` (which prints
/// the table form as `lab run` prints it, cell by cell).
fn emit_study(
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
            let rows = store
                .cell_figures(s.id)?
                .iter()
                .map(CellFigures::csv_row)
                .collect::<Result<Vec<_>, _>>()?;
            crate::out::csv(STUDY_CSV_HEADER, rows)
        }
        _ => table().map(|()| String::new()),
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
