//! Rounds that stop when the answer is precise: a study with `precision` or `budget` expands
//! every round it may run (`max_repeats`), and before each round this tracker decides which
//! comparisons still need it.
//!
//! A comparison is a setup against the study's first setup at one point of the sweep. Its
//! rounds are paired (both sides of round k ran next to each other, so the machine's drift
//! between rounds cancels); a round with an unstable side is left out. After `min_repeats`
//! rounds a comparison whose anytime-valid interval ([`AnytimeDesign`]) is within ±precision
//! stops; the others go on, the baseline running only where some comparison still needs it,
//! so the budget goes to the comparisons still wide. From the second round on, a round starts
//! only when the time the cells it needs took so far says it ends within the budget (the
//! budget is the study's wall time: it can cut the minimum rounds too, and the comparisons
//! then say they are undecided); once it is spent no cell starts, even within a round. With
//! `repeats = N` every round runs.

use crate::spec::StopRule;
use qpslab_core::PhaseResult;
use qpslab_stats::AnytimeDesign;
use qpslab_store::CellRecord;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

/// A comparison: the candidate setup and the point of the sweep (`threads=4`).
type Key = (String, String);

/// One comparison after a round, as `lab run` prints it.
#[derive(Clone, Debug, PartialEq)]
pub struct ComparisonState {
    /// `tuned vs stock at threads=4`.
    pub name: String,
    /// Change of the precision metric, in percent (`None`: fewer than three paired rounds).
    pub change_pct: Option<f64>,
    /// The anytime-valid 95% interval, in percent.
    pub interval: Option<(f64, f64)>,
    /// Rounds paired.
    pub used: usize,
    /// Rounds left out for an unstable side.
    pub dropped: usize,
    /// Whether it needs more rounds.
    pub open: bool,
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
    /// Every comparison.
    pub comparisons: Vec<ComparisonState>,
    /// Wall time since the study started, seconds.
    pub elapsed_s: f64,
    /// The budget, seconds.
    pub budget_s: Option<f64>,
    /// Time the open comparisons' next round would take, from the cells so far.
    pub next_round_s: Option<f64>,
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
    /// Seconds each measured cell took, start-up and load included.
    cell_s: Vec<f64>,
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
            cell_s: Vec::new(),
            open: BTreeSet::new(),
            round: 0,
            out_of_budget: false,
        }
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
        self.cell_s.push(seconds);
        if let Some(v) = self.value(phase) {
            let stable = phase.stability.as_ref().is_none_or(|s| s.is_stable());
            self.values
                .insert((setup(rec), point(rec), rec.cell.repeat), (v, stable));
        }
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

    fn design(&self) -> AnytimeDesign {
        AnytimeDesign::new(0.95, self.rule.max_rounds as usize)
    }

    /// Whether a comparison needs another round: fewer than `min_repeats` paired rounds, or
    /// an interval wider than ±precision.
    fn needs_more(&self, key: &Key) -> bool {
        let (logs, _) = self.pairs(key);
        if logs.len() < self.rule.min_rounds as usize {
            return true;
        }
        let target = (1.0 + self.rule.precision_pct.unwrap_or(5.0) / 100.0).ln();
        match self.design().interval(&logs) {
            Some(i) => 0.5 * (i.high - i.low) > target,
            None => true,
        }
    }

    /// Seconds one cell took on average so far.
    fn cell_mean_s(&self) -> Option<f64> {
        (!self.cell_s.is_empty())
            .then(|| self.cell_s.iter().sum::<f64>() / self.cell_s.len() as f64)
    }

    /// Cells a round of the `open` comparisons runs: each candidate's, and the baseline's at
    /// each point some candidate still needs.
    fn cells_in_round(open: &BTreeSet<Key>) -> usize {
        let points: BTreeSet<&String> = open.iter().map(|(_, p)| p).collect();
        open.len() + points.len()
    }

    /// Starts round `round`: decides which comparisons run in it. Before `min_repeats`
    /// rounds every comparison runs; after, only those not yet precise. From the second round
    /// on, a round starts only if the time its cells took so far says it ends within the
    /// budget.
    pub fn start_round(&mut self, round: u32) {
        self.round = round;
        if !self.rule.adaptive() {
            self.open = self.comparisons.clone();
            return;
        }
        self.open = if round <= self.rule.min_rounds {
            self.comparisons.clone()
        } else {
            self.comparisons
                .iter()
                .filter(|k| self.needs_more(k))
                .cloned()
                .collect()
        };
        if let (Some(budget), Some(per_cell)) = (self.rule.budget_s, self.cell_mean_s()) {
            let next = per_cell * Self::cells_in_round(&self.open) as f64;
            if self.started.elapsed().as_secs_f64() + next > budget {
                self.out_of_budget = true;
            }
        }
        if self.out_of_budget {
            self.open.clear();
        }
    }

    /// Whether the cell is needed in the round being run; none is once the budget is spent.
    pub fn needed(&mut self, rec: &CellRecord) -> bool {
        if let Some(b) = self.rule.budget_s {
            if self.started.elapsed().as_secs_f64() >= b {
                self.out_of_budget = true;
                self.open.clear();
            }
        }
        let (s, p) = (setup(rec), point(rec));
        if s == self.baseline {
            // A study of one setup has nothing to compare: its rounds all run (in its budget).
            (self.comparisons.is_empty() && !self.out_of_budget)
                || self.open.iter().any(|(_, op)| *op == p)
        } else {
            self.open.contains(&(s, p))
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
        let design = self.design();
        let comparisons = self
            .comparisons
            .iter()
            .map(|key| {
                let (logs, dropped) = self.pairs(key);
                let i = design.interval(&logs);
                let pct = |x: f64| 100.0 * (x.exp() - 1.0);
                ComparisonState {
                    name: match key.1.as_str() {
                        "" => format!("{} vs {}", key.0, self.baseline),
                        at => format!("{} vs {} at {at}", key.0, self.baseline),
                    },
                    change_pct: i.map(|i| pct(i.mean)),
                    interval: i.map(|i| (pct(i.low), pct(i.high))),
                    used: logs.len(),
                    dropped,
                    open: self.rule.adaptive() && self.needs_more(key),
                }
            })
            .collect();
        let open: BTreeSet<Key> = self
            .comparisons
            .iter()
            .filter(|k| self.needs_more(k))
            .cloned()
            .collect();
        RoundReport {
            round: self.round,
            max_rounds: self.rule.max_rounds,
            metric: self.rule.metric.clone(),
            precision_pct: self.rule.precision_pct.unwrap_or(5.0),
            comparisons,
            elapsed_s: self.started.elapsed().as_secs_f64(),
            budget_s: self.rule.budget_s,
            next_round_s: self
                .cell_mean_s()
                .map(|c| c * Self::cells_in_round(&open) as f64),
        }
    }
}

#[cfg(test)]
#[path = "rounds_tests.rs"]
mod tests;
