//! Rounds that stop when the answer is precise: a study with `precision` or `budget` expands
//! every round it may run (`max_repeats`), and before each round this tracker decides which
//! comparisons still need it.
//!
//! A comparison is a setup against the study's first setup at one point of the sweep. Its
//! rounds are paired (both sides of round k ran next to each other, so the machine's drift
//! between rounds cancels); a round with an unstable side is left out. After `min_repeats`
//! rounds a comparison that is settled stops ([`Sequential::settled`]: answered at the
//! precision asked, equivalent or an improvement or regression at most ±precision wide, by
//! the anytime-valid interval the reports give too); the others go on, the baseline running
//! only where some comparison still needs it.
//!
//! The budget goes first to the comparisons without an answer, then where the intervals are
//! widest: before each round the open comparisons are ranked, those not yet answering (an
//! interval across zero and ±precision) before those that answer but are not yet precise, and
//! within each by half-width over the half-width that would settle them (one without an
//! interval yet first), and taken in that order while the time their cells took so far says
//! the round still ends within the budget (the budget is the study's wall time: it can cut
//! the minimum rounds too, and the comparisons then say they are undecided). A comparison
//! nearly precise thus gives way to one
//! far from it when the budget cannot pay for both; and no cell starts, even within a round,
//! unless the time cells like it took so far fits in what is left ([`super::budget`]), so the
//! study ends within its budget and at worst one cell's misjudged length past it. The ETA ([`RoundReport::eta_s`]) is the rounds each open comparison still
//! needs at its spread so far, at the cells' pace, within what is left of the budget. With
//! `repeats = N` every round runs.
//!
//! A resumed study loads the rounds measured before ([`RoundTracker::record_earlier`]): they
//! count in the pairing and their time in the budget, so the resume decides on the whole study.

use crate::study::budget::{may_start, BudgetEnd, CellKind, Pace};
use crate::study::stop::{StopRule, DEFAULT_PRECISION_PCT};
use qpslab_core::PhaseResult;
use qpslab_stats::{half_log, Decision, Ratio, Sequential};
use qpslab_store::CellRecord;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

/// A comparison: the candidate setup and the point of the sweep (`threads=4`).
pub(super) type Key = (String, String);

/// A comparison's rounds so far, as `lab plan` estimates from them.
pub(super) struct Spread {
    /// The comparison.
    pub key: Key,
    /// `tuned vs stock at threads=4`.
    pub name: String,
    /// Rounds paired.
    pub used: usize,
    /// Standard deviation of the rounds' log ratios (`None` below three rounds).
    pub sd: Option<f64>,
}

/// One comparison after a round, as `lab run` prints it.
#[derive(Clone, Debug, PartialEq)]
pub struct ComparisonState {
    /// `tuned vs stock at threads=4`.
    pub name: String,
    /// Change of the precision metric, in percent (`None`: fewer than three paired rounds).
    pub change_pct: Option<f64>,
    /// The 95% interval, in percent: anytime-valid in a study that stops on what it saw,
    /// paired t with `repeats = N` (the interval the reports give).
    pub interval: Option<(f64, f64)>,
    /// The answer that interval gives (`None`: fewer than three paired rounds).
    pub decision: Option<Decision>,
    /// Rounds paired.
    pub used: usize,
    /// Rounds left out for an unstable side.
    pub dropped: usize,
    /// Whether it needs more rounds (never with `repeats = N`, which runs them all).
    pub open: bool,
    /// Whether it stopped for being answered at the precision asked.
    pub settled: bool,
}

/// What a round leaves: each comparison's interval and the budget's state.
#[derive(Clone, Debug, PartialEq)]
pub struct RoundReport {
    /// The round just ended.
    pub round: u32,
    /// The most rounds.
    pub max_rounds: u32,
    /// The metric the intervals are about.
    pub metric: String,
    /// The target half-width, percent.
    pub precision_pct: f64,
    /// Paired rounds between planned looks (0: a comparison may stop after any round).
    pub look_every: u32,
    /// Every comparison.
    pub comparisons: Vec<ComparisonState>,
    /// Wall time since the study started, seconds.
    pub elapsed_s: f64,
    /// The budget, seconds.
    pub budget_s: Option<f64>,
    /// Time the open comparisons' next round would take, from the cells so far.
    pub next_round_s: Option<f64>,
    /// Time the rounds the open comparisons still need would take (each at its spread so far,
    /// at most up to `max_repeats`), within what is left of the budget; `None` before a cell
    /// has been timed.
    pub eta_s: Option<f64>,
}

/// The rounds of one study run.
pub struct RoundTracker {
    rule: StopRule,
    baseline: String,
    /// Candidate setup → points it is measured at.
    comparisons: BTreeSet<Key>,
    /// (setup, point, round) → the precision metric and whether the phase was stable.
    values: BTreeMap<(String, String, u32), (f64, bool)>,
    started: Instant,
    /// Seconds the cells measured before a resume took: they count in the budget.
    earlier_s: f64,
    /// Seconds each measured cell took, start-up and load included, by kind.
    pace: Pace,
    /// The setup of the last cell measured (`None` at the start or after a failed cell: the
    /// next cell starts its server) and every setup measured in this run.
    last_setup: Option<String>,
    seen: BTreeSet<String>,
    /// Why the budget ended the study, once it did.
    budget_end: Option<BudgetEnd>,
    /// Comparisons that need the round being run (decided when it starts).
    open: BTreeSet<Key>,
    round: u32,
    out_of_budget: bool,
}

/// A cell's setup: its variant (factor levels are part of a factorial variant's name).
fn setup(rec: &CellRecord) -> String {
    rec.cell.variant.clone()
}

/// A cell's point of the sweep.
fn point(rec: &CellRecord) -> String {
    let parts: Vec<String> = rec
        .cell
        .params
        .iter()
        .map(|(k, v)| match v {
            serde_json::Value::String(s) => format!("{k}={s}"),
            v => format!("{k}={v}"),
        })
        .collect();
    parts.join(",")
}

impl RoundTracker {
    /// A tracker of `records` (in execution order) under `rule`; the first setup is the
    /// baseline.
    pub fn new(rule: &StopRule, records: &[CellRecord]) -> RoundTracker {
        let baseline = records.first().map(setup).unwrap_or_default();
        let comparisons = records
            .iter()
            .filter(|r| setup(r) != baseline)
            .map(|r| (setup(r), point(r)))
            .collect();
        RoundTracker {
            rule: rule.clone(),
            baseline,
            comparisons,
            values: BTreeMap::new(),
            started: Instant::now(),
            earlier_s: 0.0,
            pace: Pace::default(),
            last_setup: None,
            seen: BTreeSet::new(),
            budget_end: None,
            open: BTreeSet::new(),
            round: 0,
            out_of_budget: false,
        }
    }

    /// Counts the budget from `started` (the study's start, before anything was set up for
    /// it) instead of from when the tracker was made.
    pub fn counting_from(mut self, started: Instant) -> RoundTracker {
        self.started = started;
        self
    }

    /// What cell `rec` starts before it measures, from the cells measured before it.
    fn kind(&self, rec: &CellRecord) -> CellKind {
        let s = setup(rec);
        if self.last_setup.as_ref() == Some(&s) {
            CellKind::SameSetup
        } else if self.seen.contains(&s) {
            CellKind::SetupChange
        } else {
            CellKind::FirstOfSetup
        }
    }

    /// Why the budget ended the study, if it did.
    pub fn budget_end(&self) -> Option<&BudgetEnd> {
        self.budget_end.as_ref()
    }

    /// Stopping a server took `seconds`: the study keeps that much for its last stop.
    pub fn record_stop(&mut self, seconds: f64) {
        self.pace.record_stop(seconds);
    }

    /// A cell failed: its time does not tell a measured cell's, and the next cell starts
    /// its server.
    pub fn record_failed(&mut self) {
        self.last_setup = None;
    }

    /// The precision metric of a phase.
    fn value(&self, phase: &PhaseResult) -> Option<f64> {
        let v = match self.rule.metric.as_str() {
            "qps" => Some(phase.qps()),
            "p50" => phase.percentile_ms(50.0),
            "p95" => phase.percentile_ms(95.0),
            "p99" => phase.percentile_ms(99.0),
            _ => Some(phase.tps()),
        };
        v.filter(|v| *v > 0.0 && v.is_finite())
    }

    /// Records a measured cell and the seconds it took.
    pub fn record(&mut self, rec: &CellRecord, phase: &PhaseResult, seconds: f64) {
        let kind = self.kind(rec);
        self.pace.record(Some(kind), seconds);
        self.last_setup = Some(setup(rec));
        self.seen.insert(setup(rec));
        self.record_value(rec, phase);
    }

    /// Pairs a measured cell's value.
    fn record_value(&mut self, rec: &CellRecord, phase: &PhaseResult) {
        if let Some(v) = self.value(phase) {
            // Paired as the comparison pairs it: a busy neighbour alone leaves it in.
            let stable = phase.stability.as_ref().is_none_or(|s| s.fit_to_pair());
            self.values
                .insert((setup(rec), point(rec), rec.cell.repeat), (v, stable));
        }
    }

    /// Records a cell measured before the study was resumed, and the seconds it took then:
    /// its round is paired and its time spent from the budget, as if this process had run it.
    pub fn record_earlier(&mut self, rec: &CellRecord, phase: &PhaseResult, seconds: f64) {
        self.earlier_s += seconds;
        self.pace.record(None, seconds);
        self.record_value(rec, phase);
    }

    /// Wall time spent on the study: this process's, and the earlier cells' of a resume.
    fn elapsed_s(&self) -> f64 {
        self.earlier_s + self.started.elapsed().as_secs_f64()
    }

    /// The round's log ratios of a comparison, and the rounds dropped for an unstable side.
    fn pairs(&self, (cand, pt): &Key) -> (Vec<f64>, usize) {
        let (mut logs, mut dropped) = (Vec::new(), 0);
        for ((s, p, round), (vb, sb)) in &self.values {
            if s != cand || p != pt {
                continue;
            }
            let base = (self.baseline.clone(), pt.clone(), *round);
            if let Some((va, sa)) = self.values.get(&base) {
                if *sa && *sb {
                    logs.push((vb / va).ln());
                } else {
                    dropped += 1;
                }
            }
        }
        (logs, dropped)
    }

    /// The rule the comparisons are decided by: the study's, as the reports read it.
    fn sequential(&self) -> Sequential {
        self.rule.sequential()
    }

    /// A comparison's interval so far.
    fn interval(&self, key: &Key) -> Option<Ratio> {
        self.sequential().interval(&self.pairs(key).0)
    }

    /// How far a comparison is from settled: its half-width over the half-width at which its
    /// mean so far would settle, both on the log scale (1 or less: it answers); infinite
    /// without an interval yet.
    fn width(&self, key: &Key) -> f64 {
        let seq = self.sequential();
        self.interval(key).map_or(f64::INFINITY, |r| {
            half_log(&r) / seq.settling_half(r.ratio.ln())
        })
    }

    /// Whether a comparison is answered at the precision asked.
    fn settled(&self, key: &Key) -> bool {
        self.interval(key)
            .is_some_and(|r| self.sequential().settled(&r))
    }

    /// Whether a comparison needs another round: fewer than `min_repeats` paired rounds, or
    /// not yet settled.
    fn needs_more(&self, key: &Key) -> bool {
        let (logs, _) = self.pairs(key);
        logs.len() < self.rule.min_rounds as usize || !self.settled(key)
    }

    /// Whether a comparison's interval answers yet (an improvement, a regression or
    /// equivalent), however wide.
    fn answered(&self, key: &Key) -> bool {
        self.interval(key)
            .is_some_and(|r| self.sequential().decision(&r, true) != Decision::Undecided)
    }

    /// Sorts comparisons into the order the budget goes to them: those without an answer
    /// first, then those answered but not yet precise; within each, the farthest from settled
    /// first (ties in the study's order).
    fn rank(&self, keys: impl Iterator<Item = Key>) -> Vec<Key> {
        let mut ranked: Vec<(bool, f64, Key)> = keys
            .map(|k| (self.answered(&k), self.width(&k), k))
            .collect();
        ranked.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)));
        ranked.into_iter().map(|(_, _, k)| k).collect()
    }

    /// The comparisons still needing rounds, in the order the budget goes to them.
    fn open_by_width(&self) -> Vec<Key> {
        let open = self.comparisons.iter().filter(|k| self.needs_more(k));
        self.rank(open.cloned())
    }

    /// Rounds a comparison still needs: those its mean and spread so far say settle it, at
    /// least those to `min_repeats`, at most those to `max_repeats` (all of them without an
    /// interval yet).
    fn rounds_left(&self, key: &Key) -> usize {
        let (logs, dropped) = self.pairs(key);
        let ran = logs.len() + dropped;
        let may = (self.rule.max_rounds as usize).saturating_sub(ran);
        let min = (self.rule.min_rounds as usize).saturating_sub(logs.len());
        let needed = self
            .sequential()
            .rounds_to_settle(&logs, self.rule.max_rounds as usize)
            .map_or(may, |n| n.saturating_sub(logs.len()).max(1));
        needed.max(min).min(may)
    }

    /// Rounds until a comparison's next planned look (1 without looks: it may stop after any).
    fn to_next_look(&self, key: &Key) -> usize {
        let Some(d) = self.sequential().looks() else {
            return 1;
        };
        let used = self.pairs(key).0.len();
        d.looks()
            .into_iter()
            .find(|&l| l > used)
            .map_or(1, |l| l - used)
    }

    /// Seconds one cell took on average so far.
    pub(super) fn cell_mean_s(&self) -> Option<f64> {
        self.pace.mean_s()
    }

    /// Cells a round of the `open` comparisons runs: each candidate's, and the baseline's at
    /// each point some candidate still needs.
    pub(super) fn cells_in_round(open: &BTreeSet<Key>) -> usize {
        let points: BTreeSet<&String> = open.iter().map(|(_, p)| p).collect();
        open.len() + points.len()
    }

    /// Starts round `round`: decides which comparisons run in it. Before `min_repeats`
    /// rounds every comparison runs; after, only those not yet precise. From the second round
    /// on, a round starts only if the time cells of later rounds took so far says it ends
    /// within the budget, with the last server's stop.
    pub fn start_round(&mut self, round: u32) {
        self.round = round;
        if !self.rule.adaptive() {
            self.open = self.comparisons.clone();
            return;
        }
        let ranked = if round <= self.rule.min_rounds {
            self.rank(self.comparisons.iter().cloned())
        } else {
            self.open_by_width()
        };
        self.open = match (self.rule.budget_s, self.pace.round_cell_s()) {
            (Some(budget), Some(per_cell)) => {
                // The widest first, each while the round still ends within the budget (with
                // planned looks: while the rounds to its next look do).
                let left = budget - self.elapsed_s() - self.pace.stop_s();
                let mut open = BTreeSet::new();
                for key in &ranked {
                    let mut with = open.clone();
                    with.insert(key.clone());
                    let rounds = with.iter().map(|k| self.to_next_look(k)).max().unwrap_or(1);
                    if per_cell * (Self::cells_in_round(&with) * rounds) as f64 <= left {
                        open = with;
                    }
                }
                if open.is_empty() && !ranked.is_empty() {
                    self.out_of_budget = true;
                    let cells = Self::cells_in_round(&ranked.iter().take(1).cloned().collect());
                    self.budget_end = Some(BudgetEnd {
                        budget_s: budget,
                        used_s: self.elapsed_s(),
                        next_s: per_cell * cells as f64 + self.pace.stop_s(),
                    });
                }
                open
            }
            _ => ranked.into_iter().collect(),
        };
        if self.out_of_budget {
            self.open.clear();
        }
    }

    /// Whether the cell is needed in the round being run, and may start: with a budget, only
    /// if the time cells of its kind took so far fits in what is left (else the budget ends
    /// the study and no cell starts any more).
    pub fn needed(&mut self, rec: &CellRecord) -> bool {
        self.needed_at_least(rec, 0.0)
    }

    /// [`Self::needed`], for a cell that takes at least `planned_s` (its warm-up and phase as
    /// planned): a cell is never expected to be shorter, timed cells or not.
    pub fn needed_at_least(&mut self, rec: &CellRecord, planned_s: f64) -> bool {
        let (s, p) = (setup(rec), point(rec));
        let wanted = if s == self.baseline {
            // A study of one setup has nothing to compare: its rounds all run (in its budget).
            (self.comparisons.is_empty() && !self.out_of_budget)
                || self.open.iter().any(|(_, op)| *op == p)
        } else {
            self.open.contains(&(s, p))
        };
        if !wanted {
            return false;
        }
        let Some(budget) = self.rule.budget_s else {
            return true;
        };
        let expected = match self.pace.expected_s(self.kind(rec)) {
            Some(e) => Some(e.max(planned_s)),
            None => (planned_s > 0.0).then_some(planned_s),
        };
        match may_start(budget, self.elapsed_s(), expected, self.pace.stop_s()) {
            Ok(()) => true,
            Err(end) => {
                self.budget_end.get_or_insert(end);
                self.out_of_budget = true;
                self.open.clear();
                false
            }
        }
    }

    /// Whether any later round may still run.
    pub fn finished(&self) -> bool {
        self.rule.adaptive()
            && self.open.is_empty()
            && (self.round > self.rule.min_rounds || self.out_of_budget)
    }

    /// The state after the round being run.
    pub fn report(&self) -> RoundReport {
        let seq = self.sequential();
        let comparisons = self
            .comparisons
            .iter()
            .map(|key| {
                let (logs, dropped) = self.pairs(key);
                let r = seq.interval(&logs);
                let pct = |x: f64| 100.0 * (x - 1.0);
                let open = self.rule.adaptive() && self.needs_more(key);
                ComparisonState {
                    name: self.name(key),
                    change_pct: r.map(|r| pct(r.ratio)),
                    interval: r.map(|r| (pct(r.low), pct(r.high))),
                    decision: r.map(|r| seq.decision(&r, self.rule.higher_is_better())),
                    used: seq.counted(logs.len()),
                    dropped,
                    open,
                    settled: self.rule.adaptive() && !open && self.settled(key),
                }
            })
            .collect();
        let open: BTreeSet<Key> = self.open_by_width().into_iter().collect();
        RoundReport {
            round: self.round,
            max_rounds: self.rule.max_rounds,
            metric: self.rule.metric.clone(),
            precision_pct: self.rule.precision_pct.unwrap_or(DEFAULT_PRECISION_PCT),
            look_every: self.rule.look_every,
            comparisons,
            elapsed_s: self.elapsed_s(),
            budget_s: self.rule.budget_s,
            next_round_s: self
                .pace
                .round_cell_s()
                .map(|c| c * Self::cells_in_round(&open) as f64),
            eta_s: self.eta_s(&open),
        }
    }

    /// `tuned vs stock at threads=4`.
    fn name(&self, (cand, at): &Key) -> String {
        match at.as_str() {
            "" => format!("{cand} vs {}", self.baseline),
            at => format!("{cand} vs {} at {at}", self.baseline),
        }
    }

    /// Every comparison's rounds so far and their spread.
    pub(super) fn spreads(&self) -> Vec<Spread> {
        self.comparisons
            .iter()
            .map(|key| {
                let (logs, _) = self.pairs(key);
                Spread {
                    key: key.clone(),
                    name: self.name(key),
                    used: logs.len(),
                    sd: self.sequential().design().interval(&logs).map(|i| i.sd),
                }
            })
            .collect()
    }

    /// Time the rounds the `open` comparisons still need would take: round by round, the
    /// cells of those still needing it, at the cells' pace; within what is left of the budget.
    fn eta_s(&self, open: &BTreeSet<Key>) -> Option<f64> {
        let per_cell = self.pace.round_cell_s()?;
        if !self.rule.adaptive() || self.out_of_budget {
            return Some(0.0);
        }
        let left: Vec<(usize, &Key)> = open.iter().map(|k| (self.rounds_left(k), k)).collect();
        let most = left.iter().map(|(n, _)| *n).max().unwrap_or(0);
        let seconds: f64 = (1..=most)
            .map(|j| {
                let needing: BTreeSet<Key> = left
                    .iter()
                    .filter(|(n, _)| *n >= j)
                    .map(|(_, k)| (*k).clone())
                    .collect();
                per_cell * Self::cells_in_round(&needing) as f64
            })
            .sum();
        Some(match self.rule.budget_s {
            Some(b) => seconds.min((b - self.elapsed_s()).max(0.0)),
            None => seconds,
        })
    }
}

#[cfg(test)]
#[path = "rounds_tests.rs"]
mod tests;
