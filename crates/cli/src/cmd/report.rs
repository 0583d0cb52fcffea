//! `qpslab report` and `qpslab compare`: reports and comparisons from the results store.
//!
//! Both take runs (by id) or studies; `qpslab_report::subjects` resolves those names against
//! the store into a [`ReportInput`], and this module writes what `qpslab-report` produces.

use crate::args::Format::{Html, Json, Md, Table};
use crate::args::{CompareArgs, DbArgs, ReportArgs};
use crate::error::{fail, user};
use crate::out::Output;
use crate::render::table;
use anyhow::Result;
use qpslab_report::{build_with, model::points, Comparison, ReportInput, Sequential};
use qpslab_store::Store;

fn open_store(db: &DbArgs) -> Result<Store> {
    crate::db::open_to_read(&db.db)
}

/// Runs `qpslab report`.
pub fn report(a: ReportArgs) -> Result<()> {
    let by_extension = match a.out.as_ref().and_then(|p| p.extension()) {
        Some(e) if e == "md" => Md,
        Some(e) if e == "json" => Json,
        _ => Html,
    };
    let out = Output::with_default(&a.output, "report", Some(by_extension))?;
    let store = open_store(&a.db)?;
    if a.history {
        return history_report(&a, &out, &store);
    }
    let input = qpslab_report::report_input(&store, &a.items).map_err(fail)?;
    refuse_mixed_workloads(&input)?;
    // A study's comparisons take its stop rule: the precision it asked, and for a study that ran
    // rounds until precise the anytime-valid interval `lab run` decided on.
    let item = a.items.first().map_or("", String::as_str);
    let report = build_with(&input, &sequential(&store, [item, item])).map_err(fail)?;
    out.emit_to(a.out.as_deref(), |f| {
        // With --png DIR the Markdown shows the charts written there, linked as DIR/ID.png.
        if let (Md, Some(dir)) = (f, a.png.as_ref().and_then(|d| d.to_str())) {
            let md = qpslab_report::MarkdownWithCharts { dir };
            return Ok(qpslab_report::Renderer::render(&md, &report)?);
        }
        let format = match f {
            Md => qpslab_report::Format::Markdown,
            Json => qpslab_report::Format::Json,
            _ => qpslab_report::Format::Html,
        };
        Ok(format.renderer().render(&report)?)
    })?;
    if let Some(path) = &a.out {
        crate::outfile::tell("report", path);
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

/// `report --history SERIES...`: the series drawn (HTML), or their history in Markdown or
/// JSON as `qpslab history` gives it; `--png DIR` writes each series' chart.
fn history_report(a: &ReportArgs, out: &Output, store: &Store) -> Result<()> {
    use qpslab_report::history::{chart, history, render, Query};
    let h = history(store, &Query::new(a.items.clone())).map_err(fail)?;
    out.emit_to(a.out.as_deref(), |f| match f {
        Md => Ok(render::markdown(&h, None)),
        Json => Ok(render::json(&h, None)?),
        _ => Ok(chart::html(&h)),
    })?;
    if let Some(path) = &a.out {
        crate::outfile::tell("report", path);
    }
    if let Some(dir) = &a.png {
        let written = qpslab_report::png::write_pngs(&chart::charts(&h), dir)
            .map_err(|e| user(e.to_string()))?;
        eprintln!("{} chart(s) written to {}", written.len(), dir.display());
    }
    Ok(())
}

/// Refuses lone runs of different workloads in one report: their charts and tables would set
/// side by side figures that measure different things, at whatever thread counts each ran
/// (the library refuses such points only where their swept settings meet).
fn refuse_mixed_workloads(input: &ReportInput) -> Result<()> {
    // A lone run is its own variant, `run N` (`Subject::lone`).
    let lone = input
        .subjects
        .iter()
        .filter(|s| s.cell.variant == format!("run {}", s.run.id.0));
    let mut first: Option<(String, String)> = None;
    for s in lone {
        let w = s.run.meta.plan.workload_name();
        match &first {
            None => first = Some((s.run.id.0.to_string(), w)),
            Some((id, fw)) if *fw != w => {
                return Err(user(format!(
                    "runs {id} ({fw}) and {} ({w}) measured different workloads: report runs of one workload",
                    s.run.id.0
                )))
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// Runs `qpslab compare`.
pub fn compare(a: CompareArgs) -> Result<()> {
    let out = Output::new(&a.output, "compare")?;
    let store = open_store(&a.db)?;
    let sa = qpslab_report::side(&store, &a.a).map_err(fail)?;
    let sb = qpslab_report::side(&store, &a.b).map_err(fail)?;
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
    let seq = sequential(&store, [&a.a, &a.b]);
    let mut c = qpslab_report::compare_with(na, &pa, nb, &pb, &seq).map_err(fail)?;
    let ha: Vec<_> = ia.subjects.iter().map(|s| &s.run.meta.host).collect();
    let hb: Vec<_> = ib.subjects.iter().map(|s| &s.run.meta.host).collect();
    if let Some(line) = crate::hosts::sides_differ(na, &ha, nb, &hb) {
        c.warnings.insert(0, line);
    }
    if c.points.is_empty() {
        return Err(user(format!(
            "{na} and {nb} share no measured setting (thread counts or swept settings differ)"
        )));
    }
    // The table shows its warnings itself; JSON and Markdown carry them, and stderr says them
    // too so a piped output does not hide them.
    if out.format() != Table {
        for w in &c.warnings {
            eprintln!("warning: {w}");
        }
    }
    out.emit(|f| match f {
        Json => crate::out::json(&c),
        Md => Ok(qpslab_report::comparison_markdown(&c)),
        _ => Ok(terminal(&c)),
    })
}

/// The precision and rounds of the study an item (`STUDY` or `STUDY/VARIANT`) names, read
/// from its stored spec; the defaults for runs compared by id.
pub fn sequential(store: &Store, items: [&str; 2]) -> Sequential {
    items
        .iter()
        .filter_map(|item| {
            let name = item.split('/').next()?;
            let s = store.study_by_name(name).ok()?;
            let rule = qpslab_lab::study::spec::parse(&s.name, &s.spec_toml)
                .ok()?
                .stop_rule()
                .ok()?;
            Some(rule.sequential())
        })
        .next()
        .unwrap_or_default()
}

fn terminal(c: &Comparison) -> String {
    let mut out = String::new();
    // The answer first: the warnings are counted here and listed after it.
    if !c.warnings.is_empty() {
        out.push_str(&format!(
            "{} warning(s), listed after the answer\n",
            c.warnings.len()
        ));
    }
    for p in &c.points {
        out.push_str(&format!("\n== {} ==\n", p.key));
        let header: Vec<String> = qpslab_report::metric_header(&c.a, &c.b)
            .map(String::from)
            .to_vec();
        let rows = qpslab_report::compared_rows(&p.metrics, c.io);
        out.push_str(&table(&header, &rows));
        out.push_str("what limited each side:\n");
        for l in qpslab_report::limits_sides_lines(c, p) {
            out.push_str(&format!("  {l}\n"));
        }
    }
    out.push_str(&format!("\n{}\n", c.headline()));
    if !c.warnings.is_empty() {
        out.push('\n');
        for w in &c.warnings {
            out.push_str(&format!("warning: {w}\n"));
        }
    }
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
