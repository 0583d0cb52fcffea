//! The metrics a comparison looks at, and how each is read from a stored phase: its value for
//! the phase ([`Metric::phase_value`], the number every table prints), and its per-interval
//! series, which only sets the spread (the uncertainty of a single run) and draws charts over
//! time.

use crate::model::Point;
use qpslab_core::result::{PhaseResult, Sample};
use qpslab_core::telemetry::{ProcUsage, Reading, ReplicaLag};
use qpslab_store::{StoredPhase, TelemetrySample};
use serde::{Deserialize, Serialize};

/// A compared metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Transactions (events) per second.
    Tps,
    /// Queries per second.
    Qps,
    /// Median event latency.
    P50,
    /// 95th percentile event latency.
    P95,
    /// 99th percentile event latency.
    P99,
    /// Server CPU (user + system) per transaction.
    ServerCpuPerTxn,
    /// A replica's lag (`run --replica`): each interval's largest heartbeat lag (GTID lag
    /// when there is no heartbeat reading).
    ReplicaLag,
}

impl Metric {
    /// Every metric, in display order.
    pub const ALL: [Metric; 7] = [
        Metric::Tps,
        Metric::Qps,
        Metric::P50,
        Metric::P95,
        Metric::P99,
        Metric::ServerCpuPerTxn,
        Metric::ReplicaLag,
    ];

    /// Short name, as in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Tps => "tps",
            Metric::Qps => "qps",
            Metric::P50 => "p50",
            Metric::P95 => "p95",
            Metric::P99 => "p99",
            Metric::ServerCpuPerTxn => "server_cpu_per_txn",
            Metric::ReplicaLag => "replica_lag",
        }
    }

    /// Unit of its values.
    pub fn unit(self) -> &'static str {
        match self {
            Metric::Tps | Metric::Qps => "/s",
            Metric::P50 | Metric::P95 | Metric::P99 | Metric::ReplicaLag => "ms",
            Metric::ServerCpuPerTxn => "µs",
        }
    }

    /// Whether a larger value is an improvement.
    pub fn higher_is_better(self) -> bool {
        matches!(self, Metric::Tps | Metric::Qps)
    }

    pub(crate) fn percentile(self) -> Option<f64> {
        match self {
            Metric::P50 => Some(50.0),
            Metric::P95 => Some(95.0),
            Metric::P99 => Some(99.0),
            _ => None,
        }
    }

    /// The per-interval values of this metric in a phase (empty when the samples lack it): a
    /// series for spread and charts over time. For a percentile these are each interval's own
    /// percentile, a different statistic from the phase's ([`Metric::phase_value`]).
    pub fn series(self, stored: &StoredPhase) -> Vec<f64> {
        match self {
            Metric::ServerCpuPerTxn => server_cpu_per_txn_series(stored),
            Metric::ReplicaLag => replica_lag_series(stored),
            _ => self.of_samples(&stored.result.samples).unwrap_or_default(),
        }
    }

    /// This metric per interval of `samples` for the metrics the client measures itself
    /// (`None` for those read from the server's telemetry): the measured intervals, or the
    /// warm-up's ([`PhaseResult::warmup`]).
    pub fn of_samples(self, samples: &[Sample]) -> Option<Vec<f64>> {
        let per_s = |s: &Sample, n: u64| (s.interval_s > 0.0).then(|| n as f64 / s.interval_s);
        Some(match self {
            Metric::Tps => samples.iter().filter_map(|s| per_s(s, s.events)).collect(),
            Metric::Qps => samples
                .iter()
                .filter_map(|s| per_s(s, s.queries.total()))
                .collect(),
            Metric::P50 | Metric::P95 | Metric::P99 => {
                let p = self.percentile().unwrap_or_default();
                let vals: Vec<f64> = samples
                    .iter()
                    .filter(|s| s.events > 0)
                    .filter_map(|s| s.latency.percentile(p))
                    .collect();
                // A series with holes would bias the mean; use it only when every interval
                // that saw events reported this percentile.
                let with_events = samples.iter().filter(|s| s.events > 0).count();
                if vals.len() == with_events {
                    vals
                } else {
                    Vec::new()
                }
            }
            Metric::ServerCpuPerTxn | Metric::ReplicaLag => return None,
        })
    }

    /// The value of this metric for one run at one point, the one every surface prints:
    /// throughput over the whole measured phase, latency percentiles from the phase's merged
    /// histogram ([`PhaseResult::percentile_ms`]), never a mean of per-interval percentiles;
    /// server CPU per transaction and replica lag as the mean of their intervals (whole-phase
    /// readings when the intervals lack them).
    pub fn phase_value(self, point: &Point<'_>) -> Option<f64> {
        let phase = &point.phase.result;
        match self {
            Metric::Tps => Some(phase.tps()),
            Metric::Qps => Some(phase.qps()),
            Metric::P50 | Metric::P95 | Metric::P99 => {
                phase.percentile_ms(self.percentile().unwrap_or_default())
            }
            Metric::ServerCpuPerTxn => mean(&self.series(point.phase)).or_else(|| {
                let cpu = server_cpu(point)?;
                let tps = phase.tps();
                (tps > 0.0).then(|| (cpu.user + cpu.sys) * 1e6 / tps)
            }),
            Metric::ReplicaLag => mean(&self.series(point.phase)).or_else(|| {
                let lags: Vec<f64> = lag_readings(point.phase)
                    .filter_map(|(_, l)| l.headline_ms())
                    .collect();
                mean(&lags)
            }),
        }
    }
}

fn mean(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
}

/// Server CPU µs per transaction on each report tick, from the `tick` telemetry whose
/// `elapsed_s` matches a sample's; empty unless every interval with events has its tick.
fn server_cpu_per_txn_series(stored: &StoredPhase) -> Vec<f64> {
    let ticks: Vec<&TelemetrySample> = stored
        .telemetry
        .iter()
        .filter(|t| matches!(t.reading, Reading::Tick(_)))
        .collect();
    let mut out = Vec::new();
    for s in stored.result.samples.iter().filter(|s| s.events > 0) {
        let cpu = ticks
            .iter()
            .find(|t| (t.elapsed_s - s.elapsed_s).abs() < 1e-6)
            .and_then(|t| Some(t.tick_change()?.server?.cpu_s()));
        match cpu {
            Some(c) => out.push(c * 1e6 / s.events as f64),
            None => return Vec::new(),
        }
    }
    out
}

/// The `replica_lag` readings of a phase with their `elapsed_s`.
fn lag_readings(stored: &StoredPhase) -> impl Iterator<Item = (f64, &ReplicaLag)> {
    stored.telemetry.iter().filter_map(|t| match &t.reading {
        Reading::ReplicaLag(l) => Some((t.elapsed_s, l)),
        _ => None,
    })
}

/// Each interval's lag (see [`Metric::ReplicaLag`]), from the reading taken on its tick;
/// empty unless every interval has one with a value.
fn replica_lag_series(stored: &StoredPhase) -> Vec<f64> {
    let mut out = Vec::new();
    for s in &stored.result.samples {
        let lag = lag_readings(stored)
            .find(|(at, _)| (at - s.elapsed_s).abs() < 1e-6)
            .and_then(|(_, l)| l.headline_ms());
        match lag {
            Some(ms) => out.push(ms),
            None => return Vec::new(),
        }
    }
    out
}

/// CPU seconds per second (1.0 = one core busy), split user/system.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CpuRate {
    /// User CPU per second.
    pub user: f64,
    /// System CPU per second.
    pub sys: f64,
}

/// The server process's CPU rate over a phase, from its `server_proc` telemetry: CPU deltas
/// summed over the readings, divided by the span they cover (warm-up included when the probe
/// could not separate it).
pub fn server_cpu(point: &Point<'_>) -> Option<CpuRate> {
    let readings: Vec<(f64, &ProcUsage)> = point
        .phase
        .telemetry
        .iter()
        .filter_map(|t| Some((t.elapsed_s, t.server_proc()?)))
        .collect();
    let span = readings.iter().map(|(at, _)| *at).fold(0.0, f64::max);
    if readings.is_empty() || span <= 0.0 {
        return None;
    }
    Some(CpuRate {
        user: readings.iter().map(|(_, p)| p.user_s).sum::<f64>() / span,
        sys: readings.iter().map(|(_, p)| p.sys_s).sum::<f64>() / span,
    })
}

/// The client's CPU rate over a measured phase.
pub fn client_cpu(phase: &PhaseResult) -> Option<CpuRate> {
    (phase.duration_s > 0.0).then(|| CpuRate {
        user: phase.client_cpu.user_s / phase.duration_s,
        sys: phase.client_cpu.sys_s / phase.duration_s,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use qpslab_core::result::{LatencySummary, Percentile};
    use qpslab_core::telemetry::{StatusCounts, Tick, TickChange};

    fn sample(events: u64, p99: Option<f64>) -> Sample {
        Sample {
            interval_s: 0.5,
            events,
            latency: LatencySummary {
                percentiles: p99
                    .map(|ms| vec![Percentile { p: 99.0, ms }])
                    .unwrap_or_default(),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn stored(result: PhaseResult) -> StoredPhase {
        StoredPhase {
            seq: 1,
            recorded_at: 0.0,
            result,
            telemetry: Vec::new(),
        }
    }

    #[test]
    fn replica_lag_per_interval_from_its_readings() {
        use qpslab_core::telemetry::MaxLast;
        let mut p = stored(PhaseResult {
            samples: vec![sample(10, None), sample(20, None)],
            ..Default::default()
        });
        p.result.samples[0].elapsed_s = 0.5;
        p.result.samples[1].elapsed_s = 1.0;
        let lag = |hb: Option<f64>, gtid: f64| ReplicaLag {
            heartbeat_lag_ms: hb.map(MaxLast::new),
            gtid_lag_ms: Some(MaxLast::new(gtid)),
            ..ReplicaLag::default()
        };
        for (t, l) in [(0.5, lag(Some(40.0), 90.0)), (1.0, lag(None, 70.0))] {
            p.telemetry.push(TelemetrySample {
                elapsed_s: t,
                reading: Reading::ReplicaLag(l),
            });
        }
        // The heartbeat's figure, the GTID wait's where the heartbeat has none.
        assert_eq!(Metric::ReplicaLag.series(&p), vec![40.0, 70.0]);
        assert!(!Metric::ReplicaLag.higher_is_better());
        p.telemetry.pop();
        assert!(Metric::ReplicaLag.series(&p).is_empty());
    }

    #[test]
    fn server_cpu_per_transaction_from_ticks() {
        let mut p = stored(PhaseResult {
            samples: vec![sample(10, None), sample(20, None)],
            ..Default::default()
        });
        p.result.samples[0].elapsed_s = 0.5;
        p.result.samples[1].elapsed_s = 1.0;
        for (t, cpu) in [(0.5, 0.01), (1.0, 0.01)] {
            let server = ProcUsage {
                user_s: cpu * 0.75,
                sys_s: cpu * 0.25,
                ..ProcUsage::default()
            };
            let change = TickChange {
                interval_s: 0.5,
                status: StatusCounts::default(),
                server: Some(server),
                client: None,
            };
            p.telemetry.push(TelemetrySample {
                elapsed_s: t,
                reading: Reading::Tick(Tick::Change(change)),
            });
        }
        let got = Metric::ServerCpuPerTxn.series(&p);
        assert_eq!(got.len(), 2);
        assert!(
            (got[0] - 1000.0).abs() < 1e-9 && (got[1] - 500.0).abs() < 1e-9,
            "{got:?}"
        );
        p.telemetry.pop();
        assert!(Metric::ServerCpuPerTxn.series(&p).is_empty());
    }

    #[test]
    fn series_per_second_and_percentiles_without_holes() {
        let phase = stored(PhaseResult {
            samples: vec![
                sample(10, Some(2.0)),
                sample(20, Some(3.0)),
                sample(0, None),
            ],
            ..Default::default()
        });
        assert_eq!(Metric::Tps.series(&phase), vec![20.0, 40.0, 0.0]);
        assert_eq!(Metric::P99.series(&phase), vec![2.0, 3.0]);
        assert!(Metric::P95.series(&phase).is_empty());
        let holes = stored(PhaseResult {
            samples: vec![sample(10, Some(2.0)), sample(20, None)],
            ..Default::default()
        });
        assert!(Metric::P99.series(&holes).is_empty());
    }
}
