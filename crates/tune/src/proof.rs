//! The confirmation as a study of its own (the proof study, named after the session): paired
//! rounds of the baseline and the candidate, measured one round at a time and judged after each
//! by the confirmation's rule ([`confirm::rule`], [`confirm::next`]) until its anytime-valid
//! interval decides or its share of the budget is spent; what it found ([`Confirmed`]) and its
//! record, for the JSON document and the proof study's environment ([`confirmation_json`]).

use crate::bench::Bench;
use crate::confirm::{self, Gain, Round, Stopped};
use crate::confirm::{mean, verdict_words};
use crate::search::{describe, Config, Ended};
use crate::{confirmation_cost, ConfirmRound, Observer, Request, TuneError};
use serde_json::json;

/// What the confirmation found and how it ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Confirmed {
    /// Tuned over baseline, with its anytime-valid interval, and whether it is a gain (`None`:
    /// fewer than three rounds fit to pair).
    pub verdict: Option<Gain>,
    /// The baseline's mean tps over the rounds paired.
    pub baseline_tps: f64,
    /// The tuned configuration's mean tps over the rounds paired.
    pub tuned_tps: f64,
    /// Rounds measured.
    pub rounds: usize,
    /// Rounds left out for an unstable side.
    pub dropped: usize,
    /// Why it ran no more rounds.
    pub stopped: Stopped,
    /// Seconds it had when it started: its share and what the search left.
    pub share_s: f64,
    /// Seconds its rounds took.
    pub seconds: f64,
}

impl Confirmed {
    /// `the confirmation decided after 5 rounds (1 left out for an unstable side)` or `the
    /// budget ended the confirmation after 7 rounds, undecided (...)`.
    pub fn stop_words(&self) -> String {
        self.stopped.words(self.rounds, self.dropped)
    }

    /// The verdict's line: `confirmed: +x% [lo, hi] (tuned over baseline tps, 95%
    /// anytime-valid, 4 of 5 rounds paired)`, or why there is none.
    pub fn verdict_line(&self) -> String {
        let used = self.rounds - self.dropped;
        match self.verdict {
            Some(v) => format!(
                "{} (tuned over baseline tps, {:.0}% anytime-valid, {used} of {} rounds paired)",
                verdict_words(&v),
                confirm::LEVEL * 100.0,
                self.rounds
            ),
            None => format!(
                "not confirmed: too few rounds to judge ({used} of {} stable on both sides, an \
                 interval needs {})",
                self.rounds,
                qpslab_stats::MIN_ROUNDS
            ),
        }
    }
}

/// The confirmation of `best` as the proof study: paired rounds, each judged by
/// [`confirm::rule`] once the minimum (`--repeats`) ran, until [`confirm::next`] says stop
/// (`left`: the seconds left of its share).
pub(crate) fn confirm_rounds(
    req: &Request,
    b: &mut Bench,
    (best, ended): (&Config, &Ended),
    left: &dyn Fn() -> f64,
    obs: &mut dyn Observer,
) -> Result<Confirmed, TuneError> {
    let share_s = left().max(0.0);
    obs.confirming(Some(best), share_s);
    let trial_s = b.plan.stop.time_s.unwrap_or(10.0);
    let max = confirm::max_rounds(share_s, trial_s, req.repeats);
    let rule = confirm::rule(max);
    let description = [
        format!(
            "proof study of qpslab tune session {}: baseline vs tuned",
            b.session
        ),
        format!("tuned: {}", describe(best)),
        ended.words(),
        format!(
            "the confirmation: paired rounds, at least {}, until the {:.0}% anytime-valid \
             interval decides or its {share_s:.0} s are spent",
            req.repeats,
            confirm::LEVEL * 100.0
        ),
    ];
    let spec = confirm::proof_spec(&b.session, &description, [req.repeats, max], share_s);
    let home = b.target.home;
    let mut proof = b.open_proof(max, (&spec, home))?;
    let planned_round_s = confirmation_cost(&req.plan, 1);
    let mut rounds: Vec<Round> = Vec::new();
    let stopped = loop {
        if let Some(stop) = confirm::next(&rule, &rounds, req.repeats, (left(), planned_round_s)) {
            break stop;
        }
        rounds.push(b.proof_round(&mut proof, best, obs)?);
        let dropped = confirm::paired_logs(&rounds).1;
        obs.confirm_round(&ConfirmRound {
            round: rounds.len(),
            measured: rounds[rounds.len() - 1],
            gain: confirm::judge_rounds(&rule, &rounds),
            dropped,
        });
    };
    let paired: Vec<&Round> = rounds.iter().filter(|r| r.paired()).collect();
    let c = Confirmed {
        verdict: confirm::judge_rounds(&rule, &rounds),
        baseline_tps: mean(&paired.iter().map(|r| r.baseline).collect::<Vec<_>>()),
        tuned_tps: mean(&paired.iter().map(|r| r.tuned).collect::<Vec<_>>()),
        rounds: rounds.len(),
        dropped: confirm::paired_logs(&rounds).1,
        stopped,
        share_s,
        seconds: rounds.iter().map(|r| r.seconds).sum(),
    };
    obs.message(&c.stop_words());
    b.close_proof(proof, confirmation_json(&c))?;
    Ok(c)
}

/// The confirmation as the JSON document and the proof study's environment give it.
pub fn confirmation_json(c: &Confirmed) -> serde_json::Value {
    json!({
        "rounds": c.rounds,
        "paired": c.rounds - c.dropped,
        "dropped": c.dropped,
        "stopped": c.stopped.key(),
        "words": c.stop_words(),
        "ratio": c.verdict.map(|v| v.ratio.ratio),
        "interval": c.verdict.map(|v| [v.ratio.low, v.ratio.high]),
        "interval_kind": "anytime-valid",
        "level": confirm::LEVEL,
        "significant": c.verdict.is_some_and(|v| v.significant),
        "verdict": c.verdict_line(),
        "share_s": c.share_s,
        "seconds": c.seconds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn confirmed(verdict: Option<Gain>, stopped: Stopped) -> Confirmed {
        Confirmed {
            verdict,
            baseline_tps: 100.0,
            tuned_tps: 130.0,
            rounds: 5,
            dropped: 3,
            stopped,
            share_s: 60.0,
            seconds: 55.0,
        }
    }

    #[test]
    fn the_record_says_the_rounds_those_left_out_and_why_it_stopped() {
        let none = confirmed(None, Stopped::Budget);
        assert_eq!(
            none.verdict_line(),
            "not confirmed: too few rounds to judge (2 of 5 stable on both sides, an interval \
             needs 3)"
        );
        let doc = confirmation_json(&none);
        assert_eq!(
            (doc["rounds"].as_u64(), doc["paired"].as_u64()),
            (Some(5), Some(2))
        );
        assert_eq!(doc["stopped"], "budget");
        assert_eq!(doc["significant"], false);
        assert!(doc["interval"].is_null());
        let ratio = confirm::Ratio {
            ratio: 1.3,
            low: 1.1,
            high: 1.5,
            se_log: 0.05,
            df: 1.0,
        };
        let gain = Gain {
            ratio,
            significant: true,
        };
        let c = confirmed(Some(gain), Stopped::Decided);
        assert_eq!(
            c.verdict_line(),
            "confirmed: +30.0% [+10.0%, +50.0%] (tuned over baseline tps, 95% anytime-valid, \
             2 of 5 rounds paired)"
        );
        let doc = confirmation_json(&c);
        assert_eq!(doc["interval"][1], 1.5);
        assert_eq!(doc["words"], c.stop_words());
        assert!(c
            .stop_words()
            .starts_with("the confirmation decided after 5 rounds"));
    }
}
