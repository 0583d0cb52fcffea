//! Per-loop interval statistics: HDR histograms (microseconds, 3 significant digits) for events
//! and per statement kind, plus counters. A loop records into its own [`IntervalStats`] with no
//! lock; at each report tick it hands the whole value to the coordinator, which merges the loops'
//! intervals into one sample and into the phase totals.

use hdrhistogram::serialization::{Serializer, V2Serializer};
use hdrhistogram::Histogram;
use qpslab_core::result::{HistogramBlob, QueryCounts, RateStats};
use std::collections::BTreeMap;

pub use qpslab_core::latency::{new_histogram, summarize, MAX_US};

/// Records one latency, clamped into the histogram's range.
#[inline]
pub fn record_us(h: &mut Histogram<u64>, us: u64) {
    h.saturating_record(us.clamp(1, MAX_US));
}

/// A start this much after its due time counts as late, µs.
const LATE_US: u64 = 1_000;

/// What one loop saw during one report interval.
#[derive(Debug)]
pub(crate) struct IntervalStats {
    /// Whole events (transactions), from start (or intended start) to last reply.
    pub events: Histogram<u64>,
    /// One histogram per statement kind, indexed like the phase's kind list.
    pub kinds: Vec<Histogram<u64>>,
    /// Successful statements by class.
    pub queries: QueryCounts,
    /// Retried errors by server code.
    pub errors: BTreeMap<u16, u64>,
    /// Retried errors by (event type's kind index, server code), for workloads whose events
    /// have types (TPC-C).
    pub type_retries: BTreeMap<(usize, u16), u64>,
    /// Connections re-established.
    pub reconnects: u64,
    /// Events that started more than 1 ms after their intended start (fixed rate).
    pub late_events: u64,
    /// Events started under a fixed rate.
    pub rate_started: u64,
    /// Sum of schedule lags (intended start to send), µs.
    pub lag_sum_us: u64,
    /// Largest schedule lag, µs.
    pub lag_max_us: u64,
    /// The loop's own lateness, µs: from when an arrival was due with a session free to when
    /// the loop sent it (fixed rate; made at the interval's first such start).
    pub client_late: Option<Histogram<u64>>,
    /// CPU seconds the loop's thread spent in this interval (its own, not merged across loops:
    /// the coordinator keeps it per loop).
    pub loop_cpu_s: f64,
    /// Seconds the loop's thread was runnable but waiting for a CPU in this interval (kept per
    /// loop like `loop_cpu_s`).
    pub loop_wait_s: f64,
    /// How long each request still waiting for its reply at the interval's end had waited,
    /// µs, for those that waited at least [`IN_FLIGHT_FLOOR_US`] (the coordinator decides
    /// which are stuck). Filled at the report tick, not per query; empty in the common case,
    /// so it allocates nothing then.
    pub in_flight_us: Vec<u64>,
    /// The age of the oldest event still in flight when the loop ended, µs (from its start,
    /// as an event's latency counts): the phase's max latency includes it, so an event that
    /// never completed is not missing from it. Set in a loop's last interval only.
    pub unfinished_max_us: u64,
    /// Each session's measured events and the µs they took, `(events, µs)`. Set in a loop's
    /// last interval only.
    pub sessions: Vec<(u64, u64)>,
}

/// Requests waiting at least this long at a report tick are reported to the coordinator
/// (µs): the floor of the stuck bound, below which no session counts as stuck.
pub(crate) const IN_FLIGHT_FLOOR_US: u64 = 1_000_000;

impl IntervalStats {
    /// Empty statistics for `kinds` statement kinds.
    pub fn new(kinds: usize) -> Self {
        IntervalStats {
            events: new_histogram(),
            kinds: (0..kinds).map(|_| new_histogram()).collect(),
            queries: QueryCounts::default(),
            errors: BTreeMap::new(),
            type_retries: BTreeMap::new(),
            reconnects: 0,
            late_events: 0,
            rate_started: 0,
            lag_sum_us: 0,
            lag_max_us: 0,
            client_late: None,
            loop_cpu_s: 0.0,
            loop_wait_s: 0.0,
            in_flight_us: Vec::new(),
            unfinished_max_us: 0,
            sessions: Vec::new(),
        }
    }

    /// Adds `other` into `self`.
    pub fn merge(&mut self, other: &IntervalStats) {
        // Both histograms share the same bounds, so adding cannot fail; ignore the impossible.
        let _ = self.events.add(&other.events);
        for (a, b) in self.kinds.iter_mut().zip(&other.kinds) {
            let _ = a.add(b);
        }
        self.queries.read += other.queries.read;
        self.queries.write += other.queries.write;
        self.queries.other += other.queries.other;
        for (code, n) in &other.errors {
            *self.errors.entry(*code).or_insert(0) += n;
        }
        for (key, n) in &other.type_retries {
            *self.type_retries.entry(*key).or_insert(0) += n;
        }
        self.reconnects += other.reconnects;
        self.late_events += other.late_events;
        self.rate_started += other.rate_started;
        self.lag_sum_us += other.lag_sum_us;
        self.lag_max_us = self.lag_max_us.max(other.lag_max_us);
        if let Some(b) = &other.client_late {
            let _ = self.client_late.get_or_insert_with(new_histogram).add(b);
        }
        self.in_flight_us.extend_from_slice(&other.in_flight_us);
        self.unfinished_max_us = self.unfinished_max_us.max(other.unfinished_max_us);
        self.sessions.extend_from_slice(&other.sessions);
    }

    /// Records the start of an event under a fixed rate: `lag_us` after its intended start,
    /// of which `client_us` after it was due with a session free (the loop's own lateness;
    /// the rest waited for a session, that is for the server).
    #[inline]
    pub fn record_start(&mut self, lag_us: u64, client_us: u64) {
        self.rate_started += 1;
        self.lag_sum_us += lag_us;
        self.lag_max_us = self.lag_max_us.max(lag_us);
        if lag_us > LATE_US {
            self.late_events += 1;
        }
        record_us(
            self.client_late.get_or_insert_with(new_histogram),
            client_us,
        );
    }

    /// All retried errors.
    pub fn error_total(&self) -> u64 {
        self.errors.values().sum()
    }
}

/// The client's own lateness over a phase, from its histogram (µs), in the rate statistics'
/// terms; zeros when nothing started under the rate.
pub fn client_lateness(h: Option<&Histogram<u64>>) -> RateStats {
    let Some(h) = h.filter(|h| !h.is_empty()) else {
        return RateStats::default();
    };
    let ms = |us: u64| us as f64 / 1e3;
    RateStats {
        client_late_events: h.count_between(LATE_US + 1, h.max().max(LATE_US + 1)),
        client_mean_late_ms: h.mean() / 1e3,
        client_p50_late_ms: ms(h.value_at_quantile(0.5)),
        client_p99_late_ms: ms(h.value_at_quantile(0.99)),
        client_max_late_ms: ms(h.max()),
        ..RateStats::default()
    }
}

/// Serializes a histogram in the V2 format for the results store.
pub fn blob(name: &str, h: &Histogram<u64>) -> HistogramBlob {
    let mut v2 = Vec::new();
    // Writing into a Vec cannot fail on I/O; a serialization error would only mean an empty blob.
    let _ = V2Serializer::new().serialize(h, &mut v2);
    HistogramBlob {
        name: name.to_string(),
        v2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::serialization::Deserializer;
    use qpslab_core::result::Percentile;

    #[test]
    fn percentiles_of_a_known_distribution() {
        let mut h = new_histogram();
        // 1..=1000 µs, once each: p50 ≈ 0.5 ms, p99 ≈ 0.99 ms, max 1 ms.
        for us in 1..=1000 {
            record_us(&mut h, us);
        }
        let s = summarize(&h, &[50.0, 95.0, 99.0, 100.0]);
        assert_eq!(s.count, 1000);
        assert_eq!(s.min_ms, 0.001);
        assert!((s.avg_ms - 0.5005).abs() < 0.001, "{}", s.avg_ms);
        let p: Vec<f64> = s.percentiles.iter().map(|p| p.ms).collect();
        assert!((p[0] - 0.500).abs() <= 0.001, "{p:?}");
        assert!((p[1] - 0.950).abs() <= 0.001, "{p:?}");
        assert!((p[2] - 0.990).abs() <= 0.001, "{p:?}");
        assert!((p[3] - 1.000).abs() <= 0.001, "{p:?}");
        assert_eq!(s.max_ms, p[3]);
    }

    #[test]
    fn a_rare_stall_shows_in_p99_not_p50() {
        let mut h = new_histogram();
        for _ in 0..980 {
            record_us(&mut h, 200);
        }
        for _ in 0..20 {
            record_us(&mut h, 1_000_000);
        }
        let s = summarize(&h, &[50.0, 99.0]);
        assert!((s.percentiles[0].ms - 0.2).abs() < 0.001);
        assert!(
            (s.percentiles[1].ms - 1000.0).abs() < 1.0,
            "{:?}",
            s.percentiles
        );
    }

    #[test]
    fn merge_adds_counts_and_keeps_extremes() {
        let mut a = IntervalStats::new(2);
        let mut b = IntervalStats::new(2);
        record_us(&mut a.events, 100);
        record_us(&mut b.events, 300);
        record_us(&mut b.kinds[1], 7);
        a.queries.read = 3;
        b.queries.read = 4;
        b.queries.write = 1;
        a.errors.insert(1213, 1);
        b.errors.insert(1213, 2);
        b.errors.insert(1205, 1);
        a.type_retries.insert((1, 1213), 1);
        b.type_retries.insert((1, 1213), 2);
        b.type_retries.insert((0, 1205), 1);
        a.record_start(500, 500);
        b.record_start(5_000, 1_200);
        a.merge(&b);
        assert_eq!(a.events.len(), 2);
        assert_eq!(a.events.max(), 300);
        assert_eq!(a.kinds[1].len(), 1);
        assert_eq!(a.queries.total(), 8);
        assert_eq!(a.errors[&1213], 3);
        assert_eq!(a.error_total(), 4);
        assert_eq!(a.type_retries[&(1, 1213)], 3);
        assert_eq!(a.type_retries[&(0, 1205)], 1);
        assert_eq!(a.late_events, 1);
        assert_eq!(a.lag_max_us, 5_000);
        assert_eq!(a.lag_sum_us, 5_500);
        let own = a.client_late.as_ref().unwrap();
        assert_eq!((own.len(), own.min(), own.max()), (2, 500, 1_200));
    }

    #[test]
    fn client_lateness_in_ms_with_late_starts_over_one_ms() {
        assert_eq!(client_lateness(None), RateStats::default());
        let mut h = new_histogram();
        for us in [10, 20, 30, 2_000] {
            record_us(&mut h, us);
        }
        let r = client_lateness(Some(&h));
        assert_eq!(r.client_late_events, 1);
        assert_eq!((r.client_p50_late_ms, r.client_max_late_ms), (0.02, 2.0));
        assert!((r.client_mean_late_ms - 0.515).abs() < 0.001, "{r:?}");
    }

    #[test]
    fn empty_summary_and_clamping() {
        let s = summarize(&new_histogram(), &[99.0]);
        assert_eq!(s.count, 0);
        assert_eq!(s.percentiles, vec![Percentile { p: 99.0, ms: 0.0 }]);
        let mut h = new_histogram();
        record_us(&mut h, 0);
        record_us(&mut h, u64::MAX);
        assert_eq!(h.len(), 2);
        assert_eq!(h.min(), 1);
        assert!(h.max() >= MAX_US);
    }

    #[test]
    fn blob_round_trips() {
        let mut h = new_histogram();
        record_us(&mut h, 42);
        record_us(&mut h, 4200);
        let b = blob("event", &h);
        let back: Histogram<u64> = Deserializer::new()
            .deserialize(&mut b.v2.as_slice())
            .unwrap();
        assert_eq!(back.len(), 2);
        assert_eq!(back.max(), h.max());
    }
}
