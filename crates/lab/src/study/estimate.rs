//! What `lab plan` says a study will buy before it runs: the precision its budget (or its
//! `repeats`) reaches, and the budget its precision needs.
//!
//! Both come from the spread of the round-paired ratios (B/A of each round) of an earlier run
//! of the same setups in the store: a study of the same spec first, else one whose measured
//! cells have the same labels (setup and point of the sweep), the newest first. `lab plan
//! --pilot` stores such a run first ([`pilot`]: the spec's three first rounds, under its own
//! name). With neither the estimate says so ([`Estimate::source`] is `None`); it never
//! guesses a spread.
//!
//! A round's time is its cells' at the pace the source's cells took (server start-ups and
//! loads included), the budget's rounds those that fit in it; a comparison's rounds are those
//! at which the interval the study will compute (anytime-valid when it stops when precise,
//! the paired t interval for `repeats = N`) would be within the precision if the spread stays
//! as it was.

use super::rounds::{Key, Spread};
use super::{Loaded, RoundTracker};
use crate::error::SpecError;
use crate::study::spec;
use crate::study::stop::StopRule;
use qpslab_core::units::duration_text;
use qpslab_stats::{t_quantile, AnytimeDesign, MIN_ROUNDS};
use qpslab_store::{CellRecord, CellStatus, Store, StudyRecord};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// The most rounds an estimate looks for the precision in.
const MOST_ROUNDS: usize = 1000;

/// How a source study matches the planned one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Matched {
    /// It was run from the same spec.
    SameSpec,
    /// Its measured cells have the planned cells' labels (another spec of the same setups,
    /// e.g. the pilot).
    SameCells,
}

/// The earlier run an estimate comes from.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Source {
    /// The study's name.
    pub study: String,
    /// How it matches.
    pub matched: Matched,
    /// Its measured cells used.
    pub cells: usize,
    /// Seconds a cell took there on average, start-ups and loads included.
    pub cell_s: f64,
}

/// One comparison's estimate.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ComparisonEstimate {
    /// `tuned vs stock at threads=4`.
    pub name: String,
    /// Rounds the source paired.
    pub rounds_seen: usize,
    /// How much one round's ratio varied there (standard deviation, percent).
    pub spread_pct: Option<f64>,
    /// The half-width the study's rounds reach (those the budget pays for, or `repeats`).
    pub reached_pct: Option<f64>,
    /// Rounds that reach the precision (`None`: more than 1000).
    pub rounds_needed: Option<usize>,
}

/// What `lab plan` estimates of a study.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Estimate {
    /// Where the spread comes from; `None`: no earlier run of these setups.
    pub source: Option<Source>,
    /// The metric the precision is about.
    pub metric: String,
    /// The target half-width, percent (5 where the spec names none).
    pub precision_pct: f64,
    /// The study's budget, seconds.
    pub budget_s: Option<f64>,
    /// Whether the study stops when precise (else it runs `repeats` rounds).
    pub adaptive: bool,
    /// The most rounds (`max_repeats`, or `repeats`).
    pub max_rounds: usize,
    /// The fewest rounds (`min_repeats`, or `repeats`).
    pub min_rounds: usize,
    /// The rounds after which a study with planned looks (`look_every`) decides.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub looks: Option<Vec<usize>>,
    /// The study's setups (one: nothing to compare, nothing to estimate).
    pub setups: usize,
    /// Seconds a round of every comparison takes.
    pub round_s: Option<f64>,
    /// Rounds the study runs at most: those the budget pays for (within `max_repeats`), or
    /// `repeats`.
    pub rounds: Option<usize>,
    /// Every comparison.
    pub comparisons: Vec<ComparisonEstimate>,
    /// Time every comparison needs to reach the precision, each stopping when it does.
    pub budget_needed_s: Option<f64>,
}

/// Why `lab plan` has no estimate: the spec's stopping rule is wrong (the user's), or the store
/// could not be read. The message is the cause's own.
#[derive(Debug, thiserror::Error)]
pub enum EstimateError {
    /// The spec's stopping rule.
    #[error(transparent)]
    StopRule(#[from] crate::study::stop::StopRuleError),
    /// Reading the earlier studies.
    #[error(transparent)]
    Store(#[from] qpslab_store::Error),
}

impl qpslab_core::fault::Blame for EstimateError {
    /// The stopping rule's or the store's.
    fn fault(&self) -> qpslab_core::fault::Fault {
        match self {
            EstimateError::StopRule(e) => e.fault(),
            EstimateError::Store(e) => e.fault(),
        }
    }
}

/// The estimate of `loaded` from `store` (none: no store yet; `prefer`: a study to take first when it
/// matches, e.g. the pilot just run).
pub fn estimate(
    store: Option<&Store>,
    loaded: &Loaded,
    prefer: Option<&str>,
) -> Result<Estimate, EstimateError> {
    let rule = loaded.spec.stop_rule()?;
    let mut e = Estimate {
        source: None,
        metric: rule.metric.clone(),
        precision_pct: rule.precision_pct.unwrap_or(5.0),
        budget_s: rule.budget_s,
        adaptive: rule.adaptive(),
        max_rounds: rule.max_rounds as usize,
        min_rounds: rule.min_rounds as usize,
        looks: rule.sequential().looks().map(|d| d.looks()),
        setups: loaded.expanded.setups.len(),
        round_s: None,
        rounds: (!rule.adaptive()).then_some(rule.max_rounds as usize),
        comparisons: Vec::new(),
        budget_needed_s: None,
    };
    let Some(store) = store.filter(|_| e.setups > 1) else {
        return Ok(e);
    };
    let Some((study, matched, records)) = find_source(store, loaded, prefer)? else {
        return Ok(e);
    };
    let phases: BTreeMap<_, _> = store
        .cell_figures(study.id)?
        .into_iter()
        .filter_map(|f| Some((f.cell.id, f.phase?)))
        .collect();
    let mut tracker = RoundTracker::new(&rule, &records);
    for rec in &records {
        if let Some(phase) = phases.get(&rec.id) {
            let seconds = match (rec.started_at, rec.finished_at) {
                (Some(s), Some(f)) if f >= s => f - s,
                _ => 0.0,
            };
            tracker.record_earlier(rec, phase, seconds);
        }
    }
    let cell_s = tracker.cell_mean_s().unwrap_or(0.0);
    e.source = Some(Source {
        study: study.name,
        matched,
        cells: records.len(),
        cell_s,
    });
    let spreads = tracker.spreads();
    let all: BTreeSet<Key> = spreads.iter().map(|s| s.key.clone()).collect();
    let round_s = cell_s * RoundTracker::cells_in_round(&all) as f64;
    e.round_s = Some(round_s);
    if rule.adaptive() {
        let max = rule.max_rounds as usize;
        e.rounds = Some(match rule.budget_s {
            Some(b) if round_s > 0.0 => ((b / round_s).floor() as usize).min(max),
            _ => max,
        });
    }
    let target = (1.0 + e.precision_pct / 100.0).ln();
    let mut needed: Vec<(Option<usize>, Key)> = Vec::new();
    for s in &spreads {
        let n = s.sd.and_then(|sd| rounds_needed(&rule, sd, target));
        needed.push((n, s.key.clone()));
        e.comparisons.push(comparison(&rule, s, e.rounds, n));
    }
    e.budget_needed_s = budget_needed(&needed, cell_s);
    Ok(e)
}

/// One comparison's estimate from its spread.
fn comparison(
    rule: &StopRule,
    s: &Spread,
    rounds: Option<usize>,
    needed: Option<usize>,
) -> ComparisonEstimate {
    let reached = match (s.sd, rounds) {
        (Some(sd), Some(n)) if n >= MIN_ROUNDS => Some(pct(half_width(rule, sd, n))),
        _ => None,
    };
    ComparisonEstimate {
        name: s.name.clone(),
        rounds_seen: s.used,
        spread_pct: s.sd.map(pct),
        reached_pct: reached,
        rounds_needed: needed,
    }
}

/// The half-width on the log scale after `n` rounds of spread `sd`, by the interval the study
/// computes: anytime-valid when it stops when precise (at the last look, with planned
/// looks), paired t for `repeats = N`.
fn half_width(rule: &StopRule, sd: f64, n: usize) -> f64 {
    // With planned looks, the interval is the last look's.
    if let Some(d) = rule.sequential().looks() {
        return d
            .last_look(n)
            .map_or(f64::INFINITY, |l| d.multiplier(l) * sd / (l as f64).sqrt());
    }
    let k = if rule.adaptive() {
        AnytimeDesign::new(0.95, rule.max_rounds as usize).multiplier(n)
    } else {
        t_quantile(0.975, (n - 1) as f64)
    };
    k * sd / (n as f64).sqrt()
}

/// Rounds at which the half-width of spread `sd` is `target` or less (log scale).
fn rounds_needed(rule: &StopRule, sd: f64, target: f64) -> Option<usize> {
    (MIN_ROUNDS..=MOST_ROUNDS).find(|&n| half_width(rule, sd, n) <= target)
}

/// Seconds until every comparison has the rounds it needs, each stopping when it does: round
/// by round the cells of those still needing it. `None` if one never gets there.
fn budget_needed(needed: &[(Option<usize>, Key)], cell_s: f64) -> Option<f64> {
    let rounds: Vec<usize> = needed.iter().map(|(n, _)| *n).collect::<Option<_>>()?;
    let most = rounds.iter().copied().max()?;
    Some(
        (1..=most)
            .map(|j| {
                let open: BTreeSet<Key> = needed
                    .iter()
                    .filter(|(n, _)| n.is_some_and(|n| n >= j))
                    .map(|(_, k)| k.clone())
                    .collect();
                cell_s * RoundTracker::cells_in_round(&open) as f64
            })
            .sum(),
    )
}

fn pct(log: f64) -> f64 {
    100.0 * (log.exp() - 1.0)
}

/// A cell's label without its round (`tuned/threads=4`).
fn setup_label(c: &qpslab_core::Cell) -> &str {
    let round = format!("/r{}", c.repeat);
    c.label.strip_suffix(round.as_str()).unwrap_or(&c.label)
}

/// The newest study of the same spec, else of the same cells, with its measured cells of the
/// planned setups, the baseline's first (so the tracker takes the same baseline).
fn find_source(
    store: &Store,
    loaded: &Loaded,
    prefer: Option<&str>,
) -> Result<Option<(StudyRecord, Matched, Vec<CellRecord>)>, qpslab_store::Error> {
    let cells = &loaded.expanded.cells;
    let Some(baseline) = cells.first().map(|c| c.cell.variant.clone()) else {
        return Ok(None);
    };
    let ours: BTreeSet<&str> = cells.iter().map(|c| setup_label(&c.cell)).collect();
    let hash = spec::spec_hash(&loaded.spec);
    let mut studies = store.list_studies()?;
    // The preferred study first, then the same spec, then the newest.
    studies.sort_by(|a, b| {
        let key = |s: &StudyRecord| {
            (
                Some(s.name.as_str()) != prefer,
                s.spec_hash != hash,
                -s.created_at,
            )
        };
        key(a)
            .partial_cmp(&key(b))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    for s in studies {
        let mut done: Vec<CellRecord> = store
            .study_cells(s.id)?
            .into_iter()
            .filter(|c| c.status == CellStatus::Done && ours.contains(setup_label(&c.cell)))
            .collect();
        let seen: BTreeSet<&str> = done.iter().map(|c| setup_label(&c.cell)).collect();
        let matched = if s.spec_hash == hash {
            Matched::SameSpec
        } else if seen == ours {
            Matched::SameCells
        } else {
            continue;
        };
        if done.is_empty() {
            continue;
        }
        done.sort_by_key(|c| c.cell.variant != baseline);
        return Ok(Some((s, matched, done)));
    }
    Ok(None)
}

/// The pilot of `loaded`: its three first rounds as a study of its own, named `NAME-pilot`,
/// so `lab plan --pilot` can run it and estimate from it. Three is the fewest paired rounds
/// an interval (and so a spread) is computed from. `dir` is the spec's folder (its relative
/// paths are from there).
pub fn pilot(loaded: &Loaded, dir: &std::path::Path) -> Result<Loaded, SpecError> {
    let file = format!("{} (pilot)", loaded.spec.name);
    let bad = |message: String| SpecError::Value {
        file: file.clone(),
        message,
    };
    let mut doc: toml::Table = loaded.text.parse().map_err(|e| bad(format!("{e}")))?;
    doc.insert("name".into(), pilot_name(&loaded.spec.name).into());
    for key in [
        "precision",
        "precision_metric",
        "budget",
        "min_repeats",
        "max_repeats",
        "look_every",
    ] {
        doc.remove(key);
    }
    let defaults = doc
        .entry("defaults")
        .or_insert_with(|| toml::Table::new().into());
    if let Some(d) = defaults.as_table_mut() {
        d.insert("repeats".into(), toml::Value::Integer(MIN_ROUNDS as i64));
    }
    let text = toml::to_string(&doc).map_err(|e| bad(e.to_string()))?;
    let spec = crate::options::with_base_dir(dir, || spec::parse(&file, &text))?;
    let expanded = crate::study::expand::expand(&file, &spec)?;
    Ok(Loaded {
        spec,
        text,
        expanded,
    })
}

/// `NAME-pilot`.
pub fn pilot_name(study: &str) -> String {
    format!("{study}-pilot")
}

impl Estimate {
    /// The estimate as `lab plan` prints it, one line each.
    pub fn text(&self) -> String {
        use std::fmt::Write;
        let mut out = match (self.adaptive, self.budget_s) {
            (true, Some(b)) => format!(
                "rounds: {} to {}, each comparison until its {} interval is within ±{}%, \
                 within a budget of {}\n",
                self.min_rounds,
                self.max_rounds,
                self.metric,
                self.precision_pct,
                duration_text(b)
            ),
            (true, None) => format!(
                "rounds: {} to {}, each comparison until its {} interval is within ±{}%\n",
                self.min_rounds, self.max_rounds, self.metric, self.precision_pct
            ),
            (false, _) => format!("rounds: {} (repeats)\n", self.max_rounds),
        };
        if let Some(looks) = &self.looks {
            let list: Vec<String> = looks.iter().map(usize::to_string).collect();
            let _ = writeln!(
                out,
                "looks: decided only after rounds {} (repeated confidence intervals)",
                list.join(", ")
            );
        }
        if self.setups < 2 {
            out.push_str("estimate: none; one setup, nothing to compare\n");
            return out;
        }
        let Some(src) = &self.source else {
            out.push_str(
                "estimate: none; no earlier run of these setups is in the store \
                 (lab plan --pilot runs three rounds first)\n",
            );
            return out;
        };
        let how = match src.matched {
            Matched::SameSpec => "the same spec",
            Matched::SameCells => "the same setups",
        };
        let _ = writeln!(
            out,
            "estimate from study '{}' ({how}, {} cells, ~{} a cell):",
            src.study,
            src.cells,
            duration_text(src.cell_s)
        );
        let rounds = match (self.adaptive, self.rounds, self.budget_s) {
            (true, Some(n), Some(b)) => format!(
                "{n} round(s) (within the budget of {} and max_repeats {})",
                duration_text(b),
                self.max_rounds
            ),
            (true, Some(n), None) => format!("{n} round(s) (max_repeats)"),
            (_, Some(n), _) => format!("repeats = {n}"),
            _ => String::new(),
        };
        let p = self.precision_pct;
        for c in &self.comparisons {
            let spread = match c.spread_pct {
                Some(s) => format!("a round varies ±{s:.1}%"),
                None => {
                    let _ = writeln!(
                        out,
                        "   {}: {} paired round(s), too few for a spread",
                        c.name, c.rounds_seen
                    );
                    continue;
                }
            };
            let reached = match c.reached_pct {
                Some(r) => format!("; {rounds} reach ±{r:.1}%"),
                None => format!("; {rounds}: too few for an interval"),
            };
            let needed = match c.rounds_needed {
                Some(n) if self.adaptive && n > self.max_rounds => {
                    format!("; ±{p}% needs {n} round(s), more than max_repeats")
                }
                Some(n) => format!("; ±{p}% needs {n} round(s)"),
                None => format!("; ±{p}% needs more than {MOST_ROUNDS} rounds"),
            };
            let _ = writeln!(out, "   {}: {spread}{reached}{needed}", c.name);
        }
        if let Some(s) = self.budget_needed_s {
            let _ = writeln!(
                out,
                "   every comparison at ±{p}%: a budget of ~{}",
                duration_text(s)
            );
        }
        out
    }
}

#[cfg(test)]
#[path = "estimate_tests.rs"]
mod tests;
