//! The end of a phase: the last reading (or the gap that prevented it), then the whole-phase
//! totals, perf counters and the telemetry's own account (reconnections, gaps).

use super::Sampler;
use crate::error::Error;
use crate::process::self_cpu;
use qpslab_core::telemetry::{Account, Perf, ProcUsage, Reading};
use qpslab_core::TelemetrySample;
use std::collections::BTreeMap;

impl Sampler {
    /// Ends the phase: the per-tick samples, then whole-phase totals since [`Sampler::begin`]
    /// (`server_status_delta`, `server_proc`, `client_proc`), `perf` (the counters, or why
    /// there are none), `threads`, `waits`, `disk`, `net` (TCP phases) and `pool` (MariaDB's
    /// thread pool) and `telemetry` (`reconnects`, `gaps`). `elapsed_s` is the phase's
    /// length, warm-up included. A server unreachable at the end leaves a `gap` rather than an
    /// error: the totals then cover the readings that were taken. A profile being recorded
    /// ([`Sampler::start_profile`]) is stopped and folded, its flame graph drawn (or why not
    /// noted in the reading), and named by a `profile` reading.
    pub fn finish(&mut self, elapsed_s: f64) -> Result<Vec<TelemetrySample>, Error> {
        if self.advance(elapsed_s).is_err() {
            self.close_gap(elapsed_s, false);
        }
        if self.last.is_some() {
            let d = self.totals.status(self.last.as_ref(), elapsed_s);
            self.push(elapsed_s, Reading::ServerStatusDelta(d));
            if let Some(s) = self.totals.server() {
                self.push(elapsed_s, Reading::ServerProc(s));
            }
            if let (Some(c0), Ok(c1)) = (self.first_client, self_cpu()) {
                let c = ProcUsage::between(&c0, &c1, true);
                self.push(elapsed_s, Reading::ClientProc(c));
            }
        }
        if let Some(r) = self.replica.as_ref().and_then(|m| m.end()) {
            self.push(elapsed_s, Reading::ReplicaProc(r));
        }
        let perf = self.perf_result();
        self.push(elapsed_s, Reading::Perf(perf));
        for r in self.why.finish(self.link.conn(), self.server_pid) {
            self.push(elapsed_s, r);
        }
        let account = Account {
            reconnects: self.link.reconnects,
            gaps: self.gaps,
        };
        self.push(elapsed_s, Reading::Telemetry(account));
        if let Some(rec) = self.recording.take() {
            let mut profile = rec.stop()?;
            profile.draw(&self.profile_title);
            self.push(elapsed_s, Reading::Profile(profile.files));
        }
        self.last = None;
        Ok(std::mem::take(&mut self.samples))
    }

    /// The phase's perf counters: summed over the server processes it saw (a restart starts
    /// a new count), or why there are none.
    fn perf_result(&mut self) -> Perf {
        if let Some(p) = self.perf.take() {
            self.perf_parts.push(p.stop());
        }
        let parts = std::mem::take(&mut self.perf_parts);
        if !parts.is_empty() {
            return merge_perf(parts);
        }
        match self.server_pid {
            None => Perf::unsupported("the server's process is not known (external target)"),
            Some(_) => match crate::perf::perf_support() {
                Ok(()) => Perf::unsupported("perf stat could not be started"),
                Err(reason) => Perf::unsupported(reason.to_string()),
            },
        }
    }
}

/// One process's perf result as is; several (a restarted server) summed, with how many.
fn merge_perf(mut parts: Vec<Perf>) -> Perf {
    if parts.len() == 1 {
        return parts.remove(0);
    }
    let mut sum = BTreeMap::new();
    for (k, v) in parts.iter().flat_map(|p| &p.counters) {
        *sum.entry(k.clone()).or_insert(0) += v;
    }
    let processes = Some(parts.len());
    if sum.is_empty() {
        return Perf {
            processes,
            ..parts.remove(0)
        };
    }
    Perf {
        supported: true,
        counters: sum,
        reason: None,
        processes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perf_of_two_processes_is_summed() {
        let counted = |c: &[(&str, u64)]| Perf {
            supported: true,
            counters: c.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            ..Perf::default()
        };
        let a = counted(&[("instructions", 10), ("cycles", 4)]);
        let b = counted(&[("instructions", 5)]);
        let m = merge_perf(vec![a.clone(), b]);
        assert_eq!(m.counters["instructions"], 15);
        assert_eq!(m.counters["cycles"], 4);
        assert_eq!(m.processes, Some(2));
        assert_eq!(merge_perf(vec![a.clone()]), a);
        let none = Perf::unsupported("x");
        let m = merge_perf(vec![none.clone(), none]);
        assert_eq!((m.processes, m.reason.as_deref()), (Some(2), Some("x")));
    }
}
