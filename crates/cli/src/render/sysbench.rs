//! What qpslab prints on standard output when it is called as `sysbench` (a link of that
//! name, or `qpslab sysbench ...`): sysbench 1.0.20's lines, byte for byte in layout, so that
//! the scripts and harnesses that parse sysbench's output parse qpslab's. Everything qpslab
//! adds (stability, errors by code, the client's CPU and placement) is in [`own_lines`], for
//! standard error. The formats follow sysbench's `sysbench.c`, `db_driver.c` and
//! `sb_histogram.c` (1.0.20).

use super::{pct_label, rate};
use qpslab_core::result::{Percentile, PhaseResult, Sample};
use std::fmt::Write;

/// The ratio of sysbench's histogram buckets: `exp(ln(1e5 / 1e-3) / 1023)`.
const SYSBENCH_BUCKET_RATIO: f64 = 1.01817;

/// The version sysbench's checks look for (`sysbench 1.`), and qpslab's own.
pub fn version_line() -> String {
    format!("sysbench 1.0.20 (qpslab {})", env!("CARGO_PKG_VERSION"))
}

/// The lines before the first interval: the version, the options, and the workers started.
/// `report_interval_s` is none when no interval lines are printed.
pub fn header(threads: u32, report_interval_s: Option<f64>, rate: Option<f64>) -> String {
    test_header(threads, report_interval_s, rate, "")
}

/// [`header`] with a test's own lines (`print_mode`, each ending in a newline) before the
/// workers start, as fileio prints its options.
pub fn test_header(
    threads: u32,
    report_interval_s: Option<f64>,
    rate: Option<f64>,
    mode_lines: &str,
) -> String {
    let mut o = format!("{}\n\n", version_line());
    o.push_str("Running the test with following options:\n");
    let _ = writeln!(o, "Number of threads: {threads}");
    if let Some(r) = rate {
        let _ = writeln!(o, "Target transaction rate: {r:.0}/sec");
    }
    if let Some(s) = report_interval_s {
        let _ = writeln!(o, "Report intermediate results every {s:.0} second(s)");
    }
    o.push_str("Initializing random number generator from current time\n\n\n");
    o.push_str(mode_lines);
    o.push_str("Initializing worker threads...\n\n");
    o.push_str("Threads started!\n\n");
    o
}

/// What sysbench's `prepare` prints for `tables` tables of `rows` rows each, loaded by
/// `loaders` connections (its `--threads`): the tables in order (qpslab loads them its own
/// way; the lines say what was made).
pub fn prepare_lines(tables: u32, rows: u64, loaders: u32) -> String {
    let mut o = format!("{}\n\n", version_line());
    if loaders > 1 {
        o.push_str("Initializing worker threads...\n\n");
    }
    for t in 1..=tables {
        let _ = writeln!(o, "Creating table 'sbtest{t}'...");
        let _ = writeln!(o, "Inserting {rows} records into 'sbtest{t}'");
        let _ = writeln!(o, "Creating a secondary index on 'sbtest{t}'...");
    }
    o
}

/// What sysbench's `cleanup` prints for the tables it dropped.
pub fn cleanup_lines(dropped: &[String]) -> String {
    let mut o = format!("{}\n\n", version_line());
    for t in dropped {
        let _ = writeln!(o, "Dropping table '{t}'...");
    }
    o
}

/// sysbench's interval line (`db_report_intermediate`): it ends at `reconn/s: N`.
pub fn interval_line(threads: u32, s: &Sample) -> String {
    let dt = s.interval_s;
    let q = &s.queries;
    let mut line = format!(
        "[ {:.0}s ] thds: {threads} tps: {:.2} qps: {:.2} (r/w/o: {:.2}/{:.2}/{:.2})",
        s.elapsed_s,
        rate(s.events, dt),
        rate(q.total(), dt),
        rate(q.read, dt),
        rate(q.write, dt),
        rate(q.other, dt),
    );
    if let Some(p) = s.latency.percentiles.first() {
        let _ = write!(line, " lat (ms,{}%): {:.2}", pct_label(p.p), p.ms);
    }
    let _ = write!(
        line,
        " err/s: {:.2} reconn/s: {:.2}",
        rate(s.errors, dt),
        rate(s.reconnects, dt)
    );
    line
}

/// The end of a phase: the histogram when asked (`sb_histogram_print`, then a line of one
/// space), the SQL statistics, general statistics, latency and threads fairness.
pub fn summary(p: &PhaseResult, histogram: bool) -> String {
    let mut o = histogram_block(p, histogram);
    let (d, q) = (p.duration_s, &p.queries);
    let count = |n: u64| format!("{n:<6} ({:.2} per sec.)", rate(n, d));
    let errors = p.error_total();
    o.push_str("SQL statistics:\n    queries performed:\n");
    let _ = writeln!(o, "        read:                            {}", q.read);
    let _ = writeln!(o, "        write:                           {}", q.write);
    let _ = writeln!(o, "        other:                           {}", q.other);
    let _ = writeln!(o, "        total:                           {}", q.total());
    let _ = writeln!(
        o,
        "    transactions:                        {}",
        count(p.events)
    );
    let _ = writeln!(
        o,
        "    queries:                             {}",
        count(q.total())
    );
    let _ = writeln!(
        o,
        "    ignored errors:                      {}",
        count(errors)
    );
    let _ = writeln!(
        o,
        "    reconnects:                          {}",
        count(p.reconnects)
    );
    o.push_str(&general(p, p.latency.percentiles.first()));
    o
}

/// `sb_report_cumulative`'s lines: general statistics, latency (with `percentile`, sysbench's
/// `--percentile`) and threads fairness, each block after an empty line.
pub fn general(p: &PhaseResult, percentile: Option<&Percentile>) -> String {
    let (mut o, d) = (String::new(), p.duration_s);
    o.push_str("\nGeneral statistics:\n");
    let _ = writeln!(o, "    total time:                          {d:.4}s");
    let _ = writeln!(o, "    total number of events:              {}", p.events);
    let l = &p.latency;
    o.push_str("\nLatency (ms):\n");
    let _ = writeln!(o, "         min: {:39.2}", l.min_ms);
    let _ = writeln!(o, "         avg: {:39.2}", l.avg_ms);
    let _ = writeln!(o, "         max: {:39.2}", l.max_ms);
    match percentile {
        Some(x) => {
            let label = format!("{:>3}th percentile:", pct_label(x.p));
            let _ = writeln!(o, "        {label} {:27.2}", x.ms);
        }
        None => o.push_str("         percentile stats:               disabled\n"),
    }
    let sum_ms = l.avg_ms * p.events as f64;
    let _ = writeln!(o, "         sum: {sum_ms:39.2}");
    o.push_str("\nThreads fairness:\n");
    // A phase that kept no session's figures (fio's) has its means from the totals.
    let threads = f64::from(p.threads.max(1));
    let f = p.fairness.unwrap_or(qpslab_core::result::Fairness {
        events_avg: p.events as f64 / threads,
        time_avg_s: sum_ms / 1e3 / threads,
        ..Default::default()
    });
    let _ = writeln!(
        o,
        "    events (avg/stddev):           {:.4}/{:3.2}",
        f.events_avg, f.events_stddev
    );
    let _ = writeln!(
        o,
        "    execution time (avg/stddev):   {:.4}/{:3.2}",
        f.time_avg_s, f.time_stddev_s
    );
    o.push('\n');
    o
}

/// The histogram as sysbench prints it before its summary (`--histogram`), or nothing.
pub fn histogram_block(p: &PhaseResult, histogram: bool) -> String {
    if !histogram {
        return String::new();
    }
    format!(
        "Latency histogram (values are in milliseconds)\n{} \n",
        histogram_rows(p)
    )
}

/// `sb_histogram_print`'s rows: a row per non-empty bucket (its value in ms, buckets 1.8%
/// apart as sysbench's 1024 buckets from 0.001 to 100,000 ms), a bar of
/// `round(40 * count / max)` stars (none for a small bucket) and the count.
fn histogram_rows(p: &PhaseResult) -> String {
    let Some(h) = p.event_histogram() else {
        return String::new();
    };
    let rows: Vec<(f64, u64)> = h
        .iter_log(1, SYSBENCH_BUCKET_RATIO)
        .filter(|v| v.count_since_last_iteration() > 0)
        .map(|v| {
            (
                v.value_iterated_to() as f64 / 1000.0,
                v.count_since_last_iteration(),
            )
        })
        .collect();
    let max = rows.iter().map(|r| r.1).max().unwrap_or(0);
    if max == 0 {
        return String::new();
    }
    let mut o = String::from("       value  ------------- distribution ------------- count\n");
    for (ms, n) in rows {
        let stars = (n as f64 * 40.0 / max as f64 + 0.5).floor() as usize;
        let _ = writeln!(o, "{ms:12.3} |{:<40} {n}", "*".repeat(stars));
    }
    o
}

/// What qpslab measured besides sysbench's figures, for standard error: each line prefixed
/// `qpslab: ` (errors by code, the percentiles after the first, stability, the client).
pub fn own_lines(p: &PhaseResult) -> String {
    let mut o = String::new();
    for (code, n) in &p.errors {
        let _ = writeln!(o, "qpslab: error {code}: {n}");
    }
    for x in p.latency.percentiles.iter().skip(1) {
        let _ = writeln!(o, "qpslab: {}th percentile: {:.2} ms", pct_label(x.p), x.ms);
    }
    if let Some(v) = &p.stability {
        let _ = writeln!(o, "qpslab: stability: {v}");
    }
    // A TPC-C phase's New-Orders, retries and consistency check.
    for line in super::tpcc_section(p).lines() {
        let _ = writeln!(o, "qpslab: {}", line.trim_start());
    }
    if p.io.is_some() {
        // fio did the I/O: qpslab's own CPU says nothing of it.
        return o;
    }
    let c = &p.client_cpu;
    let mut client = format!("cpu user/sys {:.2}s/{:.2}s", c.user_s, c.sys_s);
    if let Some(us) = p.client_cpu_us_per_query() {
        let _ = write!(client, ", {us:.2} us per query");
    }
    if let Some(l) = &p.client {
        let _ = write!(client, ", {}", l.placement());
    }
    let _ = writeln!(o, "qpslab: client: {client}");
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::tests::golden;
    use qpslab_core::result::{Fairness, LatencySummary, QueryCounts};

    fn phase() -> PhaseResult {
        PhaseResult {
            threads: 4,
            duration_s: 3.0068,
            events: 4032,
            queries: QueryCounts {
                read: 56644,
                write: 16151,
                other: 8078,
            },
            errors: [(1213u16, 14u64)].into_iter().collect(),
            latency: LatencySummary {
                count: 4032,
                min_ms: 0.79,
                avg_ms: 2.98,
                max_ms: 9.7,
                percentiles: vec![Percentile { p: 95.0, ms: 4.74 }],
            },
            fairness: Some(Fairness {
                events_avg: 1008.0,
                events_stddev: 66.52,
                time_avg_s: 2.9992,
                time_stddev_s: 0.0,
            }),
            ..Default::default()
        }
    }

    #[test]
    fn header_and_summary_golden() {
        let text = format!(
            "{}{}\n{}",
            header(4, Some(1.0), None),
            interval_line(
                4,
                &Sample {
                    elapsed_s: 1.0,
                    interval_s: 1.0,
                    events: 1444,
                    latency: LatencySummary {
                        percentiles: vec![Percentile { p: 95.0, ms: 4.65 }],
                        ..Default::default()
                    },
                    ..Default::default()
                }
            ),
            summary(&phase(), false)
        );
        // The version is the build's; the golden file holds the rest.
        let text = text.replace(env!("CARGO_PKG_VERSION"), "X.Y.Z");
        golden("sysbench_output.txt", &text);
    }

    #[test]
    fn the_version_keeps_sysbench_1_checks_true() {
        assert!(version_line().starts_with("sysbench 1.0.20 ("));
    }
}
