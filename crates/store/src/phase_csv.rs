//! Stored phases as one CSV table (`qpslab show --format csv`): one row per phase, the same
//! columns for every run whatever percentiles it was asked for, each latency figure as
//! [`PhaseResult::percentile_ms`] gives it (from the phase's histogram). Written by the one CSV
//! writer, [`crate::write_csv`].

use crate::export::iso8601_utc;
use crate::model::StoredRun;
use qpslab_core::result::PhaseResult;

/// The percentiles every row carries, whatever the run summarized.
pub const CSV_PERCENTILES: [f64; 4] = [50.0, 95.0, 99.0, 99.9];

/// The header of [`phase_rows`].
pub const PHASE_CSV_HEADER: &[&str] = &[
    "run_id",
    "started_utc",
    "run_status",
    "workload",
    "study",
    "cell",
    "phase",
    "phase_status",
    "threads",
    "duration_s",
    "events",
    "tps",
    "qps",
    "reads",
    "writes",
    "other",
    "errors",
    "reconnects",
    "lat_min_ms",
    "lat_avg_ms",
    "p50_ms",
    "p95_ms",
    "p99_ms",
    "p99.9_ms",
    "lat_max_ms",
    "client_us_per_query",
    "stability",
    "server_version",
    "target",
];

/// One row per phase of `run`, in [`PHASE_CSV_HEADER`]'s columns; `statuses` are its phases'
/// statuses in order. A figure the phase does not have (an interrupted phase's percentiles) is
/// an empty field.
pub fn phase_rows(run: &StoredRun, statuses: &[String]) -> Vec<Vec<String>> {
    let m = &run.meta;
    run.phases
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let r = &p.result;
            let mut row = vec![
                run.id.0.to_string(),
                iso8601_utc(m.started_at),
                run.status.as_str().to_string(),
                m.plan.workload_name(),
                m.study_id.clone().unwrap_or_default(),
                m.cell_label.clone().unwrap_or_default(),
                p.seq.to_string(),
                statuses.get(i).cloned().unwrap_or_default(),
                r.threads.to_string(),
                format!("{:.3}", r.duration_s),
                r.events.to_string(),
                format!("{:.3}", r.tps()),
                format!("{:.3}", r.qps()),
                r.queries.read.to_string(),
                r.queries.write.to_string(),
                r.queries.other.to_string(),
                r.error_total().to_string(),
                r.reconnects.to_string(),
            ];
            row.extend(latency_fields(r));
            row.push(opt(r.client_cpu_us_per_query()));
            row.push(
                r.stability
                    .as_ref()
                    .map_or_else(String::new, |s| s.to_string()),
            );
            row.push(m.server.version.clone());
            row.push(m.target.clone());
            row
        })
        .collect()
}

/// min, avg, the [`CSV_PERCENTILES`] and max, in ms; empty where the phase has none.
fn latency_fields(r: &PhaseResult) -> Vec<String> {
    let any = r.max_ms().is_some();
    let mut out = vec![
        opt(any.then_some(r.latency.min_ms)),
        opt(any.then_some(r.latency.avg_ms)),
    ];
    out.extend(CSV_PERCENTILES.iter().map(|p| opt(r.percentile_ms(*p))));
    out.push(opt(r.max_ms()));
    out
}

/// A number in its shortest exact form (a latency from a microsecond histogram is exact in
/// ms to three places), empty for none.
fn opt(v: Option<f64>) -> String {
    v.map_or_else(String::new, |v| v.to_string())
}
