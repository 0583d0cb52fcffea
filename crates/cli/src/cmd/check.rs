//! `qpslab check tpcc`: TPC-C's consistency conditions 1-4, a line each, exit 1 when one fails.

use crate::args::CheckArgs;
use crate::dataset::sandbox_use;
use crate::error::user;
use crate::target::{connect, sandbox_home};
use anyhow::{Context, Result};
use qpslab_core::{ConsistencyCondition, WorkloadKind};
use qpslab_engine::prepare;
use qpslab_sandbox::Hold;

/// Runs `qpslab check`.
pub fn check(a: CheckArgs) -> Result<()> {
    let kind: WorkloadKind = a.workload.parse().map_err(|e| user(format!("{e}")))?;
    if kind != WorkloadKind::Tpcc {
        return Err(user(format!(
            "check: {kind} has no consistency conditions (only tpcc has)"
        )));
    }
    let target = connect(&a.target, None, &sandbox_home(&a.home))?;
    // Runs may go on meanwhile: the conditions hold during runs too.
    let outcome = sandbox_use(&target, &a.target, Hold::Shared).and_then(|_held| {
        prepare::check_tpcc(&target.options)
            .with_context(|| format!("checking tpcc on {}", target.options.describe()))
    });
    let stopped = target.finish();
    let conditions = outcome?;
    for c in &conditions {
        println!("{}", condition_line(c));
    }
    stopped?;
    let failed: Vec<String> = conditions
        .iter()
        .filter(|c| !c.passed())
        .map(|c| c.number.to_string())
        .collect();
    if failed.is_empty() {
        Ok(())
    } else {
        Err(anyhow::anyhow!(
            "TPC-C consistency condition(s) {} failed",
            failed.join(", ")
        ))
    }
}

/// `condition 1 (W_YTD = sum(D_YTD)): pass`, or `FAIL: ` and the offenders.
fn condition_line(c: &ConsistencyCondition) -> String {
    let verdict = if c.passed() {
        "pass".to_string()
    } else {
        format!("FAIL: {}", c.offenders.join("; "))
    };
    format!("condition {} ({}): {verdict}", c.number, c.rule)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_per_condition_names_the_offenders() {
        let mut c = ConsistencyCondition {
            number: 1,
            rule: "W_YTD = sum(D_YTD)".into(),
            offenders: vec![],
        };
        assert_eq!(condition_line(&c), "condition 1 (W_YTD = sum(D_YTD)): pass");
        c.offenders = vec!["warehouse 2: w_ytd 1, sum(d_ytd) 2".into()];
        assert_eq!(
            condition_line(&c),
            "condition 1 (W_YTD = sum(D_YTD)): FAIL: warehouse 2: w_ytd 1, sum(d_ytd) 2"
        );
    }
}
