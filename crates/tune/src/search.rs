//! The search's bookkeeping, pure: which configurations to try, how many fit in the budget, and
//! which survive each rung of successive halving.
//!
//! Successive halving (Jamieson and Talwalkar): every candidate gets a short trial, the better
//! half a trial twice as long, and so on until one is left. Each rung costs about the same
//! (half the candidates, twice the time), so the number of candidates is the largest whose
//! rungs fit the budget. Short trials rank well enough to drop the clearly worse; the longer
//! ones decide between the close. The baseline runs in every rung as a candidate like any
//! other, so a configuration is only ahead of it when measured under the same conditions.

use crate::knobs::Knob;
use qpslab_engine::rand::Rng;
use std::collections::BTreeMap;

/// Settings that differ from the baseline (empty: the baseline itself).
pub type Config = BTreeMap<String, String>;

/// What a search found: its best configuration, how each configuration of one knob did
/// against the baseline measured in the same round (for the cnf's comments), and why it ended.
pub struct Found {
    /// The best configuration (empty: the baseline won).
    pub best: Config,
    /// `(one-knob configuration, its tps over the baseline's)`.
    pub alone: Vec<(Config, f64)>,
    /// Why the search ended.
    pub ended: Ended,
}

/// Why a search ended: it measured every configuration of the space, or the budget ran out
/// with some left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// Every configuration of the space (the baseline included) was measured.
    Converged {
        /// Configurations measured (the whole space).
        measured: usize,
    },
    /// The budget ran out before every configuration was measured.
    Budget {
        /// Distinct configurations measured.
        measured: usize,
        /// Configurations in the space (the baseline included).
        candidates: usize,
    },
}

impl Ended {
    /// `the search converged: every candidate was measured (N)` or `the budget ended the
    /// search after N of M candidates`.
    pub fn words(&self) -> String {
        match self {
            Ended::Converged { measured } => {
                format!("the search converged: every candidate was measured ({measured})")
            }
            Ended::Budget {
                measured,
                candidates,
            } => format!("the budget ended the search after {measured} of {candidates} candidates"),
        }
    }

    /// `converged` or `budget`, for the JSON document.
    pub fn key(&self) -> &'static str {
        match self {
            Ended::Converged { .. } => "converged",
            Ended::Budget { .. } => "budget",
        }
    }
}

/// Whether the search stops before its next round: it has converged when every one of the
/// space's `candidates` was `measured`; otherwise the budget ends it when the next round has
/// `room` for no configuration not yet measured; otherwise it goes on (`None`): a search with
/// candidates left and budget to measure them keeps measuring.
pub fn stop(measured: usize, candidates: usize, room: usize) -> Option<Ended> {
    if measured >= candidates {
        Some(Ended::Converged { measured })
    } else if room == 0 {
        Some(Ended::Budget {
            measured,
            candidates,
        })
    } else {
        None
    }
}

/// How many configurations the space holds, the baseline included: each knob at its baseline
/// value or one of its candidates (saturating).
pub fn space_size(knobs: &[Knob]) -> usize {
    knobs
        .iter()
        .fold(1usize, |n, k| n.saturating_mul(k.values.len() + 1))
}

/// The space's configurations in order (each knob's baseline first), at most `limit`.
pub fn all_configs(knobs: &[Knob], limit: usize) -> Vec<Config> {
    let mut out = vec![Config::new()];
    for k in knobs {
        let mut next = Vec::new();
        for c in &out {
            next.push(c.clone());
            for v in &k.values {
                let mut c = c.clone();
                c.insert(k.name.clone(), v.clone());
                next.push(c);
            }
            if next.len() >= limit {
                break;
            }
        }
        out = next;
        out.truncate(limit);
    }
    out
}

/// Most candidates a search starts with.
pub const MAX_CANDIDATES: usize = 16;

/// The seconds one trial of `secs` measured seconds costs, with `overhead_s` for changing the
/// settings and warming up.
fn trial_cost(secs: f64, overhead_s: f64) -> f64 {
    secs + overhead_s
}

/// The cost of halving `n` candidates starting with trials of `trial_s` seconds.
pub fn halving_cost(n: usize, trial_s: f64, overhead_s: f64) -> f64 {
    let (mut left, mut secs, mut total) = (n, trial_s, 0.0);
    while left > 1 {
        total += left as f64 * trial_cost(secs, overhead_s);
        left = left.div_ceil(2);
        secs *= 2.0;
    }
    total
        + if n == 1 {
            trial_cost(trial_s, overhead_s)
        } else {
            0.0
        }
}

/// How many candidates successive halving can start with in `budget_s`: the most (up to
/// [`MAX_CANDIDATES`]) whose rungs fit; at least 2 (the baseline and one other) when those fit.
pub fn halving_size(budget_s: f64, trial_s: f64, overhead_s: f64) -> usize {
    (2..=MAX_CANDIDATES)
        .rev()
        .find(|&n| halving_cost(n, trial_s, overhead_s) <= budget_s)
        .unwrap_or(0)
}

/// How many single trials random search can run in `budget_s`.
pub fn random_size(budget_s: f64, trial_s: f64, overhead_s: f64) -> usize {
    ((budget_s / trial_cost(trial_s, overhead_s)) as usize).min(4 * MAX_CANDIDATES)
}

/// The survivors of a rung: the better half (rounded up) of `scored` (config, tps), best first.
pub fn survivors(mut scored: Vec<(Config, f64)>) -> Vec<(Config, f64)> {
    scored.sort_by(|a, b| b.1.total_cmp(&a.1));
    let keep = scored.len().div_ceil(2);
    scored.truncate(keep);
    scored
}

/// A random configuration: each knob keeps its baseline value or takes one of its candidates,
/// all choices equally likely.
pub fn random_config(knobs: &[Knob], rng: &mut Rng) -> Config {
    knobs
        .iter()
        .filter_map(|k| {
            let i = rng.uniform(0, k.values.len() as u64) as usize;
            k.values.get(i).map(|v| (k.name.clone(), v.clone()))
        })
        .collect()
}

/// A round's first-rung candidates: the `carried` (the baseline, and the leader of the rounds
/// before), advise's recommendations together (`seed`) and each of them alone, then random
/// configurations, up to `n`, without repeats; none of the `measured` ones but the carried.
/// When random draws find no new configuration, the space's own order does.
pub fn halving_candidates(
    knobs: &[Knob],
    seed: &Config,
    (carried, measured): (&[Config], &[Config]),
    n: usize,
    rng: &mut Rng,
) -> Vec<Config> {
    let mut out = Vec::new();
    let push = |c: Config, out: &mut Vec<Config>, fresh: bool| {
        if out.len() < n && !out.contains(&c) && !(fresh && measured.contains(&c)) {
            out.push(c);
        }
    };
    for c in carried {
        push(c.clone(), &mut out, false);
    }
    push(seed.clone(), &mut out, true);
    for (k, v) in seed {
        push(Config::from([(k.clone(), v.clone())]), &mut out, true);
    }
    // Random draws repeat in a small space; a bounded number of tries keeps this finite.
    for _ in 0..n * 20 {
        push(random_config(knobs, rng), &mut out, true);
    }
    if out.len() < n {
        let limit = measured.len() + n + 1;
        for c in all_configs(knobs, limit) {
            push(c, &mut out, true);
        }
    }
    out
}

/// Random search's candidates: the baseline, then `n - 1` random configurations (repeats
/// allowed: a repeat is another measurement, as a random search would make).
pub fn random_candidates(knobs: &[Knob], n: usize, rng: &mut Rng) -> Vec<Config> {
    let mut out = vec![Config::new()];
    out.extend((1..n).map(|_| random_config(knobs, rng)));
    out
}

/// `name=value name=value`, or `baseline`.
pub fn describe(c: &Config) -> String {
    if c.is_empty() {
        return "baseline".into();
    }
    let parts: Vec<String> = c.iter().map(|(k, v)| format!("{k}={v}")).collect();
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn knob(name: &str, values: &[&str]) -> Knob {
        Knob {
            name: name.into(),
            current: "x".into(),
            values: values.iter().map(|v| v.to_string()).collect(),
            durability: false,
        }
    }

    #[test]
    fn halving_costs_one_round_of_trials_per_rung() {
        // 4 candidates × 10 s, then 2 × 20 s: 80 s of trials, plus 6 × 2 s overhead.
        assert_eq!(halving_cost(4, 10.0, 2.0), 92.0);
        assert_eq!(halving_cost(2, 10.0, 0.0), 20.0);
        assert_eq!(halving_size(92.0, 10.0, 2.0), 4);
        assert_eq!(halving_size(91.0, 10.0, 2.0), 3);
        assert_eq!(halving_size(10.0, 10.0, 2.0), 0);
        assert_eq!(halving_size(1e9, 1.0, 0.0), MAX_CANDIDATES);
        assert_eq!(random_size(92.0, 10.0, 2.0), 7);
    }

    #[test]
    fn survivors_are_the_better_half_best_first() {
        let c = |v: &str| Config::from([("k".to_string(), v.to_string())]);
        let s = survivors(vec![(c("a"), 10.0), (c("b"), 30.0), (c("c"), 20.0)]);
        assert_eq!(s, vec![(c("b"), 30.0), (c("c"), 20.0)]);
        assert_eq!(survivors(vec![(c("a"), 1.0)]).len(), 1);
    }

    #[test]
    fn candidates_start_with_the_baseline_and_advise_and_never_repeat() {
        let knobs = [knob("a", &["1", "2"]), knob("b", &["on"])];
        let seed = Config::from([("a".into(), "2".into()), ("b".into(), "on".into())]);
        let c = halving_candidates(&knobs, &seed, (&[Config::new()], &[]), 16, &mut Rng::new(7));
        assert_eq!(c[0], Config::new());
        assert_eq!(c[1], seed);
        assert_eq!(c[2], Config::from([("a".into(), "2".into())]));
        // 3 × 2 combinations in all, each once.
        assert_eq!(c.len(), 6);
        let mut d = c.clone();
        d.dedup();
        assert_eq!(d.len(), c.len());
        assert_eq!(
            halving_candidates(&knobs, &seed, (&[Config::new()], &[]), 2, &mut Rng::new(7)).len(),
            2
        );
        // A later round: the leader carried, nothing measured before drawn again.
        let leader = c[1].clone();
        let later = halving_candidates(
            &knobs,
            &seed,
            (&[Config::new(), leader.clone()], &c[..4]),
            16,
            &mut Rng::new(7),
        );
        assert_eq!(later[..2], [Config::new(), leader.clone()]);
        assert_eq!(later.len(), 4, "{later:?}");
        assert!(later[2..].iter().all(|x| !c[..4].contains(x)));
        // Room for two: the leader against a new one, without the baseline.
        let two = halving_candidates(
            &knobs,
            &seed,
            (std::slice::from_ref(&leader), &c[..4]),
            2,
            &mut Rng::new(7),
        );
        assert_eq!(two[0], leader);
        assert!(!c[..4].contains(&two[1]));
    }

    #[test]
    fn the_search_stops_when_it_converged_or_the_budget_ended() {
        // Configurations left and room for one more: it goes on.
        assert_eq!(stop(3, 6, 1), None);
        assert_eq!(stop(3, 6, 5), None);
        // No room in the budget for a configuration not yet measured.
        let ended = stop(3, 6, 0).unwrap();
        assert_eq!(
            ended,
            Ended::Budget {
                measured: 3,
                candidates: 6
            }
        );
        assert_eq!(
            ended.words(),
            "the budget ended the search after 3 of 6 candidates"
        );
        // Every configuration measured: converged, whatever the budget left.
        for room in [0, 4] {
            let ended = stop(6, 6, room).unwrap();
            assert_eq!(ended, Ended::Converged { measured: 6 });
            assert_eq!(
                ended.words(),
                "the search converged: every candidate was measured (6)"
            );
        }
    }

    #[test]
    fn the_space_counts_the_baseline_and_every_combination() {
        let knobs = [knob("a", &["1", "2"]), knob("b", &["on"])];
        assert_eq!(space_size(&knobs), 6);
        let all = all_configs(&knobs, 100);
        assert_eq!(all.len(), 6);
        assert_eq!(all[0], Config::new());
        let mut d = all.clone();
        d.sort();
        d.dedup();
        assert_eq!(d.len(), 6);
        assert_eq!(all_configs(&knobs, 4).len(), 4);
        assert_eq!(space_size(&[]), 1);
    }

    #[test]
    fn random_configs_use_only_candidate_values_and_repeat_by_seed() {
        let knobs = [knob("a", &["1", "2"]), knob("b", &["on"])];
        let one = random_candidates(&knobs, 8, &mut Rng::new(3));
        assert_eq!(one, random_candidates(&knobs, 8, &mut Rng::new(3)));
        assert_eq!(one.len(), 8);
        for c in &one {
            for (k, v) in c {
                let knob = knobs.iter().find(|x| &x.name == k).unwrap();
                assert!(knob.values.contains(v));
            }
        }
        assert!(one[1..].iter().any(|c| !c.is_empty()));
        assert_eq!(describe(&one[0]), "baseline");
    }
}
