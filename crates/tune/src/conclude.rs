//! The end of a session: the confirmation of the search's best configuration against the
//! baseline (the proof study), and what the session found, for the caller to render (the
//! summary, `tuned.cnf`, the JSON document).

use crate::bench::Bench;
use crate::confirm::{self, Gain};
use crate::knobs::Space;
use crate::search::{describe, Config, Ended, Found};
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
    /// Why the search ended: it converged, or the budget ended it.
    pub ended: Ended,
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
            "# proof study of qpslab tune session {}: baseline vs tuned\n# tuned: {}\n# {}\n",
            b.session,
            describe(&best),
            found.ended.words()
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
        ended: found.ended,
        confirmed,
    })
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len().max(1) as f64
}

/// `+12.3%`: a ratio as a signed percentage.
fn percent(r: f64) -> String {
    format!("{:+.1}%", (r - 1.0) * 100.0)
}

/// The confirmation's verdict in words: "confirmed" only with a gain, never beside "no gain".
/// A gain: `confirmed: +x% [lo, hi]`; a ratio whose interval reaches 1: `not confirmed: no gain
/// beyond the noise (+x% [lo, hi])`; a real but small one: `not confirmed: a gain below the 5%
/// a change must bring (...)`; a loss: `not confirmed: a loss (...)`. Nothing is written
/// unless confirmed.
pub fn verdict_words(g: &Gain) -> String {
    let r = g.ratio;
    let figures = format!(
        "{} [{}, {}]",
        percent(r.ratio),
        percent(r.low),
        percent(r.high)
    );
    if g.significant {
        format!("confirmed: {figures}")
    } else if r.low > 1.0 {
        format!(
            "not confirmed: a gain below the {:.0}% a change must bring ({figures})",
            (confirm::MIN_GAIN - 1.0) * 100.0
        )
    } else if r.high < 1.0 {
        format!("not confirmed: a loss ({figures})")
    } else {
        format!("not confirmed: no gain beyond the noise ({figures})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use qpslab_stats::Ratio;

    fn gain(ratio: f64, low: f64, high: f64) -> Gain {
        let ratio = Ratio {
            ratio,
            low,
            high,
            se_log: 0.1,
            df: 2.0,
        };
        Gain {
            ratio,
            significant: low > 1.0 && ratio.ratio >= confirm::MIN_GAIN,
        }
    }

    #[test]
    fn confirmed_is_said_only_of_a_gain() {
        assert_eq!(
            verdict_words(&gain(1.262, 1.081, 1.473)),
            "confirmed: +26.2% [+8.1%, +47.3%]"
        );
        assert_eq!(
            verdict_words(&gain(1.26, 0.95, 1.67)),
            "not confirmed: no gain beyond the noise (+26.0% [-5.0%, +67.0%])"
        );
        assert_eq!(
            verdict_words(&gain(1.03, 1.01, 1.05)),
            "not confirmed: a gain below the 5% a change must bring (+3.0% [+1.0%, +5.0%])"
        );
        assert_eq!(
            verdict_words(&gain(0.8, 0.7, 0.9)),
            "not confirmed: a loss (-20.0% [-30.0%, -10.0%])"
        );
        for (r, lo, hi) in [(1.0, 0.9, 1.1), (1.03, 1.01, 1.05), (0.8, 0.7, 0.9)] {
            let w = verdict_words(&gain(r, lo, hi));
            assert!(w.starts_with("not confirmed: "), "{w}");
        }
    }
}
