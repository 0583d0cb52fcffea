//! qpslab-engine: sysbench-compatible workloads and the load loop that drives them.
//!
//! [`workload`] turns sysbench's options into statements; [`run::run_phase`] drives them against a
//! server from a few event-loop threads, each serving many sessions over non-blocking sockets, and
//! reports one [`qpslab_core::Sample`] per interval and a [`qpslab_core::PhaseResult`] at the end.
//!
//! Its parts, file by file (the crate map in docs/ARCHITECTURE.md points here):
//! sysbench-compatible workloads (`workload/`, `rand.rs`), prepare/cleanup (`prepare.rs`,
//! `prepare/`), and the load loop (`run/`): event loops, sessions as state machines, rate control,
//! histograms, samples; it takes the `RunPlan` as it is (engine knobs included) and reads no
//! environment.

pub mod prepare;
pub mod rand;
pub mod run;
pub mod workload;

pub use run::{place, run_phase, run_phase_gated, Gate, Placement, RunError};
