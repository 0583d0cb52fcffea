//! All terminal output of the commands: one module per command, named as in `args/` and
//! `cmd/`, so what a command prints is found in one place. This module holds what several
//! commands print alike: the live line per interval, the sysbench-style phase summary, the
//! sweep table and the aligned table every other table is drawn with. Pure functions from
//! results to text, so they are tested against golden files.
//!
//! Text that came from elsewhere (logged SQL, names imported from another store, a server's
//! messages) may hold control characters; [`escape_controls`] is how they reach a terminal,
//! applied once for every write in `crate::out`.

pub mod advise;
pub mod diff;
pub mod digest;
pub mod io;
pub mod lag;
pub mod live;
pub mod replay;
pub mod run;
pub mod sysbench;
pub mod sysbench_fileio;
pub mod threads;
pub mod tpcc;
pub mod tune;

use qpslab_core::result::{PhaseResult, Sample};
use std::borrow::Cow;
use std::fmt::Write;

/// `text` with its control characters escaped, but line ends and tabs: `\x1b` for ESC (C0
/// controls and DEL as `\xNN`), `\u{9b}` for the C1 controls (some terminals read U+009B as
/// ESC `[`). A terminal shown it displays the text; it never receives an escape sequence,
/// a carriage return that hides a line, or a bell. Borrowed when there is nothing to escape.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    let plain = |c: char| !c.is_control() || c == '\n' || c == '\t';
    if text.chars().all(plain) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            c if plain(c) => out.push(c),
            c if (c as u32) < 0x80 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
        }
    }
    Cow::Owned(out)
}

fn pct_label(p: f64) -> String {
    let s = format!("{p}");
    s.trim_end_matches(".0").to_string()
}

fn rate(n: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        n as f64 / secs
    } else {
        0.0
    }
}

/// One live line per report interval: sysbench 1.0.20's line as it prints it (`[ 3s ] thds: 16
/// tps: ... lat (ms,95%): 4.00 err/s: 2.00 reconn/s: 0.00`, the first percentile only), so that
/// a script parsing sysbench's output parses it; qpslab's further figures ([`live_extras`])
/// come after it.
pub fn live_line(threads: u32, s: &Sample) -> String {
    sysbench::interval_line(threads, s) + &live_extras(s)
}

/// qpslab's figures after sysbench's on an interval line, each after a space: the other
/// percentiles, the client's CPU, stuck sessions and late events.
pub fn live_extras(s: &Sample) -> String {
    let dt = s.interval_s;
    let mut line = String::new();
    // The other percentiles, each in sysbench's own form.
    for p in s.latency.percentiles.iter().skip(1) {
        let _ = write!(line, " lat (ms,{}%): {:.2}", pct_label(p.p), p.ms);
    }
    // The client's own CPU, in percent of one CPU, so a saturated client shows at once.
    if dt > 0.0 {
        let cpu = (s.client_cpu.user_s + s.client_cpu.sys_s) / dt * 100.0;
        let _ = write!(line, " client cpu: {cpu:.0}%");
    }
    // Sessions waiting far too long for a reply complete nothing, so no other figure
    // shows them.
    if s.stuck_sessions > 0 {
        let _ = write!(
            line,
            " stuck: {} (longest {:.1}s)",
            s.stuck_sessions, s.longest_in_flight_s
        );
    }
    if s.late_events > 0 {
        let _ = write!(
            line,
            " late: {} lag max: {:.1}ms",
            s.late_events, s.max_lag_ms
        );
        // Late by the client's own doing (its loop busy or waking late), not the server's.
        if s.client_late_events > 0 {
            let _ = write!(
                line,
                " (client's own: {} late, max {:.1}ms)",
                s.client_late_events, s.client_max_late_ms
            );
        }
    }
    line
}

/// A phase's latency histogram as sysbench's `--histogram` prints it: a row per non-empty
/// bucket (its upper bound in ms, steps of about 5%), a bar of at most 40 stars for its share
/// of the fullest bucket, and its count. None when the phase stored no histogram.
pub fn histogram_text(p: &PhaseResult) -> Option<String> {
    let h = p.event_histogram()?;
    let rows: Vec<(f64, u64)> = h
        .iter_log(1, 1.05)
        .filter(|v| v.count_since_last_iteration() > 0)
        .map(|v| {
            (
                v.value_iterated_to() as f64 / 1000.0,
                v.count_since_last_iteration(),
            )
        })
        .collect();
    let max = rows.iter().map(|r| r.1).max().unwrap_or(1).max(1);
    let mut o = String::from("Latency histogram (values are in milliseconds)\n");
    o.push_str("       value  ------------- distribution ------------- count\n");
    for (ms, n) in rows {
        let stars = ((n as f64 / max as f64) * 40.0).round() as usize;
        let _ = writeln!(o, "{ms:12.3} |{:<40} {n}", "*".repeat(stars.max(1)));
    }
    o.push('\n');
    Some(o)
}

/// The end-of-phase summary a sysbench user recognises.
pub fn phase_summary(p: &PhaseResult) -> String {
    let mut o = String::new();
    sql_statistics(&mut o, p);
    let _ = writeln!(o);
    let _ = writeln!(o, "General statistics:");
    row(&mut o, 4, "total time:", format!("{:.4}s", p.duration_s));
    row(&mut o, 4, "total number of events:", p.events);
    let tpcc = tpcc_section(p);
    if !tpcc.is_empty() {
        let _ = writeln!(o);
    }
    o.push_str(&tpcc);
    let _ = writeln!(o);
    latency(&mut o, p);
    if let Some(r) = &p.rate {
        let _ = writeln!(o);
        let _ = writeln!(o, "Fixed rate:");
        row(
            &mut o,
            4,
            "target:",
            format!("{:.2} per sec.", r.target_per_s),
        );
        row(
            &mut o,
            4,
            "achieved:",
            format!("{:.2} per sec.", r.achieved_per_s),
        );
        row(&mut o, 4, "late events:", r.late_events);
        let lag = format!("{:.2}/{:.2}", r.mean_lag_ms, r.max_lag_ms);
        row(&mut o, 4, "schedule lag avg/max (ms):", lag);
        // The part of the lag that is the client's own (its loop was busy or woke late), so
        // a late client is not read as a slow server; the rest waited for a free session.
        let own = format!(
            "{:.2}/{:.2}/{:.2}/{:.2} ms",
            r.client_mean_late_ms, r.client_p50_late_ms, r.client_p99_late_ms, r.client_max_late_ms
        );
        row(&mut o, 6, "client's own, avg/p50/p99/max:", own);
        row(
            &mut o,
            6,
            "events late by the client:",
            r.client_late_events,
        );
    }
    let _ = writeln!(o);
    client(&mut o, p);
    o
}

/// A phase's TPC-C section in the summary's columns (empty when it did not run TPC-C): the
/// same text in `run`'s summary and `show`.
pub fn tpcc_section(p: &PhaseResult) -> String {
    let mut o = String::new();
    for (indent, label, value) in tpcc::lines(p) {
        if value.is_empty() {
            let _ = writeln!(o, "{:indent$}{label}", "");
        } else {
            row(&mut o, indent, &label, value);
        }
    }
    o
}

/// One line of the summary: the label indented, the value in sysbench's column 42.
fn row(o: &mut String, indent: usize, label: &str, value: impl std::fmt::Display) {
    let width = 41 - indent;
    let _ = writeln!(o, "{:indent$}{label:<width$}{value}", "");
}

/// A count and its rate, `1234   (123.40 per sec.)`.
fn count_rate(n: u64, per_s: f64) -> String {
    format!("{n:<6} ({per_s:.2} per sec.)")
}

fn sql_statistics(o: &mut String, p: &PhaseResult) {
    let (d, q) = (p.duration_s, &p.queries);
    let _ = writeln!(o, "SQL statistics:");
    let _ = writeln!(o, "    queries performed:");
    row(o, 8, "read:", q.read);
    row(o, 8, "write:", q.write);
    row(o, 8, "other:", q.other);
    row(o, 8, "total:", q.total());
    row(o, 4, "transactions:", count_rate(p.events, p.tps()));
    row(o, 4, "queries:", count_rate(q.total(), p.qps()));
    let errs = p.error_total();
    row(o, 4, "ignored errors:", count_rate(errs, rate(errs, d)));
    for (code, n) in &p.errors {
        row(o, 8, &format!("error {code}:"), n);
    }
    row(
        o,
        4,
        "reconnects:",
        count_rate(p.reconnects, rate(p.reconnects, d)),
    );
    if let Some(v) = &p.stability {
        row(o, 4, "stability:", v);
    }
}

fn latency(o: &mut String, p: &PhaseResult) {
    let l = &p.latency;
    let _ = writeln!(o, "Latency (ms):");
    row(o, 9, "min:", format!("{:>10.2}", l.min_ms));
    row(o, 9, "avg:", format!("{:>10.2}", l.avg_ms));
    row(o, 9, "max:", format!("{:>10.2}", l.max_ms));
    for x in &l.percentiles {
        let label = format!("{}th percentile:", pct_label(x.p));
        row(o, 9, &label, format!("{:>10.2}", x.ms));
    }
}

fn client(o: &mut String, p: &PhaseResult) {
    let c = &p.client_cpu;
    let _ = writeln!(o, "Client (qpslab):");
    row(
        o,
        4,
        "cpu user/sys:",
        format!("{:.2}s/{:.2}s", c.user_s, c.sys_s),
    );
    if let Some(us) = p.client_cpu_us_per_query() {
        row(o, 4, "cpu per query:", format!("{us:.2} us"));
    }
    if c.max_rss_kib > 0 {
        let mib = c.max_rss_kib as f64 / 1024.0;
        row(o, 4, "peak rss:", format!("{mib:.1} MiB"));
    }
    if let Some(l) = &p.client {
        row(o, 4, "placement:", l.placement());
        row(
            o,
            4,
            "busiest event loop:",
            format!(
                "{:.0}% of a CPU, waited {:.0}%",
                l.busiest() * 100.0,
                l.waited.iter().copied().fold(0.0, f64::max) * 100.0
            ),
        );
    }
}

/// The sweep table printed at the end of a run: one row per phase, each latency figure as
/// [`PhaseResult::percentile_ms`] and [`PhaseResult::max_ms`] give it.
pub fn sweep_table(percentiles: &[f64], phases: &[PhaseResult]) -> String {
    let (header, rows) = sweep_rows(percentiles, phases);
    table(&header, &rows)
}

/// [`sweep_table`]'s header and rows, for a caller that adds columns (`show RUN`'s stability).
pub fn sweep_rows(percentiles: &[f64], phases: &[PhaseResult]) -> (Vec<String>, Vec<Vec<String>>) {
    let mut header = vec![
        "threads".to_string(),
        "tps".into(),
        "qps".into(),
        "avg ms".into(),
    ];
    header.extend(percentiles.iter().map(|p| format!("p{} ms", pct_label(*p))));
    header.extend([
        "max ms".to_string(),
        "errors".into(),
        "reconn".into(),
        "client us/q".into(),
    ]);
    let rows: Vec<Vec<String>> = phases
        .iter()
        .map(|p| {
            let mut r = vec![
                p.threads.to_string(),
                format!("{:.1}", p.tps()),
                format!("{:.1}", p.qps()),
                format!("{:.3}", p.latency.avg_ms),
            ];
            let ms = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.3}"));
            r.extend(percentiles.iter().map(|x| ms(p.percentile_ms(*x))));
            r.push(ms(p.max_ms()));
            r.push(p.error_total().to_string());
            r.push(p.reconnects.to_string());
            r.push(
                p.client_cpu_us_per_query()
                    .map_or("-".into(), |v| format!("{v:.2}")),
            );
            r
        })
        .collect();
    (header, rows)
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
pub(crate) mod tests {
    use super::*;
    use qpslab_core::result::{CpuUsage, LatencySummary, Percentile, QueryCounts, RateStats};

    #[test]
    fn issue_45_control_characters_are_escaped_but_lines_and_tabs() {
        assert!(matches!(
            escape_controls("a\tb\nc é"),
            Cow::Borrowed("a\tb\nc é")
        ));
        assert_eq!(
            escape_controls("\x1b]0;t\x07\r\x7f\u{9b}2J\0"),
            "\\x1b]0;t\\x07\\x0d\\x7f\\u{9b}2J\\x00"
        );
    }

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
                client_late_events: 1,
                client_mean_late_ms: 0.1,
                client_p50_late_ms: 0.04,
                client_p99_late_ms: 1.2,
                client_max_late_ms: 1.5,
            }),
            ..Default::default()
        }
    }

    /// Compares `actual` with the golden file `name` (rewritten with UPDATE_GOLDEN=1).
    pub(crate) fn golden(name: &str, actual: &str) {
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
            client_late_events: 2,
            client_max_late_ms: 1.5,
            stuck_sessions: 0,
            longest_in_flight_s: 0.0,
            histogram: None,
            client_cpu: CpuUsage {
                user_s: 0.12,
                sys_s: 0.33,
                max_rss_kib: 0,
            },
        };
        golden("live_line.txt", &(live_line(16, &s) + "\n"));
    }

    #[test]
    fn live_line_names_stuck_sessions() {
        let mut s = Sample {
            elapsed_s: 2.0,
            interval_s: 1.0,
            ..Default::default()
        };
        assert!(!live_line(2, &s).contains("stuck"));
        s.stuck_sessions = 1;
        s.longest_in_flight_s = 2.04;
        assert!(
            live_line(2, &s).ends_with(" stuck: 1 (longest 2.0s)"),
            "{}",
            live_line(2, &s)
        );
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
