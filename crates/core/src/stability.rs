//! Whether a measured phase is fit to compare: the stability verdict and its reasons.
//!
//! The lab judges every phase from its per-interval samples (stalls, trend, latency spikes,
//! client saturation, errors); the verdict is stored with the phase and shown wherever the
//! phase's numbers are (run summary, `lab show`, reports, `compare`). A study measures an
//! unstable cell again.

use serde::{Deserialize, Serialize};
use std::fmt;

/// One reason a phase is unfit to compare.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Instability {
    /// Throughput fell far below the phase's median for `duration_s`, starting `at_s` into the
    /// measured phase (a server that answered nothing, or a neighbour that took the CPU).
    Stall { at_s: f64, duration_s: f64 },
    /// Throughput drifted over the measured phase: `change_pct` from its start to its end
    /// (fitted line), significant against the interval-to-interval noise.
    Trend { change_pct: f64 },
    /// Intervals whose p99 latency was far above the phase's median p99; `worst_ratio` is the
    /// largest such ratio.
    Spikes { intervals: u32, worst_ratio: f64 },
    /// The client used `share` (0..1) of the CPUs it could run on: it, not the server, may have
    /// limited the result.
    ClientSaturated { share: f64 },
    /// Errors (retried, ignored) or reconnects during the measured phase.
    Errors { errors: u64, reconnects: u64 },
}

impl fmt::Display for Instability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Instability::Stall { at_s, duration_s } => {
                write!(f, "stall of {duration_s:.1} s at {at_s:.1} s")
            }
            Instability::Trend { change_pct } => write!(f, "trend of {change_pct:+.0}%"),
            Instability::Spikes {
                intervals,
                worst_ratio,
            } => write!(
                f,
                "p99 spikes in {intervals} interval(s), up to {worst_ratio:.0}× the median"
            ),
            Instability::ClientSaturated { share } => {
                write!(f, "client saturated ({:.0}% of its CPUs)", share * 100.0)
            }
            Instability::Errors { errors, reconnects } => {
                write!(f, "{errors} error(s), {reconnects} reconnect(s)")
            }
        }
    }
}

/// The verdict on one phase: stable when there is no reason against it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Stability {
    /// Why the phase is unfit to compare; empty when it is stable.
    pub reasons: Vec<Instability>,
}

impl Stability {
    /// True when nothing speaks against the phase.
    pub fn is_stable(&self) -> bool {
        self.reasons.is_empty()
    }
}

impl fmt::Display for Stability {
    /// `stable`, or `unstable: stall of 2.1 s at 1.3 s; trend of -12%`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.reasons.is_empty() {
            return f.write_str("stable");
        }
        f.write_str("unstable: ")?;
        for (i, r) in self.reasons.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{r}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_read_as_one_line_and_round_trip() {
        assert_eq!(Stability::default().to_string(), "stable");
        let s = Stability {
            reasons: vec![
                Instability::Stall {
                    at_s: 1.3,
                    duration_s: 2.1,
                },
                Instability::Trend { change_pct: -12.0 },
            ],
        };
        assert!(!s.is_stable());
        assert_eq!(
            s.to_string(),
            "unstable: stall of 2.1 s at 1.3 s; trend of -12%"
        );
        let json = serde_json::to_string(&s).unwrap();
        assert!(json.contains("\"kind\":\"stall\""), "{json}");
        assert_eq!(serde_json::from_str::<Stability>(&json).unwrap(), s);
    }
}
