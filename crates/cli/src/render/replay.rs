//! What `qpslab replay` prints: a live line per interval (statements, q/s, errors, lateness)
//! and, after the phase's summary, each class's counts: executed, errors by code, writes
//! skipped by `--read-only`. `show` prints the same class table for a stored replay.

use crate::render::{phase_summary, table};
use qpslab_core::replay::{ReplayMode, ReplayPlan};
use qpslab_core::result::PhaseResult;
use qpslab_core::Sample;
use std::fmt::Write;

/// Prints replay progress: a live line per interval on stdout, the statements done of the
/// log's with an ETA on stderr every 10 s, and each interval to the metrics endpoint.
pub struct LivePrinter {
    /// The log's statements.
    total: u64,
    done: u64,
    started: std::time::Instant,
    progress: crate::progress::Line,
    metrics: Option<qpslab_metrics::Registry>,
}

impl LivePrinter {
    /// A printer for a log of `total` statements, reporting to `exporter` when there is one.
    pub fn new(total: u64, exporter: Option<&qpslab_metrics::Exporter>) -> LivePrinter {
        LivePrinter {
            total,
            done: 0,
            started: std::time::Instant::now(),
            progress: crate::progress::Line::plain(std::time::Duration::from_secs(10)),
            metrics: exporter.map(|e| e.registry().clone()),
        }
    }
}

impl qpslab_lab::run::exec::Observer for LivePrinter {
    fn message(&mut self, line: &str) {
        eprintln!("{line}");
    }

    fn sample(&mut self, sessions: u32, s: &Sample) {
        println!("{}", live_line(sessions, s));
        // Errors and skipped statements are statements of the log done too.
        self.done += s.queries.total() + s.errors;
        let (done, total) = (self.done.min(self.total), self.total);
        let elapsed = self.started.elapsed();
        self.progress.show(|| {
            let eta = crate::progress::eta_text(done as f64, total as f64, elapsed);
            format!("replay: {done}/{total} statement(s){eta}")
        });
    }

    fn interval(&mut self, i: &qpslab_lab::run::exec::Interval<'_>) {
        crate::metrics::report(self.metrics.as_ref(), i);
    }
}

/// `[   3s ] sessions: 4 stmts: 120 q/s: 120.00 (r/w/o: ...) err: 0 late: 3 lag max: 12.30 ms`.
pub fn live_line(sessions: u32, s: &Sample) -> String {
    let per_s = |n: u64| {
        if s.interval_s > 0.0 {
            n as f64 / s.interval_s
        } else {
            0.0
        }
    };
    let q = &s.queries;
    format!(
        "[ {:>4.0}s ] sessions: {sessions} stmts: {} q/s: {:.2} (r/w/o: {:.2}/{:.2}/{:.2}) \
         err: {} reconn: {} late: {} lag max: {:.2} ms",
        s.elapsed_s,
        q.total(),
        per_s(q.total()),
        per_s(q.read),
        per_s(q.write),
        per_s(q.other),
        s.errors,
        s.reconnects,
        s.late_events,
        s.max_lag_ms
    )
}

/// `slow log x.log (1234 bytes, sha256 0123456789ab…), 60 statements, mode sessions, speed 1`.
pub fn plan_line(r: &ReplayPlan) -> String {
    let mut line = format!(
        "{} log {} ({} bytes, sha256 {}…), {} statement(s), mode {}",
        r.log_type,
        r.log,
        r.bytes,
        r.sha256.get(..12).unwrap_or(&r.sha256),
        r.statements,
        r.mode
    );
    if r.mode == ReplayMode::Sessions {
        let _ = write!(line, ", speed {}", r.speed);
    }
    if let Some(t) = r.threads {
        let _ = write!(line, ", threads {t}");
    }
    if let Some(db) = &r.database {
        let _ = write!(line, ", database {db}");
    }
    if r.read_only {
        line.push_str(", read-only");
    }
    if r.allow_admin {
        line.push_str(", allow-admin");
    }
    if r.allow_destructive {
        line.push_str(", allow-destructive");
    }
    line
}

/// The summary of a replayed phase: the run's summary (its schedule lag told as a replay's, not
/// as a fixed rate's), then the per-class table.
pub fn summary(p: &PhaseResult) -> String {
    let without_rate = PhaseResult {
        rate: None,
        ..p.clone()
    };
    let mut o = phase_summary(&without_rate);
    if let Some(r) = &p.rate {
        let _ = writeln!(
            o,
            "\nSchedule: {} of {} statement(s) started more than 1 ms after they were due; \
             lag avg/max {:.2}/{:.2} ms",
            r.late_events,
            (r.achieved_per_s * p.duration_s).round(),
            r.mean_lag_ms,
            r.max_lag_ms
        );
    }
    o.push_str(&classes(p));
    o
}

/// The per-class table of a replayed phase (empty for other phases).
pub fn classes(p: &PhaseResult) -> String {
    let Some(r) = &p.replay else {
        return String::new();
    };
    let mut o = String::new();
    let _ = writeln!(
        o,
        "\nStatement classes ({} connection(s) in the log; {} admin command(s) and {} \
         unreadable entr(ies) skipped{}):",
        r.connections,
        r.skipped_admin,
        r.skipped_unparsed,
        match (&r.ended_early, r.complete) {
            (Some(why), _) => format!("; ended early: {why}"),
            (None, false) => "; interrupted".to_string(),
            (None, true) => String::new(),
        }
    );
    let header = [
        "class",
        "executed",
        "errors",
        "skipped",
        "avg ms",
        "fingerprint",
    ]
    .map(String::from)
    .to_vec();
    let rows: Vec<Vec<String>> = r
        .classes
        .iter()
        .map(|c| {
            let name = format!("{} {}", c.id, c.fingerprint);
            let avg = p
                .statements
                .iter()
                .find(|s| s.kind == name)
                .map_or("-".to_string(), |s| format!("{:.3}", s.latency.avg_ms));
            let errors = c
                .errors
                .iter()
                .map(|(code, n)| format!("{code}: {n}"))
                .collect::<Vec<_>>()
                .join(", ");
            vec![
                c.id.clone(),
                c.executed.to_string(),
                if errors.is_empty() {
                    "-".into()
                } else {
                    errors
                },
                c.skipped.to_string(),
                avg,
                shorten(&c.fingerprint, 70),
            ]
        })
        .collect();
    o.push_str(&table(&header, &rows));
    for c in r.classes.iter().filter(|c| c.skipped > 0) {
        let _ = writeln!(
            o,
            "skipped {} ({}): {}",
            c.id,
            c.skipped,
            c.skip_reason.as_deref().unwrap_or("not run by this mode")
        );
    }
    o
}

/// `s` cut to `max` characters, with `…` when cut.
fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut t: String = s.chars().take(max - 1).collect();
    t.push('…');
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::tests::golden;
    use qpslab_core::replay::{ClassOutcome, ReplayOutcome};
    use qpslab_core::result::{LatencySummary, QueryCounts, StatementLatency};

    #[test]
    fn replay_live_line_golden() {
        let s = Sample {
            elapsed_s: 3.0,
            interval_s: 1.0,
            events: 120,
            queries: QueryCounts {
                read: 100,
                write: 15,
                other: 5,
            },
            errors: 2,
            late_events: 3,
            max_lag_ms: 12.3,
            ..Default::default()
        };
        golden("replay_live_line.txt", &(live_line(4, &s) + "\n"));
    }

    #[test]
    fn replay_classes_golden() {
        let p = PhaseResult {
            statements: vec![StatementLatency {
                kind: "c1 select v from t where id = ?".into(),
                latency: LatencySummary {
                    count: 20,
                    avg_ms: 0.125,
                    ..Default::default()
                },
            }],
            replay: Some(ReplayOutcome {
                classes: vec![
                    ClassOutcome {
                        id: "c1".into(),
                        fingerprint: "select v from t where id = ?".into(),
                        executed: 20,
                        ..Default::default()
                    },
                    ClassOutcome {
                        id: "c2".into(),
                        fingerprint: "select * from nosuch where id = ?".into(),
                        executed: 12,
                        errors: [(1146, 12)].into_iter().collect(),
                        skipped: 0,
                        skip_reason: None,
                    },
                    ClassOutcome {
                        id: "c3".into(),
                        fingerprint: "update t set v = ? where id = ?".into(),
                        skipped: 5,
                        skip_reason: Some("changes rows: not run by --read-only".into()),
                        ..Default::default()
                    },
                ],
                skipped_admin: 2,
                skipped_unparsed: 0,
                connections: 4,
                complete: true,
                ended_early: None,
            }),
            ..Default::default()
        };
        golden("replay_classes.txt", &classes(&p));
        let timed = PhaseResult {
            duration_s: 2.0,
            rate: Some(qpslab_core::result::RateStats {
                target_per_s: 16.0,
                achieved_per_s: 16.0,
                late_events: 3,
                mean_lag_ms: 0.5,
                max_lag_ms: 4.25,
                ..Default::default()
            }),
            ..p
        };
        golden("replay_summary.txt", &summary(&timed));
        assert_eq!(classes(&PhaseResult::default()), "");
    }
}
