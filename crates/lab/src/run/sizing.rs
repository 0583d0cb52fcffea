//! How the client sizes itself to the machine beside a server: the server's CPUs in a plan,
//! from which the engine places its event loops ([`placed`]); how many connections load a
//! dataset is [`crate::dataset::loaders`]. Derived at run time from the CPUs the server may
//! use, never from a constant measured on one machine.

use qpslab_core::{ConnectOptions, RunPlan};

/// `plan` with the CPUs of the server `target` reaches (`server_pid`: its process, when
/// known), from which the engine places its event loops; every caller of the engine that
/// measures a server passes its plan through here first.
pub fn placed(plan: &RunPlan, target: &ConnectOptions, server_pid: Option<u32>) -> RunPlan {
    RunPlan {
        server_cpus: qpslab_probe::threads::server_cpus(target, server_pid),
        ..plan.clone()
    }
}
