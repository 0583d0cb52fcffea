//! Reading runs back.

use crate::db::{Conn, OptionalExtension, Row};
use crate::error::Error;
use crate::model::{
    RunId, RunMeta, RunStatus, RunSummary, StoredPhase, StoredRun, TelemetrySample,
};
use crate::Store;
use qpslab_core::result::{
    CpuUsage, HistogramBlob, LatencySummary, PhaseResult, QueryCounts, Sample,
};
use qpslab_core::telemetry::Reading;

fn status(s: String) -> Result<RunStatus, Error> {
    s.parse().map_err(Error::from)
}

/// A stored integer as the counter it was.
fn count(row: &Row<'_>, idx: usize) -> Result<u64, Error> {
    let v: i64 = row.get(idx)?;
    // Counters are written from u64 through a checked conversion, so a negative one can only come
    // from a hand-edited file; reading it as 0 beats refusing the whole run.
    Ok(u64::try_from(v).unwrap_or(0))
}

impl Store {
    /// The newest `limit` runs, newest first.
    pub fn list_runs(&self, limit: usize) -> Result<Vec<RunSummary>, Error> {
        let mut st = self.conn.prepare(
            "SELECT r.id, r.uuid, r.started_at, r.status, r.workload, r.target, r.server_version,
                    count(p.id), coalesce(max(p.tps), 0.0), coalesce(max(p.qps), 0.0)
             FROM runs r LEFT JOIN phases p ON p.run_id = r.id
             GROUP BY r.id ORDER BY r.started_at DESC, r.id DESC LIMIT ?1",
        )?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = st.query_map([limit], |r| {
            Ok((
                RunId(r.get(0)?),
                r.get::<_, String>(1)?,
                r.get::<_, f64>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, String>(5)?,
                r.get::<_, String>(6)?,
                r.get::<_, u32>(7)?,
                r.get::<_, f64>(8)?,
                r.get::<_, f64>(9)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (id, uuid, started_at, st, workload, target, server_version, phases, tps, qps) =
                row?;
            out.push(RunSummary {
                id,
                uuid,
                started_at,
                status: status(st)?,
                workload,
                target,
                server_version,
                phases,
                best_tps: tps,
                best_qps: qps,
            });
        }
        Ok(out)
    }

    /// The id of the most recently started run, if any.
    pub fn latest_run_id(&self) -> Result<Option<RunId>, Error> {
        self.conn
            .query_row(
                "SELECT id FROM runs ORDER BY started_at DESC, id DESC LIMIT 1",
                [],
                |r| r.get(0).map(RunId),
            )
            .optional()
    }

    /// The id of the run with this uuid, if it was recorded.
    pub fn run_id_by_uuid(&self, uuid: &str) -> Result<Option<RunId>, Error> {
        self.conn
            .query_row("SELECT id FROM runs WHERE uuid = ?1", [uuid], |r| {
                r.get(0).map(RunId)
            })
            .optional()
    }

    /// A whole run: its meta and every phase with samples, histograms and telemetry.
    pub fn load_run(&self, id: RunId) -> Result<StoredRun, Error> {
        let row = self
            .conn
            .query_row(
                "SELECT uuid, started_at, finished_at, status, command, plan_json, target,
                        server_json, host_json, tool_version, study_id, cell_label
                 FROM runs WHERE id = ?1",
                [id.0],
                |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, f64>(1)?,
                        r.get::<_, Option<f64>>(2)?,
                        r.get::<_, String>(3)?,
                        r.get::<_, String>(4)?,
                        r.get::<_, String>(5)?,
                        r.get::<_, String>(6)?,
                        r.get::<_, String>(7)?,
                        r.get::<_, String>(8)?,
                        r.get::<_, String>(9)?,
                        r.get::<_, Option<String>>(10)?,
                        r.get::<_, Option<String>>(11)?,
                    ))
                },
            )
            .optional()?
            .ok_or(Error::RunNotFound(id))?;
        let (
            uuid,
            started_at,
            finished_at,
            st,
            command,
            plan,
            target,
            server,
            host,
            tool,
            study,
            cell,
        ) = row;
        let meta = RunMeta {
            uuid,
            started_at,
            command,
            plan: serde_json::from_str(&plan)?,
            target,
            server: serde_json::from_str(&server)?,
            host: serde_json::from_str(&host)?,
            tool_version: tool,
            study_id: study,
            cell_label: cell,
        };
        Ok(StoredRun {
            id,
            meta,
            status: status(st)?,
            finished_at,
            phases: self.load_phases(id)?,
        })
    }

    /// The status of each phase of run `id` in order: `running` (being measured, or its process
    /// is alive elsewhere), `done`, or `interrupted` (its figures come from its stored samples).
    pub fn phase_statuses(&self, id: RunId) -> Result<Vec<String>, Error> {
        let mut st = self
            .conn
            .prepare("SELECT status FROM phases WHERE run_id = ?1 ORDER BY seq")?;
        let rows = st.query_map([id.0], |r| r.get(0))?;
        rows.collect::<Result<_, _>>()
    }

    fn load_phases(&self, id: RunId) -> Result<Vec<StoredPhase>, Error> {
        let mut st = self.conn.prepare(
            "SELECT id, seq, recorded_at, summary_json, status FROM phases
             WHERE run_id = ?1 ORDER BY seq",
        )?;
        let rows = st.query_map([id.0], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, u32>(1)?,
                r.get::<_, f64>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (phase_id, seq, recorded_at, summary, status) = row?;
            let samples = samples_of(&self.conn, phase_id)?;
            let mut result: PhaseResult = serde_json::from_str(&summary)?;
            if status == "running" {
                // A phase still being measured has no summary yet: what its samples say so far.
                result = summary_of_samples(result.threads, samples);
            } else {
                result.samples = samples;
            }
            result.histograms = self.load_histograms(phase_id)?;
            result.actions = crate::actions::load_actions(&self.conn, phase_id)?;
            out.push(StoredPhase {
                seq,
                recorded_at,
                result,
                telemetry: self.load_telemetry(phase_id)?,
            });
        }
        Ok(out)
    }

    fn load_histograms(&self, phase_id: i64) -> Result<Vec<HistogramBlob>, Error> {
        let mut st = self
            .conn
            .prepare("SELECT name, v2 FROM histograms WHERE phase_id = ?1 ORDER BY seq")?;
        let rows = st.query_map([phase_id], |r| {
            Ok(HistogramBlob {
                name: r.get(0)?,
                v2: r.get(1)?,
            })
        })?;
        rows.collect::<Result<_, _>>()
    }

    fn load_telemetry(&self, phase_id: i64) -> Result<Vec<TelemetrySample>, Error> {
        let mut st = self.conn.prepare(
            "SELECT elapsed_s, source, json FROM telemetry WHERE phase_id = ?1 ORDER BY seq",
        )?;
        let rows = st.query_map([phase_id], |r| {
            Ok((
                r.get::<_, f64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (elapsed_s, source, json) = row?;
            // A reading this version cannot read (a newer version's kind, a damaged row) is
            // left out: the run's own numbers do not depend on it and still load.
            let reading = serde_json::from_str(&json)
                .ok()
                .and_then(|values| Reading::from_parts(&source, values).ok());
            if let Some(reading) = reading {
                out.push(TelemetrySample { elapsed_s, reading });
            }
        }
        Ok(out)
    }
}

/// The samples of phase `phase_id`, in order.
pub(crate) fn samples_of(conn: &Conn, phase_id: i64) -> Result<Vec<Sample>, Error> {
    let mut st = conn.prepare(
        "SELECT elapsed_s, interval_s, events, reads, writes, other, errors, reconnects,
                lat_count, lat_min_ms, lat_avg_ms, lat_max_ms, p_json, client_cpu_user_s,
                client_cpu_sys_s, client_max_rss_kib, late_events, max_lag_ms,
                client_late_events, client_max_late_ms, stuck_sessions, longest_in_flight_s,
                histogram
         FROM samples WHERE phase_id = ?1 ORDER BY seq",
    )?;
    let rows = st.query_map([phase_id], |r| {
        Ok((
            Sample {
                elapsed_s: r.get(0)?,
                interval_s: r.get(1)?,
                events: count(r, 2)?,
                queries: QueryCounts {
                    read: count(r, 3)?,
                    write: count(r, 4)?,
                    other: count(r, 5)?,
                },
                errors: count(r, 6)?,
                reconnects: count(r, 7)?,
                latency: LatencySummary {
                    count: count(r, 8)?,
                    min_ms: r.get(9)?,
                    avg_ms: r.get(10)?,
                    max_ms: r.get(11)?,
                    percentiles: Vec::new(),
                },
                client_cpu: CpuUsage {
                    user_s: r.get(13)?,
                    sys_s: r.get(14)?,
                    max_rss_kib: count(r, 15)?,
                },
                late_events: count(r, 16)?,
                max_lag_ms: r.get(17)?,
                client_late_events: count(r, 18)?,
                client_max_late_ms: r.get(19)?,
                stuck_sessions: r.get(20)?,
                longest_in_flight_s: r.get(21)?,
                histogram: r.get::<_, Option<Vec<u8>>>(22)?.map(|v2| HistogramBlob {
                    name: "event".into(),
                    v2,
                }),
            },
            r.get::<_, String>(12)?,
        ))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (mut sample, p_json) = row?;
        sample.latency.percentiles = serde_json::from_str(&p_json)?;
        out.push(sample);
    }
    Ok(out)
}

/// What a phase's samples say about it as a whole, for a phase that never got its own summary:
/// counts and CPU are sums, latency min/max/mean are exact, percentiles and per-statement
/// latency are left out (intervals' percentiles do not combine), and errors are not by code.
pub fn summary_of_samples(threads: u32, samples: Vec<Sample>) -> PhaseResult {
    let mut p = PhaseResult {
        threads,
        ..Default::default()
    };
    let mut lat = LatencySummary::default();
    let mut weighted = 0.0;
    for s in &samples {
        p.duration_s += s.interval_s;
        p.events += s.events;
        p.queries = QueryCounts {
            read: p.queries.read + s.queries.read,
            write: p.queries.write + s.queries.write,
            other: p.queries.other + s.queries.other,
        };
        p.reconnects += s.reconnects;
        p.client_cpu = CpuUsage {
            user_s: p.client_cpu.user_s + s.client_cpu.user_s,
            sys_s: p.client_cpu.sys_s + s.client_cpu.sys_s,
            max_rss_kib: p.client_cpu.max_rss_kib.max(s.client_cpu.max_rss_kib),
        };
        if s.latency.count > 0 {
            lat.min_ms = if lat.count == 0 {
                s.latency.min_ms
            } else {
                lat.min_ms.min(s.latency.min_ms)
            };
            lat.max_ms = lat.max_ms.max(s.latency.max_ms);
            lat.count += s.latency.count;
            weighted += s.latency.avg_ms * s.latency.count as f64;
        }
    }
    if lat.count > 0 {
        lat.avg_ms = weighted / lat.count as f64;
    }
    p.latency = lat;
    p.samples = samples;
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_of_samples_adds_counts_and_weights_the_mean() {
        let s = |events, count, min, avg, max| Sample {
            elapsed_s: 0.0,
            interval_s: 1.0,
            events,
            queries: QueryCounts {
                read: events * 10,
                write: 0,
                other: 1,
            },
            latency: LatencySummary {
                count,
                min_ms: min,
                avg_ms: avg,
                max_ms: max,
                percentiles: Vec::new(),
            },
            ..Default::default()
        };
        let p = summary_of_samples(
            4,
            vec![s(100, 100, 0.5, 1.0, 3.0), s(300, 300, 0.2, 2.0, 9.0)],
        );
        assert_eq!((p.threads, p.events, p.duration_s), (4, 400, 2.0));
        assert_eq!(p.queries.read, 4000);
        assert_eq!(p.tps(), 200.0);
        assert_eq!((p.latency.min_ms, p.latency.max_ms), (0.2, 9.0));
        assert!((p.latency.avg_ms - 1.75).abs() < 1e-9);
        assert_eq!(p.samples.len(), 2);
        let empty = summary_of_samples(1, vec![s(0, 0, 0.0, 0.0, 0.0)]);
        assert_eq!(empty.latency.count, 0);
    }
}
