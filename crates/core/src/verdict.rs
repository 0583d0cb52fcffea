//! The stability verdict of a measured phase and its reasons: plain data, stored with the
//! phase (`PhaseResult::stability`) and judged by the `stability` module, which re-exports it.

use serde::{Deserialize, Serialize};
use std::fmt;

/// One reason a phase is unfit to compare.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Instability {
    /// Throughput fell far below the phase's usual level for `duration_s`, starting `at_s` into the
    /// measured phase (a server that answered nothing, or a neighbour that took the CPU).
    Stall { at_s: f64, duration_s: f64 },
    /// `sessions` of the phase's `of` sessions were stuck at a report tick: a request of
    /// theirs had waited for its reply longer than the stuck bound (the larger of 1 s and 100×
    /// the phase's p99 so far), the longest `for_s` seconds. Throughput alone hides it: the
    /// other sessions go on, and a stuck event completes nothing.
    Stuck { sessions: u32, of: u32, for_s: f64 },
    /// Throughput drifted over the measured phase: `change_pct` from its start to its end
    /// (fitted line, each end at least zero), against the larger end, so within ±100%;
    /// significant against the interval-to-interval noise.
    Trend { change_pct: f64 },
    /// Intervals whose p99 latency was far above the phase's median p99; `worst_ratio` is the
    /// largest such ratio.
    Spikes { intervals: u32, worst_ratio: f64 },
    /// The client used `share` (0..1) of the CPUs it could run on: it, not the server, may have
    /// limited the result.
    ClientSaturated { share: f64 },
    /// `saturated` of the client's `loops` event loops were each busy at least 90% of the phase
    /// (the busiest `busiest`, 0..1): their sessions waited for the client, so the phase
    /// measured the client, whatever CPU the machine had to spare.
    ClientBound {
        saturated: u32,
        loops: u32,
        busiest: f64,
    },
    /// Errors (retried, ignored) or reconnects during the measured phase.
    Errors { errors: u64, reconnects: u64 },
    /// Other processes used `share` (0..1) of the machine's CPUs while the phase ran: a
    /// neighbour took what the server and client would have used.
    Contended { share: f64 },
}

impl fmt::Display for Instability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Instability::Stall { at_s, duration_s } => {
                write!(f, "stall of {duration_s:.1} s at {at_s:.1} s")
            }
            Instability::Stuck {
                sessions,
                of,
                for_s,
            } => write!(
                f,
                "stalled ({sessions} of {of} session{} stuck for {for_s:.1} s)",
                if *of == 1 { "" } else { "s" }
            ),
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
            Instability::ClientBound {
                saturated,
                loops,
                busiest,
            } => write!(
                f,
                "client-bound ({saturated} of {loops} event loop(s) saturated, busiest {:.0}% of a CPU)",
                busiest * 100.0
            ),
            Instability::Errors { errors, reconnects } => {
                write!(f, "{errors} error(s), {reconnects} reconnect(s)")
            }
            Instability::Contended { share } => {
                write!(f, "other processes used {:.0}% of the CPUs", share * 100.0)
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

    /// True when nothing but other processes' CPU use speaks against the phase. Its figures
    /// carry the neighbour's noise, which a comparison of paired rounds measures as spread in
    /// its interval; a stall, a trend, spikes, errors or a bound client instead bias the one
    /// round they hit, so such a round is left out of the pairing. On a machine that is busy
    /// throughout (a shared CI host, a cloud VM), leaving out contended rounds would leave
    /// nothing to compare.
    pub fn fit_to_pair(&self) -> bool {
        self.reasons
            .iter()
            .all(|r| matches!(r, Instability::Contended { .. }))
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
