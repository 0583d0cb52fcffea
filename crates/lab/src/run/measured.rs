//! A phase measured (and, unless the store failed, stored): what `exec`, replays and studies
//! hand back, and what an unstored phase is kept from.

use qpslab_core::{PhaseResult, TelemetrySample};
use qpslab_store::RunId;

/// A phase measured and stored.
#[derive(Clone, Debug)]
pub struct Measured {
    /// The run it was stored in.
    pub run_id: RunId,
    /// Its order within the run, from 1.
    pub seq: u32,
    /// The phase.
    pub phase: PhaseResult,
    /// Its telemetry (per tick, then whole-phase totals and perf).
    pub telemetry: Vec<TelemetrySample>,
}
