//! TPC-C's part of a phase summary (`run` and `show`): NewOrder/min as the client counted it
//! beside the server's NOPM (the change of sum(d_next_o_id)), transactions/min, the commits,
//! rollbacks and retries per transaction type, each type's latency; in spec mode tpmC (unless
//! the think times were scaled), the efficiency and the 90th-percentile limits; the
//! consistency check when one ran. Stress mode never prints tpmC. Every rate is the one
//! `qpslab_core::tpcc` defines.

use qpslab_core::tpcc::{TpccFigures, TpccMode, TYPES};
use qpslab_core::PhaseResult;

/// One line: indent, label, value (a heading when the value is empty).
type Line = (usize, String, String);

fn line(indent: usize, label: &str, value: String) -> Line {
    (indent, label.to_string(), value)
}

/// The TPC-C section as (indent, label, value) lines, a heading where the value is empty;
/// none when the phase did not run TPC-C's transactions.
pub fn lines(p: &PhaseResult) -> Vec<Line> {
    let count = |kind: &str| p.kind_count(kind);
    if count("new_order.commit") == 0 && count("payment.commit") == 0 && p.tpcc.is_none() {
        return Vec::new();
    }
    let t = p.tpcc.as_ref();
    let by_type: Vec<String> = TYPES
        .iter()
        .map(|t| format!("{t} {}", count(&format!("{t}.commit"))))
        .collect();
    let mut out = vec![line(0, &heading(t), String::new())];
    if let Some(tpmc) = p.tpmc() {
        out.push(line(4, "tpmC:", format!("{tpmc:.1}")));
    }
    out.push(line(
        4,
        "NewOrder/min:",
        format!("{:.1}", p.new_orders_per_min()),
    ));
    if let Some(nopm) = p.server_nopm() {
        out.push(line(
            4,
            "server NOPM (sum(d_next_o_id)):",
            format!("{nopm:.1}"),
        ));
    }
    out.push(line(
        4,
        "transactions/min:",
        format!("{:.1}", p.transactions_per_min()),
    ));
    if let Some(eff) = p.tpcc_efficiency_pct() {
        let w = t.map_or(1, |t| t.warehouses);
        out.push(line(
            4,
            "efficiency:",
            format!("{eff:.1}% of 12.86 x {w} NewOrder/min"),
        ));
    }
    out.push(line(4, "committed:", by_type.join(", ")));
    out.push(line(
        4,
        "new_order rolled back:",
        count("new_order.rollback").to_string(),
    ));
    if let Some(t) = t {
        out.push(line(4, "retried (deadlock, lock wait):", retries(t)));
    }
    out.push(line(
        4,
        "latency per transaction (ms, avg/p95/max):",
        String::new(),
    ));
    for t in TYPES {
        let Some(s) = p.statements.iter().find(|s| s.kind == t) else {
            continue;
        };
        let l = &s.latency;
        let p95 = l
            .percentile(95.0)
            .map_or_else(|| "-".to_string(), |ms| format!("{ms:.2}"));
        let v = format!("{:.2}/{p95}/{:.2} ({} events)", l.avg_ms, l.max_ms, l.count);
        out.push(line(6, &format!("{t}:"), v));
    }
    if t.is_some_and(|t| t.mode == TpccMode::Spec) {
        out.extend(limits(p));
    }
    if let Some(check) = t.and_then(|t| t.check.as_ref()) {
        out.push(line(4, "consistency after the phase:", String::new()));
        for c in check {
            out.push((6, c.to_string(), String::new()));
        }
    }
    out
}

/// The section's first line: the mode, and why it is or is not tpmC.
fn heading(t: Option<&TpccFigures>) -> String {
    match t {
        Some(t) if t.scaled() => format!(
            "TPC-C, spec mode with keying and think times x{} (scaled: not spec-compliant, not tpmC):",
            t.think_scale
        ),
        Some(t) if t.mode == TpccMode::Spec => {
            "TPC-C, spec mode (keying and think times, 10 terminals per warehouse):".into()
        }
        _ => "TPC-C, stress mode (no keying or think time: not tpmC):".into(),
    }
}

/// `new_order 0, payment 3 (1213: 2, 1205: 1), ...`.
fn retries(t: &TpccFigures) -> String {
    TYPES
        .iter()
        .map(|ty| match t.retries.get(*ty) {
            Some(codes) if !codes.is_empty() => {
                let by: Vec<String> = codes.iter().map(|(c, n)| format!("{c}: {n}")).collect();
                format!("{ty} {} ({})", t.retries_of(ty), by.join(", "))
            }
            _ => format!("{ty} 0"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Spec mode's 90th-percentile response times against the spec's limits, pass or FAIL.
fn limits(p: &PhaseResult) -> Vec<Line> {
    let mut out = vec![line(
        4,
        "90th percentile response time (limit):",
        String::new(),
    )];
    for l in p.response_limits() {
        let p90 = l
            .p90_ms
            .map_or_else(|| "-".to_string(), |ms| format!("{ms:.2} ms"));
        let v = match (l.limit_s, l.passed()) {
            (None, _) => format!("{p90} (deferred in the spec, run inline here: not judged)"),
            (Some(s), None) => format!("{p90} (limit {s} s): nothing measured"),
            (Some(s), Some(true)) => format!("{p90} (limit {s} s): pass"),
            (Some(s), Some(false)) => format!("{p90} (limit {s} s): FAIL"),
        };
        out.push(line(6, &format!("{}:", l.kind), v));
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
        assert!(got.iter().all(|l| !l.1.starts_with("tpmC")));
        assert!(got.iter().all(|l| !l.1.starts_with("server NOPM")));

        // With the server's count, retries and a check; spec mode scaled gives no tpmC.
        let mut t = qpslab_core::tpcc::TpccFigures {
            mode: TpccMode::Spec,
            think_scale: 0.01,
            warehouses: 1,
            server_new_orders: 89,
            ..Default::default()
        };
        t.retries
            .entry("payment".into())
            .or_default()
            .extend([(1213, 2), (1205, 1)]);
        t.check = Some(vec![qpslab_core::ConsistencyCondition {
            number: 2,
            rule: "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)".into(),
            offenders: vec!["warehouse 1 district 3: ...".into()],
            not_applicable: None,
        }]);
        p.tpcc = Some(t.clone());
        let got = lines(&p);
        let find = |label: &str| got.iter().find(|l| l.1 == label).map(|l| l.2.clone());
        assert_eq!(find("server NOPM (sum(d_next_o_id)):").unwrap(), "178.0");
        assert_eq!(find("tpmC:"), None, "scaled");
        assert!(got[0].1.contains("not spec-compliant"), "{}", got[0].1);
        assert_eq!(
            find("retried (deadlock, lock wait):").unwrap(),
            "new_order 0, payment 3 (1205: 1, 1213: 2), order_status 0, delivery 0, stock_level 0"
        );
        assert!(find("efficiency:")
            .unwrap()
            .starts_with("1399.7% of 12.86 x 1"));
        assert!(find("delivery:").is_some_and(|v| v.contains("not judged")));
        assert!(got
            .iter()
            .any(|l| l.1 == "condition 2 (D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)): FAIL: warehouse 1 district 3: ..."));
        t.think_scale = 1.0;
        p.tpcc = Some(t);
        let got = lines(&p);
        assert!(got.iter().any(|l| l.1 == "tpmC:" && l.2 == "180.0"));
    }
}
