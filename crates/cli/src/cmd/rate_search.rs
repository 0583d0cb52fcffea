//! `run --replica R --rate-search --max-lag MS`: fixed-rate phases of one run, stepped by
//! `qpslab_lab::rate_search`, each judged by the replica's lag; then the highest rate at which
//! the lag stayed flat.

use crate::args::ReplicaRunArgs;
use crate::error::user;
use crate::render::table;
use anyhow::Result;
use qpslab_core::plan::{Arrival, RateSpec};
use qpslab_core::result::PhaseResult;
use qpslab_core::telemetry::Reading;
use qpslab_core::{RunPlan, TelemetrySample};
use qpslab_lab::rate_search::{judge, trend, LagTrend, Outcome, RateSearch};

/// The first rate when `--rate` does not give one, transactions per second.
const DEFAULT_START: f64 = 100.0;

/// Refuses a search that cannot run, before anything starts.
pub fn check(a: &ReplicaRunArgs, plan: &RunPlan) -> Result<()> {
    if !a.rate_search {
        return Ok(());
    }
    if !(a.max_lag.is_finite() && a.max_lag > 0.0) {
        return Err(user("--max-lag must be a positive number of milliseconds"));
    }
    if plan.threads.len() != 1 {
        return Err(user(
            "--rate-search steps the rate at one session count: give one --threads value",
        ));
    }
    Ok(())
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

/// One phase of the search.
struct Step {
    rate: f64,
    tps: f64,
    lag: Option<LagTrend>,
    outcome: Outcome,
}

/// Runs the search's phases through `measure` (one phase at the given rate, returning it and
/// its lag per interval), starting from the rate `given` (`--rate`), and prints the steps and
/// the result.
pub fn search(
    given: Option<RateSpec>,
    max_lag_ms: f64,
    mut measure: impl FnMut(RateSpec) -> Result<(PhaseResult, Vec<(f64, f64)>)>,
) -> Result<Vec<PhaseResult>> {
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
    print!("\n{}", steps_table(&steps));
    println!("{}", verdict(&search, steps.last(), max_lag_ms));
    Ok(results)
}

fn steps_table(steps: &[Step]) -> String {
    let header: Vec<String> = ["rate/s", "tps", "max lag ms", "lag slope ms/s", "lag"]
        .map(String::from)
        .to_vec();
    let rows: Vec<Vec<String>> = steps
        .iter()
        .map(|s| {
            let (max, slope) = s.lag.map_or(("-".into(), "-".into()), |l| {
                (
                    format!("{:.0}", l.max_ms),
                    format!("{:+.1}", l.slope_ms_per_s),
                )
            });
            let outcome = match s.outcome {
                Outcome::Flat => "flat",
                Outcome::Behind => "falls behind",
                Outcome::Saturated => "primary saturated",
            };
            let rate = format!("{:.0}", s.rate);
            vec![rate, format!("{:.1}", s.tps), max, slope, outcome.into()]
        })
        .collect();
    table(&header, &rows)
}

/// The search's answer in one line.
fn verdict(s: &RateSearch, last: Option<&Step>, max_lag_ms: f64) -> String {
    let saturated = last.is_some_and(|l| l.outcome == Outcome::Saturated);
    match (s.best, s.failed) {
        (Some(b), _) if saturated => format!(
            "the replica kept up with everything the primary delivered: at least {b:.0}/s \
             with lag flat and under {max_lag_ms:.0} ms (the primary saturated above)"
        ),
        (Some(b), Some(f)) => format!(
            "highest rate with replica lag flat and under {max_lag_ms:.0} ms: {b:.0}/s \
             ({f:.0}/s fell behind)"
        ),
        (Some(b), None) => format!(
            "replica lag stayed flat and under {max_lag_ms:.0} ms up to {b:.0}/s (the search \
             stopped after its last step)"
        ),
        (None, _) => {
            format!("no rate tried kept the replica's lag flat and under {max_lag_ms:.0} ms")
        }
    }
}
