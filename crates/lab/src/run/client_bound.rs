//! Whether the client, not the server, may have limited a phase of `qpslab run`: an event loop
//! busy most of the phase, or a client that kept the machine's CPUs busy or spent more CPU than
//! the server it measured. The CLI words the warning; this decides it.

use qpslab_core::{PhaseResult, TelemetrySample};

/// What a phase says about its client and server CPU.
#[derive(Clone, Debug, PartialEq)]
pub struct ClientCheck {
    /// The server's CPU over the phase, when its process is known.
    pub server: Option<ServerCpu>,
    /// The client's limit, when it may have set the result.
    pub limit: Option<ClientLimit>,
}

/// The server's CPU over a phase.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ServerCpu {
    /// CPU seconds, user and system.
    pub seconds: f64,
    /// Its share of the whole machine over the phase (1.0: every CPU all the time).
    pub machine_share: f64,
}

/// How the client may have limited a phase.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ClientLimit {
    /// Event loops were busy at least 90% of the phase.
    Loops {
        /// How many.
        saturated: usize,
        /// Of how many.
        loops: usize,
        /// The busiest loop's share of a CPU.
        busiest: f64,
    },
    /// The client kept the machine busy, or spent more CPU than the server.
    Machine {
        /// The client's share of the whole machine.
        machine_share: f64,
        /// `(client, server)` CPU seconds when the client spent more than the server.
        over_server: Option<(f64, f64)>,
    },
}

/// Checks `phase` (with its `telemetry`) measured on a machine of `cores` CPUs; `None` for a
/// phase that measured no time.
pub fn check(
    phase: &PhaseResult,
    telemetry: &[TelemetrySample],
    cores: f64,
) -> Option<ClientCheck> {
    if phase.duration_s <= 0.0 {
        return None;
    }
    let c = &phase.client_cpu;
    let client_s = c.user_s + c.sys_s;
    let share = client_s / phase.duration_s;
    let server_s = telemetry
        .iter()
        .find_map(TelemetrySample::server_proc)
        .map(|p| p.cpu_s());
    // The server's reading covers the telemetry's whole span (the warm-up, a shard's wait for
    // the others), so its share is taken over that span: never above the machine.
    let span = span(phase, telemetry);
    let server = server_s.map(|s| ServerCpu {
        seconds: s,
        machine_share: (s / span / cores).min(1.0),
    });
    let limit = if let Some(l) = phase.client.as_ref().filter(|l| l.saturated() > 0) {
        Some(ClientLimit::Loops {
            saturated: l.saturated(),
            loops: l.loops(),
            busiest: l.busiest(),
        })
    } else if share >= 0.9 * cores || server_s.is_some_and(|s| client_s > s) {
        // The client is the limit when it keeps the machine's CPUs busy, or spends more CPU
        // than the server it is measuring.
        Some(ClientLimit::Machine {
            machine_share: share / cores,
            over_server: server_s.filter(|s| client_s > *s).map(|s| (client_s, s)),
        })
    } else {
        None
    };
    Some(ClientCheck { server, limit })
}

/// The seconds a phase's whole-phase readings cover: its telemetry's span (warm-up and waits
/// included), at least the measured phase.
pub fn span(phase: &PhaseResult, telemetry: &[TelemetrySample]) -> f64 {
    telemetry
        .iter()
        .map(|t| t.elapsed_s)
        .fold(phase.duration_s, f64::max)
}

/// The CPUs of this machine, as [`check`] counts them.
pub fn machine_cores() -> f64 {
    std::thread::available_parallelism().map_or(1.0, |n| n.get() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use qpslab_core::telemetry::{ProcUsage, Reading};

    fn phase(client_s: f64) -> PhaseResult {
        let mut p = PhaseResult {
            duration_s: 10.0,
            ..PhaseResult::default()
        };
        p.client_cpu.user_s = client_s;
        p
    }

    fn server(cpu_s: f64) -> Vec<TelemetrySample> {
        vec![TelemetrySample {
            elapsed_s: 10.0,
            reading: Reading::ServerProc(ProcUsage {
                user_s: cpu_s,
                ..ProcUsage::default()
            }),
        }]
    }

    #[test]
    fn a_client_spending_more_than_the_server_or_the_machine_is_the_limit() {
        assert_eq!(check(&PhaseResult::default(), &[], 2.0), None);
        let quiet = check(&phase(2.0), &server(8.0), 2.0).unwrap();
        assert_eq!(quiet.limit, None);
        assert_eq!(quiet.server.unwrap().machine_share, 0.4);
        let over = check(&phase(6.0), &server(4.0), 4.0).unwrap();
        assert_eq!(
            over.limit,
            Some(ClientLimit::Machine {
                machine_share: 0.15,
                over_server: Some((6.0, 4.0))
            })
        );
        // A server reading over a longer span (warm-up included) is a share of that span.
        let mut long = server(8.0);
        long[0].elapsed_s = 16.0;
        assert_eq!(
            check(&phase(2.0), &long, 2.0)
                .unwrap()
                .server
                .unwrap()
                .machine_share,
            0.25
        );
        // No server process known: only the machine's CPUs count.
        assert_eq!(check(&phase(6.0), &[], 4.0).unwrap().limit, None);
        let busy = check(&phase(18.0), &[], 2.0).unwrap();
        assert_eq!(
            busy.limit,
            Some(ClientLimit::Machine {
                machine_share: 0.9,
                over_server: None
            })
        );
    }
}
