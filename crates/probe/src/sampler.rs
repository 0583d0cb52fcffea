//! Telemetry on every report tick of a phase: server status deltas, CPU and memory of the
//! server and of the client, the server's I/O bytes, and `perf stat` counters for the phase.
//!
//! A [`Sampler`] holds its own control connection (never one of the measured sessions) and is
//! driven from the engine's `on_sample` callback: [`Sampler::begin`] before the phase,
//! [`Sampler::tick`] on each report tick, [`Sampler::finish`] after it. A reading that fails
//! mid-phase (the server went away) is recorded as an error sample rather than ending the phase:
//! telemetry must never cost a measurement.

use crate::error::Error;
use crate::perf::PerfStat;
use crate::process::{process_cpu, self_cpu};
use crate::server::global_status;
use crate::status::{GlobalStatus, StatusDelta};
use qpslab_core::env::ProcessCpu;
use qpslab_core::TelemetrySample;
use qpslab_wire::Conn;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::path::PathBuf;
use std::time::Instant;

/// Bytes a process read and wrote, from `/proc/PID/io`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoBytes {
    /// Bytes read through any syscall (`rchar`).
    pub rchar: u64,
    /// Bytes written through any syscall (`wchar`).
    pub wchar: u64,
    /// Bytes fetched from storage (`read_bytes`).
    pub read_bytes: u64,
    /// Bytes sent to storage (`write_bytes`).
    pub write_bytes: u64,
}

impl IoBytes {
    fn since(&self, before: &IoBytes) -> IoBytes {
        IoBytes {
            rchar: self.rchar.saturating_sub(before.rchar),
            wchar: self.wchar.saturating_sub(before.wchar),
            read_bytes: self.read_bytes.saturating_sub(before.read_bytes),
            write_bytes: self.write_bytes.saturating_sub(before.write_bytes),
        }
    }
}

/// `/proc/PID/io` of process `pid` (reading another user's process needs root).
pub fn process_io(pid: u32) -> Result<IoBytes, Error> {
    let path = PathBuf::from(format!("/proc/{pid}/io"));
    let text = std::fs::read_to_string(&path).map_err(|source| Error::Io {
        path: path.clone(),
        source,
    })?;
    Ok(parse_io(&text))
}

pub(crate) fn parse_io(text: &str) -> IoBytes {
    let mut io = IoBytes::default();
    for line in text.lines() {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        let v = v.trim().parse().unwrap_or(0);
        match k {
            "rchar" => io.rchar = v,
            "wchar" => io.wchar = v,
            "read_bytes" => io.read_bytes = v,
            "write_bytes" => io.write_bytes = v,
            _ => {}
        }
    }
    io
}

/// One reading of everything a tick compares.
#[derive(Clone)]
struct Snapshot {
    at: Instant,
    status: GlobalStatus,
    server: Option<ProcessCpu>,
    server_io: Option<IoBytes>,
    client: Option<ProcessCpu>,
}

/// Per-tick telemetry of one phase. See the module documentation.
pub struct Sampler {
    conn: Conn,
    server_pid: Option<u32>,
    first: Option<Snapshot>,
    last: Option<Snapshot>,
    perf: Option<PerfStat>,
    samples: Vec<TelemetrySample>,
}

impl Sampler {
    /// A sampler reading status through `conn` and, when `server_pid` is known (a sandbox), the
    /// server process's CPU, memory, I/O and perf counters.
    pub fn new(conn: Conn, server_pid: Option<u32>) -> Sampler {
        Sampler {
            conn,
            server_pid,
            first: None,
            last: None,
            perf: None,
            samples: Vec::new(),
        }
    }

    /// The control connection, for other queries between phases.
    pub fn conn(&mut self) -> &mut Conn {
        &mut self.conn
    }

    fn snapshot(&mut self) -> Result<Snapshot, Error> {
        let status = global_status(&mut self.conn)?;
        Ok(Snapshot {
            at: Instant::now(),
            status,
            server: self.server_pid.and_then(|p| process_cpu(p).ok()),
            server_io: self.server_pid.and_then(|p| process_io(p).ok()),
            client: self_cpu().ok(),
        })
    }

    /// Takes the reading the phase is compared against and starts `perf stat` on the server
    /// when the machine supports it. Call right before the phase.
    pub fn begin(&mut self) -> Result<(), Error> {
        self.samples.clear();
        let s = self.snapshot()?;
        self.first = Some(s.clone());
        self.last = Some(s);
        self.perf = self.server_pid.and_then(|p| PerfStat::start(p).ok());
        Ok(())
    }

    /// Records the changes since the previous tick (or [`Sampler::begin`]); `elapsed_s` is the
    /// tick's time since the measured phase began (the engine's `Sample::elapsed_s`).
    pub fn tick(&mut self, elapsed_s: f64) {
        let values = match self.snapshot() {
            Ok(now) => {
                let v = self
                    .last
                    .as_ref()
                    .map_or(json!({}), |prev| delta(prev, &now));
                self.last = Some(now);
                v
            }
            Err(e) => json!({ "error": e.to_string() }),
        };
        self.samples.push(TelemetrySample {
            elapsed_s,
            source: "tick".into(),
            values,
        });
    }

    /// The per-tick readings taken since [`Sampler::begin`], oldest first.
    pub fn ticks(&self) -> &[TelemetrySample] {
        &self.samples
    }

    /// Ends the phase: the per-tick samples, then whole-phase totals since [`Sampler::begin`]
    /// (`server_status_delta`, `server_proc`, `client_proc`) and `perf` (the counters, or
    /// why there are none). `elapsed_s` is the phase's length, warm-up included.
    pub fn finish(&mut self, elapsed_s: f64) -> Result<Vec<TelemetrySample>, Error> {
        let now = self.snapshot()?;
        let mut out = std::mem::take(&mut self.samples);
        let sample = |source: &str, values| TelemetrySample {
            elapsed_s,
            source: source.into(),
            values,
        };
        if let Some(first) = self.first.take() {
            let d = StatusDelta::between(&first.status, &now.status, elapsed_s);
            out.push(sample(
                "server_status_delta",
                serde_json::to_value(d.nonzero()).unwrap_or_default(),
            ));
            if let (Some(c0), Some(c1)) = (first.server, now.server) {
                let mut v = cpu_json(&c0, &c1);
                if let (Some(a), Some(b)) = (first.server_io, now.server_io) {
                    v["io"] = serde_json::to_value(b.since(&a)).unwrap_or_default();
                }
                out.push(sample("server_proc", v));
            }
            if let (Some(c0), Some(c1)) = (first.client, now.client) {
                out.push(sample("client_proc", cpu_json(&c0, &c1)));
            }
        }
        let perf = match (self.perf.take(), self.server_pid) {
            (Some(p), _) => p.stop(),
            (None, None) => {
                json!({"supported": false, "reason": "the server's process is not known (external target)"})
            }
            (None, Some(_)) => match crate::perf::perf_support() {
                Ok(()) => json!({"supported": false, "reason": "perf stat could not be started"}),
                Err(reason) => json!({"supported": false, "reason": reason}),
            },
        };
        out.push(sample("perf", perf));
        self.last = None;
        Ok(out)
    }
}

fn cpu_json(c0: &ProcessCpu, c1: &ProcessCpu) -> serde_json::Value {
    json!({"user_s": c1.user_s - c0.user_s, "sys_s": c1.sys_s - c0.sys_s, "rss_kib": c1.rss_kib})
}

fn delta(prev: &Snapshot, now: &Snapshot) -> serde_json::Value {
    let interval_s = now.at.duration_since(prev.at).as_secs_f64();
    let status = StatusDelta::between(&prev.status, &now.status, interval_s).nonzero();
    let mut v = json!({
        "interval_s": interval_s,
        "status": { "counters": status.counters, "gauges": status.gauges },
    });
    if let (Some(a), Some(b)) = (prev.server, now.server) {
        v["server"] = cpu_json(&a, &b);
        if let (Some(x), Some(y)) = (prev.server_io, now.server_io) {
            v["server"]["io"] = serde_json::to_value(y.since(&x)).unwrap_or_default();
        }
    }
    if let (Some(a), Some(b)) = (prev.client, now.client) {
        v["client"] = cpu_json(&a, &b);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_io_is_parsed() {
        let text = "rchar: 2012\nwchar: 40\nsyscr: 7\nsyscw: 2\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n";
        let io = parse_io(text);
        assert_eq!(io.rchar, 2012);
        assert_eq!(io.write_bytes, 8192);
        let later = IoBytes { rchar: 3000, ..io };
        assert_eq!(later.since(&io).rchar, 988);
        assert_eq!(later.since(&io).read_bytes, 0);
    }

    #[test]
    fn own_io_is_readable() {
        let io = process_io(std::process::id()).unwrap();
        assert!(io.rchar > 0, "{io:?}");
    }
}
