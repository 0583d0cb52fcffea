//! JSON and CSV exports of a stored run.

use crate::error::Error;
use crate::model::{RunId, StoredRun, UnixSeconds};
use crate::schema::SCHEMA_VERSION;
use crate::Store;
use std::io::Write;

impl Store {
    /// The whole run as one JSON document: meta, status and every phase with its samples,
    /// histograms (hex), telemetry and status (`done`, `interrupted`, `running`). `format` and
    /// `schema_version` let readers check what they hold.
    pub fn export_json(&self, id: RunId) -> Result<serde_json::Value, Error> {
        let run = self.load_run(id)?;
        let mut v = serde_json::to_value(&run)?;
        let statuses = self.phase_statuses(id)?;
        if let Some(phases) = v.get_mut("phases").and_then(|p| p.as_array_mut()) {
            for (phase, status) in phases.iter_mut().zip(statuses) {
                if let Some(obj) = phase.as_object_mut() {
                    obj.insert("status".into(), status.into());
                }
            }
        }
        if let Some(obj) = v.as_object_mut() {
            obj.insert("format".into(), "qpslab-run".into());
            obj.insert("schema_version".into(), SCHEMA_VERSION.into());
            obj.insert(
                "started_utc".into(),
                iso8601_utc(run.meta.started_at).into(),
            );
        }
        Ok(v)
    }

    /// The run as CSV, one header line and one row per phase. Percentile columns (`p95_ms`...)
    /// are the union of the percentiles any phase reported, empty where a phase lacks one.
    pub fn export_csv(&self, id: RunId, out: &mut dyn Write) -> Result<(), Error> {
        write_csv(&self.load_run(id)?, out)
    }
}

fn write_csv(run: &StoredRun, out: &mut dyn Write) -> Result<(), Error> {
    let mut ps: Vec<f64> = Vec::new();
    for ph in &run.phases {
        for p in &ph.result.latency.percentiles {
            if !ps.contains(&p.p) {
                ps.push(p.p);
            }
        }
    }
    ps.sort_by(f64::total_cmp);
    let mut header: Vec<String> = [
        "run_id",
        "run_uuid",
        "started_utc",
        "status",
        "workload",
        "target",
        "server_version",
        "phase",
        "threads",
        "duration_s",
        "events",
        "reads",
        "writes",
        "other",
        "errors",
        "reconnects",
        "tps",
        "qps",
        "lat_min_ms",
        "lat_avg_ms",
        "lat_max_ms",
    ]
    .map(String::from)
    .to_vec();
    header.extend(ps.iter().map(|p| format!("p{p}_ms")));
    header.extend(
        [
            "client_cpu_user_s",
            "client_cpu_sys_s",
            "client_max_rss_kib",
            "client_cpu_us_per_query",
        ]
        .map(String::from),
    );
    writeln!(out, "{}", header.join(","))?;
    let m = &run.meta;
    for ph in &run.phases {
        let r = &ph.result;
        let mut row = vec![
            run.id.to_string(),
            m.uuid.clone(),
            iso8601_utc(m.started_at),
            run.status.to_string(),
            m.plan.workload.kind.name().to_string(),
            m.target.clone(),
            m.server.version.clone(),
            ph.seq.to_string(),
            r.threads.to_string(),
            r.duration_s.to_string(),
            r.events.to_string(),
            r.queries.read.to_string(),
            r.queries.write.to_string(),
            r.queries.other.to_string(),
            r.error_total().to_string(),
            r.reconnects.to_string(),
            r.tps().to_string(),
            r.qps().to_string(),
            r.latency.min_ms.to_string(),
            r.latency.avg_ms.to_string(),
            r.latency.max_ms.to_string(),
        ];
        for p in &ps {
            let v = r.latency.percentiles.iter().find(|x| x.p == *p);
            row.push(v.map(|x| x.ms.to_string()).unwrap_or_default());
        }
        row.push(r.client_cpu.user_s.to_string());
        row.push(r.client_cpu.sys_s.to_string());
        row.push(r.client_cpu.max_rss_kib.to_string());
        row.push(
            r.client_cpu_us_per_query()
                .map(|x| x.to_string())
                .unwrap_or_default(),
        );
        let cells: Vec<String> = row.iter().map(|c| csv_field(c)).collect();
        writeln!(out, "{}", cells.join(","))?;
    }
    Ok(())
}

/// A CSV field, quoted (RFC 4180) when it holds a separator, a quote or a line break.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
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
    fn csv_quoting() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}
