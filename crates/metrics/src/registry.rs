//! What the endpoint serves: the figures of the phase being measured, updated once per report
//! interval. Gauges hold the last interval; counters add up over the phase. A new phase (new
//! labels) replaces the old one's series, so a dashboard never shows a finished phase's last
//! figures as if they were live (Prometheus marks the old series stale).

use crate::phase::{Labels, Phase};
use qpslab_core::{Sample, TelemetrySample};
use std::sync::{Arc, Mutex, PoisonError};

/// The figures the endpoint serves; cheap to clone (one shared state). The run reports into
/// it through [`Registry::record`]; the exporter's thread reads it through
/// [`Registry::render`].
#[derive(Clone, Debug, Default)]
pub struct Registry {
    phase: Arc<Mutex<Option<Phase>>>,
}

impl Registry {
    /// An empty registry (the endpoint then serves no series).
    pub fn new() -> Registry {
        Registry::default()
    }

    /// Adds one report interval of the phase `labels` names: a phase with other labels than
    /// the last interval's starts its series afresh.
    pub fn record(&self, labels: &Labels, s: &Sample, telemetry: &[TelemetrySample]) {
        let mut guard = self.phase.lock().unwrap_or_else(PoisonError::into_inner);
        let phase = match guard.as_mut() {
            Some(p) if p.labels == *labels => p,
            _ => guard.insert(Phase {
                labels: labels.clone(),
                ..Phase::default()
            }),
        };
        phase.add(s, telemetry);
    }

    /// The current figures as text in `format`.
    pub fn render(&self, format: crate::Format) -> String {
        let phase = self
            .phase
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        crate::text::render(phase.as_ref(), format)
    }
}
