//! A fileio phase as sysbench fileio prints it: the live line of each interval and the summary
//! (file operations, throughput, general statistics, latency).

use qpslab_core::fileio::MIB;
use qpslab_core::result::{PhaseResult, Sample};
use std::fmt::Write;

fn per_s(n: f64, secs: f64) -> f64 {
    if secs > 0.0 {
        n / secs
    } else {
        0.0
    }
}

/// A fileio latency as `qpslab io` prints it: ms to the microsecond (`0.140`), since most
/// I/O completes in well under a millisecond. `lab show` prints a fileio study's with it.
pub fn latency_ms(ms: f64) -> String {
    format!("{ms:.3}")
}

fn p95(s: &Sample) -> String {
    s.latency
        .percentiles
        .iter()
        .find(|p| p.p == 95.0)
        .map_or("-".into(), |p| latency_ms(p.ms))
}

/// One interval: `[ 2s ] iops: 812.00 reads: 12.69 MiB/s writes: 0.00 MiB/s fsyncs: 0.00/s
/// latency (ms,95%): 0.140`.
pub fn live_line(s: &Sample, block_size: u64) -> String {
    let mib = |ops: u64| per_s(ops as f64 * block_size as f64 / MIB, s.interval_s);
    format!(
        "[ {:.0}s ] iops: {:.2} reads: {:.2} MiB/s writes: {:.2} MiB/s fsyncs: {:.2}/s latency (ms,95%): {}",
        s.elapsed_s,
        per_s(s.events as f64, s.interval_s),
        mib(s.queries.read),
        mib(s.queries.write),
        per_s(s.queries.other as f64, s.interval_s),
        p95(s)
    )
}

fn row(o: &mut String, label: &str, value: impl std::fmt::Display) {
    let _ = writeln!(o, "    {label:<36}{value}");
}

/// The phase's summary, with fio's own figures.
pub fn io_summary(p: &PhaseResult) -> String {
    let mut o = String::new();
    let d = p.duration_s;
    let io = p.io.clone().unwrap_or_default();
    let _ = writeln!(o, "File operations:");
    row(
        &mut o,
        "reads/s:",
        format!("{:.2}", per_s(io.read_ops as f64, d)),
    );
    row(
        &mut o,
        "writes/s:",
        format!("{:.2}", per_s(io.write_ops as f64, d)),
    );
    row(
        &mut o,
        "fsyncs/s:",
        format!("{:.2}", per_s(io.fsyncs as f64, d)),
    );
    row(&mut o, "iops:", format!("{:.2}", p.tps()));
    let _ = writeln!(o, "\nThroughput:");
    row(&mut o, "read, MiB/s:", format!("{:.2}", io.read_mib_s));
    row(&mut o, "written, MiB/s:", format!("{:.2}", io.write_mib_s));
    let _ = writeln!(o, "\nGeneral statistics:");
    row(&mut o, "total time:", format!("{d:.4}s"));
    row(&mut o, "total number of events:", p.events);
    let _ = writeln!(o, "\nLatency (ms, fio's completion latency):");
    let l = &p.latency;
    row(&mut o, "min:", latency_ms(l.min_ms));
    row(&mut o, "avg:", latency_ms(l.avg_ms));
    for x in &l.percentiles {
        row(&mut o, &format!("p{}:", x.p), latency_ms(x.ms));
    }
    row(&mut o, "max:", latency_ms(l.max_ms));
    if let Some(s) = &p.stability {
        let _ = writeln!(o, "\nStability: {s}");
    }
    let _ = writeln!(o, "\n{} ({})", io.fio_version, io.fio_command.join(" "));
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use qpslab_core::fileio::IoFigures;
    use qpslab_core::result::{LatencySummary, Percentile, QueryCounts};

    fn phase() -> PhaseResult {
        let latency = LatencySummary {
            count: 4000,
            min_ms: 0.002,
            avg_ms: 0.05,
            max_ms: 3.2,
            percentiles: [(50.0, 0.04), (95.0, 0.09), (99.0, 0.2), (99.9, 1.5)]
                .map(|(p, ms)| Percentile { p, ms })
                .into(),
        };
        let sample = Sample {
            elapsed_s: 1.0,
            interval_s: 1.0,
            events: 2000,
            queries: QueryCounts {
                read: 1200,
                write: 800,
                other: 8,
            },
            latency: latency.clone(),
            ..Default::default()
        };
        PhaseResult {
            threads: 2,
            duration_s: 2.0,
            events: 4000,
            latency,
            samples: vec![sample],
            io: Some(IoFigures {
                read_ops: 2400,
                write_ops: 1600,
                read_bytes: 2400 * 16384,
                write_bytes: 1600 * 16384,
                read_mib_s: 18.75,
                write_mib_s: 12.5,
                fsyncs: 16,
                fio_version: "fio-3.33".into(),
                fio_command: vec!["fio".into(), "--rw=randrw".into()],
            }),
            ..Default::default()
        }
    }

    #[test]
    fn summary_and_live_line_match_their_golden_file() {
        let p = phase();
        let text = format!("{}\n{}", live_line(&p.samples[0], 16384), io_summary(&p));
        let golden = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/io_summary.txt");
        if std::env::var_os("UPDATE_GOLDEN").is_some() {
            std::fs::write(golden, &text).unwrap();
        }
        assert_eq!(text, std::fs::read_to_string(golden).unwrap());
    }
}
