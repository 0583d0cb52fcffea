//! Readings and the change between two of them, robust to a server restart in between: a new
//! server process counts its CPU and I/O from its start, and status counters that went back
//! count from zero (see [`StatusDelta::between`]); the phase's totals are the sum of the
//! per-tick changes, so a restart loses only what happened between the last reading before it
//! and the crash.

use crate::process::IoBytes;
use qpslab_core::env::ProcessCpu;
use qpslab_core::status::{GlobalStatus, StatusDelta};
use qpslab_core::telemetry::ProcUsage;
use std::collections::BTreeMap;
use std::time::Instant;

/// One reading of everything a tick compares.
#[derive(Clone)]
pub(super) struct Reading {
    pub at: Instant,
    pub status: GlobalStatus,
    /// The server process read, with its CPU and I/O (when known and alive).
    pub server_pid: Option<u32>,
    pub server: Option<ProcessCpu>,
    pub server_io: Option<IoBytes>,
}

/// The server's change between two readings.
pub(super) struct Change {
    pub interval_s: f64,
    pub status: StatusDelta,
    pub server: Option<ProcUsage>,
}

impl Change {
    pub fn between(prev: &Reading, now: &Reading) -> Change {
        let interval_s = now.at.duration_since(prev.at).as_secs_f64();
        let same = prev.server_pid == now.server_pid;
        let server = match (prev.server, now.server) {
            (Some(a), Some(b)) => Some(ProcUsage {
                io: match (prev.server_io, now.server_io) {
                    (Some(x), Some(y)) if same => Some(y.since(&x)),
                    (_, Some(y)) if !same => Some(y),
                    _ => None,
                },
                ..ProcUsage::between(&a, &b, same)
            }),
            // A new process with nothing to compare to: everything it did is new.
            (None, Some(b)) if !same => Some(ProcUsage {
                io: now.server_io,
                ..ProcUsage::between(&b, &b, false)
            }),
            _ => None,
        };
        Change {
            interval_s,
            status: StatusDelta::between(&prev.status, &now.status, interval_s).nonzero(),
            server,
        }
    }
}

/// The phase's sums of the per-tick changes.
#[derive(Default)]
pub(super) struct Totals {
    counters: BTreeMap<String, i64>,
    server: Option<ProcUsage>,
}

impl Totals {
    pub fn add(&mut self, c: &Change) {
        for (k, v) in &c.status.counters {
            *self.counters.entry(k.clone()).or_insert(0) += v;
        }
        if let Some(d) = c.server {
            let t = self.server.get_or_insert_with(ProcUsage::default);
            t.user_s += d.user_s;
            t.sys_s += d.sys_s;
            t.rss_kib = d.rss_kib;
            t.io = match (t.io, d.io) {
                (Some(a), Some(b)) => Some(a.plus(&b)),
                (a, b) => a.or(b),
            };
        }
    }

    /// The whole phase's status change: the summed counters and the last reading's gauges.
    pub fn status(&self, last: Option<&Reading>, elapsed_s: f64) -> StatusDelta {
        let mut d = last.map_or_else(StatusDelta::default, |r| {
            StatusDelta::between(&r.status, &r.status, elapsed_s)
        });
        d.elapsed_s = elapsed_s;
        d.counters = self.counters.clone();
        d.nonzero()
    }

    pub fn server(&self) -> Option<ProcUsage> {
        self.server
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use qpslab_core::status::status_from_rows;

    fn reading(pid: u32, questions: &str, uptime: &str, user_s: f64) -> Reading {
        Reading {
            at: Instant::now(),
            status: status_from_rows([
                ("Questions", Some(questions)),
                ("Uptime", Some(uptime)),
                ("Threads_connected", Some("3")),
            ]),
            server_pid: Some(pid),
            server: Some(ProcessCpu {
                user_s,
                sys_s: 0.5,
                rss_kib: 1000,
            }),
            server_io: None,
        }
    }

    #[test]
    fn a_restart_between_readings_counts_from_zero_and_totals_add_up() {
        let a = reading(10, "1000", "500", 20.0);
        let b = reading(10, "1600", "501", 21.0);
        // Killed and restarted: a new pid, counters and uptime from zero.
        let c = reading(11, "40", "2", 0.25);
        let d = reading(11, "140", "3", 0.75);
        let mut t = Totals::default();
        let mut deltas = Vec::new();
        for (p, n) in [(&a, &b), (&b, &c), (&c, &d)] {
            let ch = Change::between(p, n);
            deltas.push((ch.status.counter("Questions"), ch.server.unwrap()));
            t.add(&ch);
        }
        assert_eq!(deltas[0].0, 600);
        assert_eq!(deltas[1].0, 40, "no negative delta across the restart");
        assert_eq!(deltas[2].0, 100);
        assert!((deltas[0].1.user_s - 1.0).abs() < 1e-9);
        assert!(
            (deltas[1].1.user_s - 0.25).abs() < 1e-9,
            "the new process's own CPU"
        );
        assert!((deltas[1].1.sys_s - 0.5).abs() < 1e-9);
        let total = t.status(Some(&d), 3.0);
        assert_eq!(total.counter("Questions"), 740);
        assert_eq!(total.gauges["Threads_connected"], 3);
        assert!((t.server().unwrap().user_s - 1.75).abs() < 1e-9);
    }
}
