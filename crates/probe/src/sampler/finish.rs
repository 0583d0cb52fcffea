//! The end of a phase: the last reading (or the gap that prevented it), then the whole-phase
//! totals, perf counters and the telemetry's own account (reconnections, gaps).

use super::Sampler;
use crate::error::Error;
use crate::process::self_cpu;
use crate::sampler::reading::ProcDelta;
use qpslab_core::TelemetrySample;
use serde_json::{json, Map, Value};

impl Sampler {
    /// Ends the phase: the per-tick samples, then whole-phase totals since [`Sampler::begin`]
    /// (`server_status_delta`, `server_proc`, `client_proc`), `perf` (the counters, or why
    /// there are none) and `telemetry` (`reconnects`, `gaps`). `elapsed_s` is the phase's
    /// length, warm-up included. A server unreachable at the end leaves a `gap` rather than an
    /// error: the totals then cover the readings that were taken.
    pub fn finish(&mut self, elapsed_s: f64) -> Result<Vec<TelemetrySample>, Error> {
        if self.advance(elapsed_s).is_err() {
            self.close_gap(elapsed_s, false);
        }
        if self.last.is_some() {
            let d = self.totals.status(self.last.as_ref(), elapsed_s);
            let v = serde_json::to_value(d).unwrap_or_default();
            self.push(elapsed_s, "server_status_delta", v);
            if let Some(s) = self.totals.server() {
                self.push(elapsed_s, "server_proc", s.json());
            }
            if let (Some(c0), Ok(c1)) = (self.first_client, self_cpu()) {
                let c = ProcDelta::between(&c0, &c1, true);
                self.push(elapsed_s, "client_proc", c.json());
            }
        }
        let perf = self.perf_result();
        self.push(elapsed_s, "perf", perf);
        let account = json!({"reconnects": self.link.reconnects, "gaps": self.gaps});
        self.push(elapsed_s, "telemetry", account);
        self.last = None;
        Ok(std::mem::take(&mut self.samples))
    }

    /// The phase's perf counters: summed over the server processes it saw (a restart starts
    /// a new count), or why there are none.
    fn perf_result(&mut self) -> Value {
        if let Some(p) = self.perf.take() {
            self.perf_parts.push(p.stop());
        }
        let parts = std::mem::take(&mut self.perf_parts);
        if !parts.is_empty() {
            return merge_perf(parts);
        }
        match self.server_pid {
            None => {
                json!({"supported": false, "reason": "the server's process is not known (external target)"})
            }
            Some(_) => match crate::perf::perf_support() {
                Ok(()) => json!({"supported": false, "reason": "perf stat could not be started"}),
                Err(reason) => json!({"supported": false, "reason": reason}),
            },
        }
    }
}

/// One process's perf result as is; several (a restarted server) summed, with how many.
fn merge_perf(mut parts: Vec<Value>) -> Value {
    if parts.len() == 1 {
        return parts.remove(0);
    }
    let mut sum = Map::new();
    for p in &parts {
        let Some(counters) = p.get("counters").and_then(Value::as_object) else {
            continue;
        };
        for (k, v) in counters {
            let before = sum.get(k).and_then(Value::as_u64).unwrap_or(0);
            sum.insert(k.clone(), json!(before + v.as_u64().unwrap_or(0)));
        }
    }
    if sum.is_empty() {
        let mut first = parts.remove(0);
        first["processes"] = json!(parts.len() + 1);
        return first;
    }
    json!({"supported": true, "counters": sum, "processes": parts.len()})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perf_of_two_processes_is_summed() {
        let a = json!({"supported": true, "counters": {"instructions": 10, "cycles": 4}});
        let b = json!({"supported": true, "counters": {"instructions": 5}});
        let m = merge_perf(vec![a.clone(), b]);
        assert_eq!(m["counters"]["instructions"], 15);
        assert_eq!(m["counters"]["cycles"], 4);
        assert_eq!(m["processes"], 2);
        assert_eq!(merge_perf(vec![a.clone()]), a);
        let none = json!({"supported": false, "reason": "x"});
        assert_eq!(merge_perf(vec![none.clone(), none])["processes"], 2);
    }
}
