//! Golden files of `qpslab report --format md|json` and `qpslab compare --format json|md` on a
//! store written with fixed runs (no server: the numbers must not move between test runs).
//! Regenerate with `UPDATE_GOLDEN=1 cargo test -p qpslab --test report_golden` and review the diff.

mod common;
use common::*;
use qpslab_core::client::ClientLoops;
use qpslab_core::result::{
    HistogramBlob, LatencySummary, Percentile, PhaseResult, QueryCounts, Sample,
};
use qpslab_core::telemetry::{ProcUsage, Reading, StatusCounts, Tick, TickChange};
use qpslab_core::{Instability, Stability};
use qpslab_core::{RunPlan, WorkloadKind, WorkloadOptions};
use qpslab_store::{RunMeta, RunStatus, Store, TelemetrySample};

/// A deterministic wobble in [-1, 1] so series have noise but never change.
fn wobble(i: usize, k: usize) -> f64 {
    (((i * 7919 + k * 104_729) % 1000) as f64 / 500.0) - 1.0
}

/// An event histogram of `n` latencies spread from 0.1 ms to `p99` ms and a tail to twice it.
fn histogram(n: u64, p99: f64) -> HistogramBlob {
    use hdrhistogram::serialization::{Serializer, V2Serializer};
    let mut h = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).unwrap();
    for i in 0..n {
        let f = i as f64 / n as f64;
        let ms = if f < 0.99 {
            0.1 + (p99 - 0.1) * f / 0.99
        } else {
            p99 * (1.0 + (f - 0.99) * 100.0)
        };
        h.record((ms * 1000.0) as u64).unwrap();
    }
    let mut v2 = Vec::new();
    V2Serializer::new().serialize(&h, &mut v2).unwrap();
    HistogramBlob {
        name: "event".into(),
        v2,
    }
}

fn phase(threads: u32, tps: f64, p99: f64, k: usize) -> PhaseResult {
    let samples: Vec<Sample> = (0..12)
        .map(|i| {
            let events = (tps * 0.5 * (1.0 + 0.04 * wobble(i, k))).round() as u64;
            Sample {
                elapsed_s: 0.5 * (i + 1) as f64,
                interval_s: 0.5,
                events,
                queries: QueryCounts {
                    read: events * 10,
                    write: 0,
                    other: events * 2,
                },
                latency: LatencySummary {
                    count: events,
                    min_ms: 0.1,
                    avg_ms: p99 / 3.0,
                    max_ms: p99 * 2.0,
                    percentiles: vec![
                        Percentile {
                            p: 95.0,
                            ms: p99 * 0.7 * (1.0 + 0.05 * wobble(i, k + 1)),
                        },
                        Percentile {
                            p: 99.0,
                            ms: p99 * (1.0 + 0.05 * wobble(i, k + 2)),
                        },
                    ],
                },
                ..Default::default()
            }
        })
        .collect();
    let events: u64 = samples.iter().map(|s| s.events).sum();
    PhaseResult {
        threads,
        duration_s: 6.0,
        events,
        queries: QueryCounts {
            read: events * 10,
            write: 0,
            other: events * 2,
        },
        latency: LatencySummary {
            count: events,
            min_ms: 0.1,
            avg_ms: p99 / 3.0,
            max_ms: p99 * 2.0,
            percentiles: vec![
                Percentile {
                    p: 95.0,
                    ms: p99 * 0.7,
                },
                Percentile { p: 99.0, ms: p99 },
            ],
        },
        samples,
        client_cpu: qpslab_core::result::CpuUsage {
            user_s: 0.6 * threads as f64,
            sys_s: 1.2,
            max_rss_kib: 9000,
        },
        ..Default::default()
    }
}

/// `p` as the current engine and probe store a phase: with its event histogram, where its
/// event loops ran and how busy they were, and its stability verdict (the 4-session phases
/// client-bound: busy 120% is past the limit).
fn measured(mut p: PhaseResult, p99: f64) -> PhaseResult {
    p.histograms = vec![histogram(2000, p99)];
    p.client = Some(ClientLoops {
        cpus: vec![0, 1],
        pinned: false,
        shares_server: Some(true),
        chosen_by: "one per CPU".into(),
        busy: vec![0.3 * p.threads as f64; p.threads.min(2) as usize],
        waited: Vec::new(),
    });
    p.stability = Some(Stability {
        reasons: if p.threads >= 4 {
            vec![Instability::ClientBound {
                saturated: 2,
                loops: 2,
                busiest: 1.2,
            }]
        } else {
            Vec::new()
        },
    });
    p
}

/// Report ticks of the server's status over a phase: rows read, threads running, dirty pages.
fn ticks(p: &PhaseResult) -> Vec<TelemetrySample> {
    p.samples
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut status = StatusCounts::default();
            status
                .counters
                .insert("Rows_read".into(), (s.events * 10) as i64);
            status.gauges.insert(
                "Threads_running".into(),
                u64::from(p.threads) + (i % 2) as u64,
            );
            status
                .gauges
                .insert("Innodb_buffer_pool_pages_dirty".into(), 100 + 7 * i as u64);
            TelemetrySample {
                elapsed_s: s.elapsed_s,
                reading: Reading::Tick(Tick::Change(TickChange {
                    interval_s: s.interval_s,
                    status,
                    server: Some(ProcUsage {
                        user_s: 0.2,
                        sys_s: 0.1,
                        rss_kib: 100_000,
                        io: None,
                    }),
                    client: None,
                })),
            }
        })
        .collect()
}

fn record(store: &mut Store, uuid: &str, pool: &str, phases: &[PhaseResult]) {
    record_plan(store, uuid, pool, phases, |_| {});
}

fn record_plan(
    store: &mut Store,
    uuid: &str,
    pool: &str,
    phases: &[PhaseResult],
    edit: impl Fn(&mut RunPlan),
) {
    let mut plan = RunPlan::new(WorkloadOptions::new(WorkloadKind::OltpReadOnly));
    plan.threads = phases.iter().map(|p| p.threads).collect();
    plan.warmup_s = 1.0;
    plan.report_interval_s = 0.5;
    edit(&mut plan);
    let mut server = qpslab_core::ServerInfo {
        version: "10.11.6-MariaDB".into(),
        flavor: "mariadb".into(),
        ..Default::default()
    };
    server
        .variables
        .insert("innodb_buffer_pool_size".into(), pool.into());
    server
        .variables
        .insert("port".into(), uuid.len().to_string());
    let meta = RunMeta {
        uuid: uuid.into(),
        started_at: 1_700_000_000.0,
        command: "qpslab run oltp_read_only".into(),
        plan,
        target: "root@localhost/sbtest".into(),
        server,
        host: Default::default(),
        tool_version: "0.1.0".into(),
        study_id: None,
        cell_label: None,
    };
    for p in phases {
        let cpu = TelemetrySample {
            elapsed_s: 7.0,
            reading: Reading::ServerProc(ProcUsage {
                user_s: 0.9 * p.threads as f64,
                sys_s: 0.7,
                rss_kib: 100000,
                io: None,
            }),
        };
        // A phase measured as today's probe does it (with its loops) has its ticks too.
        let mut telemetry = if p.client.is_some() {
            ticks(p)
        } else {
            Vec::new()
        };
        telemetry.push(cpu);
        store.record_phase(&meta, p, &telemetry).unwrap();
    }
    store.finish_run(uuid, RunStatus::Completed).unwrap();
}

/// `p` with the verdict of a phase whose server used `cpus` of its 1 CPU and read
/// `pool_reads` pages from disk per 1000 events (buffer pool misses), its waits not seen.
fn limited(mut p: PhaseResult, cpus: f64, pool_reads: u64) -> PhaseResult {
    let mut l = qpslab_core::limits::decide(qpslab_core::limits::Evidence {
        duration_s: p.duration_s,
        events: 1000,
        sessions: p.threads,
        server_cpus_used: Some(cpus),
        server_cpus_allowed: Some(1.0),
        client_cpus_used: 0.3,
        machine_cpus: 2.0,
        pool_reads: Some(pool_reads),
        pool_read_requests: Some(100_000),
        fsyncs: Some(2),
        ..Default::default()
    });
    l.unseen = vec!["latches and wait times: performance_schema is off".into()];
    p.limits = Some(l);
    p
}

/// Run 1 (a small buffer pool) limited by its pool and its CPU, run 2 (a large one) by its CPU.
fn scratch_with_runs() -> Scratch {
    let s = Scratch::new();
    let mut store = Store::open(&s.db()).unwrap();
    record(
        &mut store,
        "run-a",
        "134217728",
        &[
            limited(phase(1, 900.0, 2.0, 1), 0.5, 900),
            limited(phase(4, 3000.0, 3.0, 2), 0.9, 2000),
        ],
    );
    record(
        &mut store,
        "run-b",
        "1073741824",
        &[
            limited(phase(1, 910.0, 2.0, 3), 0.5, 10),
            limited(phase(4, 3600.0, 2.4, 4), 0.97, 10),
        ],
    );
    s
}

#[test]
fn report_markdown_and_json_match_golden_files() {
    let s = scratch_with_runs();
    for (format, file) in [("md", "report_runs.md"), ("json", "report_runs.json")] {
        let o = s.run(&["report", "1", "2", "--format", format]);
        assert!(o.status.success(), "{}", stderr(&o));
        check_golden(file, &stdout(&o));
    }
}

/// The report of two runs measured as today's engine and probe store them shows, in every
/// format, where the client ran each phase and each phase's verdict (client-bound included),
/// and the HTML draws a latency distribution and the server's time series for every session
/// count.
#[test]
fn report_shows_placement_verdicts_distributions_and_server_series() {
    let s = Scratch::new();
    let mut store = Store::open(&s.db()).unwrap();
    for (uuid, pool, k) in [("run-a", "134217728", 1), ("run-b", "1073741824", 3)] {
        let phases = [
            measured(phase(1, 900.0, 2.0, k), 2.0),
            measured(phase(4, 3000.0, 3.0, k + 1), 3.0),
        ];
        record(&mut store, uuid, pool, &phases);
    }
    drop(store);
    let md = s.run(&["report", "1", "2", "--format", "md"]);
    assert!(md.status.success(), "{}", stderr(&md));
    let md = stdout(&md);
    for want in [
        "| run 1 | threads=1 | 1 | 1 event loop on CPUs 0-1 (shared with the server) | 30% |  | stable |",
        "| run 2 | threads=4 | 1 | 2 event loops on CPUs 0-1 (shared with the server) | 120% 120% |  | unstable: client-bound",
        "threads=4 stability: run 1: 1 client-bound; run 2: 1 client-bound",
        "| server | innodb_buffer_pool_size | 134217728 | 1073741824 |",
    ] {
        assert!(md.contains(want), "no '{want}' in:\n{md}");
    }
    let html = s.run(&["report", "1", "2", "--format", "html"]);
    assert!(html.status.success(), "{}", stderr(&html));
    let html = stdout(&html);
    for id in [
        "throughput-over-time-1",
        "throughput-over-time-4",
        "p99-over-time-1",
        "p99-over-time-4",
        "latency-distribution-1",
        "latency-distribution-4",
        "server-cpu-over-time-4",
        "rows-read-over-time-1",
        "dirty-pages-over-time-4",
        "threads-running-over-time-1",
    ] {
        assert!(html.contains(&format!("id=\"{id}\"")), "no chart {id}");
    }
    // Legends carry each phase's verdict (said once above the chart when every line shares
    // it); the distribution's axis is labelled in percentiles.
    assert!(
        html.contains("every line: (client-bound)") && html.contains("every line: (stable)"),
        "no verdict in the per-interval charts"
    );
    assert!(html.contains(">99.9%<"), "no 99.9% tick");
}

#[test]
fn compare_json_and_markdown_match_golden_files() {
    let s = scratch_with_runs();
    for (format, file) in [("json", "report_compare.json"), ("md", "report_compare.md")] {
        let o = s.run(&["compare", "1", "2", "--format", format]);
        assert!(o.status.success(), "{}", stderr(&o));
        check_golden(file, &stdout(&o));
    }
}

#[test]
fn report_and_compare_reject_what_is_not_there() {
    let s = scratch_with_runs();
    assert_user_error(&s.run(&["compare", "1", "9"]), "no run 9");
    assert_user_error(
        &s.run(&["report", "nosuchstudy"]),
        "no run or study named 'nosuchstudy'",
    );
    assert_user_error(
        &s.run(&["compare", "1", "x"]),
        "neither a run id nor STUDY/VARIANT",
    );
    let missing = s.path().join("none.db");
    assert_user_error(
        &s.run(&["report", "1", "--db", missing.to_str().unwrap()]),
        "no results store",
    );
}

/// Runs 3 and 4 measure another workload and other run options than runs 1 and 2.
fn scratch_with_other_runs() -> Scratch {
    let s = scratch_with_runs();
    let mut store = Store::open(&s.db()).unwrap();
    record_plan(
        &mut store,
        "run-c",
        "134217728",
        &[phase(1, 900.0, 2.0, 5)],
        |p| p.workload.kind = WorkloadKind::OltpPointSelect,
    );
    record_plan(
        &mut store,
        "run-d",
        "134217728",
        &[phase(1, 905.0, 2.0, 6)],
        |p| {
            p.workload.tables = 8;
            p.warmup_s = 5.0;
        },
    );
    s
}

#[test]
fn different_workloads_are_refused_and_different_options_warned_in_every_format() {
    let s = scratch_with_other_runs();
    for args in [
        &["compare", "1", "3"][..],
        &["compare", "1,2", "3,4"],
        &["report", "1", "3"],
    ] {
        let o = s.run(args);
        assert_user_error(&o, "different workloads");
        assert!(stderr(&o).contains("oltp_point_select"), "{}", stderr(&o));
    }
    let want = "run options differ (warmup_s 1.0 → 5.0, tables 1 → 8)";
    let o = s.run(&["compare", "1", "4"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains(&format!("warning: {want}")),
        "{}",
        stdout(&o)
    );
    for format in ["json", "md"] {
        let o = s.run(&["compare", "1", "4", "--format", format]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(stdout(&o).contains(want), "{}", stdout(&o));
        assert!(stderr(&o).contains(want), "{}", stderr(&o));
    }
    for format in ["md", "html", "json"] {
        let o = s.run(&["report", "1", "4", "--format", format]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(stdout(&o).contains(want), "{format}: {}", stdout(&o));
    }
}

#[test]
fn repeats_are_compared_on_their_spread_with_an_mde() {
    let s = scratch_with_other_runs();
    // Each side is runs 1 and 2 (two different buffer pools, 20% apart at 4 threads) taken as
    // repeats: a deliberately wide spread between repeats, which two repeats cannot resolve.
    let o = s.run(&["compare", "1,2", "2,1", "--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let p4 = v["points"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["key"] == "threads=4")
        .unwrap();
    assert_eq!(p4["basis"], "repeats");
    let tps = &p4["metrics"][0];
    assert_eq!(tps["metric"], "tps");
    assert!(tps["mde_pct"].as_f64().unwrap() > 10.0, "{tps}");
    assert!(tps["ci_low"].as_f64().unwrap() > -100.0, "{tps}");
    let verdict = tps["verdict"].as_str().unwrap();
    assert!(verdict.starts_with("inconclusive: need ~"), "{verdict}");
}
