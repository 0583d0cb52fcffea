//! The evidence of a measured phase, gathered from the phase and its telemetry, and the
//! verdict on what limited it ([`qpslab_core::limits::decide`]). Judged once, when the phase
//! ends, and stored with it.

use crate::run::client_bound;
use qpslab_core::limits::{decide, Evidence, Limits};
use qpslab_core::telemetry::{Perf, Reading};
use qpslab_core::{PhaseResult, TelemetrySample};

/// What limited `phase`, given its `telemetry`, the share of the machine other processes used
/// (`others`, when known) and the machine's CPUs. None for a phase that is not a load of
/// sessions (an I/O phase) or measured no time.
pub fn judge(
    phase: &PhaseResult,
    telemetry: &[TelemetrySample],
    others: Option<f64>,
    cores: f64,
) -> Option<Limits> {
    if phase.io.is_some() || phase.duration_s <= 0.0 {
        return None;
    }
    Some(decide(evidence(phase, telemetry, others, cores)))
}

/// Every figure the verdict looks at.
pub fn evidence(
    phase: &PhaseResult,
    telemetry: &[TelemetrySample],
    others: Option<f64>,
    cores: f64,
) -> Evidence {
    // Telemetry spans the warm-up too; the figures the verdict divides by the phase's length
    // are whole-phase totals, so they are taken over the same span.
    let span = client_bound::span(phase, telemetry);
    let check = client_bound::check(phase, telemetry, cores);
    let server = telemetry.iter().find_map(TelemetrySample::server_proc);
    let mut e = Evidence {
        duration_s: phase.duration_s,
        events: phase.events,
        sessions: phase.threads,
        server_cpus_used: server.map(|p| p.cpu_s() / span),
        client_cpus_used: (phase.client_cpu.user_s + phase.client_cpu.sys_s) / phase.duration_s,
        machine_cpus: cores,
        client_loops: phase
            .client
            .as_ref()
            .map(|l| (l.saturated() as u32, l.loops() as u32, l.busiest())),
        client_limited: check.as_ref().is_some_and(|c| c.limit.is_some()),
        others_share: others,
        remote: server.is_none(),
        paced: phase
            .rate
            .as_ref()
            .map(|r| (r.target_per_s, r.achieved_per_s)),
        ..Evidence::default()
    };
    let per_span = |n: i64| -> u64 {
        // Counters cover the span; the phase's events only the measured part of it.
        (n.max(0) as f64 * phase.duration_s / span).round() as u64
    };
    for t in telemetry {
        match &t.reading {
            Reading::ServerStatusDelta(d) => {
                let has = |name: &str| d.counters.contains_key(name);
                e.row_lock_s = Some(per_span(d.counter("Innodb_row_lock_time")) as f64 / 1000.0);
                e.log_waits = Some(per_span(d.counter("Innodb_log_waits")));
                e.fsyncs = Some(per_span(
                    d.counter("Innodb_data_fsyncs") + d.counter("Innodb_os_log_fsyncs"),
                ));
                e.pool_reads = Some(per_span(d.counter("Innodb_buffer_pool_reads")));
                e.pool_read_requests = has("Innodb_buffer_pool_read_requests")
                    .then(|| per_span(d.counter("Innodb_buffer_pool_read_requests")));
                e.pool_wait_free = Some(per_span(d.counter("Innodb_buffer_pool_wait_free")));
            }
            Reading::Threads(th) => {
                if let Some(n) = th.allowed_cpus {
                    e.server_cpus_allowed = Some(f64::from(n));
                }
                e.threads = Some(th.clone());
            }
            Reading::Waits(w) => e.waits = Some(w.clone()),
            Reading::Disk(d) => e.disk = Some(d.clone()),
            Reading::Net(n) => e.net = Some(n.clone()),
            Reading::Pool(p) => e.thread_pool = Some(*p),
            Reading::Perf(p) => perf(&mut e, p, phase.duration_s / span),
            Reading::Profile(files) => e.top_functions = hottest(&files.folded),
            _ => {}
        }
    }
    checkpoint(&mut e, telemetry);
    if e.server_cpus_allowed.is_none() && e.server_cpus_used.is_some() {
        e.server_cpus_allowed = Some(cores);
    }
    e
}

/// The profile's five hottest functions, from its folded stacks (the first 64 MiB of them);
/// none when the file cannot be read.
fn hottest(folded: &std::path::Path) -> Vec<(String, f64)> {
    use std::io::Read;
    let mut text = String::new();
    let read = std::fs::File::open(folded).and_then(|f| f.take(64 << 20).read_to_string(&mut text));
    match read {
        Ok(_) => qpslab_core::limits::top_functions(text.lines(), 5),
        Err(_) => Vec::new(),
    }
}

/// How full the redo log was over the report ticks: the mean of the checkpoint age against
/// its flushing point, and the largest such point.
fn checkpoint(e: &mut Evidence, telemetry: &[TelemetrySample]) {
    let (mut sum, mut n, mut max_age) = (0.0, 0u32, 0u64);
    for change in telemetry.iter().filter_map(TelemetrySample::tick_change) {
        let g = &change.status.gauges;
        if let (Some(&age), Some(&max)) = (
            g.get("Innodb_checkpoint_age"),
            g.get("Innodb_checkpoint_max_age"),
        ) {
            if max > 0 {
                sum += (age as f64 / max as f64).min(1.0);
                n += 1;
                max_age = max_age.max(max);
            }
        }
    }
    if n > 0 {
        e.checkpoint_fill = Some(sum / f64::from(n));
        e.checkpoint_max_age = Some(max_age);
    }
}

/// Hardware counters per event (scaled from the span to the measured phase), IPC, or why
/// there are none.
fn perf(e: &mut Evidence, p: &Perf, measured: f64) {
    if !p.supported || p.counters.is_empty() {
        e.perf_reason = Some(
            p.reason
                .clone()
                .unwrap_or_else(|| "perf counted nothing".into()),
        );
        return;
    }
    if e.events == 0 {
        return;
    }
    for (k, v) in &p.counters {
        e.perf_per_event
            .insert(k.clone(), *v as f64 * measured / e.events as f64);
    }
    if let (Some(i), Some(c)) = (p.counters.get("instructions"), p.counters.get("cycles")) {
        if *c > 0 {
            e.perf_per_event.insert("ipc".into(), *i as f64 / *c as f64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use qpslab_core::limits::Kind;
    use qpslab_core::status::{status_from_rows, StatusDelta};
    use qpslab_core::telemetry::ProcUsage;

    fn sample(elapsed_s: f64, reading: Reading) -> TelemetrySample {
        TelemetrySample { elapsed_s, reading }
    }

    #[test]
    fn status_counters_and_the_server_cpu_become_figures_over_the_measured_phase() {
        let phase = PhaseResult {
            threads: 4,
            duration_s: 10.0,
            events: 1000,
            ..PhaseResult::default()
        };
        let a = status_from_rows([
            ("Innodb_row_lock_time", Some("0")),
            ("Innodb_buffer_pool_reads", Some("0")),
        ]);
        let b = status_from_rows([
            ("Innodb_row_lock_time", Some("40000")),
            ("Innodb_buffer_pool_reads", Some("3000")),
        ]);
        // 12 s of telemetry (2 s of warm-up) for 10 s measured.
        let tel = [
            sample(
                12.0,
                Reading::ServerStatusDelta(StatusDelta::between(&a, &b, 12.0)),
            ),
            sample(
                12.0,
                Reading::ServerProc(ProcUsage {
                    user_s: 12.0,
                    ..ProcUsage::default()
                }),
            ),
        ];
        let e = evidence(&phase, &tel, Some(0.0), 2.0);
        assert_eq!(e.server_cpus_used, Some(1.0));
        assert_eq!(e.server_cpus_allowed, Some(2.0));
        assert_eq!(e.pool_reads, Some(2500));
        assert!((e.row_lock_s.unwrap() - 33.333).abs() < 0.001);
        assert!(!e.remote);
        let l = judge(&phase, &tel, Some(0.0), 2.0).unwrap();
        assert_eq!(l.limiters[0].kind, Kind::BufferPool);
        // An I/O phase, and a phase that measured nothing, get no verdict.
        let io = PhaseResult {
            io: Some(Default::default()),
            ..phase.clone()
        };
        assert_eq!(judge(&io, &tel, None, 2.0), None);
        assert_eq!(judge(&PhaseResult::default(), &tel, None, 2.0), None);
    }

    #[test]
    fn a_server_without_a_process_here_is_remote_and_says_so() {
        let phase = PhaseResult {
            threads: 1,
            duration_s: 5.0,
            events: 10,
            ..PhaseResult::default()
        };
        let l = judge(&phase, &[], None, 2.0).unwrap();
        assert!(l.evidence.remote);
        assert!(
            l.unseen[0].starts_with("the server's host"),
            "{:?}",
            l.unseen
        );
    }
}
