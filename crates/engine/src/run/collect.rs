//! The coordinator's bookkeeping: merges the loops' interval statistics, in order, into one
//! [`Sample`] per report interval and into the phase totals.
//!
//! Interval `k` covers `[b_{k-1}, b_k)`; interval 0 is the part of the warm-up shorter than one
//! interval and is discarded; the whole warm-up intervals after it are kept apart, drawn but
//! never counted ([`PhaseResult::warmup`]); the measured intervals follow. A loop
//! sends every interval it crosses, then a final partial one when it ends; interval `k` is
//! complete once every loop has either sent it or ended before it.

use super::cpu::CpuSnapshot;
use super::placement::Placement;
use super::schedule::Boundaries;
use super::stats::{blob, client_lateness, summarize, IntervalStats, IN_FLIGHT_FLOOR_US};
use hdrhistogram::Histogram;
use qpslab_core::result::{Fairness, PhaseResult, RateStats, Sample, StatementLatency};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

/// Interval merging for one phase.
pub(crate) struct Collector {
    bounds: Boundaries,
    percentiles: Vec<f64>,
    kinds: Vec<Arc<str>>,
    /// Per loop: the next interval it will send, and the interval it ended in (if it has).
    next_from: Vec<u64>,
    ended_in: Vec<Option<u64>>,
    /// Partial merges of intervals not yet complete.
    pending: BTreeMap<u64, IntervalStats>,
    /// The next interval to emit.
    next_k: u64,
    /// CPU snapshots taken at the boundaries, by boundary index.
    cpu_at: BTreeMap<u64, CpuSnapshot>,
    /// The phase's measured totals.
    total: IntervalStats,
    samples: Vec<Sample>,
    /// The warm-up's whole intervals, apart from the measured ones.
    warmup: Vec<Sample>,
    /// When the last loop ended.
    end: Option<Instant>,
    /// Per loop: its thread's seconds on a CPU and waiting for one over the measured intervals.
    loop_cpu_s: Vec<f64>,
    loop_wait_s: Vec<f64>,
    /// Whether each sample keeps its interval's event histogram (sharded runs, merged later).
    keep_histograms: bool,
}

impl Collector {
    /// Bookkeeping for `loops` loops and the statement kinds `kinds`.
    pub fn new(
        bounds: Boundaries,
        loops: usize,
        kinds: Vec<Arc<str>>,
        percentiles: Vec<f64>,
    ) -> Self {
        let total = IntervalStats::new(kinds.len());
        Collector {
            bounds,
            percentiles,
            kinds,
            next_from: vec![0; loops],
            ended_in: vec![None; loops],
            pending: BTreeMap::new(),
            next_k: 0,
            cpu_at: BTreeMap::new(),
            total,
            samples: Vec::new(),
            warmup: Vec::new(),
            end: None,
            loop_cpu_s: vec![0.0; loops],
            loop_wait_s: vec![0.0; loops],
            keep_histograms: false,
        }
    }

    /// Keeps each interval's event histogram in its sample, so that shards merge exactly.
    pub fn keep_histograms(mut self, keep: bool) -> Self {
        self.keep_histograms = keep;
        self
    }

    /// Records the process CPU at boundary `k` (taken when the boundary passed), and emits the
    /// samples that were waiting for it.
    pub fn cpu_at_boundary(
        &mut self,
        k: u64,
        snap: CpuSnapshot,
        on_sample: &mut dyn FnMut(&Sample),
    ) {
        self.cpu_at.entry(k).or_insert(snap);
        self.emit_complete(on_sample);
    }

    /// The next boundary the coordinator should snapshot CPU at.
    pub fn next_cpu_boundary(&self) -> u64 {
        self.cpu_at.keys().next_back().map_or(0, |k| k + 1)
    }

    /// Loop `index` sent interval `k`; emits the samples that became complete.
    pub fn interval(
        &mut self,
        index: usize,
        k: u64,
        stats: &IntervalStats,
        on_sample: &mut dyn FnMut(&Sample),
    ) {
        self.next_from[index] = k + 1;
        if self.bounds.measured(k) {
            self.loop_cpu_s[index] += stats.loop_cpu_s;
            self.loop_wait_s[index] += stats.loop_wait_s;
        }
        match self.pending.get_mut(&k) {
            Some(p) => p.merge(stats),
            None => {
                let mut p = IntervalStats::new(self.kinds.len());
                p.merge(stats);
                self.pending.insert(k, p);
            }
        }
        self.emit_complete(on_sample);
    }

    /// Loop `index` ended during interval `k` at `at`, with that interval's statistics; `cpu`
    /// is the process CPU now, which closes the phase when this was the last loop.
    pub fn finished(
        &mut self,
        index: usize,
        k: u64,
        at: Instant,
        stats: &IntervalStats,
        cpu: CpuSnapshot,
        on_sample: &mut dyn FnMut(&Sample),
    ) {
        self.ended_in[index] = Some(k);
        self.end = Some(self.end.map_or(at, |e| e.max(at)));
        if self.all_ended() {
            self.cpu_at.insert(self.last_k(), cpu);
        }
        self.interval(index, k, stats, on_sample);
    }

    fn complete(&self, k: u64) -> bool {
        (0..self.next_from.len())
            .all(|l| self.next_from[l] > k || self.ended_in[l].is_some_and(|e| e < k))
    }

    fn all_ended(&self) -> bool {
        self.ended_in.iter().all(Option::is_some)
    }

    fn last_k(&self) -> u64 {
        self.ended_in.iter().flatten().max().copied().unwrap_or(0)
    }

    fn emit_complete(&mut self, on_sample: &mut dyn FnMut(&Sample)) {
        while self.complete(self.next_k) {
            let k = self.next_k;
            let is_last = self.all_ended() && k == self.last_k();
            if !is_last && !self.cpu_at.contains_key(&k) {
                // Wait for the CPU snapshot at this boundary.
                return;
            }
            let mut stats = self
                .pending
                .remove(&k)
                .unwrap_or_else(|| IntervalStats::new(self.kinds.len()));
            self.next_k += 1;
            if self.bounds.warm_up(k) {
                stats.in_flight_us.clear();
                let sample = self.sample(k, &stats, is_last);
                self.warmup.push(sample);
            } else if self.bounds.measured(k) {
                // The interval's ages are judged here and not kept in the totals, which
                // would otherwise grow by one entry per stuck session and tick.
                let in_flight = std::mem::take(&mut stats.in_flight_us);
                self.total.merge(&stats);
                let mut sample = self.sample(k, &stats, is_last);
                (sample.stuck_sessions, sample.longest_in_flight_s) =
                    stuck(&in_flight, &self.total.events);
                on_sample(&sample);
                self.samples.push(sample);
            }
            if is_last {
                return;
            }
        }
    }

    /// Boundary `k`'s time, or the phase end for the last interval.
    fn boundary(&self, k: u64, is_last: bool) -> Instant {
        let fallback = self.end.unwrap_or(self.bounds.measure_start);
        if is_last {
            return fallback;
        }
        self.bounds.get(k).unwrap_or(fallback)
    }

    fn sample(&self, k: u64, s: &IntervalStats, is_last: bool) -> Sample {
        let start = self.boundary(k - 1, false);
        let end = self.boundary(k, is_last).max(start);
        let cpu = match (self.cpu_at.get(&(k - 1)), self.cpu_at.get(&k)) {
            (Some(a), Some(b)) => b.since(a),
            _ => Default::default(),
        };
        let own = client_lateness(s.client_late.as_ref());
        let since_start = |at: Instant| match at.checked_duration_since(self.bounds.measure_start) {
            Some(d) => d.as_secs_f64(),
            None => -self.bounds.measure_start.duration_since(at).as_secs_f64(),
        };
        Sample {
            elapsed_s: since_start(end),
            interval_s: end.duration_since(start).as_secs_f64(),
            events: s.events.len(),
            queries: s.queries,
            errors: s.error_total(),
            reconnects: s.reconnects,
            latency: summarize(&s.events, &self.percentiles),
            client_cpu: cpu,
            late_events: s.late_events,
            max_lag_ms: s.lag_max_us as f64 / 1e3,
            client_late_events: own.client_late_events,
            client_max_late_ms: own.client_max_late_ms,
            stuck_sessions: 0,
            longest_in_flight_s: 0.0,
            histogram: (self.keep_histograms && self.bounds.measured(k))
                .then(|| blob("event", &s.events)),
        }
    }

    /// The phase result, once every loop has ended.
    pub fn result(self, threads: u32, rate: Option<f64>, placement: &Placement) -> PhaseResult {
        let end = self.end.unwrap_or(self.bounds.measure_start);
        let duration_s = end
            .saturating_duration_since(self.bounds.measure_start)
            .as_secs_f64();
        let t = &self.total;
        let cpu = match (
            self.cpu_at.get(&self.bounds.warm),
            self.cpu_at.get(&self.last_k()),
        ) {
            (Some(a), Some(b)) => b.since(a),
            _ => Default::default(),
        };
        let mut latency = summarize(&t.events, &self.percentiles);
        // Events still waiting when the phase ended count in its max with their age so far: a
        // session stuck for the whole phase must not leave a max below that.
        latency.max_ms = latency.max_ms.max(t.unfinished_max_us as f64 / 1e3);
        let mut histograms = vec![blob("event", &t.events)];
        let mut statements = Vec::new();
        for (name, h) in self.kinds.iter().zip(&t.kinds) {
            if h.is_empty() {
                continue;
            }
            statements.push(StatementLatency {
                kind: name.to_string(),
                latency: summarize(h, &self.percentiles),
            });
            histograms.push(blob(name, h));
        }
        // Mean over the events started under the rate, in ms.
        let per_start = |sum_us: u64| {
            if t.rate_started > 0 {
                sum_us as f64 / t.rate_started as f64 / 1e3
            } else {
                0.0
            }
        };
        let rate = rate.map(|target| RateStats {
            target_per_s: target,
            achieved_per_s: if duration_s > 0.0 {
                t.rate_started as f64 / duration_s
            } else {
                0.0
            },
            late_events: t.late_events,
            mean_lag_ms: per_start(t.lag_sum_us),
            max_lag_ms: t.lag_max_us as f64 / 1e3,
            ..client_lateness(t.client_late.as_ref())
        });
        let share = |v: &[f64]| {
            v.iter()
                .map(|s| {
                    if duration_s > 0.0 {
                        s / duration_s
                    } else {
                        0.0
                    }
                })
                .collect()
        };
        let (busy, waited) = (share(&self.loop_cpu_s), share(&self.loop_wait_s));
        PhaseResult {
            threads,
            duration_s,
            events: t.events.len(),
            queries: t.queries,
            errors: t.errors.clone(),
            reconnects: t.reconnects,
            latency,
            statements,
            samples: self.samples,
            warmup: self.warmup,
            client_cpu: cpu,
            rate,
            histograms,
            stability: None,
            limits: None,
            replay: None,
            actions: Vec::new(),
            io: None,
            client: Some(placement.record(busy, waited)),
            tpcc: None,
            shard: None,
            fairness: Fairness::of(
                &t.sessions
                    .iter()
                    .map(|&(n, us)| (n, us as f64 / 1e6))
                    .collect::<Vec<_>>(),
            ),
        }
    }

    /// Retried errors by event type and server code (empty when events have no types).
    pub fn type_retries(&self) -> BTreeMap<String, BTreeMap<u16, u64>> {
        let mut out: BTreeMap<String, BTreeMap<u16, u64>> = BTreeMap::new();
        for (&(k, code), &n) in &self.total.type_retries {
            let name = self.kinds.get(k).map_or("?", |k| k.as_ref());
            *out.entry(name.to_string())
                .or_default()
                .entry(code)
                .or_insert(0) += n;
        }
        out
    }
}

/// A request waiting longer than this many times the phase's p99 so far is stuck (when that is
/// above the floor, [`IN_FLIGHT_FLOOR_US`]): a slow query of a workload of slow queries is
/// not, one that waits a hundred times longer than nearly all others is.
const STUCK_P99_FACTOR: u64 = 100;

/// The stuck bound, µs: the larger of 1 s and [`STUCK_P99_FACTOR`]× the p99 of `events`.
fn stuck_bound_us(events: &Histogram<u64>) -> u64 {
    let p99 = if events.is_empty() {
        0
    } else {
        events.value_at_quantile(0.99)
    };
    IN_FLIGHT_FLOOR_US.max(p99.saturating_mul(STUCK_P99_FACTOR))
}

/// Of the requests that had waited `in_flight_us` at a tick (each at least the floor), how
/// many are stuck against the phase's `events` so far, and the longest wait, s.
fn stuck(in_flight_us: &[u64], events: &Histogram<u64>) -> (u32, f64) {
    let bound = stuck_bound_us(events);
    let stuck = in_flight_us.iter().filter(|us| **us > bound).count();
    let longest = in_flight_us.iter().copied().max().unwrap_or(0);
    (
        u32::try_from(stuck).unwrap_or(u32::MAX),
        longest as f64 / 1e6,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::stats::record_us;
    use std::time::Duration;

    fn stats_with(events: &[u64]) -> IntervalStats {
        let mut s = IntervalStats::new(1);
        s.loop_cpu_s = 0.25;
        s.loop_wait_s = 0.05;
        for &us in events {
            record_us(&mut s.events, us);
            s.queries.read += 1;
        }
        s
    }

    /// `loops` unpinned loops on CPUs 0..loops.
    fn placement(loops: usize) -> Placement {
        Placement {
            loops,
            cpus: (0..loops).collect(),
            pinned: false,
            shares_server: None,
            chosen_by: "test".into(),
        }
    }

    #[test]
    fn merges_loops_in_order_and_discards_warm_up() {
        let t0 = Instant::now();
        let bounds = Boundaries {
            measure_start: t0 + Duration::from_secs(1),
            interval: Duration::from_secs(1),
            end: None,
            warm: 0,
        };
        let mut c = Collector::new(bounds, 2, vec!["point_selects".into()], vec![50.0]);
        let seen: std::cell::RefCell<Vec<Sample>> = Default::default();
        let mut on = |s: &Sample| seen.borrow_mut().push(s.clone());
        c.cpu_at_boundary(0, CpuSnapshot::now(), &mut on);
        // Warm-up (interval 0) from both loops: nothing is emitted for it.
        c.interval(0, 0, &stats_with(&[1, 1, 1]), &mut on);
        c.interval(1, 0, &stats_with(&[1]), &mut on);
        // Interval 1: loop 0 sends, loop 1 not yet; the CPU snapshot arrives in between.
        c.interval(0, 1, &stats_with(&[100, 200]), &mut on);
        c.cpu_at_boundary(1, CpuSnapshot::now(), &mut on);
        assert!(seen.borrow().is_empty(), "interval 1 waits for loop 1");
        c.interval(1, 1, &stats_with(&[300]), &mut on);
        assert_eq!(seen.borrow().len(), 1);
        assert_eq!(seen.borrow()[0].events, 3);
        assert!((seen.borrow()[0].elapsed_s - 1.0).abs() < 1e-9);
        // Loop 1 ends in interval 2, loop 0 goes on to end in interval 3.
        let end = bounds.measure_start + Duration::from_millis(2500);
        c.finished(
            1,
            2,
            end - Duration::from_millis(400),
            &stats_with(&[10]),
            CpuSnapshot::now(),
            &mut on,
        );
        c.interval(0, 2, &stats_with(&[20]), &mut on);
        assert_eq!(
            seen.borrow().len(),
            1,
            "interval 2 waits for its CPU snapshot"
        );
        c.cpu_at_boundary(2, CpuSnapshot::now(), &mut on);
        assert_eq!(seen.borrow().len(), 2);
        assert_eq!(seen.borrow()[1].events, 2);
        c.finished(
            0,
            3,
            end,
            &stats_with(&[30, 40]),
            CpuSnapshot::now(),
            &mut on,
        );
        assert_eq!(seen.borrow().len(), 3);
        assert_eq!(seen.borrow()[2].events, 2);
        assert!(
            (seen.borrow()[2].elapsed_s - 2.5).abs() < 1e-6,
            "{}",
            seen.borrow()[2].elapsed_s
        );
        assert!((seen.borrow()[2].interval_s - 0.5).abs() < 1e-6);
        let placement = placement(2);
        let r = c.result(2, None, &placement);
        // Each measured interval charged 0.25 s to its loop: loop 0 sent 3 of them, loop 1 two,
        // over 2.5 s (the warm-up's CPU is not counted).
        let client = r.client.as_ref().unwrap();
        assert!((client.busy[0] - 0.3).abs() < 1e-9, "{client:?}");
        assert!((client.busy[1] - 0.2).abs() < 1e-9, "{client:?}");
        assert!((client.waited[0] - 0.06).abs() < 1e-9, "{client:?}");
        assert_eq!(r.events, 7, "warm-up excluded");
        assert_eq!(r.queries.read, 7);
        assert_eq!(r.samples.len(), 3);
        assert!((r.duration_s - 2.5).abs() < 1e-6);
        assert_eq!(r.latency.max_ms, 0.3);
        assert_eq!(r.histograms[0].name, "event");
        assert!(r.rate.is_none());
    }

    #[test]
    fn whole_warm_up_intervals_are_kept_apart_and_never_counted() {
        let t0 = Instant::now();
        let bounds = Boundaries {
            measure_start: t0 + Duration::from_millis(2500),
            interval: Duration::from_secs(1),
            end: None,
            warm: 2,
        };
        let mut c = Collector::new(bounds, 1, vec!["q".into()], vec![50.0]);
        let seen: std::cell::RefCell<Vec<Sample>> = Default::default();
        let mut on = |s: &Sample| seen.borrow_mut().push(s.clone());
        for k in 0..=3 {
            c.cpu_at_boundary(k, CpuSnapshot::now(), &mut on);
        }
        // The first half interval, then two whole warm-up intervals, then a measured one.
        c.interval(0, 0, &stats_with(&[5]), &mut on);
        c.interval(0, 1, &stats_with(&[1_000, 1_000]), &mut on);
        c.interval(0, 2, &stats_with(&[2_000, 2_000, 2_000]), &mut on);
        assert!(
            seen.borrow().is_empty(),
            "warm-up intervals are not reported"
        );
        c.interval(0, 3, &stats_with(&[100]), &mut on);
        assert_eq!(seen.borrow().len(), 1);
        c.finished(
            0,
            4,
            bounds.measure_start + Duration::from_millis(1500),
            &stats_with(&[200]),
            CpuSnapshot::now(),
            &mut on,
        );
        let placement = placement(1);
        let r = c.result(1, None, &placement);
        assert_eq!(r.events, 2, "warm-up events never count");
        assert_eq!(r.samples.len(), 2);
        assert_eq!(r.warmup.len(), 2);
        assert_eq!(r.warmup[0].events, 2);
        assert_eq!(r.warmup[1].events, 3);
        assert!(
            (r.warmup[0].elapsed_s + 1.0).abs() < 1e-6,
            "{:?}",
            r.warmup[0]
        );
        assert!(r.warmup[1].elapsed_s.abs() < 1e-6, "{:?}", r.warmup[1]);
        assert!((r.warmup[1].interval_s - 1.0).abs() < 1e-6);
        assert_eq!(r.warmup[1].latency.avg_ms, 2.0);
        assert!((r.duration_s - 1.5).abs() < 1e-6);
    }

    #[test]
    fn stuck_requests_are_judged_against_the_phase_p99_and_unfinished_events_count_in_the_max() {
        let t0 = Instant::now();
        let bounds = Boundaries {
            measure_start: t0,
            interval: Duration::from_secs(1),
            end: None,
            warm: 0,
        };
        let mut c = Collector::new(bounds, 1, vec!["q".into()], vec![99.0]);
        let seen: std::cell::RefCell<Vec<Sample>> = Default::default();
        let mut on = |s: &Sample| seen.borrow_mut().push(s.clone());
        for k in 0..=2 {
            c.cpu_at_boundary(k, CpuSnapshot::now(), &mut on);
        }
        c.interval(0, 0, &stats_with(&[]), &mut on);
        // Interval 1: fast events (p99 ~2 ms, bound 1 s); one request waited 1.5 s.
        let mut s1 = stats_with(&[2_000; 100]);
        s1.in_flight_us = vec![1_500_000];
        c.interval(0, 1, &s1, &mut on);
        // Interval 2: events of 50 ms lift the bound to 5 s: 2.5 s is slow, not stuck; 6 s is.
        let mut s2 = stats_with(&[50_000; 100]);
        s2.in_flight_us = vec![2_500_000, 6_000_000];
        c.interval(0, 2, &s2, &mut on);
        // The loop ends with an event 7 s old still waiting.
        let mut last = stats_with(&[]);
        last.unfinished_max_us = 7_000_000;
        let end = t0 + Duration::from_millis(2500);
        c.finished(0, 3, end, &last, CpuSnapshot::now(), &mut on);
        let seen = seen.borrow();
        let stuck: Vec<(u32, f64)> = seen
            .iter()
            .map(|s| (s.stuck_sessions, s.longest_in_flight_s))
            .collect();
        assert_eq!(stuck, vec![(1, 1.5), (1, 6.0), (0, 0.0)]);
        let placement = placement(1);
        let r = c.result(2, None, &placement);
        assert_eq!(r.events, 200);
        assert_eq!(r.latency.max_ms, 7000.0);
    }

    #[test]
    fn the_stuck_bound_is_one_second_or_a_hundred_p99s() {
        let mut h = crate::run::stats::new_histogram();
        assert_eq!(stuck_bound_us(&h), 1_000_000);
        record_us(&mut h, 2_000);
        assert_eq!(stuck_bound_us(&h), 1_000_000);
        let mut slow = crate::run::stats::new_histogram();
        record_us(&mut slow, 40_000);
        let b = stuck_bound_us(&slow);
        assert!((3_990_000..=4_010_000).contains(&b), "{b}");
        assert_eq!(stuck(&[900_000, 1_200_000], &h), (1, 1.2));
    }
}
