//! The end of a session: the confirmation of the search's best configuration against the
//! baseline ([`crate::proof`]), the rechecks that reduce a confirmed set of several changes,
//! and what the session found, for the caller to render (the summary, `tuned.cnf`, the JSON
//! document).

use crate::bench::Bench;
use crate::budget::Shares;
use crate::confirm::{self, percent};
use crate::knobs::Space;
pub use crate::proof::Confirmed;
use crate::search::{Config, Ended, Found};
use crate::{Observer, Request, TuneError};
use qpslab_store::TuneTrial;
use std::time::Instant;

/// One change of the confirmed set rechecked: the set without it measured against the set with
/// it in short pairs.
#[derive(Clone, Debug, PartialEq)]
pub struct Removal {
    /// The variable.
    pub name: String,
    /// Its tuned value.
    pub value: String,
    /// The set without it over the set with it (`None`: too few usable pairs; it stays).
    pub without: Option<qpslab_stats::Ratio>,
    /// Its removal kept the gain within the noise: it left the set.
    pub dropped: bool,
}

impl Removal {
    /// `dropped NAME=V: without it -1.2% [-8.0%, +6.1%], within the noise` or `kept ...`.
    pub fn words(&self) -> String {
        let what = format!("{}={}", self.name, self.value);
        match (self.without, self.dropped) {
            (Some(r), true) => format!(
                "dropped {what}: without it {} [{}, {}], within the noise",
                percent(r.ratio),
                percent(r.low),
                percent(r.high)
            ),
            (Some(r), false) => format!(
                "kept {what}: without it {} [{}, {}]",
                percent(r.ratio),
                percent(r.low),
                percent(r.high)
            ),
            (None, _) => format!("kept {what}: too few usable pairs to judge its removal"),
        }
    }
}

/// The smallest set that keeps the confirmed gain: each change removed in turn and rechecked.
#[derive(Clone, Debug, PartialEq)]
pub struct Minimized {
    /// The changes kept.
    pub kept: Config,
    /// Each recheck, in order.
    pub removals: Vec<Removal>,
    /// Why some changes were not rechecked (the budget), when so.
    pub unchecked: Option<String>,
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
    /// The confirmation (`None`: the baseline won the search, nothing to confirm).
    pub confirmed: Option<Confirmed>,
    /// How the budget was split between the search, the confirmation and the rechecks.
    pub shares: Shares,
    /// The confirmed set reduced to what keeps the gain (`None`: nothing confirmed, or a set
    /// of one change).
    pub minimized: Option<Minimized>,
    /// Every trial of the session, in order.
    pub trials: Vec<TuneTrial>,
}

impl Outcome {
    /// The confirmation crowned the best configuration: a gain with its interval above 1.
    pub fn significant(&self) -> bool {
        self.confirmed
            .and_then(|c| c.verdict)
            .is_some_and(|v| v.significant)
    }

    /// The settings to keep: the smallest set that keeps the gain, or the confirmed set.
    pub fn reported(&self) -> &Config {
        self.minimized.as_ref().map_or(&self.best, |m| &m.kept)
    }
}

/// Pairs of each recheck of a change's removal.
pub const RECHECK_PAIRS: u32 = confirm::MIN_REPEATS;

/// Seconds one recheck takes: [`RECHECK_PAIRS`] pairs of trials of `trial_s` with
/// `overhead_s` each.
pub fn recheck_cost(trial_s: f64, overhead_s: f64) -> f64 {
    2.0 * f64::from(RECHECK_PAIRS) * (trial_s + overhead_s)
}

/// Confirms `found.best` (unless the baseline won the search) until the confirmation decides
/// or its share of `shares` is spent (the session began at `started`), reduces a confirmed set
/// of several changes to the smallest that keeps the gain within what the budget leaves, and
/// gathers the outcome.
pub(crate) fn conclude(
    req: &Request,
    b: &mut Bench,
    (space, found): (&Space, Found),
    (started, shares): (Instant, Shares),
    obs: &mut dyn Observer,
) -> Result<Outcome, TuneError> {
    let best = found.best;
    let confirmed = if best.is_empty() {
        obs.confirming(None, 0.0);
        None
    } else {
        let until = shares.confirm_until(best.len());
        let left = || until - started.elapsed().as_secs_f64();
        Some(crate::proof::confirm_rounds(
            req,
            b,
            (&best, &found.ended),
            &left,
            obs,
        )?)
    };
    let significant = confirmed
        .and_then(|c| c.verdict)
        .is_some_and(|v| v.significant);
    let minimized = match significant && best.len() > 1 {
        true => {
            let left = || shares.budget_s - started.elapsed().as_secs_f64();
            Some(minimize(b, &best, &left, obs)?)
        }
        false => None,
    };
    Ok(Outcome {
        minimized,
        trials: b.store.tune_trials(&b.session)?,
        session: b.session.clone(),
        space: space.clone(),
        best,
        alone: found.alone,
        ended: found.ended,
        confirmed,
        shares,
    })
}

/// Removes each change of `best` in turn, rechecking the set without it against the set with
/// it in short pairs, and drops it when its removal keeps the gain within the noise
/// ([`confirm::removable`]); the last change is never removed (the confirmation measured the
/// baseline). Stops, saying so, when a recheck no longer fits the budget.
fn minimize(
    b: &mut Bench,
    best: &Config,
    left: &dyn Fn() -> f64,
    obs: &mut dyn Observer,
) -> Result<Minimized, TuneError> {
    let trial_s = b.plan.stop.time_s.unwrap_or(10.0);
    let mut kept = best.clone();
    let (mut removals, mut unchecked) = (Vec::new(), None);
    let names: Vec<String> = best.keys().cloned().collect();
    for (i, name) in names.iter().enumerate() {
        if kept.len() < 2 {
            break;
        }
        let cost = recheck_cost(trial_s, b.overhead_s);
        if left() < cost {
            unchecked = Some(format!(
                "not minimized further: {} change(s) not rechecked (each recheck takes about \
                 {cost:.0} s, the budget left {:.0} s)",
                names.len() - i,
                left().max(0.0)
            ));
            break;
        }
        let mut without = kept.clone();
        let value = without.remove(name).unwrap_or_default();
        obs.message(&format!("rechecking without {name}={value}"));
        let phase = format!("without {name}");
        let [with_tps, without_tps] =
            b.pairs([&kept, &without], RECHECK_PAIRS, (trial_s, &phase), obs)?;
        let ratio = confirm::judge(&with_tps, &without_tps).map(|g| g.ratio);
        let dropped = ratio.is_some_and(|r| confirm::removable(&r));
        let removal = Removal {
            name: name.clone(),
            value,
            without: ratio,
            dropped,
        };
        obs.message(&removal.words());
        if dropped {
            kept = without;
        }
        removals.push(removal);
    }
    Ok(Minimized {
        kept,
        removals,
        unchecked,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::confirm::{verdict_words, Gain};
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
    fn a_removal_says_what_went_and_why() {
        let r = |ratio, low, high, dropped| Removal {
            name: "innodb_io_capacity".into(),
            value: "2000".into(),
            without: Some(gain(ratio, low, high).ratio),
            dropped,
        };
        assert_eq!(
            r(0.99, 0.92, 1.06, true).words(),
            "dropped innodb_io_capacity=2000: without it -1.0% [-8.0%, +6.0%], within the noise"
        );
        assert_eq!(
            r(0.7, 0.6, 0.8, false).words(),
            "kept innodb_io_capacity=2000: without it -30.0% [-40.0%, -20.0%]"
        );
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
