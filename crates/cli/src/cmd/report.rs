//! `qpslab report` and `qpslab compare`: reports and comparisons from the results store.
//!
//! Both take runs (by id) or studies; this module only resolves those names against the store
//! into a [`ReportInput`] and writes what `qpslab-report` produces.

use crate::args::{CompareArgs, CompareFormat, DbArgs, ReportArgs, ReportFormat};
use crate::error::user;
use crate::render::table;
use anyhow::Result;
use qpslab_report::{build, model::points, Comparison, FactorDef, Format, ReportInput, Subject};
use qpslab_store::{CellStatus, RunId, Store};

fn open_store(db: &DbArgs) -> Result<Store> {
    crate::db::open_to_read(&db.db)
}

fn run_subject(store: &Store, id: &str) -> Result<Subject> {
    let id: i64 = id
        .parse()
        .map_err(|_| user(format!("'{id}' is not a run id")))?;
    let run = store.load_run(RunId(id)).map_err(|e| match e {
        qpslab_store::Error::RunNotFound(_) => user(format!(
            "no run {id} in the results store (see qpslab show)"
        )),
        e => e.into(),
    })?;
    if run.phases.is_empty() {
        return Err(user(format!("run {id} has no measured phase")));
    }
    Ok(Subject::lone(run))
}

/// The finished cells of `study` (only those of `variant` when given) as subjects, and the
/// study's factors.
fn study_subjects(
    store: &Store,
    study: &str,
    variant: Option<&str>,
) -> Result<(Vec<Subject>, Vec<FactorDef>)> {
    let record = store.study_by_name(study).map_err(|e| match e {
        qpslab_store::Error::StudyNotFound(_) => user(format!(
            "no run or study named '{study}' in the results store (see qpslab show, qpslab lab show)"
        )),
        e => e.into(),
    })?;
    let mut out = Vec::new();
    for rec in store.study_cells(record.id)? {
        if variant.is_some_and(|v| v != rec.cell.variant) {
            continue;
        }
        let (CellStatus::Done, Some(run_id)) = (rec.status, rec.run_id) else {
            continue;
        };
        let run = store.load_run(run_id)?;
        let mut cell = rec.cell;
        if variant.is_some() {
            cell.variant = format!("{study}/{}", cell.variant);
        }
        out.push(Subject { run, cell });
    }
    if out.is_empty() {
        return Err(user(match variant {
            Some(v) => format!("study '{study}' has no finished cell of variant '{v}'"),
            None => format!("study '{study}' has no finished cell yet"),
        }));
    }
    let factors = record
        .factors
        .into_iter()
        .map(|f| FactorDef {
            name: f.name,
            levels: f.levels,
        })
        .collect();
    Ok((out, factors))
}

fn is_run_id(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// Runs `qpslab report`.
pub fn report(a: ReportArgs) -> Result<()> {
    let store = open_store(&a.db)?;
    let mut input = ReportInput::default();
    let mut runs = Vec::new();
    for item in &a.items {
        if item.split(',').all(is_run_id) {
            input.subjects.extend(side(&store, item)?);
            runs.push(item.clone());
        } else {
            let (subjects, factors) = study_subjects(&store, item, None)?;
            input.subjects.extend(subjects);
            input.factors.extend(factors);
            input.studies.push(item.clone());
        }
    }
    input.title = match (input.studies.is_empty(), runs.is_empty()) {
        (false, true) => format!("Study {}", input.studies.join(", ")),
        (true, _) => format!(
            "Run{} {}",
            if runs.len() > 1 { "s" } else { "" },
            runs.join(", ")
        ),
        (false, false) => format!(
            "Study {} and runs {}",
            input.studies.join(", "),
            runs.join(", ")
        ),
    };
    let format = a.format.unwrap_or_else(|| {
        match a
            .out
            .as_ref()
            .and_then(|p| p.extension())
            .and_then(|e| e.to_str())
        {
            Some("md") => ReportFormat::Md,
            Some("json") => ReportFormat::Json,
            _ => ReportFormat::Html,
        }
    });
    let report = build(&input).map_err(report_error)?;
    let text = match format {
        ReportFormat::Html => Format::Html,
        ReportFormat::Md => Format::Markdown,
        ReportFormat::Json => Format::Json,
    }
    .renderer()
    .render(&report)?;
    match &a.out {
        Some(path) => {
            crate::outfile::write("--out", path, &text)?;
            eprintln!("report written to {}", path.display());
        }
        None => print!("{text}"),
    }
    if let Some(dir) = &a.png {
        let written =
            qpslab_report::png::write_pngs(&report.charts, dir).map_err(|e| user(e.to_string()))?;
        eprintln!("{} chart(s) written to {}", written.len(), dir.display());
    }
    for v in &report.verdicts {
        eprintln!("{v}");
    }
    for c in &report.comparisons {
        for w in &c.warnings {
            eprintln!("warning: {} vs {}: {w}", c.b, c.a);
        }
    }
    Ok(())
}

/// A report error as the CLI's: the user's own mistakes (exit 2) as user errors.
fn report_error(e: qpslab_report::Error) -> anyhow::Error {
    if e.is_user_error() {
        user(e.to_string())
    } else {
        e.into()
    }
}

/// A side of `compare`: a run id, repeats of one setup as comma-separated run ids
/// (`3,5,7`: their run-to-run variation then sets the interval), or STUDY/VARIANT.
fn side(store: &Store, spec: &str) -> Result<Vec<Subject>> {
    if spec.split(',').all(is_run_id) {
        let mut out = Vec::new();
        for (i, id) in spec.split(',').enumerate() {
            let mut s = run_subject(store, id)?;
            s.cell.variant = if spec.contains(',') {
                format!("runs {spec}")
            } else {
                format!("run {spec}")
            };
            s.cell.repeat = u32::try_from(i + 1).unwrap_or(u32::MAX);
            out.push(s);
        }
        return Ok(out);
    }
    let Some((study, variant)) = spec.split_once('/') else {
        return Err(user(format!(
            "'{spec}' is neither a run id nor STUDY/VARIANT"
        )));
    };
    Ok(study_subjects(store, study, Some(variant))?.0)
}

/// Runs `qpslab compare`.
pub fn compare(a: CompareArgs) -> Result<()> {
    let store = open_store(&a.db)?;
    let sa = side(&store, &a.a)?;
    let sb = side(&store, &a.b)?;
    let ia = ReportInput {
        subjects: sa,
        ..Default::default()
    };
    let ib = ReportInput {
        subjects: sb,
        ..Default::default()
    };
    let (pa, pb) = (points(&ia), points(&ib));
    let (na, nb) = (&ia.subjects[0].cell.variant, &ib.subjects[0].cell.variant);
    let c = qpslab_report::compare(na, &pa, nb, &pb).map_err(report_error)?;
    if c.points.is_empty() {
        return Err(user(format!(
            "{na} and {nb} share no measured setting (thread counts or swept settings differ)"
        )));
    }
    // The table shows its warnings itself; JSON and Markdown carry them, and stderr says them
    // too so a piped output does not hide them.
    if a.format != CompareFormat::Table {
        for w in &c.warnings {
            eprintln!("warning: {w}");
        }
    }
    match a.format {
        CompareFormat::Json => println!("{}", serde_json::to_string_pretty(&c)?),
        CompareFormat::Md => print!("{}", qpslab_report::comparison_markdown(&c)),
        CompareFormat::Table => print!("{}", terminal(&c)),
    }
    Ok(())
}

fn terminal(c: &Comparison) -> String {
    let mut out = String::new();
    for w in &c.warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    for p in &c.points {
        out.push_str(&format!("\n== {} ==\n", p.key));
        let header: Vec<String> = qpslab_report::metric_header(&c.a, &c.b)
            .map(String::from)
            .to_vec();
        let rows: Vec<Vec<String>> = p
            .metrics
            .iter()
            .map(|m| qpslab_report::metric_cells(m).to_vec())
            .collect();
        out.push_str(&table(&header, &rows));
    }
    out.push_str(&format!("\n{}\n", c.headline()));
    if c.differences.is_empty() {
        out.push_str("\nno configuration or environment differences\n");
    } else {
        out.push_str("\ndifferences:\n");
        let header: Vec<String> = ["setting", &c.a, &c.b].map(String::from).to_vec();
        let rows: Vec<Vec<String>> = c
            .differences
            .iter()
            .map(qpslab_report::difference_cells)
            .collect();
        out.push_str(&table(&header, &rows));
    }
    out
}
