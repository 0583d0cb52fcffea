//! Terminal output: the live line per interval, the sysbench-style phase summary, and the sweep
//! table. Pure functions from results to text, so they are tested against golden files.

use qpslab_core::result::{LatencySummary, PhaseResult, Sample};
use std::fmt::Write;

fn pct_label(p: f64) -> String {
    let s = format!("{p}");
    s.trim_end_matches(".0").to_string()
}

fn pct_value(l: &LatencySummary, p: f64) -> Option<f64> {
    l.percentiles
        .iter()
        .find(|x| (x.p - p).abs() < 1e-9)
        .map(|x| x.ms)
}

fn rate(n: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        n as f64 / secs
    } else {
        0.0
    }
}

/// One live line per report interval, in sysbench's shape.
pub fn live_line(threads: u32, s: &Sample) -> String {
    let dt = s.interval_s;
    let q = &s.queries;
    let mut line = format!(
        "[ {:>4.0}s ] thds: {threads} tps: {:.2} qps: {:.2} (r/w/o: {:.2}/{:.2}/{:.2}) lat (ms",
        s.elapsed_s,
        rate(s.events, dt),
        rate(q.total(), dt),
        rate(q.read, dt),
        rate(q.write, dt),
        rate(q.other, dt),
    );
    for p in &s.latency.percentiles {
        let _ = write!(line, ",{}%", pct_label(p.p));
    }
    line.push_str("):");
    for p in &s.latency.percentiles {
        let _ = write!(line, " {:.2}", p.ms);
    }
    let _ = write!(
        line,
        " err/s: {:.2} reconn/s: {:.2}",
        rate(s.errors, dt),
        rate(s.reconnects, dt)
    );
    // The client's own CPU, in percent of one CPU, so a saturated client shows at once.
    if dt > 0.0 {
        let cpu = (s.client_cpu.user_s + s.client_cpu.sys_s) / dt * 100.0;
        let _ = write!(line, " client cpu: {cpu:.0}%");
    }
    if s.late_events > 0 {
        let _ = write!(
            line,
            " late: {} lag max: {:.1}ms",
            s.late_events, s.max_lag_ms
        );
    }
    line
}

/// The end-of-phase summary a sysbench user recognises.
pub fn phase_summary(p: &PhaseResult) -> String {
    let d = p.duration_s;
    let q = &p.queries;
    let mut o = String::new();
    let _ = writeln!(o, "SQL statistics:");
    let _ = writeln!(o, "    queries performed:");
    let _ = writeln!(o, "        read:                            {}", q.read);
    let _ = writeln!(o, "        write:                           {}", q.write);
    let _ = writeln!(o, "        other:                           {}", q.other);
    let _ = writeln!(o, "        total:                           {}", q.total());
    let _ = writeln!(
        o,
        "    transactions:                        {:<6} ({:.2} per sec.)",
        p.events,
        p.tps()
    );
    let _ = writeln!(
        o,
        "    queries:                             {:<6} ({:.2} per sec.)",
        q.total(),
        p.qps()
    );
    let errs = p.error_total();
    let _ = writeln!(
        o,
        "    ignored errors:                      {:<6} ({:.2} per sec.)",
        errs,
        rate(errs, d)
    );
    for (code, n) in &p.errors {
        let _ = writeln!(o, "        error {code}:                      {n}");
    }
    let _ = writeln!(
        o,
        "    reconnects:                          {:<6} ({:.2} per sec.)",
        p.reconnects,
        rate(p.reconnects, d)
    );
    if let Some(v) = &p.stability {
        let _ = writeln!(o, "    stability:                           {v}");
    }
    let _ = writeln!(o);
    let _ = writeln!(o, "General statistics:");
    let _ = writeln!(o, "    total time:                          {d:.4}s");
    let _ = writeln!(o, "    total number of events:              {}", p.events);
    let _ = writeln!(o);
    let _ = writeln!(o, "Latency (ms):");
    let l = &p.latency;
    let _ = writeln!(
        o,
        "         min:                            {:>10.2}",
        l.min_ms
    );
    let _ = writeln!(
        o,
        "         avg:                            {:>10.2}",
        l.avg_ms
    );
    let _ = writeln!(
        o,
        "         max:                            {:>10.2}",
        l.max_ms
    );
    for x in &l.percentiles {
        let label = format!("{}th percentile:", pct_label(x.p));
        let _ = writeln!(o, "         {label:<32}{:>10.2}", x.ms);
    }
    if let Some(r) = &p.rate {
        let _ = writeln!(o);
        let _ = writeln!(o, "Fixed rate:");
        let _ = writeln!(
            o,
            "    target:                              {:.2} per sec.",
            r.target_per_s
        );
        let _ = writeln!(
            o,
            "    achieved:                            {:.2} per sec.",
            r.achieved_per_s
        );
        let _ = writeln!(
            o,
            "    late events:                         {}",
            r.late_events
        );
        let _ = writeln!(
            o,
            "    schedule lag avg/max (ms):           {:.2}/{:.2}",
            r.mean_lag_ms, r.max_lag_ms
        );
    }
    let c = &p.client_cpu;
    let _ = writeln!(o);
    let _ = writeln!(o, "Client (qpslab):");
    let _ = writeln!(
        o,
        "    cpu user/sys:                        {:.2}s/{:.2}s",
        c.user_s, c.sys_s
    );
    if let Some(us) = p.client_cpu_us_per_query() {
        let _ = writeln!(o, "    cpu per query:                       {us:.2} us");
    }
    if c.max_rss_kib > 0 {
        let _ = writeln!(
            o,
            "    peak rss:                            {:.1} MiB",
            c.max_rss_kib as f64 / 1024.0
        );
    }
    o
}

/// The sweep table printed at the end of a run: one row per phase.
pub fn sweep_table(percentiles: &[f64], phases: &[PhaseResult]) -> String {
    let mut header = vec![
        "threads".to_string(),
        "tps".into(),
        "qps".into(),
        "avg ms".into(),
    ];
    header.extend(percentiles.iter().map(|p| format!("p{} ms", pct_label(*p))));
    header.extend(["errors".to_string(), "reconn".into(), "client us/q".into()]);
    let rows: Vec<Vec<String>> = phases
        .iter()
        .map(|p| {
            let mut r = vec![
                p.threads.to_string(),
                format!("{:.1}", p.tps()),
                format!("{:.1}", p.qps()),
                format!("{:.3}", p.latency.avg_ms),
            ];
            r.extend(percentiles.iter().map(|x| match pct_value(&p.latency, *x) {
                Some(v) => format!("{v:.3}"),
                None => "-".into(),
            }));
            r.push(p.error_total().to_string());
            r.push(p.reconnects.to_string());
            r.push(
                p.client_cpu_us_per_query()
                    .map_or("-".into(), |v| format!("{v:.2}")),
            );
            r
        })
        .collect();
    table(&header, &rows)
}

/// A plain aligned table: numeric columns right-aligned, text columns left-aligned.
pub fn table(header: &[String], rows: &[Vec<String>]) -> String {
    let mut width: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            width[i] = width[i].max(c.chars().count());
        }
    }
    let numeric: Vec<bool> = (0..width.len())
        .map(|i| {
            rows.iter()
                .all(|r| r[i] == "-" || r[i].parse::<f64>().is_ok())
        })
        .collect();
    let line = |cells: &[String]| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i > 0 {
                s.push_str("  ");
            }
            if numeric[i] {
                let _ = write!(s, "{c:>w$}", w = width[i]);
            } else {
                let _ = write!(s, "{c:<w$}", w = width[i]);
            }
        }
        s.trim_end().to_string()
    };
    let mut out = line(header);
    out.push('\n');
    out.push_str(
        &width
            .iter()
            .map(|w| "-".repeat(*w))
            .collect::<Vec<_>>()
            .join("  "),
    );
    out.push('\n');
    for r in rows {
        out.push_str(&line(r));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use qpslab_core::result::{CpuUsage, Percentile, QueryCounts, RateStats};

    fn latency(avg: f64) -> LatencySummary {
        LatencySummary {
            count: 100,
            min_ms: 0.1,
            avg_ms: avg,
            max_ms: 12.5,
            percentiles: vec![
                Percentile {
                    p: 95.0,
                    ms: avg * 2.0,
                },
                Percentile {
                    p: 99.9,
                    ms: avg * 4.0,
                },
            ],
        }
    }

    fn phase(threads: u32, events: u64) -> PhaseResult {
        PhaseResult {
            threads,
            duration_s: 10.0,
            events,
            queries: QueryCounts {
                read: events * 14,
                write: events * 4,
                other: events * 2,
            },
            errors: [(1213u16, 3u64)].into_iter().collect(),
            reconnects: 1,
            latency: latency(1.25),
            client_cpu: CpuUsage {
                user_s: 0.5,
                sys_s: 1.5,
                max_rss_kib: 4096,
            },
            rate: Some(RateStats {
                target_per_s: 100.0,
                achieved_per_s: 99.5,
                late_events: 2,
                mean_lag_ms: 0.3,
                max_lag_ms: 4.0,
            }),
            ..Default::default()
        }
    }

    fn golden(name: &str, actual: &str) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/golden")
            .join(name);
        if std::env::var_os("UPDATE_GOLDEN").is_some() {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, actual).unwrap();
        }
        let expected = std::fs::read_to_string(&path).unwrap_or_else(|_| {
            panic!(
                "missing golden file {}; run with UPDATE_GOLDEN=1",
                path.display()
            )
        });
        assert_eq!(actual, expected, "output differs from {}", path.display());
    }

    #[test]
    fn live_line_golden() {
        let s = Sample {
            elapsed_s: 3.0,
            interval_s: 1.0,
            events: 1000,
            queries: QueryCounts {
                read: 14000,
                write: 4000,
                other: 2000,
            },
            errors: 2,
            reconnects: 0,
            latency: latency(2.0),
            late_events: 5,
            max_lag_ms: 3.25,
            client_cpu: CpuUsage {
                user_s: 0.12,
                sys_s: 0.33,
                max_rss_kib: 0,
            },
        };
        golden("live_line.txt", &(live_line(16, &s) + "\n"));
    }

    #[test]
    fn summary_golden() {
        let mut p = phase(4, 1234);
        p.stability = Some(qpslab_core::Stability {
            reasons: vec![qpslab_core::Instability::Stall {
                at_s: 1.3,
                duration_s: 2.1,
            }],
        });
        golden("phase_summary.txt", &phase_summary(&p));
    }

    #[test]
    fn sweep_table_golden() {
        golden(
            "sweep_table.txt",
            &sweep_table(&[95.0, 99.9], &[phase(1, 100), phase(16, 123456)]),
        );
    }
}
