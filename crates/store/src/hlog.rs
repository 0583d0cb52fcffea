//! A run's latency histograms in HdrHistogram's interval log format (`qpslab show RUN --hlog
//! FILE`), as Java's `HistogramLogWriter` writes it, for HdrHistogram's own tools
//! (`HistogramLogProcessor`, HdrHistogram plotters) and for merging logs later.
//!
//! The log opens with the format version, a comment naming the run, `#[StartTime: ...]` and
//! `#[BaseTime: ...]` (both the run's start, so interval timestamps are seconds since it) and
//! the legend; then one line per phase, `Tag=threads_N,start,length,max,histogram`: the
//! phase's merged event histogram (values in microseconds, `max` in milliseconds) compressed
//! and in base64, followed by one line per statement kind (`Tag=threads_N.point_selects`).
//! Interrupted phases stored no histogram and have no line.

use crate::error::Error;
use crate::model::StoredRun;
use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
use hdrhistogram::serialization::V2DeflateSerializer;
use std::io::Write;
use std::time::{Duration, UNIX_EPOCH};

/// The legend line Java's writer puts before the histograms.
const LEGEND: &str =
    "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n";

/// Writes `run`'s histograms as an interval log to `out`; returns how many histogram lines
/// it wrote (0: no phase of the run stored one).
pub fn write_hlog(mut out: impl Write, run: &StoredRun) -> Result<usize, Error> {
    let start = run.meta.started_at.max(0.0);
    let at = |secs: f64| UNIX_EPOCH + Duration::from_secs_f64(secs);
    let mut serializer = V2DeflateSerializer::new();
    let mut text: Vec<u8> = Vec::new();
    IntervalLogWriterBuilder::new()
        .add_comment("[Histogram log format version 1.3]")
        .add_comment(&format!(
            "qpslab run {} ({}): event and statement latency per phase, values in microseconds",
            run.id.0,
            run.meta.plan.workload_name()
        ))
        .with_start_time(at(start))
        .with_base_time(at(start))
        .begin_log_with(&mut text, &mut serializer)?;
    text.extend_from_slice(LEGEND.as_bytes());
    let mut lines = 0;
    {
        // Interval_Max in ms, as Java's writer gives it for nanosecond values; this writer
        // notes the divisor in a comment line of its own.
        let mut log = IntervalLogWriterBuilder::new()
            .with_max_value_divisor(1000.0)
            .begin_log_with(&mut text, &mut serializer)?;
        for p in &run.phases {
            let r = &p.result;
            let twin = run
                .phases
                .iter()
                .any(|q| q.seq != p.seq && q.result.threads == r.threads);
            let base = if twin {
                format!("threads_{}_phase{}", r.threads, p.seq)
            } else {
                format!("threads_{}", r.threads)
            };
            let begin = (p.recorded_at - r.duration_s - start).max(0.0);
            for blob in &r.histograms {
                let Some(h) = blob.histogram() else { continue };
                let name = if blob.name == "event" {
                    base.clone()
                } else {
                    format!("{base}.{}", blob.name)
                };
                // A statement kind is a plain word; anything a tag cannot hold is left out.
                let name: String = name
                    .chars()
                    .filter(|c| !matches!(c, ',' | ' ' | '\r' | '\n'))
                    .collect();
                log.write_histogram(
                    &h,
                    Duration::from_secs_f64(begin),
                    Duration::from_secs_f64(r.duration_s.max(0.0)),
                    Tag::new(&name),
                )
                .map_err(|e| Error::Io(std::io::Error::other(e.to_string())))?;
                lines += 1;
            }
        }
    }
    out.write_all(&text)?;
    out.flush()?;
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{RunId, RunMeta, RunStatus, StoredPhase};
    use base64::engine::general_purpose::STANDARD;
    use base64::Engine;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
    use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
    use qpslab_core::result::{HistogramBlob, PhaseResult};

    fn blob(name: &str, values: &[u64]) -> HistogramBlob {
        let mut h = qpslab_core::latency::new_histogram();
        for v in values {
            h.record(*v).unwrap();
        }
        let mut v2 = Vec::new();
        V2Serializer::new().serialize(&h, &mut v2).unwrap();
        HistogramBlob {
            name: name.into(),
            v2,
        }
    }

    fn run() -> StoredRun {
        let mut meta = RunMeta::new(
            qpslab_core::RunPlan::new(qpslab_core::WorkloadOptions::new(
                qpslab_core::WorkloadKind::OltpPointSelect,
            )),
            "t".into(),
            Default::default(),
            Default::default(),
            "qpslab run".into(),
        );
        meta.started_at = 1000.0;
        let phase = |seq: u32, threads: u32, hist: Vec<HistogramBlob>| StoredPhase {
            seq,
            recorded_at: 1000.0 + 10.0 * seq as f64,
            result: PhaseResult {
                threads,
                duration_s: 5.0,
                histograms: hist,
                ..Default::default()
            },
            telemetry: Vec::new(),
        };
        StoredRun {
            id: RunId(7),
            meta,
            status: RunStatus::Completed,
            finished_at: None,
            phases: vec![
                phase(
                    1,
                    1,
                    vec![blob("event", &[10, 20, 3000]), blob("point_selects", &[9])],
                ),
                phase(2, 2, vec![blob("event", &[15, 25_000])]),
                phase(3, 4, Vec::new()),
            ],
        }
    }

    #[test]
    fn the_log_reads_back_with_the_same_counts_and_max() {
        let mut out = Vec::new();
        assert_eq!(write_hlog(&mut out, &run()).unwrap(), 3);
        let text = String::from_utf8(out.clone()).unwrap();
        assert!(
            text.starts_with("#[Histogram log format version 1.3]\n"),
            "{text}"
        );
        assert!(text.contains("#[StartTime: 1000.000 "), "{text}");
        assert!(
            text.contains("\n\"StartTimestamp\",\"Interval_Length\""),
            "{text}"
        );
        let mut got = Vec::new();
        for e in IntervalLogIterator::new(&out) {
            if let LogEntry::Interval(i) = e.unwrap() {
                let bytes = STANDARD.decode(i.encoded_histogram()).unwrap();
                let h: hdrhistogram::Histogram<u64> = Deserializer::new()
                    .deserialize(&mut bytes.as_slice())
                    .unwrap();
                got.push((
                    i.tag().unwrap().as_str().to_string(),
                    i.start_timestamp().as_secs_f64(),
                    h.len(),
                    h.max(),
                    i.max() * 1000.0,
                ));
            }
        }
        assert_eq!(got.len(), 3, "{got:?}");
        assert_eq!(got[0].0, "threads_1");
        assert_eq!((got[0].1, got[0].2, got[0].3), (5.0, 3, 3001));
        assert!(
            got.iter().all(|g| (g.4 - g.3 as f64).abs() < 1e-6),
            "{got:?}"
        );
        assert_eq!(got[1].0, "threads_1.point_selects");
        assert_eq!(got[1].2, 1);
        assert_eq!(got[2].0, "threads_2");
        assert_eq!((got[2].1, got[2].2), (15.0, 2));
    }
}
