//! TPC-C's part of a phase summary: NewOrder/min and transactions/min (stress mode, so never
//! called tpmC), the commits per transaction type, and each type's latency, from the counts and
//! latencies the engine keeps per statement kind (`new_order.commit`) and per transaction type
//! (`new_order`).

use qpslab_core::PhaseResult;

/// The transaction types, in the spec's order.
const TYPES: [&str; 5] = [
    "new_order",
    "payment",
    "order_status",
    "delivery",
    "stock_level",
];

/// The TPC-C section as (indent, label, value) lines, a heading where the value is empty;
/// none when the phase did not run TPC-C's transactions.
pub fn lines(p: &PhaseResult) -> Vec<(usize, String, String)> {
    let count = |kind: &str| {
        p.statements
            .iter()
            .find(|s| s.kind == kind)
            .map_or(0, |s| s.latency.count)
    };
    let new_orders = count("new_order.commit");
    if new_orders == 0 && count("payment.commit") == 0 {
        return Vec::new();
    }
    let minutes = p.duration_s.max(1e-9) / 60.0;
    let line = |indent: usize, label: &str, value: String| (indent, label.to_string(), value);
    let by_type: Vec<String> = TYPES
        .iter()
        .map(|t| format!("{t} {}", count(&format!("{t}.commit"))))
        .collect();
    let mut out = vec![
        line(
            0,
            "TPC-C, stress mode (no keying or think time: not tpmC):",
            String::new(),
        ),
        line(
            4,
            "NewOrder/min:",
            format!("{:.1}", new_orders as f64 / minutes),
        ),
        line(
            4,
            "transactions/min:",
            format!("{:.1}", p.events as f64 / minutes),
        ),
        line(4, "committed:", by_type.join(", ")),
        line(
            4,
            "new_order rolled back:",
            count("new_order.rollback").to_string(),
        ),
        line(
            4,
            "latency per transaction (ms, avg/p95/max):",
            String::new(),
        ),
    ];
    for t in TYPES {
        let Some(s) = p.statements.iter().find(|s| s.kind == t) else {
            continue;
        };
        let l = &s.latency;
        let p95 = l
            .percentiles
            .iter()
            .find(|q| (q.p - 95.0).abs() < 1e-9)
            .map_or_else(|| "-".to_string(), |q| format!("{:.2}", q.ms));
        let v = format!("{:.2}/{p95}/{:.2} ({} events)", l.avg_ms, l.max_ms, l.count);
        out.push(line(6, &format!("{t}:"), v));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use qpslab_core::result::{LatencySummary, Percentile, StatementLatency};

    fn kind(name: &str, count: u64) -> StatementLatency {
        StatementLatency {
            kind: name.into(),
            latency: LatencySummary {
                count,
                min_ms: 1.0,
                avg_ms: 2.0,
                max_ms: 9.0,
                percentiles: vec![Percentile { p: 95.0, ms: 5.5 }],
            },
        }
    }

    #[test]
    fn rates_per_minute_and_latency_per_type() {
        let mut p = PhaseResult {
            duration_s: 30.0,
            events: 200,
            ..PhaseResult::default()
        };
        assert!(lines(&p).is_empty(), "not a TPC-C phase");
        p.statements = vec![
            kind("new_order.commit", 90),
            kind("new_order.rollback", 1),
            kind("payment.commit", 88),
            kind("new_order", 91),
        ];
        let got = lines(&p);
        let find = |label: &str| got.iter().find(|l| l.1 == label).unwrap().2.clone();
        assert_eq!(find("NewOrder/min:"), "180.0");
        assert_eq!(find("transactions/min:"), "400.0");
        assert_eq!(
            find("committed:"),
            "new_order 90, payment 88, order_status 0, delivery 0, stock_level 0"
        );
        assert_eq!(find("new_order rolled back:"), "1");
        assert_eq!(find("new_order:"), "2.00/5.50/9.00 (91 events)");
        assert!(
            got.iter().all(|l| l.1 != "payment:"),
            "no payment latency kept"
        );
        assert!(got[0].1.contains("not tpmC"));
    }
}
