//! How the client placed itself for a phase and how busy each of its event loops was: stored
//! with the phase ([`crate::PhaseResult::client`]), so a result says whether the client, not the
//! server, set its ceiling.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A loop whose thread ran this share (0..1) of the measured phase on a CPU had no time to
/// spare: its sessions waited for it, so the phase measured the client.
pub const LOOP_BUSY_LIMIT: f64 = 0.9;

/// Where the client ran a phase and how its event loops fared.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientLoops {
    /// The CPUs the client could run on: `--client-cpus`, else its affinity mask.
    pub cpus: Vec<usize>,
    /// Each loop was pinned to one of `cpus` (`--client-cpus`).
    pub pinned: bool,
    /// Whether the server's process may run on any of `cpus` (none: not known, e.g. a server
    /// reached over TCP on this machine whose process was not found).
    pub shares_server: Option<bool>,
    /// How the loop count was chosen: `--event-loops`, or the default rule's reason.
    pub chosen_by: String,
    /// Each loop's CPU time over the measured phase as a share of the phase (1.0: one CPU busy
    /// the whole phase).
    pub busy: Vec<f64>,
    /// Each loop's time runnable but waiting for a CPU, as a share of the phase (a client
    /// whose CPUs other threads took; empty when the kernel does not say).
    #[serde(default)]
    pub waited: Vec<f64>,
}

impl ClientLoops {
    /// Number of event loops.
    pub fn loops(&self) -> usize {
        self.busy.len()
    }

    /// The busiest loop's share of the phase (0 with no loops).
    pub fn busiest(&self) -> f64 {
        self.busy.iter().copied().fold(0.0, f64::max)
    }

    /// Loops at or above [`LOOP_BUSY_LIMIT`].
    pub fn saturated(&self) -> usize {
        self.busy.iter().filter(|b| **b >= LOOP_BUSY_LIMIT).count()
    }

    /// `4 event loops on CPUs 12-15 (pinned, not the server's)`, without the busy figures.
    pub fn placement(&self) -> String {
        let n = self.loops();
        let mut s = format!(
            "{n} event loop{} on CPU{} {}",
            if n == 1 { "" } else { "s" },
            if self.cpus.len() == 1 { "" } else { "s" },
            crate::cpus::render_ranges(&self.cpus)
        );
        let mut notes = Vec::new();
        if self.pinned {
            notes.push("pinned");
        }
        match self.shares_server {
            Some(true) => notes.push("shared with the server"),
            Some(false) => notes.push("not the server's"),
            None => {}
        }
        if !notes.is_empty() {
            s.push_str(&format!(" ({})", notes.join(", ")));
        }
        s
    }
}

impl fmt::Display for ClientLoops {
    /// The placement and the busiest loop: `4 event loops on CPUs 12-15 (...), busiest 97%`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}, busiest {:.0}%",
            self.placement(),
            self.busiest() * 100.0
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn says_where_the_loops_ran_and_which_were_saturated() {
        let c = ClientLoops {
            cpus: vec![12, 13, 14, 15],
            pinned: false,
            shares_server: Some(false),
            chosen_by: "one per CPU".into(),
            busy: vec![0.95, 0.5, 0.91, 0.2],
            waited: vec![0.01; 4],
        };
        assert_eq!(c.loops(), 4);
        assert_eq!(c.saturated(), 2);
        assert!((c.busiest() - 0.95).abs() < 1e-12);
        assert_eq!(
            c.to_string(),
            "4 event loops on CPUs 12-15 (not the server's), busiest 95%"
        );
        let one = ClientLoops {
            cpus: vec![1],
            pinned: true,
            shares_server: None,
            busy: vec![0.3],
            ..c
        };
        assert_eq!(one.placement(), "1 event loop on CPU 1 (pinned)");
        assert_eq!(ClientLoops::default().busiest(), 0.0);
    }
}
