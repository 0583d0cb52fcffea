//! `qpslab show [RUN]`: the stored runs, or one run's phases, as tables, JSON or CSV; `--hlog`
//! writes a run's histograms as an HdrHistogram interval log.

use crate::args::{Format, JsonPath, OutputArgs, ShowArgs, TableJsonCsv};
use crate::error::user;
use crate::out::Output;
use crate::render::{sweep_rows, table};
use anyhow::Result;
use qpslab_store::{RunId, Store};
use std::path::Path;

/// Runs `qpslab show`.
pub fn show(a: ShowArgs) -> Result<()> {
    if let Some(path) = a.hlog.as_deref().filter(|p| *p != Path::new("-")) {
        crate::outfile::check("--hlog", path, true)?;
    }
    let out = Output::new(&a.output, "show")?;
    let store = crate::db::open_to_read(&a.db.db)?;
    match (a.run, &a.hlog) {
        (Some(id), Some(path)) => hlog(&store, RunId(id), path),
        (Some(id), None) => out.emit(|f| match f {
            Format::Json => {
                let statuses = store.phase_statuses(RunId(id))?;
                crate::out::json(&qpslab_store::RunDoc::new(
                    load(&store, RunId(id))?,
                    statuses,
                ))
            }
            Format::Csv => csv(&store, &[RunId(id)]),
            _ => one(&store, RunId(id)).map(|()| String::new()),
        }),
        (None, _) => {
            let runs = store.list_runs(a.limit)?;
            out.emit(|f| match f {
                Format::Json => crate::out::json(&runs),
                Format::Csv => csv(&store, &runs.iter().map(|r| r.id).collect::<Vec<_>>()),
                _ => Ok(list(&store, &runs)),
            })
        }
    }
}

/// Writes the stored run `id` as `command`'s output flags `a` ask (the table was printed while
/// it ran).
pub fn emit_run(
    a: &OutputArgs<TableJsonCsv, JsonPath>,
    command: &'static str,
    store: &Store,
    id: RunId,
) -> Result<()> {
    let out = Output::new(a, command)?;
    out.emit(|f| match f {
        Format::Json => crate::out::json(&store.run_doc(id)?),
        Format::Csv => csv(store, &[id]),
        _ => Ok(String::new()),
    })
}

/// Run `id`, or the user's error naming the runs there are.
fn load(store: &Store, id: RunId) -> Result<qpslab_store::StoredRun> {
    store.load_run(id).map_err(|e| match e {
        qpslab_store::Error::RunNotFound(..) => user(format!(
            "no run {} in {} (see: qpslab show)",
            id.0,
            store.path().display()
        )),
        e => e.into(),
    })
}

/// Writes run `id`'s histograms to `path` as an HdrHistogram interval log.
fn hlog(store: &Store, id: RunId, path: &Path) -> Result<()> {
    let run = load(store, id)?;
    let mut text = Vec::new();
    let lines = qpslab_store::write_hlog(&mut text, &run)?;
    if lines == 0 {
        return Err(user(format!(
            "run {} stored no latency histogram (an interrupted phase keeps none)",
            id.0
        )));
    }
    crate::outfile::write("--hlog", path, &text)?;
    crate::outfile::tell(&format!("{lines} histogram(s) of run {}", id.0), path);
    Ok(())
}

/// Every phase of `runs` as CSV.
fn csv(store: &Store, runs: &[RunId]) -> Result<String> {
    let mut rows = Vec::new();
    for id in runs {
        let run = load(store, *id)?;
        rows.extend(qpslab_store::phase_rows(&run, &store.phase_statuses(*id)?));
    }
    crate::out::csv(qpslab_store::PHASE_CSV_HEADER, rows)
}

/// The table of `runs`.
fn list(store: &Store, runs: &[qpslab_store::RunSummary]) -> String {
    if runs.is_empty() {
        return format!("no runs stored in {}\n", store.path().display());
    }
    let header: Vec<String> = [
        "run", "started", "status", "workload", "phases", "best tps", "best qps", "server",
        "target",
    ]
    .map(String::from)
    .to_vec();
    // Runs of several hosts (imported from their stores): each run's host.
    let ids: Vec<RunId> = runs.iter().map(|r| r.id).collect();
    let hosts = store.run_hosts(&ids).ok().and_then(crate::hosts::column);
    let mut header = header;
    if hosts.is_some() {
        header.push("host".into());
    }
    let rows: Vec<Vec<String>> = runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let host = hosts.as_ref().map(|h| h[i].clone());
            vec![
                r.id.0.to_string(),
                format_time(r.started_at),
                r.status.as_str().to_string(),
                r.workload.clone(),
                r.phases.to_string(),
                format!("{:.1}", r.best_tps),
                format!("{:.1}", r.best_qps),
                r.server_version.clone(),
                r.target.clone(),
            ]
            .into_iter()
            .chain(host)
            .collect()
        })
        .collect();
    table(&header, &rows)
}

/// Prints run `id` as text.
fn one(store: &Store, id: RunId) -> Result<()> {
    let run = load(store, id)?;
    let m = &run.meta;
    println!(
        "run {} · {} · {}",
        id.0,
        m.plan.workload_name(),
        run.status.as_str()
    );
    println!("  started   {}", format_time(m.started_at));
    println!("  target    {}", m.target);
    if m.plan.fileio.is_none() {
        println!(
            "  server    {} ({})",
            m.server.version, m.server.version_comment
        );
    }
    println!(
        "  host      {} · {} CPUs · {:.1} GiB · kernel {}",
        m.host.cpu_model,
        m.host.cores,
        m.host.memory_bytes as f64 / (1u64 << 30) as f64,
        m.host.kernel
    );
    println!("  command   {}", m.command);
    if !m.plan.labels.is_empty() || m.plan.series.is_some() {
        let labels: Vec<String> = m
            .plan
            .labels
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let series = m.plan.series.as_deref().map(|s| format!(" (series {s})"));
        println!(
            "  labels    {}{}",
            labels.join(", "),
            series.unwrap_or_default()
        );
    }
    if let Some(r) = &m.plan.replay {
        println!("  replay    {}", crate::render::replay::plan_line(r));
    }
    for (p, status) in run.phases.iter().zip(store.phase_statuses(id)?) {
        if status != "done" {
            let word = if status == "running" {
                "running for"
            } else {
                "interrupted after"
            };
            println!(
                "  phase {} ({} thread(s)) {word} {:.1} s: figures from its {} stored interval(s), \
                 no percentiles",
                p.seq,
                p.result.threads,
                p.result.duration_s,
                p.result.samples.len()
            );
        }
    }
    println!();
    let phases: Vec<_> = run.phases.iter().map(|p| p.result.clone()).collect();
    print!("{}", phases_table(&m.plan.percentiles, &phases));
    for p in &phases {
        let limits = crate::render::run::limits_text(p.limits.as_ref(), "    ");
        if !limits.is_empty() {
            println!("\n  phase of {} thread(s):", p.threads);
            print!("{limits}");
        }
        print!("{}", crate::render::replay::classes(p));
        if p.io.is_some() {
            print!("\n{}", crate::render::io::io_summary(p));
        }
        let tpcc = crate::render::tpcc_section(p);
        if !tpcc.is_empty() {
            println!("\n  phase of {} thread(s):", p.threads);
            print!("{tpcc}");
        }
        if !p.actions.is_empty() {
            println!("\n  phase of {} thread(s):", p.threads);
            print!("{}", crate::render::live::actions_table(&p.actions));
        }
    }
    Ok(())
}

/// The sweep table with each phase's stability verdict as its last column (`-` for a phase of
/// a run stored before phases were judged).
fn phases_table(percentiles: &[f64], phases: &[qpslab_core::PhaseResult]) -> String {
    let (mut header, mut rows) = sweep_rows(percentiles, phases);
    header.push("stability".into());
    for (row, p) in rows.iter_mut().zip(phases) {
        row.push(p.stability.as_ref().map_or("-".into(), |s| s.to_string()));
    }
    table(&header, &rows)
}

/// `2026-11-22 10:18:23 UTC` from Unix seconds.
fn format_time(unix: f64) -> String {
    qpslab_store::iso8601_utc(unix)
        .replace('T', " ")
        .replace('Z', " UTC")
}

#[cfg(test)]
mod tests {
    #[test]
    fn formats_unix_time() {
        assert_eq!(super::format_time(0.0), "1970-01-01 00:00:00 UTC");
        assert_eq!(
            super::format_time(1_795_342_703.0),
            "2026-11-22 10:18:23 UTC"
        );
    }
}
