//! The coordinator's bookkeeping: merges the loops' interval statistics, in order, into one
//! [`Sample`] per report interval and into the phase totals.
//!
//! Interval `k` covers `[b_{k-1}, b_k)`; interval 0 is the warm-up and is discarded. A loop
//! sends every interval it crosses, then a final partial one when it ends; interval `k` is
//! complete once every loop has either sent it or ended before it.

use super::cpu::CpuSnapshot;
use super::placement::Placement;
use super::schedule::Boundaries;
use super::stats::{blob, client_lateness, summarize, IntervalStats};
use qpslab_core::result::{PhaseResult, RateStats, Sample, StatementLatency};
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
    /// When the last loop ended.
    end: Option<Instant>,
    /// Per loop: its thread's seconds on a CPU and waiting for one over the measured intervals.
    loop_cpu_s: Vec<f64>,
    loop_wait_s: Vec<f64>,
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
            end: None,
            loop_cpu_s: vec![0.0; loops],
            loop_wait_s: vec![0.0; loops],
        }
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
        if k > 0 {
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
            let stats = self
                .pending
                .remove(&k)
                .unwrap_or_else(|| IntervalStats::new(self.kinds.len()));
            self.next_k += 1;
            if k > 0 {
                let sample = self.sample(k, &stats, is_last);
                on_sample(&sample);
                self.samples.push(sample);
                self.total.merge(&stats);
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
        Sample {
            elapsed_s: end.duration_since(self.bounds.measure_start).as_secs_f64(),
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
        }
    }

    /// The phase result, once every loop has ended.
    pub fn result(self, threads: u32, rate: Option<f64>, placement: &Placement) -> PhaseResult {
        let end = self.end.unwrap_or(self.bounds.measure_start);
        let duration_s = end
            .saturating_duration_since(self.bounds.measure_start)
            .as_secs_f64();
        let t = &self.total;
        let cpu = match (self.cpu_at.get(&0), self.cpu_at.get(&self.last_k())) {
            (Some(a), Some(b)) => b.since(a),
            _ => Default::default(),
        };
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
            latency: summarize(&t.events, &self.percentiles),
            statements,
            samples: self.samples,
            client_cpu: cpu,
            rate,
            histograms,
            stability: None,
            replay: None,
            actions: Vec::new(),
            io: None,
            client: Some(placement.record(busy, waited)),
            tpcc: None,
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

    #[test]
    fn merges_loops_in_order_and_discards_warm_up() {
        let t0 = Instant::now();
        let bounds = Boundaries {
            measure_start: t0 + Duration::from_secs(1),
            interval: Duration::from_secs(1),
            end: None,
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
        let placement = Placement {
            loops: 2,
            cpus: vec![0, 1],
            pinned: false,
            shares_server: None,
            chosen_by: "test".into(),
        };
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
}
