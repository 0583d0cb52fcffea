//! What a fileio run's JSON adds to each phase: iops, MiB/s read and written, fio's identity,
//! and the same per interval.

use qpslab_core::fileio::MIB;
use qpslab_core::result::{PhaseResult, Sample};
use serde::Serialize;
use std::collections::BTreeMap;

/// The I/O figures of one phase of a fileio run.
#[derive(Clone, Debug, Serialize)]
pub struct IoDoc {
    /// I/O operations per second.
    pub iops: f64,
    /// MiB/s read, as fio computed it.
    pub read_mib_s: f64,
    /// MiB/s written, as fio computed it.
    pub write_mib_s: f64,
    /// fsync/fdatasync calls.
    pub fsyncs: u64,
    /// `fio-3.33`.
    pub fio_version: String,
    /// The fio command that ran.
    pub fio_command: Vec<String>,
    /// One entry per report interval.
    pub intervals: Vec<IoInterval>,
}

/// One report interval of a fileio phase.
#[derive(Clone, Debug, Serialize)]
pub struct IoInterval {
    /// Seconds since the phase began, at the end of the interval.
    pub elapsed_s: f64,
    /// I/O operations per second.
    pub iops: f64,
    /// MiB/s read (operations × block size).
    pub read_mib_s: f64,
    /// MiB/s written (operations × block size).
    pub write_mib_s: f64,
    /// Latency percentiles of the interval (`p50`, `p95`, `p99`, `p99.9`) and `max`, ms.
    pub latency_ms: BTreeMap<String, f64>,
}

fn per_s(n: f64, s: &Sample) -> f64 {
    if s.interval_s > 0.0 {
        n / s.interval_s
    } else {
        0.0
    }
}

impl IoDoc {
    /// The figures of `p`, if it is an I/O phase, with requests of `block_size` bytes.
    pub fn new(p: &PhaseResult, block_size: u64) -> Option<IoDoc> {
        let io = p.io.as_ref()?;
        let mib = |ops: u64, s: &Sample| per_s(ops as f64 * block_size as f64 / MIB, s);
        let intervals = p
            .samples
            .iter()
            .map(|s| {
                let mut latency_ms: BTreeMap<String, f64> =
                    [("max".to_string(), s.latency.max_ms)].into();
                latency_ms.extend(
                    s.latency
                        .percentiles
                        .iter()
                        .map(|x| (format!("p{}", x.p), x.ms)),
                );
                IoInterval {
                    elapsed_s: s.elapsed_s,
                    iops: per_s(s.events as f64, s),
                    read_mib_s: mib(s.queries.read, s),
                    write_mib_s: mib(s.queries.write, s),
                    latency_ms,
                }
            })
            .collect();
        Some(IoDoc {
            iops: p.tps(),
            read_mib_s: io.read_mib_s,
            write_mib_s: io.write_mib_s,
            fsyncs: io.fsyncs,
            fio_version: io.fio_version.clone(),
            fio_command: io.fio_command.clone(),
            intervals,
        })
    }
}

/// A fileio phase in one line: what `lab show` gives per cell of a fileio study (its table,
/// `--format csv`, and each cell's `io` in `--format json`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IoHeadline {
    /// MiB/s read and written, as fio computed them.
    pub mib_s: f64,
    /// MiB/s read.
    pub read_mib_s: f64,
    /// MiB/s written.
    pub write_mib_s: f64,
    /// I/O operations per second.
    pub iops: f64,
    /// Average completion latency, ms.
    pub lat_avg_ms: f64,
    /// 99th percentile of the completion latency, ms (fio's own, from its histograms).
    pub p99_ms: Option<f64>,
}

impl IoHeadline {
    /// The headline of `p`, if it is an I/O phase.
    pub fn of(p: &PhaseResult) -> Option<IoHeadline> {
        let io = p.io.as_ref()?;
        Some(IoHeadline {
            mib_s: io.read_mib_s + io.write_mib_s,
            read_mib_s: io.read_mib_s,
            write_mib_s: io.write_mib_s,
            iops: p.tps(),
            lat_avg_ms: p.latency.avg_ms,
            p99_ms: p.percentile_ms(99.0),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use qpslab_core::fileio::IoFigures;
    use qpslab_core::result::{LatencySummary, Percentile};

    #[test]
    fn a_fileio_phase_gives_its_mib_s_iops_and_latency_and_another_none() {
        let p = PhaseResult {
            events: 4000,
            duration_s: 2.0,
            latency: LatencySummary {
                avg_ms: 0.004,
                percentiles: vec![Percentile { p: 99.0, ms: 0.011 }],
                ..Default::default()
            },
            io: Some(IoFigures {
                read_mib_s: 30.0,
                write_mib_s: 1.25,
                ..Default::default()
            }),
            ..Default::default()
        };
        let h = IoHeadline::of(&p).unwrap();
        assert_eq!((h.mib_s, h.iops), (31.25, 2000.0));
        assert_eq!((h.lat_avg_ms, h.p99_ms), (0.004, Some(0.011)));
        let oltp = PhaseResult { io: None, ..p };
        assert_eq!(IoHeadline::of(&oltp), None);
    }
}
