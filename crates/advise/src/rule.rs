//! What every rule shares: how it builds a finding (a plain one, or one about a server
//! variable whose current value the facts hold), and the counter rules' guard against judging
//! a server that has not run long enough.

use crate::{Facts, Finding, FindingKind, Severity};

/// Uptime under which counters say too little about the workload to act on.
pub const MIN_UPTIME_S: u64 = 600;

/// A finding as a rule builds it; [`advise`](crate::advise) fills in `restart_needed`.
pub(crate) fn finding(
    kind: FindingKind,
    variable: &str,
    current: impl Into<String>,
    recommended: Option<String>,
    severity: Severity,
    reason: String,
) -> Finding {
    Finding {
        variable: variable.to_string(),
        current: current.into(),
        recommended,
        reason,
        severity,
        restart_needed: false,
        kind,
    }
}

/// A server-variable finding for `variable`, whose current value is read from the facts
/// (`None` when the server lacks it).
pub(crate) fn server_finding(
    facts: &Facts,
    variable: &str,
    recommended: Option<String>,
    severity: Severity,
    reason: String,
) -> Option<Finding> {
    let current = facts.var(variable)?;
    Some(finding(
        FindingKind::Server,
        variable,
        current,
        recommended,
        severity,
        reason,
    ))
}

/// The finding of a counter-based rule when the server has not run long enough to judge.
pub(crate) fn too_early(facts: &Facts, variable: &str, what: &str) -> Option<Finding> {
    let up = facts.uptime_s();
    (up < MIN_UPTIME_S).then(|| {
        server_finding(
            facts,
            variable,
            None,
            Severity::Info,
            format!(
                "uptime {up} s: too short to judge {what}; run advise again after the \
                 workload has run {} min or more",
                MIN_UPTIME_S / 60
            ),
        )
    })?
}
