//! Whether a measured phase is fit to compare: judging its stability.
//!
//! The lab judges every phase from its per-interval samples (stuck sessions, stalls, trend,
//! latency spikes, client saturation, errors); the verdict ([`Stability`], whose types live with the results
//! so a [`PhaseResult`] can carry it) is stored with the phase and shown wherever the phase's
//! numbers are (run summary, `lab show`, reports, `compare`). A study measures an unstable
//! cell again.

use crate::result::{PhaseResult, Sample};
pub use crate::verdict::{Instability, Stability};
use qpslab_stats::{mann_kendall_z, median, theil_sen_slope, upper_quartile};

/// What a verdict needs beyond the phase itself.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Facts {
    /// CPUs the client could run on (its `--client-cpus`, else the machine's).
    pub client_cpus: f64,
    /// Share (0..1) of the machine's CPU time used by processes other than the server and the
    /// client while the phase ran (none: unknown, e.g. an external server).
    pub others_cpu_share: Option<f64>,
    /// The input sets the pace, not the server (a replay keeping the log's timing): its
    /// throughput rises and falls with the log, so stalls and trends say nothing about the
    /// server and are not judged.
    pub paced_by_input: bool,
}

/// An interval whose throughput is below this share of the usual level (upper quartile)
/// starts a stall. Interval rates on this 2-core VM vary by ±30% under a neighbour's load; a
/// quarter is a disturbance.
const STALL_SHARE: f64 = 0.25;
/// Neighbours of a stalled interval below this share are part of the stall (it rarely starts
/// or ends on a tick).
const STALL_EDGE_SHARE: f64 = 0.75;
/// Intervals with fewer completions than this at the median are too small to judge stalls.
const MIN_MEDIAN_EVENTS: f64 = 20.0;
/// A trend must change throughput by more than this over the phase to matter.
const TREND_PCT: f64 = 10.0;
/// An interval whose p99 is this many times the phase's median p99 is a spike.
const SPIKE_RATIO: f64 = 10.0;
/// Client CPU share of its CPUs at which the client, not the server, may be the limit.
const CLIENT_SHARE: f64 = 0.9;
/// Other processes using this share of the machine disturb the phase. Measured on 2 cores:
/// others take 0.3–4% of the machine while qpslab and its sandbox run alone (read-only 2 and
/// read-write 8 sessions), and one `yes` competing with them takes about a third of it, which
/// cost a 2-session read-only phase 40% of its throughput.
pub const OTHERS_SHARE: f64 = 0.2;
/// Retried errors above this share of the events make the number a measure of retries.
const ERROR_SHARE: f64 = 0.1;

/// Judges `phase` from its samples and totals: stuck sessions, stalls, trend, p99 spikes,
/// client saturation, errors. Thresholds are set so that ordinary noise of a shared 2-core VM stays stable.
pub fn judge(phase: &PhaseResult, facts: &Facts) -> Stability {
    let samples: Vec<&Sample> = phase
        .samples
        .iter()
        .filter(|s| s.interval_s > 0.0)
        .collect();
    let mut reasons = Vec::new();
    // First: a stuck session is the gravest, and the throughput checks cannot see it.
    if let Some(s) = stuck(phase) {
        reasons.push(s);
    }
    if !facts.paced_by_input {
        let stalled = stalls(&samples, &mut reasons);
        if let Some(t) = trend(&samples, &stalled) {
            reasons.push(t);
        }
    }
    if let Some(s) = spikes(&samples) {
        reasons.push(s);
    }
    let bound = phase.client.as_ref().filter(|c| c.saturated() > 0);
    let cpu = phase.client_cpu.user_s + phase.client_cpu.sys_s;
    if let Some(c) = bound {
        reasons.push(Instability::ClientBound {
            saturated: c.saturated() as u32,
            loops: c.loops() as u32,
            busiest: c.busiest(),
        });
    } else if phase.duration_s > 0.0 && facts.client_cpus > 0.0 {
        let share = cpu / phase.duration_s / facts.client_cpus;
        if share >= CLIENT_SHARE {
            reasons.push(Instability::ClientSaturated { share });
        }
    }
    if let Some(share) = facts.others_cpu_share.filter(|s| *s >= OTHERS_SHARE) {
        reasons.push(Instability::Contended { share });
    }
    let errors = phase.error_total();
    if phase.reconnects > 0 || errors as f64 > ERROR_SHARE * phase.events.max(1) as f64 {
        reasons.push(Instability::Errors {
            errors,
            reconnects: phase.reconnects,
        });
    }
    Stability { reasons }
}

/// Sessions stuck at some report tick (the engine counts them, [`Sample::stuck_sessions`]):
/// the most at one tick, and the longest any waited then. A stuck session completes nothing,
/// so neither the rates nor the latencies of the intervals show it.
fn stuck(phase: &PhaseResult) -> Option<Instability> {
    let ticks = phase.samples.iter().filter(|s| s.stuck_sessions > 0);
    let (sessions, for_s) = ticks.fold((0, 0.0_f64), |(n, t), s| {
        (n.max(s.stuck_sessions), t.max(s.longest_in_flight_s))
    });
    (sessions > 0).then_some(Instability::Stuck {
        sessions,
        of: phase.threads.max(sessions),
        for_s,
    })
}

fn rate(s: &Sample) -> f64 {
    s.events as f64 / s.interval_s
}

/// Finds stalls: runs of intervals far below the usual rate, widened by their slow
/// neighbours; the length is the throughput lost (an interval at 30% lost 0.7 of itself), so a
/// stall that straddles ticks is measured at its real length. Returns which intervals stalled.
fn stalls(samples: &[&Sample], out: &mut Vec<Instability>) -> Vec<bool> {
    let mut stalled = vec![false; samples.len()];
    if samples.len() < 3 {
        return stalled;
    }
    // The upper quartile, not the median: a phase that stalled for most of its length still
    // shows its normal level there.
    let med = upper_quartile(samples.iter().map(|s| rate(s)).collect());
    let med_events = upper_quartile(samples.iter().map(|s| s.events as f64).collect());
    if med <= 0.0 || med_events < MIN_MEDIAN_EVENTS {
        return stalled;
    }
    let share = |i: usize| rate(samples[i]) / med;
    let mut i = 0;
    while i < samples.len() {
        if share(i) >= STALL_SHARE {
            i += 1;
            continue;
        }
        let (mut a, mut b) = (i, i);
        while b + 1 < samples.len() && share(b + 1) < STALL_EDGE_SHARE {
            b += 1;
        }
        if a > 0 && share(a - 1) < STALL_EDGE_SHARE {
            a -= 1;
        }
        let lost = |k: usize| (1.0 - share(k)).clamp(0.0, 1.0) * samples[k].interval_s;
        let duration_s: f64 = (a..=b).map(lost).sum();
        let first = samples[a];
        let at_s = (first.elapsed_s - lost(a)).max(0.0);
        stalled[a..=b].iter_mut().for_each(|x| *x = true);
        out.push(Instability::Stall { at_s, duration_s });
        i = b + 1;
    }
    stalled
}

/// The two-sided 5% point of the normal distribution, for the Mann–Kendall statistic. Phases
/// of 3 intervals never reach it; with the 10% floor on the change, A/A phases stay stable.
const Z_CRITICAL: f64 = 1.96;

/// A trend in the rates of the intervals that did not stall: Mann–Kendall's test (ranks, so
/// one disturbed interval cannot make or hide a trend) significant at 5%, and a Theil–Sen
/// slope (the median of pairwise slopes) that changes throughput by more than [`TREND_PCT`]
/// over the phase (both from `qpslab_stats`).
fn trend(samples: &[&Sample], stalled: &[bool]) -> Option<Instability> {
    let pts: Vec<(f64, f64)> = samples
        .iter()
        .zip(stalled)
        .filter(|(_, st)| !**st)
        .map(|(s, _)| (s.elapsed_s - s.interval_s / 2.0, rate(s)))
        .collect();
    if pts.len() < 4 {
        return None;
    }
    let rates: Vec<f64> = pts.iter().map(|p| p.1).collect();
    let z = mann_kendall_z(&rates);
    let level = median(rates);
    let span = samples.last()?.elapsed_s - (samples[0].elapsed_s - samples[0].interval_s);
    if level <= 0.0 || z <= Z_CRITICAL || span <= 0.0 {
        return None;
    }
    // The fitted line (Theil-Sen slope through the median point) from the phase's start to its
    // end, each end at least zero; the change against the larger end cannot pass 100%.
    let slope = theil_sen_slope(&pts);
    let mid = median(pts.iter().map(|p| p.1 - slope * p.0).collect());
    let t0 = samples[0].elapsed_s - samples[0].interval_s;
    let (a, b) = (
        (mid + slope * t0).max(0.0),
        (mid + slope * (t0 + span)).max(0.0),
    );
    let top = a.max(b);
    if top <= 0.0 {
        return None;
    }
    let change_pct = (b - a) / top * 100.0;
    (change_pct.abs() > TREND_PCT).then_some(Instability::Trend { change_pct })
}

/// The highest percentile an interval reports (p99 by default).
fn top_percentile(s: &Sample) -> Option<f64> {
    s.latency
        .percentiles
        .iter()
        .max_by(|a, b| a.p.total_cmp(&b.p))
        .map(|p| p.ms)
}

fn spikes(samples: &[&Sample]) -> Option<Instability> {
    let p: Vec<f64> = samples.iter().filter_map(|s| top_percentile(s)).collect();
    if p.len() < 3 {
        return None;
    }
    let med = median(p.clone());
    if med <= 0.0 {
        return None;
    }
    let ratios: Vec<f64> = p
        .iter()
        .map(|v| v / med)
        .filter(|r| *r >= SPIKE_RATIO)
        .collect();
    let worst_ratio = ratios.iter().copied().fold(0.0, f64::max);
    (!ratios.is_empty()).then_some(Instability::Spikes {
        intervals: ratios.len() as u32,
        worst_ratio,
    })
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_trend_to_nothing_is_at_most_minus_100_percent() {
        // Throughput falling steeply to nothing: the fitted line would end below zero.
        let samples: Vec<Sample> = [1000.0, 800.0, 600.0, 300.0, 50.0, 0.0, 0.0, 0.0]
            .iter()
            .enumerate()
            .map(|(i, &events)| Sample {
                elapsed_s: i as f64 + 1.0,
                interval_s: 1.0,
                events: events as u64,
                ..Sample::default()
            })
            .collect();
        let refs: Vec<&Sample> = samples.iter().collect();
        let stalled = vec![false; refs.len()];
        match trend(&refs, &stalled) {
            Some(Instability::Trend { change_pct }) => {
                assert!((-100.0..-30.0).contains(&change_pct), "{change_pct}")
            }
            other => panic!("{other:?}"),
        }
    }

    use super::*;

    use crate::result::{LatencySummary, Percentile};

    /// A phase of 1 s intervals with these completions and p99s (ms).
    fn phase(events: &[u64], p99: &[f64]) -> PhaseResult {
        let samples: Vec<Sample> = events
            .iter()
            .zip(p99)
            .enumerate()
            .map(|(i, (&e, &ms))| Sample {
                elapsed_s: i as f64 + 1.0,
                interval_s: 1.0,
                events: e,
                latency: LatencySummary {
                    percentiles: vec![Percentile { p: 99.0, ms }],
                    ..Default::default()
                },
                ..Default::default()
            })
            .collect();
        PhaseResult {
            duration_s: samples.len() as f64,
            events: events.iter().sum(),
            samples,
            ..Default::default()
        }
    }

    const FACTS: Facts = Facts {
        client_cpus: 2.0,
        others_cpu_share: Some(0.1),
        paced_by_input: false,
    };

    /// Deterministic noise in [-1, 1).
    fn noise(state: &mut u64) -> f64 {
        *state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (*state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }

    #[test]
    fn ordinary_noise_stays_stable() {
        let mut flagged = 0;
        for seed in 1..=100u64 {
            let mut st = seed;
            let n = if seed % 2 == 0 { 3 } else { 10 };
            let ev: Vec<u64> = (0..n)
                .map(|_| (1000.0 * (1.0 + 0.3 * noise(&mut st))) as u64)
                .collect();
            let p99: Vec<f64> = (0..n).map(|_| 2.0 * (1.0 + 0.8 * noise(&mut st))).collect();
            if !judge(&phase(&ev, &p99), &FACTS).is_stable() {
                flagged += 1;
            }
        }
        assert!(flagged <= 3, "{flagged} of 100 noisy phases flagged");
    }

    #[test]
    fn a_stall_across_ticks_is_measured_at_its_length() {
        // Nothing completes from 4.3 s to 6.3 s.
        let ev = [1000, 980, 1010, 990, 300, 0, 700, 1000, 1020, 990];
        let v = judge(&phase(&ev, &[2.0; 10]), &FACTS);
        let Some(Instability::Stall { at_s, duration_s }) = v.reasons.first() else {
            panic!("{v}");
        };
        assert!((at_s - 4.3).abs() < 0.1, "{v}");
        assert!((duration_s - 2.0).abs() < 0.1, "{v}");
        // A last interval with no completions is a stall too.
        let v = judge(&phase(&[900, 1000, 1100, 0], &[2.0; 4]), &FACTS);
        assert!(matches!(v.reasons[0], Instability::Stall { .. }), "{v}");
        // When the input sets the pace (a replay at the log's speed), a quiet second is the
        // log's, not a stall of the server.
        let paced = Facts {
            paced_by_input: true,
            ..FACTS
        };
        assert!(judge(&phase(&ev, &[2.0; 10]), &paced).is_stable());
    }

    #[test]
    fn a_drift_is_a_trend_but_a_small_one_is_not() {
        let mut st = 7;
        let ev: Vec<u64> = (0..10)
            .map(|i| ((1000.0 - 40.0 * i as f64) * (1.0 + 0.03 * noise(&mut st))) as u64)
            .collect();
        let v = judge(&phase(&ev, &[2.0; 10]), &FACTS);
        match v.reasons.as_slice() {
            [Instability::Trend { change_pct }] => assert!(*change_pct < -30.0, "{v}"),
            _ => panic!("{v}"),
        }
        // One disturbed interval neither hides the trend nor is a stall.
        let ev = [100, 104, 94, 41, 95, 97, 77, 71, 53, 52];
        let v = judge(&phase(&ev, &[2.0; 10]), &FACTS);
        assert!(
            matches!(v.reasons.as_slice(), [Instability::Trend { change_pct }] if *change_pct < -30.0),
            "{v}"
        );
        let ev: Vec<u64> = (0..10).map(|i| 1000 - 5 * i).collect();
        assert!(judge(&phase(&ev, &[2.0; 10]), &FACTS).is_stable());
    }

    #[test]
    fn spikes_saturation_and_errors() {
        let mut p = phase(&[1000; 6], &[2.0, 2.5, 60.0, 1.8, 2.2, 2.0]);
        let v = judge(&p, &FACTS);
        assert!(
            matches!(v.reasons.as_slice(), [Instability::Spikes { intervals: 1, worst_ratio }] if *worst_ratio > 20.0),
            "{v}"
        );
        p.samples[2].latency.percentiles[0].ms = 2.0;
        p.client_cpu.user_s = 8.0;
        p.client_cpu.sys_s = 3.0;
        p.errors.insert(1213, 1000);
        let v = judge(&p, &FACTS);
        assert!(matches!(v.reasons[0], Instability::ClientSaturated { share } if share > 0.9));
        assert!(matches!(
            v.reasons[1],
            Instability::Errors { errors: 1000, .. }
        ));
        // A few retried deadlocks are ordinary in write workloads.
        p.client_cpu.user_s = 1.0;
        p.errors.insert(1213, 30);
        assert!(judge(&p, &FACTS).is_stable());
        p.reconnects = 1;
        assert!(!judge(&p, &FACTS).is_stable());
        p.reconnects = 0;
        let busy = Facts {
            others_cpu_share: Some(0.8),
            ..FACTS
        };
        let v = judge(&p, &busy);
        assert_eq!(
            v.to_string(),
            "unstable: other processes used 80% of the CPUs"
        );
    }

    #[test]
    fn one_saturated_loop_makes_the_phase_client_bound_whatever_the_machine_spares() {
        // One loop at 100% of a CPU while the client's three other CPUs sat idle: a quarter
        // of the client's CPUs, which the whole-process check cannot see.
        let mut p = phase(&[1000; 6], &[2.0; 6]);
        p.client_cpu.user_s = 6.0;
        let four = Facts {
            client_cpus: 4.0,
            ..FACTS
        };
        assert!(judge(&p, &four).is_stable());
        p.client = Some(crate::client::ClientLoops {
            cpus: vec![12, 13, 14, 15],
            busy: vec![0.99],
            ..Default::default()
        });
        let v = judge(&p, &four);
        assert_eq!(
            v.to_string(),
            "unstable: client-bound (1 of 1 event loop(s) saturated, busiest 99% of a CPU)"
        );
        // Busy loops below the limit are a client with room to spare.
        p.client.as_mut().unwrap().busy = vec![0.85, 0.6, 0.7, 0.8];
        assert!(judge(&p, &four).is_stable());
    }

    #[test]
    fn a_stuck_session_is_stalled_whatever_the_throughput() {
        // One of 2 sessions stuck from the start: the other's steady rate looks stable.
        let mut p = phase(&[1000; 5], &[2.0; 5]);
        p.threads = 2;
        assert!(judge(&p, &FACTS).is_stable());
        for (i, s) in p.samples.iter_mut().enumerate() {
            s.stuck_sessions = 1;
            s.longest_in_flight_s = i as f64 + 1.0;
        }
        let v = judge(&p, &FACTS);
        assert_eq!(
            v.to_string(),
            "unstable: stalled (1 of 2 sessions stuck for 5.0 s)"
        );
        // The only session stuck: nothing completed, too few events to judge a stall by rate.
        let mut p = phase(&[0; 3], &[0.0; 3]);
        p.threads = 1;
        p.samples[2].stuck_sessions = 1;
        p.samples[2].longest_in_flight_s = 3.2;
        assert_eq!(
            judge(&p, &FACTS).to_string(),
            "unstable: stalled (1 of 1 session stuck for 3.2 s)"
        );
        let json = serde_json::to_string(&judge(&p, &FACTS)).unwrap();
        assert!(json.contains("\"kind\":\"stuck\""), "{json}");
    }

    #[test]
    fn verdicts_read_as_one_line_and_round_trip() {
        assert_eq!(Stability::default().to_string(), "stable");
        let s = Stability {
            reasons: vec![
                Instability::Stall {
                    at_s: 1.3,
                    duration_s: 2.1,
                },
                Instability::Trend { change_pct: -12.0 },
            ],
        };
        assert!(!s.is_stable());
        assert_eq!(
            s.to_string(),
            "unstable: stall of 2.1 s at 1.3 s; trend of -12%"
        );
        let json = serde_json::to_string(&s).unwrap();
        assert!(json.contains("\"kind\":\"stall\""), "{json}");
        assert_eq!(serde_json::from_str::<Stability>(&json).unwrap(), s);
    }
}
