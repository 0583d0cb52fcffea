//! The confirmation, pure: in which order the baseline (A) and the candidate (B) are measured,
//! whether B's gain is real, and when the confirmation stops. The decision is a paired ratio
//! with its interval on the log scale, from `qpslab_stats` like every other interval qpslab
//! prints.
//!
//! The confirmation is a study of its own: paired rounds (AB, BA, ...) judged after each round
//! from the [`MIN_REPEATS`]th by the anytime-valid interval the lab's adaptive studies use
//! ([`rule`], `qpslab_stats::Sequential`), a round with an unstable side left out; it stops
//! when that interval decides ([`decides`]) or when the next round no longer fits its share of
//! the budget ([`next`]). Stopping on what it saw keeps the interval valid: the confidence
//! sequence holds at every round at once, where a t interval recomputed after each round would
//! miss far more often than its 5%.

/// The ratio with its interval that a [`Gain`] holds.
pub use qpslab_stats::Ratio;
use qpslab_stats::{paired_ratio, Sequential};

/// Confidence level of the interval.
pub const LEVEL: f64 = 0.95;

/// Fewest measurements of each side.
pub const MIN_REPEATS: u32 = 3;

/// Which of the proof study's two variants a confirmation measurement runs (the A or B
/// of its A/B pairs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProofVariant {
    /// The server's settings as found.
    Baseline,
    /// The candidate's.
    Tuned,
}

impl ProofVariant {
    /// The variant's name in the proof study.
    pub fn name(self) -> &'static str {
        match self {
            ProofVariant::Baseline => "baseline",
            ProofVariant::Tuned => "tuned",
        }
    }
}

/// `repeats` measurements of each side in pairs that alternate which side goes first (AB BA AB
/// ...): a side measured second finds the server as the first left it (warmer caches, a pool
/// still resizing), so each side gets both positions.
pub fn order(repeats: u32) -> Vec<ProofVariant> {
    let side = |k: usize| [ProofVariant::Baseline, ProofVariant::Tuned][k];
    (0..repeats as usize)
        .flat_map(|i| {
            qpslab_lab::study::expand::round_order(i, 2)
                .into_iter()
                .map(side)
        })
        .collect()
}

/// The least gain worth a change of settings, as `diff`'s default threshold: a tuned
/// configuration is crowned only when its interval lies above 1 and its estimate is at least
/// this much above the baseline (a few percent can come from the resizes and the session's
/// drift alone).
pub const MIN_GAIN: f64 = 1.05;

/// What the confirmation found: the tuned configuration's gain over the baseline and whether
/// it is real.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Gain {
    /// Tuned over baseline throughput, with its interval.
    pub ratio: Ratio,
    /// The interval lies wholly above 1 and the estimate is at least [`MIN_GAIN`]: a gain.
    pub significant: bool,
}

/// Judges the throughputs of each side's measurements, the `i`-th of each side being measured
/// in the same pair: the ratio `exp(mean(ln(tuned / baseline)))` over the pairs with its t
/// interval at [`LEVEL`] (`qpslab_stats::paired_ratio`). Pairing cancels what the
/// machine does to both sides of a pair (a neighbour's load that comes and goes, caches warming
/// over the session). A gain only when the interval lies above 1 and the estimate reaches
/// [`MIN_GAIN`]. `None` with fewer than two
/// usable pairs.
pub fn judge(baseline: &[f64], tuned: &[f64]) -> Option<Gain> {
    let logs: Vec<f64> = baseline
        .iter()
        .zip(tuned)
        .filter(|(a, b)| **a > 0.0 && **b > 0.0)
        .map(|(a, b)| (b / a).ln())
        .collect();
    let ratio = paired_ratio(&logs, LEVEL)?;
    Some(Gain {
        ratio,
        significant: ratio.low > 1.0 && ratio.ratio >= MIN_GAIN,
    })
}

/// The least gain worth a change, in percent: also the margin within which a change is
/// "equivalent" for the confirmation's rule ([`rule`]); `1 + PRECISION_PCT / 100` is
/// [`MIN_GAIN`].
pub const PRECISION_PCT: f64 = 5.0;

/// The rule the confirmation's rounds are judged by, the one a lab study with `precision = "5%"`,
/// a `budget` and `max_repeats = max_rounds` is judged by (its proof study says so in its
/// spec, so its report gives the same interval): the confidence sequence tightest at
/// `max_rounds`.
pub fn rule(max_rounds: u32) -> Sequential {
    Sequential {
        precision_pct: PRECISION_PCT,
        max_rounds: max_rounds.max(MIN_REPEATS) as usize,
        adaptive: true,
        look_every: 0,
    }
}

/// One paired round of the confirmation as measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Round {
    /// The baseline's throughput.
    pub baseline: f64,
    /// The candidate's.
    pub tuned: f64,
    /// Both phases were judged fit to pair (`Stability::fit_to_pair`: a neighbour's load
    /// alone leaves a round in, as in the lab's studies).
    pub stable: bool,
    /// Seconds the round took, settings and warm-ups included.
    pub seconds: f64,
}

impl Round {
    /// Whether the round counts in the interval: both sides stable and measured something.
    pub fn paired(&self) -> bool {
        self.stable && self.baseline > 0.0 && self.tuned > 0.0
    }
}

/// The log ratios `ln(tuned / baseline)` of the rounds fit to pair, and how many rounds were
/// left out for an unstable side (or a side that measured nothing).
pub fn paired_logs(rounds: &[Round]) -> (Vec<f64>, usize) {
    let logs: Vec<f64> = rounds
        .iter()
        .filter(|r| r.paired())
        .map(|r| (r.tuned / r.baseline).ln())
        .collect();
    let dropped = rounds.len() - logs.len();
    (logs, dropped)
}

/// The rounds judged by `rule`'s anytime-valid interval; `None` below three usable rounds.
pub fn judge_rounds(rule: &Sequential, rounds: &[Round]) -> Option<Gain> {
    let ratio = rule.interval(&paired_logs(rounds).0)?;
    Some(Gain {
        ratio,
        significant: ratio.low > 1.0 && ratio.ratio >= MIN_GAIN,
    })
}

/// Whether an interval answers the confirmation's question: a gain (above 1, the estimate at
/// least [`MIN_GAIN`]), or no gain worth a change can be there (its upper end below
/// [`MIN_GAIN`]: a loss, equivalence within the margin, or a real gain too small to matter).
pub fn decides(g: &Gain) -> bool {
    g.significant || g.ratio.high < MIN_GAIN
}

/// Why the confirmation ran no more rounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stopped {
    /// Its interval decided ([`decides`]).
    Decided,
    /// The next round would not have fit in its share of the budget, undecided.
    Budget,
}

impl Stopped {
    /// `decided` or `budget`, as the JSON document says it.
    pub fn key(self) -> &'static str {
        match self {
            Stopped::Decided => "decided",
            Stopped::Budget => "budget",
        }
    }

    /// `the confirmation decided after 5 rounds` or `the budget ended the confirmation after 5
    /// rounds, undecided`, with the rounds left out for an unstable side.
    pub fn words(self, rounds: usize, dropped: usize) -> String {
        let head = match self {
            Stopped::Decided => format!("the confirmation decided after {rounds} rounds"),
            Stopped::Budget => {
                format!("the budget ended the confirmation after {rounds} rounds, undecided")
            }
        };
        format!("{head} ({dropped} left out for an unstable side)")
    }
}

/// What the confirmation does after `rounds`: `None`, another round; or stop, and why. The first
/// `min_rounds` always run (the search left time for them); after them it stops when the
/// interval decides, and otherwise runs another round only while one fits in `left_s`, the
/// seconds left of its share, a round's length estimated from the rounds measured (their
/// mean; `planned_round_s` before any). `rule.max_rounds` bounds the rounds, as the proof
/// study's cells do (it is sized from the share, so reaching it is the budget's end too).
pub fn next(
    rule: &Sequential,
    rounds: &[Round],
    min_rounds: u32,
    (left_s, planned_round_s): (f64, f64),
) -> Option<Stopped> {
    let n = rounds.len();
    if n >= rule.max_rounds {
        return Some(judged_stop(rule, rounds));
    }
    if n < min_rounds as usize {
        return None;
    }
    if judge_rounds(rule, rounds).is_some_and(|g| decides(&g)) {
        return Some(Stopped::Decided);
    }
    let round_s = match n {
        0 => planned_round_s,
        _ => rounds.iter().map(|r| r.seconds).sum::<f64>() / n as f64,
    };
    (left_s < round_s).then_some(Stopped::Budget)
}

/// Why rounds that may not go on stopped: decided when their interval decides.
fn judged_stop(rule: &Sequential, rounds: &[Round]) -> Stopped {
    match judge_rounds(rule, rounds).is_some_and(|g| decides(&g)) {
        true => Stopped::Decided,
        false => Stopped::Budget,
    }
}

/// Rounds the proof study is made with (its `max_repeats`): as many as `share_s` could pay for
/// were each round only its two measured phases of `trial_s`, so the budget, not this bound,
/// ends an undecided confirmation; at least `min_rounds`, at most 1000 (a study's most).
pub fn max_rounds(share_s: f64, trial_s: f64, min_rounds: u32) -> u32 {
    let fit = (share_s / (2.0 * trial_s.max(1.0))).floor();
    (fit.clamp(0.0, 1000.0) as u32).clamp(min_rounds.min(1000), 1000)
}

/// The proof study's spec: `description` as comments and as its description, and the rule
/// its rounds ran by in the lab's own keys (`precision`, `budget`, `min_repeats`,
/// `max_repeats`), so that `qpslab report` and `lab show` judge it by the interval tune
/// decided by ([`rule`]`(max_rounds)`).
pub fn proof_spec(name: &str, description: &[String], rounds: [u32; 2], share_s: f64) -> String {
    let [min_rounds, max_rounds] = rounds;
    let mut text: String = description.iter().map(|l| format!("# {l}\n")).collect();
    text.push_str(&format!(
        "name = {name:?}\ndescription = {:?}\nprecision = \"{PRECISION_PCT}%\"\n\
         budget = {:.0}\nmin_repeats = {min_rounds}\nmax_repeats = {max_rounds}\n",
        description.join("; "),
        share_s.ceil().max(1.0),
    ));
    text
}

/// Whether a change can leave the confirmed set: `without` is the set without it over the set
/// with it, paired. It can when its removal keeps the gain within the noise: the interval
/// reaches 1 (no loss shown) and the estimate loses less than the least gain worth a change.
pub fn removable(without: &Ratio) -> bool {
    without.high >= 1.0 && without.ratio >= 1.0 / MIN_GAIN
}

pub(crate) fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len().max(1) as f64
}

/// `+12.3%`: a ratio as a signed percentage.
pub(crate) fn percent(r: f64) -> String {
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
            (MIN_GAIN - 1.0) * 100.0
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

    #[test]
    fn a_change_goes_only_when_its_removal_keeps_the_gain() {
        let r = |ratio, low, high| Ratio {
            ratio,
            low,
            high,
            se_log: 0.1,
            df: 2.0,
        };
        // Without it: -1% [-8%, +6%]: within the noise, it goes.
        assert!(removable(&r(0.99, 0.92, 1.06)));
        // Without it the set is faster: it goes.
        assert!(removable(&r(1.04, 0.98, 1.10)));
        // A loss shown by the interval: it stays.
        assert!(!removable(&r(0.7, 0.6, 0.8)));
        // A loss of 10% that the noise cannot tell from none: it stays (a change worth 5%).
        assert!(!removable(&r(0.9, 0.7, 1.15)));
    }

    /// `n` rounds whose log ratios are `mean` plus a seeded uniform noise of ±`spread`, each
    /// taking `seconds`.
    fn series(n: usize, mean: f64, spread: f64, seed: u64) -> Vec<Round> {
        let mut rng = qpslab_engine::rand::Rng::new(seed);
        (0..n)
            .map(|_| {
                let log = mean + spread * (2.0 * rng.next_f64() - 1.0);
                Round {
                    baseline: 1000.0,
                    tuned: 1000.0 * log.exp(),
                    stable: true,
                    seconds: 10.0,
                }
            })
            .collect()
    }

    /// Runs the rule on `all` as if measured one round at a time with `share_s` seconds: the
    /// rounds it ran and why it stopped.
    fn run(all: &[Round], share_s: f64) -> (usize, Stopped) {
        let rule = rule(max_rounds(share_s, 4.0, MIN_REPEATS));
        let mut spent = 0.0;
        for n in 0..=all.len() {
            if let Some(stop) = next(&rule, &all[..n], MIN_REPEATS, (share_s - spent, 10.0)) {
                return (n, stop);
            }
            spent += all[n].seconds;
        }
        panic!("ran out of rounds");
    }

    #[test]
    fn a_clear_gain_decides_at_the_third_round() {
        let (n, stop) = run(&series(40, 0.4, 0.05, 1), 300.0);
        assert_eq!((n, stop), (MIN_REPEATS as usize, Stopped::Decided));
        let g = judge_rounds(&rule(20), &series(3, 0.4, 0.05, 1)).unwrap();
        assert!(g.significant, "{:?}", g.ratio);
    }

    #[test]
    fn noise_goes_on_until_the_share_is_spent() {
        // +10% on average with a spread of ±40% a round: not decided in 12 rounds of 10 s.
        let (n, stop) = run(&series(40, 0.1, 0.4, 7), 125.0);
        assert_eq!(stop, Stopped::Budget);
        assert_eq!(n, 12, "every round that fits in 125 s");
        // The same noise with no share beyond the minimum stops after the minimum.
        assert_eq!(run(&series(40, 0.1, 0.4, 7), 0.0), (3, Stopped::Budget));
    }

    #[test]
    fn a_gain_between_noise_and_the_margin_decides_when_precise_enough() {
        // A real gain that decides only after several rounds: more than the minimum, fewer
        // than the share allows.
        let (n, stop) = run(&series(60, 0.12, 0.12, 3), 600.0);
        assert_eq!(stop, Stopped::Decided);
        assert!(n > 3 && n < 60, "{n}");
        // No change at all: decided once the interval lies below +5% (no gain worth a change).
        let (n, stop) = run(&series(200, 0.0, 0.03, 5), 2000.0);
        assert_eq!(stop, Stopped::Decided, "after {n}");
        let g = judge_rounds(&rule(200), &series(n, 0.0, 0.03, 5)).unwrap();
        assert!(!g.significant && g.ratio.high < MIN_GAIN, "{:?}", g.ratio);
    }

    #[test]
    fn a_round_must_fit_in_what_is_left_by_the_rounds_measured() {
        let rule = rule(100);
        let mut r = series(4, 0.1, 0.4, 7);
        for x in &mut r {
            x.seconds = 30.0;
        }
        // The plan said 10 s a round, the rounds took 30 s: 25 s left fit no round.
        assert_eq!(next(&rule, &r, 3, (25.0, 10.0)), Some(Stopped::Budget));
        assert_eq!(next(&rule, &r, 3, (31.0, 10.0)), None);
        // The minimum runs whatever is left.
        assert_eq!(next(&rule, &r[..2], 3, (0.0, 10.0)), None);
        // The study's last round ends it.
        assert_eq!(
            next(&super::rule(4), &r, 3, (1e9, 10.0)),
            Some(Stopped::Budget)
        );
    }

    #[test]
    fn unstable_rounds_are_left_out_and_counted() {
        let mut r = series(6, 0.3, 0.02, 2);
        // A stalled baseline makes one round look like a 10× gain.
        r[1] = Round {
            baseline: 100.0,
            tuned: 1000.0,
            stable: false,
            seconds: 10.0,
        };
        r[4].tuned = 0.0;
        let (logs, dropped) = paired_logs(&r);
        assert_eq!((logs.len(), dropped), (4, 2));
        let g = judge_rounds(&rule(20), &r).unwrap();
        assert!((g.ratio.ratio - 0.3f64.exp()).abs() < 0.03, "{:?}", g.ratio);
        // Three rounds, two of them unstable: no interval, not decided, more rounds.
        let mut few = series(3, 0.3, 0.02, 2);
        few[0].stable = false;
        assert!(judge_rounds(&rule(20), &few).is_none());
        assert_eq!(next(&rule(20), &few, 3, (100.0, 10.0)), None);
    }

    #[test]
    fn the_stop_says_which() {
        assert_eq!(
            Stopped::Decided.words(5, 1),
            "the confirmation decided after 5 rounds (1 left out for an unstable side)"
        );
        assert_eq!(
            Stopped::Budget.words(7, 0),
            "the budget ended the confirmation after 7 rounds, undecided \
             (0 left out for an unstable side)"
        );
        assert_eq!(max_rounds(125.0, 4.0, 3), 15);
        assert_eq!(max_rounds(1.0, 4.0, 3), 3);
        assert_eq!(max_rounds(1e9, 1.0, 3), 1000);
        assert!((1.0 + PRECISION_PCT / 100.0 - MIN_GAIN).abs() < 1e-12);
    }

    #[test]
    fn the_proof_study_is_judged_by_the_rule_tune_decided_by() {
        let text = proof_spec(
            "tune-1-2",
            &["proof study of qpslab tune session tune-1-2".into()],
            [3, 15],
            124.2,
        );
        let spec = qpslab_lab::study::spec::parse("tune-1-2", &text).unwrap();
        let stop = spec.stop_rule().unwrap();
        assert_eq!(stop.sequential(), rule(15), "{text}");
        assert_eq!((stop.min_rounds, stop.budget_s), (3, Some(125.0)));
        assert_eq!(stop.metric, "tps");
    }

    #[test]
    fn pairs_alternate_which_side_goes_first() {
        use ProofVariant::*;
        assert_eq!(
            order(3),
            [Baseline, Tuned, Tuned, Baseline, Baseline, Tuned]
        );
    }

    #[test]
    fn a_clear_gain_is_crowned() {
        let v = judge(&[100.0, 104.0, 98.0], &[200.0, 195.0, 207.0]).unwrap();
        assert!(v.significant);
        assert!((v.ratio.ratio - 2.0).abs() < 0.05);
        assert!(v.ratio.low > 1.5 && v.ratio.high < 2.5, "{:?}", v.ratio);
        // The machine speeding up during the session moves both sides of each pair.
        let v = judge(&[225.0, 467.0, 475.0], &[435.0, 665.0, 860.0]).unwrap();
        assert!(v.significant, "{:?}", v.ratio);
    }

    #[test]
    fn noise_is_not_a_gain() {
        // A/A: the same server measured in three pairs.
        let v = judge(&[100.0, 99.0, 101.0], &[97.0, 104.0, 108.0]).unwrap();
        assert!(v.ratio.ratio > 1.0);
        assert!(v.ratio.low < 1.0, "{:?}", v.ratio);
        assert!(!v.significant);
    }

    #[test]
    fn a_gain_too_small_to_matter_is_not_crowned() {
        // Three consistent pairs of +3..6%: beyond noise, below the least gain worth a change.
        let v = judge(&[1931.0, 1928.0, 1986.0], &[1990.0, 2048.0, 2069.0]).unwrap();
        assert!(
            v.ratio.low > 1.0 && v.ratio.ratio < MIN_GAIN,
            "{:?}",
            v.ratio
        );
        assert!(!v.significant);
    }

    #[test]
    fn a_loss_is_not_a_gain_and_too_few_is_no_verdict() {
        let v = judge(&[200.0, 201.0, 199.0], &[100.0, 101.0, 99.0]).unwrap();
        assert!(v.ratio.excludes_one());
        assert!(!v.significant);
        assert_eq!(judge(&[100.0], &[200.0, 210.0]), None);
        assert_eq!(judge(&[100.0, 0.0], &[200.0, 210.0]), None);
    }
}
