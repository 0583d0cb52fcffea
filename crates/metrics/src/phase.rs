//! The figures of one phase as the endpoint serves them: what identifies its series
//! ([`Labels`]) and its running totals and last interval ([`Phase`]), added to once per report
//! interval.

use qpslab_core::telemetry::{ProcUsage, Reading};
use qpslab_core::{Sample, TelemetrySample};
use std::collections::BTreeMap;

/// What identifies the series of one phase.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Labels {
    /// The run's id in the store, or the name of a measurement stored otherwise (a tune trial).
    pub run: String,
    /// Sessions of the phase.
    pub threads: u32,
    /// The study cell's label, when the run is one.
    pub cell: Option<String>,
}

impl Labels {
    /// `(name, value)` pairs in the order they are written.
    pub(crate) fn pairs(&self) -> Vec<(&'static str, String)> {
        let mut v = vec![
            ("run", self.run.clone()),
            ("threads", self.threads.to_string()),
        ];
        if let Some(c) = &self.cell {
            v.push(("cell", c.clone()));
        }
        v
    }
}

/// The current phase's figures.
#[derive(Clone, Debug, Default)]
pub(crate) struct Phase {
    pub labels: Labels,
    /// The last interval's sample.
    pub last: Sample,
    pub events: u64,
    pub queries: [u64; 3],
    pub errors: u64,
    pub reconnects: u64,
    pub late_events: u64,
    pub client_cpu: [f64; 2],
    /// Sum of event latencies in seconds (each interval's mean times its events).
    pub latency_sum_s: f64,
    pub latency_count: u64,
    pub server_cpu: [f64; 2],
    pub server_rss_bytes: Option<u64>,
    /// Server status counters summed over the ticks, by variable.
    pub status_counters: BTreeMap<String, u64>,
    /// Server status gauges, the last tick's, by variable.
    pub status_gauges: BTreeMap<String, u64>,
}

impl Phase {
    pub(crate) fn add(&mut self, s: &Sample, telemetry: &[TelemetrySample]) {
        self.last = s.clone();
        self.events += s.events;
        self.queries[0] += s.queries.read;
        self.queries[1] += s.queries.write;
        self.queries[2] += s.queries.other;
        self.errors += s.errors;
        self.reconnects += s.reconnects;
        self.late_events += s.late_events;
        self.client_cpu[0] += s.client_cpu.user_s;
        self.client_cpu[1] += s.client_cpu.sys_s;
        self.latency_sum_s += s.latency.avg_ms / 1e3 * s.latency.count as f64;
        self.latency_count += s.latency.count;
        for t in telemetry {
            if let Reading::Tick(tick) = &t.reading {
                if let Some(c) = tick.change() {
                    for (name, d) in &c.status.counters {
                        *self.status_counters.entry(name.clone()).or_default() +=
                            u64::try_from(*d).unwrap_or(0);
                    }
                    self.status_gauges.clone_from(&c.status.gauges);
                    if let Some(p) = &c.server {
                        self.add_server(p);
                    }
                }
            }
        }
    }

    fn add_server(&mut self, p: &ProcUsage) {
        self.server_cpu[0] += p.user_s;
        self.server_cpu[1] += p.sys_s;
        self.server_rss_bytes = Some(p.rss_kib * 1024);
    }
}
