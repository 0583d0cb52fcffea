//! The highest write rate a replica keeps up with (`run --rate-search --max-lag MS`): fixed-rate
//! phases, the rate doubled while the replica's lag stays flat, then bisected between the
//! highest flat rate and the lowest that was not, until they are within [`PRECISION`].
//!
//! A phase's lag is *flat* when no interval's lag exceeded the bound and its least-squares
//! slope (`qpslab_stats::fit`) would not add the bound within [`HORIZON_S`]: a replica
//! that cannot keep up falls behind by a fixed share of real time, so its lag grows linearly.
//! A phase whose primary did not reach the asked rate while the lag stayed flat ends the
//! search: the replica kept up with everything the primary could do at that many sessions.
//! [`search`] runs the phases through a caller's measuring function (`qpslab run`'s).

use qpslab_core::plan::{Arrival, RateSpec};
use qpslab_core::telemetry::Reading;
use qpslab_core::{PhaseResult, TelemetrySample};

/// Seconds within which a flat lag's trend may not add the whole bound.
pub const HORIZON_S: f64 = 60.0;
/// The search stops when the lowest failing rate is within this factor of the highest flat one.
pub const PRECISION: f64 = 1.1;
/// The most phases a search runs.
pub const MAX_STEPS: usize = 12;
/// A phase that delivered less than this share of its rate was limited by the primary.
const DELIVERED: f64 = 0.9;
/// The first rate when `--rate` does not give one, transactions per second.
pub const DEFAULT_START: f64 = 100.0;

/// How one fixed-rate phase went for the replica.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Outcome {
    /// Lag flat and within the bound.
    Flat,
    /// Lag above the bound, or growing.
    Behind,
    /// The primary did not deliver the rate (the replica's verdict is moot).
    Saturated,
}

/// What a phase's lag did: its largest value and its trend, ms per second.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LagTrend {
    /// The largest lag of the phase, ms.
    pub max_ms: f64,
    /// The least-squares slope of the lag over time, ms per second (0 when it is 0 throughout).
    pub slope_ms_per_s: f64,
}

/// The trend of per-interval lags `(elapsed_s, ms)`; `None` without readings.
pub fn trend(lags: &[(f64, f64)]) -> Option<LagTrend> {
    let max_ms = lags
        .iter()
        .map(|l| l.1)
        .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))?;
    // `fit` wants a positive mean: a lag of 0 throughout has no trend.
    let slope_ms_per_s = qpslab_stats::fit(lags).map_or(0.0, |(slope, _, _)| slope);
    Some(LagTrend {
        max_ms,
        slope_ms_per_s,
    })
}

/// The outcome of a phase asked for `rate` that delivered `tps` with lag trend `lag`: a
/// replica falling behind is that even when the primary could not deliver the rate.
pub fn judge(rate: f64, tps: f64, lag: Option<LagTrend>, max_lag_ms: f64) -> Outcome {
    let flat =
        lag.is_some_and(|l| l.max_ms <= max_lag_ms && l.slope_ms_per_s * HORIZON_S <= max_lag_ms);
    if !flat {
        Outcome::Behind
    } else if tps < DELIVERED * rate {
        Outcome::Saturated
    } else {
        Outcome::Flat
    }
}

/// The state of a search.
#[derive(Clone, Debug, PartialEq)]
pub struct RateSearch {
    /// The highest rate that was flat.
    pub best: Option<f64>,
    /// The lowest rate that was not.
    pub failed: Option<f64>,
    next: Option<f64>,
    steps: usize,
}

impl RateSearch {
    /// A search starting at `start` transactions per second.
    pub fn new(start: f64) -> RateSearch {
        RateSearch {
            best: None,
            failed: None,
            next: Some(start),
            steps: 0,
        }
    }

    /// The rate of the next phase, `None` once the search is over.
    pub fn next_rate(&self) -> Option<f64> {
        self.next.filter(|_| self.steps < MAX_STEPS)
    }

    /// Records the outcome of the phase at `rate` and picks the next rate.
    pub fn record(&mut self, rate: f64, outcome: Outcome) {
        self.steps += 1;
        match outcome {
            Outcome::Flat => self.best = Some(self.best.map_or(rate, |b| b.max(rate))),
            Outcome::Behind => self.failed = Some(self.failed.map_or(rate, |f| f.min(rate))),
            Outcome::Saturated => {
                self.next = None;
                return;
            }
        }
        self.next = match (self.best, self.failed) {
            (Some(b), None) => Some(b * 2.0),
            // Even the first rate was too much: halve, down to one per second.
            (None, Some(f)) => Some(f / 2.0).filter(|r| *r >= 1.0),
            (Some(b), Some(f)) if f / b > PRECISION => Some(((b + f) / 2.0).round()),
            _ => None,
        };
    }
}

/// Each interval's lag `(elapsed_s, ms)` from a phase's telemetry (heartbeat, else GTIDs).
pub fn lag_points(telemetry: &[TelemetrySample]) -> Vec<(f64, f64)> {
    telemetry
        .iter()
        .filter_map(|t| match &t.reading {
            Reading::ReplicaLag(l) => Some((t.elapsed_s, l.headline_ms()?)),
            _ => None,
        })
        .collect()
}

/// One phase of a search.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Step {
    /// The rate asked for, per second.
    pub rate: f64,
    /// The rate delivered.
    pub tps: f64,
    /// What the replica's lag did (`None`: no reading).
    pub lag: Option<LagTrend>,
    /// How the phase went.
    pub outcome: Outcome,
}

/// What a finished search found.
#[derive(Clone, Debug, PartialEq)]
pub struct Searched {
    /// Its phases, in order.
    pub steps: Vec<Step>,
    /// Its final state: the highest flat rate and the lowest that was not.
    pub search: RateSearch,
    /// The bound the lag was held to, ms.
    pub max_lag_ms: f64,
}

/// Runs a search's phases through `measure` (one phase at the given rate, returning it and its
/// lag per interval, see [`lag_points`]), starting from the rate `given` (`--rate`, with its
/// arrival) or [`DEFAULT_START`]; returns every phase and what the search found.
pub fn search<E>(
    given: Option<RateSpec>,
    max_lag_ms: f64,
    mut measure: impl FnMut(RateSpec) -> Result<(PhaseResult, Vec<(f64, f64)>), E>,
) -> Result<(Vec<PhaseResult>, Searched), E> {
    let arrival = given.as_ref().map_or(Arrival::Uniform, |r| r.arrival);
    let mut search = RateSearch::new(given.map_or(DEFAULT_START, |r| r.per_second));
    let (mut results, mut steps) = (Vec::new(), Vec::new());
    while let Some(rate) = search.next_rate() {
        let (phase, lags) = measure(RateSpec {
            per_second: rate,
            arrival,
        })?;
        let lag = trend(&lags);
        let outcome = judge(rate, phase.tps(), lag, max_lag_ms);
        search.record(rate, outcome);
        steps.push(Step {
            rate,
            tps: phase.tps(),
            lag,
            outcome,
        });
        results.push(phase);
    }
    let searched = Searched {
        steps,
        search,
        max_lag_ms,
    };
    Ok((results, searched))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_means_bounded_and_not_growing() {
        let steady: Vec<(f64, f64)> = (1..=10)
            .map(|t| (t as f64, 40.0 + (t % 2) as f64))
            .collect();
        let t = trend(&steady).unwrap();
        assert!(t.slope_ms_per_s.abs() < 1.0 && t.max_ms == 41.0, "{t:?}");
        assert_eq!(judge(100.0, 99.0, Some(t), 1000.0), Outcome::Flat);
        // 50 ms more every second: the bound within 20 s.
        let growing: Vec<(f64, f64)> = (1..=10).map(|t| (t as f64, 50.0 * t as f64)).collect();
        let t = trend(&growing).unwrap();
        assert!((t.slope_ms_per_s - 50.0).abs() < 1e-9, "{t:?}");
        assert_eq!(judge(100.0, 100.0, Some(t), 1000.0), Outcome::Behind);
        assert_eq!(
            judge(100.0, 100.0, trend(&[(1.0, 0.0), (2.0, 0.0)]), 1.0),
            Outcome::Flat
        );
        assert_eq!(
            judge(100.0, 100.0, trend(&[(1.0, 5.0)]), 1.0),
            Outcome::Behind
        );
        assert_eq!(judge(100.0, 100.0, None, 1000.0), Outcome::Behind);
        let flat = trend(&steady);
        assert_eq!(judge(100.0, 80.0, flat, 1000.0), Outcome::Saturated);
        assert_eq!(judge(100.0, 80.0, None, 1000.0), Outcome::Behind);
    }

    #[test]
    fn doubles_then_bisects_to_the_highest_flat_rate() {
        // A replica that keeps up with up to 700/s.
        let mut s = RateSearch::new(100.0);
        let mut asked = Vec::new();
        while let Some(r) = s.next_rate() {
            asked.push(r);
            s.record(
                r,
                if r <= 700.0 {
                    Outcome::Flat
                } else {
                    Outcome::Behind
                },
            );
        }
        assert_eq!(&asked[..5], &[100.0, 200.0, 400.0, 800.0, 600.0]);
        let (best, failed) = (s.best.unwrap(), s.failed.unwrap());
        assert!(
            best <= 700.0 && failed > 700.0 && failed / best <= PRECISION,
            "{s:?}"
        );
    }

    #[test]
    fn halves_a_start_that_is_too_high_and_stops_at_saturation() {
        let mut s = RateSearch::new(1000.0);
        s.record(1000.0, Outcome::Behind);
        assert_eq!(s.next_rate(), Some(500.0));
        s.record(500.0, Outcome::Saturated);
        assert_eq!(s.next_rate(), None);
        let mut s = RateSearch::new(1.5);
        s.record(1.5, Outcome::Behind);
        assert_eq!(s.next_rate(), None);
    }

    #[test]
    fn search_measures_each_rate_and_stops_at_the_first_error() {
        // A replica that keeps up with up to 300/s: above it, the lag grows 20 ms a second.
        let phase = |rate: f64| PhaseResult {
            duration_s: 10.0,
            events: (rate * 10.0) as u64,
            ..PhaseResult::default()
        };
        let given = RateSpec {
            per_second: 100.0,
            arrival: Arrival::Poisson,
        };
        let mut asked = Vec::new();
        let (phases, found) = search(Some(given), 100.0, |r| {
            assert_eq!(r.arrival, Arrival::Poisson);
            asked.push(r.per_second);
            let slope = if r.per_second <= 300.0 { 0.0 } else { 20.0 };
            let lags = (1..=10)
                .map(|t| (t as f64, 5.0 + slope * t as f64))
                .collect();
            Ok::<_, String>((phase(r.per_second), lags))
        })
        .unwrap();
        assert_eq!(&asked[..3], &[100.0, 200.0, 400.0]);
        assert_eq!(phases.len(), asked.len());
        assert_eq!(found.steps.len(), asked.len());
        assert_eq!(found.steps[2].outcome, Outcome::Behind);
        assert!(found.search.best.unwrap() <= 300.0 && found.search.failed.unwrap() > 300.0);
        let mut calls = 0;
        let failed = search(None, 100.0, |r| {
            calls += 1;
            assert_eq!(r.per_second, DEFAULT_START);
            Err::<(PhaseResult, Vec<(f64, f64)>), _>("lost the server")
        });
        assert_eq!((failed.unwrap_err(), calls), ("lost the server", 1));
    }
}
