//! A results store with runs written through the store's own API (no server): what the tests
//! of issue 45 import, merge, report and export.

use qpslab_core::latency::{new_histogram, summarize};
use qpslab_core::result::{HistogramBlob, PhaseResult, Sample};
use qpslab_core::shard::ShardSpec;
use qpslab_core::{RunPlan, WorkloadKind, WorkloadOptions};
use qpslab_store::{RunMeta, RunStatus, Store};
use std::path::Path;

/// A V2 blob of `h`.
fn blob(name: &str, h: &hdrhistogram::Histogram<u64>) -> HistogramBlob {
    use hdrhistogram::serialization::{Serializer, V2Serializer};
    let mut v2 = Vec::new();
    V2Serializer::new().serialize(h, &mut v2).unwrap();
    HistogramBlob {
        name: name.into(),
        v2,
    }
}

/// A phase of `threads` sessions: 6 intervals of 100 events of 1 to 2 ms each, their
/// histograms and summaries as the engine writes them.
pub fn phase(threads: u32) -> PhaseResult {
    let mut total = new_histogram();
    let samples: Vec<Sample> = (0..6)
        .map(|i| {
            let mut h = new_histogram();
            for k in 0..100u64 {
                h.record(1000 + k * 10).unwrap();
            }
            total.add(&h).unwrap();
            Sample {
                elapsed_s: f64::from(i + 1),
                interval_s: 1.0,
                events: 100,
                latency: summarize(&h, &[95.0, 99.0]),
                histogram: Some(blob("event", &h)),
                ..Default::default()
            }
        })
        .collect();
    PhaseResult {
        threads,
        duration_s: 6.0,
        events: 600,
        latency: summarize(&total, &[95.0, 99.0]),
        histograms: vec![blob("event", &total)],
        samples,
        ..Default::default()
    }
}

/// Stores a completed run of one phase in the store at `db`; `shard` makes it shard
/// `(index, count)` of group `g`.
pub fn run_in(db: &Path, shard: Option<(u32, u32)>) {
    let mut plan = RunPlan::new(WorkloadOptions::new(WorkloadKind::OltpPointSelect));
    plan.threads = vec![4];
    plan.shard = shard.map(|(index, count)| ShardSpec {
        index: Some(index),
        count: Some(count),
        group: Some("g".into()),
        run_seed: Some(1),
        timeout_s: None,
    });
    let meta = RunMeta::new(
        plan,
        "root@localhost/sbtest".into(),
        Default::default(),
        Default::default(),
        "qpslab run oltp_point_select".into(),
    );
    let mut store = Store::open(db).unwrap();
    store.record_phase(&meta, &phase(4), &[]).unwrap();
    store.finish_run(&meta.uuid, RunStatus::Completed).unwrap();
}
