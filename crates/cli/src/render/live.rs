//! Live actions (`run --at`) on the terminal: the line marking an action among the live lines,
//! and the table of each action's judgment printed at the end of a phase.

use qpslab_core::live::{ActionRecord, SegmentChange};
use std::fmt::Write;

/// `[ 30s ] at 30.0s: set innodb_buffer_pool_size=512M — ok (214 ms)`.
pub fn action_line(r: &ActionRecord) -> String {
    format!(
        "[ {:>4.0}s ] at {:.1}s: {} — {} ({:.0} ms)",
        r.started_s, r.at_s, r.action, r.outcome, r.took_ms
    )
}

/// The judgment of each action: TPS and the mean of the per-interval p95s (a statistic of
/// intervals, not the phase p95) before and after, the change with its 95%
/// interval, and the verdict.
pub fn actions_table(records: &[ActionRecord]) -> String {
    let mut out = String::from("\n    live actions (before → after, change [95% interval]):\n");
    for r in records {
        let _ = writeln!(out, "    at {:>6.1}s  {}", r.at_s, r.action);
        if !r.ok() {
            let _ = writeln!(out, "        failed: {}", r.outcome);
        }
        if let Some(t) = &r.tps {
            let _ = writeln!(out, "        {:<24}{}", "tps", change_text(t));
        }
        if let Some(p) = &r.p95_ms {
            let _ = writeln!(
                out,
                "        {:<24}{}",
                "p95 ms (interval mean)",
                change_text(p)
            );
        }
        let _ = writeln!(out, "        verdict: {}", r.judgment);
        if let Some(restored) = &r.restored {
            let _ = writeln!(out, "        restored: {restored}");
        }
    }
    out
}

fn change_text(c: &SegmentChange) -> String {
    format!(
        "{:.2} → {:.2}  {:+.1}% [{:+.1}%, {:+.1}%]{}",
        c.before,
        c.after,
        c.change_pct,
        c.ci_low,
        c.ci_high,
        if c.significant { " significant" } else { "" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::tests::golden;

    fn record(action: &str, outcome: &str, judged: bool) -> ActionRecord {
        let change = |b: f64, a: f64, sig| SegmentChange {
            before: b,
            after: a,
            change_pct: (a / b - 1.0) * 100.0,
            ci_low: (a / b - 1.0) * 80.0,
            ci_high: (a / b - 1.0) * 120.0,
            significant: sig,
        };
        ActionRecord {
            action: action.into(),
            at_s: 8.0,
            started_s: 8.004,
            outcome: outcome.into(),
            took_ms: 214.4,
            restored: judged.then(|| "innodb_buffer_pool_size=8388608 ok".to_string()),
            tps: judged.then(|| change(1520.0, 6410.5, true)),
            p95_ms: judged.then(|| change(4.1, 1.2, true)),
            judgment: if judged {
                "gain"
            } else {
                "not judged: the action failed"
            }
            .into(),
        }
    }

    #[test]
    fn actions_golden() {
        let rs = [
            record("set innodb_buffer_pool_size=512M", "ok", true),
            record(
                "sql SELECT nope",
                "server error 1054 (42S22): Unknown column",
                false,
            ),
        ];
        let text = format!(
            "{}\n{}\n{}",
            action_line(&rs[0]),
            action_line(&rs[1]),
            actions_table(&rs)
        );
        golden("live_actions.txt", &text);
    }
}
