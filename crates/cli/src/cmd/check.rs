//! `qpslab check tpcc`: TPC-C's consistency conditions 1-12, a line each (pass, FAIL with the
//! offenders, or not applicable with why), exit 1 when one fails.

use crate::args::{CheckArgs, Format};
use crate::error::user;
use crate::out::Output;
use crate::target::{command_args, connect, sandbox_home};
use anyhow::Result;
use qpslab_core::WorkloadKind;
use qpslab_lab::run::ready::ReadyError;

/// Runs `qpslab check`.
pub fn check(a: CheckArgs) -> Result<()> {
    let out = Output::new(&a.output, "check")?;
    let kind: WorkloadKind = a.workload.parse().map_err(|e| user(format!("{e}")))?;
    if kind != WorkloadKind::Tpcc {
        return Err(user(format!(
            "check: {kind} has no consistency conditions (only tpcc has)"
        )));
    }
    let home = sandbox_home(&a.home);
    let target = connect(&a.target, None, &home)?;
    let target_args = command_args(&a.target);
    let server = target.server(&home, &target_args);
    let outcome = qpslab_lab::dataset::ready::check_tpcc(&server).map_err(|e| match e {
        ReadyError::Cleanup(e) => {
            anyhow::Error::new(e).context(format!("checking tpcc on {}", target.options.describe()))
        }
        ReadyError::Sandbox(e) => e.into(),
        e => anyhow::Error::new(e),
    });
    let stopped = target.finish();
    let conditions = outcome?;
    out.emit(|f| match f {
        Format::Json => crate::out::json(&conditions),
        _ => Ok(conditions.iter().map(|c| format!("{c}\n")).collect()),
    })?;
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

#[cfg(test)]
mod tests {
    use qpslab_core::ConsistencyCondition;

    #[test]
    fn a_line_per_condition_names_the_offenders() {
        let mut c = ConsistencyCondition {
            number: 1,
            rule: "W_YTD = sum(D_YTD)".into(),
            offenders: vec![],
            not_applicable: None,
        };
        assert_eq!(c.to_string(), "condition 1 (W_YTD = sum(D_YTD)): pass");
        c.offenders = vec!["warehouse 2: w_ytd 1, sum(d_ytd) 2".into()];
        assert_eq!(
            c.to_string(),
            "condition 1 (W_YTD = sum(D_YTD)): FAIL: warehouse 2: w_ytd 1, sum(d_ytd) 2"
        );
    }
}
