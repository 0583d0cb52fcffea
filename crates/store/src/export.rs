//! The one JSON form of a stored run ([`RunDoc`]) and the one CSV writer ([`write_csv`]).

use crate::error::Error;
use crate::model::{
    RunId, RunMeta, RunStatus, StoredPhase, StoredRun, TelemetrySample, UnixSeconds,
};
use crate::schema::SCHEMA_VERSION;
use crate::Store;
use qpslab_core::result::{PhaseResult, QueryCounts};
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Write;

/// A stored run as JSON, the form `qpslab run --json`, `qpslab show RUN --json` and each cell of
/// `qpslab lab show --json` print: what the run was (`meta`), where it stands, and every phase
/// with its headline numbers beside its whole result (samples, histograms as hex) and
/// telemetry. `format` and `schema_version` let readers check what they hold.
#[derive(Clone, Debug, Serialize)]
pub struct RunDoc {
    /// Always `qpslab-run`.
    pub format: &'static str,
    /// The store's schema version the run was read with.
    pub schema_version: i64,
    /// The run's id in its store.
    pub id: RunId,
    /// Where it stands.
    pub status: RunStatus,
    /// When it started, `2024-05-01T12:34:56Z`.
    pub started_utc: String,
    /// When it was finished, if it was, in the same form (the document's times are ISO 8601
    /// UTC; only `meta.started_at` is Unix seconds, the stored record as it is kept).
    pub finished_utc: Option<String>,
    /// Plan, target, server, host and tool version.
    pub meta: RunMeta,
    /// Its phases in the order they ran.
    pub phases: Vec<PhaseDoc>,
}

/// One phase of a [`RunDoc`].
#[derive(Clone, Debug, Serialize)]
pub struct PhaseDoc {
    /// Order within the run, from 1.
    pub seq: u32,
    /// `done`, `interrupted` or `running`.
    pub status: String,
    /// Sessions.
    pub threads: u32,
    /// Measured seconds.
    pub duration_s: f64,
    /// Transactions (events).
    pub events: u64,
    /// Events per second.
    pub tps: f64,
    /// Queries per second.
    pub qps: f64,
    /// Queries by class.
    pub queries: QueryCounts,
    /// `min`, `avg`, `max` and each percentile (`p95`, `p99.9`...), in milliseconds.
    pub latency_ms: BTreeMap<String, f64>,
    /// Retried errors by code.
    pub errors: BTreeMap<u16, u64>,
    /// Sessions re-established.
    pub reconnects: u64,
    /// The stability verdict, in words, when it was judged.
    pub stability: Option<String>,
    /// The live actions (`run --at`) with their judgments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<qpslab_core::live::ActionRecord>,
    /// A fileio phase's iops, MiB/s and fio's identity (`qpslab io` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub io: Option<crate::IoDoc>,
    /// The whole result: samples, statements, histograms, client CPU, rate.
    pub result: PhaseResult,
    /// Telemetry taken during it.
    pub telemetry: Vec<TelemetrySample>,
}

impl PhaseDoc {
    fn new(mut p: StoredPhase, status: String, block_size: u64) -> PhaseDoc {
        let actions = std::mem::take(&mut p.result.actions);
        let r = &p.result;
        let lat = &r.latency;
        let mut latency_ms: BTreeMap<String, f64> = [
            ("min", lat.min_ms),
            ("avg", lat.avg_ms),
            ("max", lat.max_ms),
        ]
        .map(|(k, v)| (k.to_string(), v))
        .into();
        latency_ms.extend(lat.percentiles.iter().map(|x| (format!("p{}", x.p), x.ms)));
        PhaseDoc {
            seq: p.seq,
            status,
            threads: r.threads,
            duration_s: r.duration_s,
            events: r.events,
            tps: r.tps(),
            qps: r.qps(),
            queries: r.queries,
            latency_ms,
            errors: r.errors.clone(),
            reconnects: r.reconnects,
            stability: r.stability.as_ref().map(ToString::to_string),
            actions,
            io: crate::IoDoc::new(r, block_size),
            result: p.result,
            telemetry: p.telemetry,
        }
    }
}

impl RunDoc {
    /// The document of `run`; `statuses` are its phases' statuses in order.
    pub fn new(run: StoredRun, statuses: Vec<String>) -> RunDoc {
        let mut statuses = statuses.into_iter();
        let block_size = run.meta.plan.fileio.as_ref().map_or(0, |o| o.block_size);
        RunDoc {
            format: "qpslab-run",
            schema_version: SCHEMA_VERSION,
            id: run.id,
            status: run.status,
            started_utc: iso8601_utc(run.meta.started_at),
            finished_utc: run.finished_at.map(iso8601_utc),
            meta: run.meta,
            phases: run
                .phases
                .into_iter()
                .map(|p| PhaseDoc::new(p, statuses.next().unwrap_or_default(), block_size))
                .collect(),
        }
    }
}

impl Store {
    /// Run `id` as its [`RunDoc`].
    pub fn run_doc(&self, id: RunId) -> Result<RunDoc, Error> {
        Ok(RunDoc::new(self.load_run(id)?, self.phase_statuses(id)?))
    }
}

/// Writes a CSV table (RFC 4180: a field is quoted when it holds a separator, a quote or a line
/// break): `header`, then one line per row.
pub fn write_csv<R, F>(out: impl Write, header: &[&str], rows: R) -> Result<(), Error>
where
    R: IntoIterator<Item = Vec<F>>,
    F: AsRef<[u8]>,
{
    let mut w = csv::Writer::from_writer(out);
    w.write_record(header)?;
    for row in rows {
        w.write_record(row)?;
    }
    w.flush()?;
    Ok(())
}

/// `2024-05-01T12:34:56Z` for a Unix time (whole seconds, UTC); times outside the calendar
/// `jiff` supports (years -9999 to 9999) read as the Unix epoch.
pub fn iso8601_utc(t: UnixSeconds) -> String {
    let ts = jiff::Timestamp::from_second(t.floor() as i64).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    ts.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_dates() {
        assert_eq!(iso8601_utc(0.0), "1970-01-01T00:00:00Z");
        // 2000-02-29 12:00:00 UTC, a leap day in a century leap year.
        assert_eq!(iso8601_utc(951_825_600.5), "2000-02-29T12:00:00Z");
        assert_eq!(iso8601_utc(1_735_689_599.0), "2024-12-31T23:59:59Z");
    }

    #[test]
    fn csv_fields_are_quoted_when_they_must_be() {
        let mut out = Vec::new();
        let rows = [vec!["plain", "a,b", "say \"hi\"", "two\nlines"]];
        write_csv(&mut out, &["w", "x", "y", "z"], rows).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "w,x,y,z\nplain,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\"\n"
        );
    }
}
