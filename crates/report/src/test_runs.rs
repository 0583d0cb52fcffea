//! Runs built in memory for the comparison tests: one phase each, a fixed noise pattern.

use crate::compare::{Comparison, MetricComparison};
use crate::model::{ReportInput, Subject};
use qpslab_core::result::{PhaseResult, Sample};
use qpslab_core::{RunPlan, WorkloadKind, WorkloadOptions};
use qpslab_store::{RunId, RunMeta, RunStatus, StoredPhase, StoredRun};

pub(crate) const RO: WorkloadKind = WorkloadKind::OltpReadOnly;

/// A run of `kind` whose single phase (4 threads) ran `tps` per second, with per-interval noise
/// of ±`noise` (a fixed alternating pattern, so nothing here is random).
pub(crate) fn run(id: i64, kind: WorkloadKind, tps: f64, noise: f64) -> StoredRun {
    let samples: Vec<Sample> = (0..20)
        .map(|i| Sample {
            elapsed_s: (i + 1) as f64,
            interval_s: 1.0,
            events: (tps * (1.0 + noise * [1.0, -1.0, 0.5, -0.5][i % 4])).round() as u64,
            ..Default::default()
        })
        .collect();
    let events = samples.iter().map(|s| s.events).sum();
    let mut plan = RunPlan::new(WorkloadOptions::new(kind));
    plan.threads = vec![4];
    StoredRun {
        id: RunId(id),
        meta: RunMeta {
            uuid: format!("run-{id}"),
            started_at: 0.0,
            command: String::new(),
            plan,
            target: String::new(),
            server: Default::default(),
            host: Default::default(),
            tool_version: String::new(),
            study_id: None,
            cell_label: None,
        },
        status: RunStatus::Completed,
        finished_at: None,
        phases: vec![StoredPhase {
            seq: 1,
            recorded_at: 0.0,
            result: PhaseResult {
                threads: 4,
                duration_s: 20.0,
                events,
                samples,
                ..Default::default()
            },
            telemetry: Vec::new(),
        }],
    }
}

pub(crate) fn side(name: &str, runs: Vec<StoredRun>) -> ReportInput {
    ReportInput {
        subjects: runs
            .into_iter()
            .enumerate()
            .map(|(i, r)| {
                let mut s = Subject::lone(r);
                s.cell.variant = name.into();
                s.cell.repeat = i as u32 + 1;
                s
            })
            .collect(),
        ..Default::default()
    }
}

pub(crate) fn tps(c: &Comparison) -> &MetricComparison {
    c.points[0].tps().unwrap()
}
