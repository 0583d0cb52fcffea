//! TPC-C's figures of a report's points: NewOrder/min as the client counted it beside the
//! server's NOPM, tpmC where the phase was spec-compliant, retries, and the consistency check
//! stored with the phase (`run tpcc --check`), each condition's pass, FAIL or not applicable. Every rate is
//! the one `qpslab_core::tpcc` defines, as `run` and `show` print it.

use crate::model::Point;
use qpslab_core::tpcc::NOT_APPLICABLE;
use serde::{Deserialize, Serialize};

/// One TPC-C point, as a report lists it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TpccRow {
    /// The run.
    pub run_id: i64,
    /// The variant and the point's key (`threads=4`).
    pub point: String,
    /// `stress` or `spec` (with its think-time scale when scaled).
    pub mode: String,
    /// Committed New-Orders per minute, the client's count.
    pub new_orders_per_min: f64,
    /// Committed New-Orders per minute, the server's count (the change of sum(d_next_o_id)).
    pub server_nopm: Option<f64>,
    /// tpmC (unscaled spec mode only).
    pub tpmc: Option<f64>,
    /// Retried transactions (deadlocks, lock wait timeouts), all types.
    pub retries: u64,
    /// Each condition's line (`condition 1 (...): pass`); none: no check was stored.
    pub conditions: Option<Vec<String>>,
}

impl TpccRow {
    /// `pass`, `pass (11 not applicable)`, `FAIL: 1, 4`, or `not checked`.
    pub fn verdict(&self) -> String {
        let Some(lines) = &self.conditions else {
            return "not checked".into();
        };
        let numbers = |which: ConditionResult| -> Vec<&str> {
            lines
                .iter()
                .filter(|l| outcome(l) == which)
                .filter_map(|l| l.strip_prefix("condition ")?.split(' ').next())
                .collect()
        };
        let (failed, unjudged) = (
            numbers(ConditionResult::Fail),
            numbers(ConditionResult::NotApplicable),
        );
        if !failed.is_empty() {
            format!("FAIL: {}", failed.join(", "))
        } else if !unjudged.is_empty() {
            format!("pass ({} {NOT_APPLICABLE})", unjudged.join(", "))
        } else {
            "pass".into()
        }
    }

    /// The lines of the conditions that failed.
    pub fn failures(&self) -> impl Iterator<Item = &String> {
        let lines = self.conditions.iter().flatten();
        lines.filter(|l| outcome(l) == ConditionResult::Fail)
    }
}

/// What a condition's line says of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ConditionResult {
    Pass,
    Fail,
    NotApplicable,
}

/// The outcome a line of `qpslab_core::ConsistencyCondition`'s form states after its rule
/// (`condition 1 (W_YTD = sum(D_YTD)): pass`); a line of no known form counts as failed.
fn outcome(line: &str) -> ConditionResult {
    if line.ends_with("): pass") {
        ConditionResult::Pass
    } else if line.contains(&format!("): {NOT_APPLICABLE}: ")) {
        ConditionResult::NotApplicable
    } else {
        ConditionResult::Fail
    }
}

/// The TPC-C rows of `points` that ran TPC-C (with the server's count stored).
pub(crate) fn tpcc_rows(points: &[Point<'_>]) -> Vec<TpccRow> {
    points
        .iter()
        .filter_map(|p| {
            let r = &p.phase.result;
            let t = r.tpcc.as_ref()?;
            let mode = if t.scaled() {
                format!("{} x{}", t.mode, t.think_scale)
            } else {
                t.mode.to_string()
            };
            Some(TpccRow {
                run_id: p.subject.run.id.0,
                point: format!("{} {}", p.subject.cell.variant, p.key()),
                mode,
                new_orders_per_min: r.new_orders_per_min(),
                server_nopm: r.server_nopm(),
                tpmc: r.tpmc(),
                retries: t.retries.keys().map(|k| t.retries_of(k)).sum(),
                conditions: t
                    .check
                    .as_ref()
                    .map(|c| c.iter().map(ToString::to_string).collect()),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdict_names_the_failed_conditions() {
        let mut row = TpccRow {
            run_id: 1,
            point: "a threads=4".into(),
            mode: "stress".into(),
            new_orders_per_min: 1.0,
            server_nopm: Some(1.0),
            tpmc: None,
            retries: 0,
            conditions: None,
        };
        assert_eq!(row.verdict(), "not checked");
        row.conditions = Some(vec![
            "condition 1 (W_YTD = sum(D_YTD)): pass".into(),
            "condition 2 (x): FAIL: warehouse 1 district 5: ...".into(),
            "condition 4 (y): FAIL: warehouse 1 district 3: ...".into(),
        ]);
        assert_eq!(row.verdict(), "FAIL: 2, 4");
        assert_eq!(row.failures().count(), 2);
        row.conditions = Some(vec!["condition 1 (W_YTD = sum(D_YTD)): pass".into()]);
        assert_eq!(row.verdict(), "pass");
        // Condition 11 after a Delivery is neither a pass nor a failure.
        let c11 = qpslab_core::ConsistencyCondition {
            number: 11,
            rule: "rows in ORDER - rows in NEW-ORDER = 2100".into(),
            offenders: vec![],
            not_applicable: Some("holds only until the first Delivery".into()),
        };
        row.conditions.as_mut().unwrap().push(c11.to_string());
        assert_eq!(row.verdict(), "pass (11 not applicable)");
        assert_eq!(row.failures().count(), 0);
        row.conditions.as_mut().unwrap()[0] = "condition 1 (W_YTD = sum(D_YTD)): FAIL: w 1".into();
        assert_eq!(row.verdict(), "FAIL: 1");
    }
}
