//! What replay sessions count: latency per class and overall (the engine's HDR histograms),
//! statements by read/write/other, errors per class and code, skipped writes, lateness. Each
//! session fills its own [`Tally`]; the coordinator takes it at every report tick, turns the
//! interval into a `Sample` and adds it to the phase's total.

use super::{class_id, Kind, ReplayLog};
use hdrhistogram::Histogram;
use qpslab_core::replay::{ClassOutcome, ReplayOutcome};
use qpslab_core::result::{HistogramBlob, QueryCounts, RateStats, Sample, StatementLatency};
use qpslab_engine::run::{blob, new_histogram, record_us, summarize};
use std::collections::BTreeMap;

/// The code counted for a connection lost while a statement ran (the client's CR_SERVER_LOST).
pub const LOST_CONNECTION: u16 = 2013;

/// Lag above which a statement counts as late, µs (as the engine's fixed rate).
const LATE_US: u64 = 1_000;

/// A class's latency histogram (µs): 2 significant digits and growing with the largest value
/// recorded, so a log of thousands of classes costs a few kilobytes per class and interval
/// instead of the ~190 KB of the engine's fixed full-range 3-digit histogram (kept for the
/// statements as a whole).
fn class_histogram() -> Histogram<u64> {
    // 2 significant digits is within hdrhistogram's bounds (0..=5).
    Histogram::new(2).expect("2 significant digits are valid")
}

/// One class's counts.
#[derive(Clone, Debug, Default)]
pub struct ClassCount {
    /// Latency of its statements (successful ones).
    pub latency: Option<Histogram<u64>>,
    /// Statements run, errors included.
    pub executed: u64,
    /// Errors by code.
    pub errors: BTreeMap<u16, u64>,
    /// Statements the replay's policy did not run.
    pub skipped: u64,
    /// Why (the first reason seen).
    pub skip_reason: Option<String>,
}

/// What one or more sessions did over a span.
#[derive(Clone, Debug)]
pub struct Tally {
    /// Latency of every successful statement.
    pub all: Histogram<u64>,
    /// By class index.
    pub classes: BTreeMap<u32, ClassCount>,
    /// Successful statements by kind.
    pub queries: QueryCounts,
    /// Failed statements.
    pub errors: u64,
    /// Connections re-established.
    pub reconnects: u64,
    /// Failed reconnection attempts by code (2002/2003, or the server's), outside any class.
    pub connect_errors: BTreeMap<u16, u64>,
    /// Statements whose start was measured against a due time.
    pub timed: u64,
    /// Of those, started more than 1 ms late.
    pub late: u64,
    /// Sum and maximum of the lag, µs.
    pub lag_sum_us: u64,
    /// Largest lag, µs.
    pub lag_max_us: u64,
}

impl Default for Tally {
    fn default() -> Self {
        Tally {
            all: new_histogram(),
            classes: BTreeMap::new(),
            queries: QueryCounts::default(),
            errors: 0,
            reconnects: 0,
            connect_errors: BTreeMap::new(),
            timed: 0,
            late: 0,
            lag_sum_us: 0,
            lag_max_us: 0,
        }
    }
}

impl Tally {
    /// A statement of `class` that succeeded in `us` µs.
    pub fn ok(&mut self, class: u32, kind: Kind, us: u64) {
        record_us(&mut self.all, us);
        let c = self.classes.entry(class).or_default();
        c.executed += 1;
        // An auto-resizing histogram takes any value; recording cannot fail.
        let _ = c
            .latency
            .get_or_insert_with(class_histogram)
            .record(us.max(1));
        match kind {
            Kind::Read => self.queries.read += 1,
            Kind::Write => self.queries.write += 1,
            Kind::Other => self.queries.other += 1,
        }
    }

    /// A statement of `class` that failed with `code`.
    pub fn failed(&mut self, class: u32, code: u16) {
        let c = self.classes.entry(class).or_default();
        c.executed += 1;
        *c.errors.entry(code).or_insert(0) += 1;
        self.errors += 1;
    }

    /// A reconnection attempt that failed with `code` (counted as an error, as `run` does).
    pub fn connect_failed(&mut self, code: u16) {
        *self.connect_errors.entry(code).or_insert(0) += 1;
        self.errors += 1;
    }

    /// A statement of `class` that the policy did not run, and why.
    pub fn skipped(&mut self, class: u32, reason: String) {
        let c = self.classes.entry(class).or_default();
        c.skipped += 1;
        c.skip_reason.get_or_insert(reason);
    }

    /// A statement started `lag_us` after it was due.
    pub fn lag(&mut self, lag_us: u64) {
        self.timed += 1;
        self.lag_sum_us += lag_us;
        self.lag_max_us = self.lag_max_us.max(lag_us);
        if lag_us > LATE_US {
            self.late += 1;
        }
    }

    /// Adds `o` into `self`.
    pub fn merge(&mut self, o: &Tally) {
        // Histograms of one shape add without error.
        let _ = self.all.add(&o.all);
        for (k, c) in &o.classes {
            let mine = self.classes.entry(*k).or_default();
            mine.executed += c.executed;
            mine.skipped += c.skipped;
            if mine.skip_reason.is_none() {
                mine.skip_reason.clone_from(&c.skip_reason);
            }
            for (code, n) in &c.errors {
                *mine.errors.entry(*code).or_insert(0) += n;
            }
            if let Some(h) = &c.latency {
                let _ = mine.latency.get_or_insert_with(class_histogram).add(h);
            }
        }
        self.queries.read += o.queries.read;
        self.queries.write += o.queries.write;
        self.queries.other += o.queries.other;
        self.errors += o.errors;
        self.reconnects += o.reconnects;
        for (code, n) in &o.connect_errors {
            *self.connect_errors.entry(*code).or_insert(0) += n;
        }
        self.timed += o.timed;
        self.late += o.late;
        self.lag_sum_us += o.lag_sum_us;
        self.lag_max_us = self.lag_max_us.max(o.lag_max_us);
    }

    /// The interval ending `elapsed_s` into the phase, `interval_s` long.
    pub fn sample(&self, elapsed_s: f64, interval_s: f64, percentiles: &[f64]) -> Sample {
        Sample {
            elapsed_s,
            interval_s,
            events: self.queries.total(),
            queries: self.queries,
            errors: self.errors,
            reconnects: self.reconnects,
            latency: summarize(&self.all, percentiles),
            late_events: self.late,
            max_lag_ms: self.lag_max_us as f64 / 1e3,
            ..Default::default()
        }
    }

    /// Latency per class, named `c1 <fingerprint>`..., and the histograms (`event` first).
    pub fn statements(
        &self,
        log: &ReplayLog,
        percentiles: &[f64],
    ) -> (Vec<StatementLatency>, Vec<HistogramBlob>) {
        let mut lat = Vec::new();
        let mut blobs = vec![blob("event", &self.all)];
        for (k, c) in &self.classes {
            let Some(h) = &c.latency else { continue };
            let name = class_name(log, *k);
            lat.push(StatementLatency {
                kind: name.clone(),
                latency: summarize(h, percentiles),
            });
            blobs.push(blob(&name, h));
        }
        (lat, blobs)
    }

    /// The schedule's lateness (sessions mode at a speed), over `duration_s`.
    pub fn rate(&self, duration_s: f64, scheduled: u64, log_span_s: f64) -> RateStats {
        let per_s = |n: u64, s: f64| if s > 0.0 { n as f64 / s } else { 0.0 };
        RateStats {
            target_per_s: per_s(scheduled, log_span_s),
            achieved_per_s: per_s(self.timed, duration_s),
            late_events: self.late,
            mean_lag_ms: per_s(self.lag_sum_us, self.timed as f64) / 1e3,
            max_lag_ms: self.lag_max_us as f64 / 1e3,
            ..Default::default()
        }
    }

    /// Per-class outcome, in class order.
    pub fn outcome(&self, log: &ReplayLog) -> ReplayOutcome {
        let classes = self
            .classes
            .iter()
            .map(|(k, c)| ClassOutcome {
                id: class_id(*k as usize),
                fingerprint: log.classes[*k as usize].clone(),
                executed: c.executed,
                errors: c.errors.clone(),
                skipped: c.skipped,
                skip_reason: c.skip_reason.clone(),
            })
            .collect();
        ReplayOutcome {
            classes,
            skipped_admin: log.skipped_admin,
            skipped_unparsed: log.skipped_unparsed,
            connections: log.connections(),
            complete: false,
            ended_early: None,
        }
    }
}

/// `c3 select * from t where id = ?`: the class's short id and fingerprint.
pub fn class_name(log: &ReplayLog, class: u32) -> String {
    format!(
        "{} {}",
        class_id(class as usize),
        log.classes[class as usize]
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::tests::logged;

    #[test]
    fn merged_tallies_count_classes_errors_and_lag() {
        let mut log = ReplayLog::default();
        log.add_statement(logged(1, Some(1), 0.0, "select 1"));
        log.add_statement(logged(1, Some(1), 0.0, "update t"));
        let mut a = Tally::default();
        a.ok(0, Kind::Read, 500);
        a.failed(1, 1146);
        a.lag(3_000);
        let mut b = Tally::default();
        b.ok(0, Kind::Read, 1500);
        b.failed(1, 1146);
        b.skipped(1, "writes: not run by --read-only".into());
        b.lag(10);
        a.merge(&b);
        let s = a.sample(2.0, 1.0, &[99.0]);
        assert_eq!((s.events, s.queries.read, s.errors), (2, 2, 2));
        assert_eq!((s.late_events, s.max_lag_ms), (1, 3.0));
        let o = a.outcome(&log);
        assert_eq!(o.classes[1].errors[&1146], 2);
        assert_eq!((o.classes[1].executed, o.classes[1].skipped), (2, 1));
        assert_eq!(
            o.classes[1].skip_reason.as_deref(),
            Some("writes: not run by --read-only")
        );
        let (lat, blobs) = a.statements(&log, &[99.0]);
        assert_eq!(lat.len(), 1);
        assert_eq!(lat[0].kind, "c1 select 1");
        assert_eq!(lat[0].latency.count, 2);
        assert_eq!(blobs.len(), 2);
        let r = a.rate(1.0, 2, 1.0);
        assert_eq!((r.late_events, r.mean_lag_ms), (1, 1.505));
    }
}
