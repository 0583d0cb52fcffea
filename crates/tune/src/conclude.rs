//! The end of a session: the confirmation of the search's best configuration against the
//! baseline (the proof study), and what the session found, for the caller to render (the
//! summary, `tuned.cnf`, the JSON document).

use crate::bench::Bench;
use crate::confirm::{self, Gain};
use crate::knobs::Space;
use crate::search::{describe, Config, Found};
use crate::{Observer, Request, TuneError};
use qpslab_store::TuneTrial;

/// The confirmation's verdict, with each side's mean throughput.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Confirmed {
    /// Tuned over baseline, with its interval, and whether it is a gain.
    pub verdict: Gain,
    /// The baseline's mean tps over its measurements.
    pub baseline_tps: f64,
    /// The tuned configuration's mean tps over its measurements.
    pub tuned_tps: f64,
}

/// What a session found.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The session's name, also its proof study's (`tune-<time>-<pid>`).
    pub session: String,
    /// The knobs searched, with their baseline values.
    pub space: Space,
    /// The search's best configuration (empty: the baseline won, nothing was confirmed).
    pub best: Config,
    /// Each one-knob configuration's tps over the baseline's in the search's first round.
    pub alone: Vec<(Config, f64)>,
    /// The confirmation's verdict (`None`: nothing confirmed, or too few usable pairs).
    pub confirmed: Option<Confirmed>,
    /// Every trial of the session, in order.
    pub trials: Vec<TuneTrial>,
}

impl Outcome {
    /// The confirmation crowned the best configuration: a gain with its interval above 1.
    pub fn significant(&self) -> bool {
        self.confirmed.is_some_and(|c| c.verdict.significant)
    }
}

/// Confirms `found.best` (unless the baseline won the search) and gathers the outcome.
pub(crate) fn conclude(
    req: &Request,
    b: &mut Bench,
    space: &Space,
    found: Found,
    obs: &mut dyn Observer,
) -> Result<Outcome, TuneError> {
    let best = found.best;
    let confirmed = if best.is_empty() {
        obs.confirming(None);
        None
    } else {
        obs.confirming(Some(&best));
        let spec = format!(
            "# proof study of qpslab tune session {}: baseline vs tuned\n# tuned: {}\n",
            b.session,
            describe(&best)
        );
        let home = b.target.home;
        let [base, tuned] = b.confirm(&best, req.repeats, (&spec, home), obs)?;
        confirm::judge(&base, &tuned).map(|verdict| Confirmed {
            verdict,
            baseline_tps: mean(&base),
            tuned_tps: mean(&tuned),
        })
    };
    Ok(Outcome {
        trials: b.store.tune_trials(&b.session)?,
        session: b.session.clone(),
        space: space.clone(),
        best,
        alone: found.alone,
        confirmed,
    })
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len().max(1) as f64
}
