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

/// What a search found: its best configuration, and how each configuration of one knob did
/// against the baseline measured in the same round (for the cnf's comments).
pub struct Found {
    /// The best configuration (empty: the baseline won).
    pub best: Config,
    /// `(one-knob configuration, its tps over the baseline's)`.
    pub alone: Vec<(Config, f64)>,
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

/// The first rung's candidates: the baseline, advise's recommendations together (`seed`), each
/// of them alone, then random configurations up to `n`, without repeats.
pub fn halving_candidates(knobs: &[Knob], seed: &Config, n: usize, rng: &mut Rng) -> Vec<Config> {
    let mut out = vec![Config::new()];
    let push = |c: Config, out: &mut Vec<Config>| {
        if out.len() < n && !out.contains(&c) {
            out.push(c);
        }
    };
    push(seed.clone(), &mut out);
    for (k, v) in seed {
        push(Config::from([(k.clone(), v.clone())]), &mut out);
    }
    // Random draws repeat in a small space; a bounded number of tries keeps this finite.
    for _ in 0..n * 20 {
        push(random_config(knobs, rng), &mut out);
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
        let c = halving_candidates(&knobs, &seed, 16, &mut Rng::new(7));
        assert_eq!(c[0], Config::new());
        assert_eq!(c[1], seed);
        assert_eq!(c[2], Config::from([("a".into(), "2".into())]));
        // 3 × 2 combinations in all, each once.
        assert_eq!(c.len(), 6);
        let mut d = c.clone();
        d.dedup();
        assert_eq!(d.len(), c.len());
        assert_eq!(
            halving_candidates(&knobs, &seed, 2, &mut Rng::new(7)).len(),
            2
        );
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
