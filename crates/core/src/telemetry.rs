//! Telemetry readings taken while a phase runs, stored with the phase.

use serde::{Deserialize, Serialize};

/// One telemetry reading taken during a phase (server status, server or client process CPU...).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TelemetrySample {
    /// Seconds since the measured phase began.
    pub elapsed_s: f64,
    /// What was read: `server_status`, `server_proc`, `client_proc`...
    pub source: String,
    /// The reading.
    pub values: serde_json::Value,
}
