//! The report as data: its context, what changed, one verdict per comparison, comparisons, best-of,
//! factor effects, per-point results and charts. Renderers only lay it out.

use crate::charts::{self, Chart};
use crate::compare::{self, group_estimate, Comparison, Sequential};
use crate::context::{self, Context};
use crate::effects::{self, Effect};
use crate::error::Error;
use crate::metrics::{self, Metric};
use crate::model::{self, Point, ReportInput};
use crate::setup;
use qpslab_core::Stability;
use serde::{Deserialize, Serialize};

/// A variant's best throughput over every combination of the swept settings whose phases were
/// all judged stable (or not judged): a setting with an unstable phase is never the best.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BestRow {
    /// The variant.
    pub variant: String,
    /// The settings that gave it; empty when no setting of the variant was stable.
    pub key: String,
    /// Transactions per second (mean over repeats of each run's phase value).
    pub tps: f64,
    /// Queries per second.
    pub qps: f64,
    /// p99 latency at that point, ms: each run's phase p99 (from its histogram), mean over
    /// repeats.
    pub p99_ms: Option<f64>,
    /// File I/O: MiB/s read and written, mean over repeats (none: not file I/O).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mib_s: Option<f64>,
}

/// One measured phase's headline numbers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResultRow {
    /// The variant.
    pub variant: String,
    /// Its swept settings.
    pub key: String,
    /// Repeat number.
    pub repeat: u32,
    /// The stored run.
    pub run_id: i64,
    /// Transactions per second.
    pub tps: f64,
    /// Queries per second.
    pub qps: f64,
    /// File I/O: MiB/s read and written (none: not file I/O).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mib_s: Option<f64>,
    /// Median latency, ms (from the phase's histogram, as every latency figure).
    #[serde(default)]
    pub p50_ms: Option<f64>,
    /// p95 latency, ms.
    pub p95_ms: Option<f64>,
    /// p99 latency, ms.
    pub p99_ms: Option<f64>,
    /// The largest latency, ms.
    #[serde(default)]
    pub max_ms: Option<f64>,
    /// Server CPU in percent of one core (user + system).
    pub server_cpu_pct: Option<f64>,
    /// Client CPU in percent of one core (user + system).
    pub client_cpu_pct: Option<f64>,
    /// The phase's stability verdict (`None`: not judged).
    pub stability: Option<Stability>,
    /// What limited the phase, as stored with it (`None`: stored before verdicts were kept,
    /// or not a load).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<qpslab_core::limits::Limits>,
}

/// Everything a renderer lays out.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Title.
    pub title: String,
    /// Studies covered.
    pub studies: Vec<String>,
    /// Runs covered.
    pub runs: Vec<i64>,
    /// Variants in order; the first is every comparison's baseline.
    pub variants: Vec<String>,
    /// What ran, on what, how the client was placed, and who ran it when.
    pub context: Context,
    /// What the study changed, one line each.
    pub what_changed: Vec<String>,
    /// One line per comparison.
    pub verdicts: Vec<String>,
    /// Each variant against the baseline.
    pub comparisons: Vec<Comparison>,
    /// Each variant's best result.
    pub best_of: Vec<BestRow>,
    /// Factor effects (factorial studies).
    pub effects: Vec<Effect>,
    /// Every measured point.
    pub results: Vec<ResultRow>,
    /// The live actions (`run --at`) of the points, with their judgments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<crate::live::ActionRow>,
    /// TPC-C's figures and consistency check of the points that ran it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tpcc: Vec<crate::tpcc::TpccRow>,
    /// Charts (SVG; not part of the JSON form).
    pub charts: Vec<Chart>,
}

/// Builds the report of `input`; refuses one that puts runs of different workloads side by side
/// (the same swept settings measured with different workloads). Rounds are compared with the
/// default precision and a fixed number of rounds; [`build_with`] takes a study's own.
pub fn build(input: &ReportInput) -> Result<Report, Error> {
    build_with(input, &Sequential::default())
}

/// [`build`], comparing rounds as `seq` says: the precision a study asked and, for a study that
/// ran rounds until precise, its anytime-valid interval (a fixed-n interval of such a study would
/// be too narrow for its having stopped on what it saw).
pub fn build_with(input: &ReportInput, seq: &Sequential) -> Result<Report, Error> {
    let points = model::points(input);
    setup::check_same_workload(&points)?;
    let variants = model::variants(input);
    let of = |v: &str| -> Vec<Point<'_>> {
        points
            .iter()
            .filter(|p| p.subject.cell.variant == v)
            .copied()
            .collect()
    };
    let comparisons: Vec<Comparison> = match variants.split_first() {
        Some((base, rest)) => rest
            .iter()
            .map(|v| compare::compare_with(base, &of(base), v, &of(v), seq))
            .collect::<Result<_, _>>()?,
        None => Vec::new(),
    };
    let mut runs: Vec<i64> = input.subjects.iter().map(|s| s.run.id.0).collect();
    runs.dedup();
    Ok(Report {
        title: input.title.clone(),
        studies: input.studies.clone(),
        runs,
        context: context::context(input, &variants),
        what_changed: what_changed(input, &variants, &points, &comparisons),
        verdicts: comparisons.iter().map(Comparison::headline).collect(),
        best_of: variants.iter().filter_map(|v| best(v, &of(v))).collect(),
        effects: effects::effects(&input.factors, &points),
        results: points.iter().map(result_row).collect(),
        actions: crate::live::action_rows(&points),
        tpcc: crate::tpcc::tpcc_rows(&points),
        charts: charts::charts(&variants, &points, &comparisons),
        comparisons,
        variants,
    })
}

fn what_changed(
    input: &ReportInput,
    variants: &[String],
    points: &[Point<'_>],
    comparisons: &[Comparison],
) -> Vec<String> {
    let mut out = Vec::new();
    for f in &input.factors {
        out.push(format!("factor {}: {}", f.name, f.levels.join(" / ")));
    }
    if variants.len() > 1 {
        out.push(format!(
            "variants: {} (baseline: {})",
            variants.join(", "),
            variants[0]
        ));
    }
    let mut keys: Vec<String> = points.iter().map(Point::key).collect();
    keys.sort_by_key(|k| (k.len(), k.clone()));
    keys.dedup();
    out.push(format!("measured at: {}", keys.join("; ")));
    for c in comparisons {
        // What the spec set differently, first: the change itself (a CPU set, an allocator...
        // shows in no server variable).
        let setup = |name: &str| input.setups.iter().find(|s| s.name == name);
        let stated: Vec<String> = match (setup(&c.a), setup(&c.b)) {
            (Some(a), Some(b)) => crate::spec_setups::changed(a, b),
            _ => Vec::new(),
        };
        let shown: Vec<String> = c
            .differences
            .iter()
            .filter(|d| !d.name.starts_with("factor."))
            .take(6)
            .map(|d| format!("{} {} → {}", d.name, or_dash(&d.a), or_dash(&d.b)))
            .collect();
        let measured = c
            .differences
            .iter()
            .filter(|d| !d.name.starts_with("factor."))
            .count();
        let more = measured.saturating_sub(shown.len());
        let tail = if more > 0 {
            format!(" (+{more} more)")
        } else {
            String::new()
        };
        let line = match (stated.is_empty(), shown.is_empty()) {
            (true, true) => "same configuration and environment".to_string(),
            (true, false) => format!("{}{tail}", shown.join(", ")),
            (false, true) => format!("as set: {}", stated.join(", ")),
            (false, false) => format!(
                "as set: {}; on the server: {}{tail}",
                stated.join(", "),
                shown.join(", ")
            ),
        };
        out.push(format!("{} vs {}: {line}", c.b, c.a));
    }
    out
}

fn or_dash(s: &str) -> &str {
    if s.is_empty() {
        "–"
    } else {
        s
    }
}

/// The variant's best throughput among its settings whose phases are all stable (or not
/// judged); a row with an empty key when it measured some but none was stable.
fn best(variant: &str, ps: &[Point<'_>]) -> Option<BestRow> {
    let unstable = |p: &Point<'_>| {
        p.phase
            .result
            .stability
            .as_ref()
            .is_some_and(|s| !s.is_stable())
    };
    let groups = compare::by_key(ps);
    if groups.is_empty() {
        return None;
    }
    let best = groups
        .into_iter()
        .filter(|(_, g)| !g.iter().any(unstable))
        .filter_map(|(key, g)| {
            let tps = group_estimate(Metric::Tps, &g)?.mean;
            let mib: Vec<f64> = g.iter().filter_map(mib_s).collect();
            Some(BestRow {
                variant: variant.to_string(),
                key,
                tps,
                qps: group_estimate(Metric::Qps, &g).map_or(0.0, |e| e.mean),
                p99_ms: group_estimate(Metric::P99, &g).map(|e| e.mean),
                mib_s: (!mib.is_empty()).then(|| mib.iter().sum::<f64>() / mib.len() as f64),
            })
        })
        .max_by(|a, b| a.tps.total_cmp(&b.tps));
    Some(best.unwrap_or_else(|| BestRow {
        variant: variant.to_string(),
        key: String::new(),
        tps: 0.0,
        qps: 0.0,
        p99_ms: None,
        mib_s: None,
    }))
}

/// A file I/O phase's MiB/s, read and written.
fn mib_s(p: &Point<'_>) -> Option<f64> {
    let io = p.phase.result.io.as_ref()?;
    Some(io.read_mib_s + io.write_mib_s)
}

fn result_row(p: &Point<'_>) -> ResultRow {
    let ph = &p.phase.result;
    let pct = |c: metrics::CpuRate| 100.0 * (c.user + c.sys);
    ResultRow {
        variant: p.subject.cell.variant.clone(),
        key: p.key(),
        repeat: p.subject.cell.repeat,
        run_id: p.subject.run.id.0,
        tps: ph.tps(),
        qps: ph.qps(),
        mib_s: mib_s(p),
        p50_ms: Metric::P50.phase_value(p),
        p95_ms: Metric::P95.phase_value(p),
        p99_ms: Metric::P99.phase_value(p),
        max_ms: ph.max_ms(),
        server_cpu_pct: metrics::server_cpu(p).map(pct),
        client_cpu_pct: metrics::client_cpu(ph).map(pct),
        stability: ph.stability.clone(),
        limits: ph.limits.clone(),
    }
}

#[cfg(test)]
#[path = "report_tests.rs"]
mod tests;
