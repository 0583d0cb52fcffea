//! TPC-C's consistency conditions checked after a measured phase (`run tpcc --check`), so the
//! check is stored with the phase it followed: all twelve, as `check tpcc` checks them
//! (condition 11, which holds only until the first Delivery after the load, is then reported
//! not applicable unless the phase ran no Delivery).

use crate::run::ExecError;
use qpslab_core::{ConnectOptions, PhaseResult, RunPlan};

/// `phase` with the conditions checked on `target` after it, when the plan asks for it and
/// the phase ran TPC-C's transactions.
pub(crate) fn checked(
    target: &ConnectOptions,
    plan: &RunPlan,
    mut phase: PhaseResult,
) -> Result<PhaseResult, ExecError> {
    if let Some(t) = phase.tpcc.as_mut().filter(|_| plan.workload.tpcc.check) {
        t.check = Some(qpslab_engine::prepare::check_tpcc(target)?);
    }
    Ok(phase)
}
