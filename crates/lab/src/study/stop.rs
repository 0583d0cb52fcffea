//! When a study stops adding rounds and in what order a round's cells run: the spec's
//! `precision`, `budget`, `min_repeats`, `max_repeats` and `repeats` read into a [`StopRule`],
//! and its `order` into a [`CellOrder`].

use crate::study::spec::Spec;
use qpslab_stats::{LookDesign, LookDesignError, Sequential};

/// Why a spec's `precision`, `budget`, `precision_metric`, `min_repeats`, `max_repeats`,
/// `look_every` or `repeats` make no stopping rule; the message names the key. Always the
/// user's mistake (the study's spec becomes a [`crate::error::SpecError::Value`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StopRuleError {
    /// `precision` is not a percentage (the value as written).
    #[error("precision: expects a percentage such as \"5%\", not {0}")]
    Precision(String),
    /// `budget` is a text that is not a duration.
    #[error("budget: expects a duration (\"10m\", \"90s\"), not {0:?}")]
    BudgetText(String),
    /// `budget` is neither a positive number nor a text (the value as written).
    #[error("budget: expects a duration (\"10m\"), not {0}")]
    Budget(String),
    /// `precision_metric` is not one of [`PRECISION_METRICS`].
    #[error("precision_metric: expects one of {metrics}, not {0:?}", metrics = PRECISION_METRICS.join(", "))]
    Metric(String),
    /// Keys of an adaptive study without `precision` or `budget`.
    #[error("precision_metric, min_repeats, max_repeats and look_every need precision or budget")]
    NotAdaptive,
    /// `repeats` with `precision` or `budget`.
    #[error("repeats = N runs exactly N rounds; with precision or budget, set min_repeats and max_repeats instead")]
    Repeats,
    /// `min_repeats` or `max_repeats` out of range.
    #[error("min_repeats ({min_rounds}) must be 3 or more and max_repeats ({max_rounds}) between it and 1000")]
    Rounds {
        /// `min_repeats` (3 when not given).
        min_rounds: u32,
        /// `max_repeats` (20 when not given).
        max_rounds: u32,
    },
    /// `look_every` past the last round.
    #[error(
        "look_every ({look_every}) is more than max_repeats ({max_rounds}): no look would come"
    )]
    LookPastEnd {
        /// `look_every`.
        look_every: u32,
        /// `max_repeats`.
        max_rounds: u32,
    },
    /// `look_every` makes no design of looks.
    #[error("look_every: {design} (max_repeats {max_rounds})")]
    Looks {
        /// Why.
        design: LookDesignError,
        /// `max_repeats`.
        max_rounds: u32,
    },
}

impl qpslab_core::fault::Blame for StopRuleError {
    /// The user's: the spec is theirs to fix.
    fn fault(&self) -> qpslab_core::fault::Fault {
        qpslab_core::fault::Fault::User
    }
}

/// The order of a round's cells ([`crate::study::expand::round_cells`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CellOrder {
    /// Each point's setups back to back (A1 B1, B2 A2): the sides of a comparison run seconds
    /// apart, at a restart per setup change.
    Points,
    /// Each setup's points in one block (A1 A2, B2 B1): one restart per setup and round; the
    /// order of a study with `storage` setups, whose mounts are not redone per cell.
    Setups,
}

/// The metrics a study's `precision` may be about.
pub const PRECISION_METRICS: [&str; 5] = ["tps", "qps", "p50", "p95", "p99"];

/// When a study stops adding rounds: a fixed count (`repeats = N`, exactly N), or until each
/// comparison's interval is `precision_pct` wide on either side, within `budget_s`, between
/// `min_rounds` and `max_rounds`.
#[derive(Clone, Debug, PartialEq)]
pub struct StopRule {
    /// The target half-width, in percent (`None`: a fixed count of rounds).
    pub precision_pct: Option<f64>,
    /// The metric it is about (one of [`PRECISION_METRICS`]).
    pub metric: String,
    /// Wall time of the whole study, in seconds.
    pub budget_s: Option<f64>,
    /// Rounds before any comparison may stop.
    pub min_rounds: u32,
    /// The most rounds.
    pub max_rounds: u32,
    /// Paired rounds between planned looks (0: a comparison may stop after any round).
    pub look_every: u32,
}

impl StopRule {
    /// Whether rounds depend on what was measured (`precision` or `budget` given).
    pub fn adaptive(&self) -> bool {
        self.precision_pct.is_some() || self.budget_s.is_some()
    }

    /// Whether a higher value of the metric is better (throughput) or worse (latency).
    pub fn higher_is_better(&self) -> bool {
        !matches!(self.metric.as_str(), "p50" | "p95" | "p99")
    }

    /// The rule the study's comparisons are decided by, as its rounds and every report read it.
    pub fn sequential(&self) -> Sequential {
        Sequential {
            precision_pct: self.precision_pct.unwrap_or(DEFAULT_PRECISION_PCT),
            max_rounds: self.max_rounds as usize,
            adaptive: self.adaptive(),
            look_every: self.look_every as usize,
        }
    }
}

/// Precision a study with only a `budget` aims at, in percent.
pub const DEFAULT_PRECISION_PCT: f64 = 5.0;

impl Spec {
    /// The spec's stopping rule; `Err` names the key that is wrong.
    pub fn stop_rule(&self) -> Result<StopRule, StopRuleError> {
        let precision = self.precision.as_ref().map(percent).transpose()?;
        let budget_s = match &self.budget {
            None => None,
            Some(toml::Value::Integer(n)) if *n > 0 => Some(*n as f64),
            Some(toml::Value::Float(f)) if *f > 0.0 && f.is_finite() => Some(*f),
            Some(toml::Value::String(t)) => Some(
                qpslab_core::units::budget_seconds(t)
                    .map_err(|_| StopRuleError::BudgetText(t.clone()))?,
            ),
            Some(v) => return Err(StopRuleError::Budget(v.to_string())),
        };
        let metric = self
            .precision_metric
            .clone()
            .unwrap_or_else(|| "tps".into());
        if !PRECISION_METRICS.contains(&metric.as_str()) {
            return Err(StopRuleError::Metric(metric));
        }
        let adaptive = precision.is_some() || budget_s.is_some();
        let stop_keys = self.precision_metric.is_some()
            || self.min_repeats.is_some()
            || self.max_repeats.is_some()
            || self.look_every.is_some();
        if !adaptive {
            if stop_keys {
                return Err(StopRuleError::NotAdaptive);
            }
            let n = self.defaults.repeats();
            return Ok(StopRule {
                precision_pct: None,
                metric,
                budget_s: None,
                min_rounds: n,
                max_rounds: n,
                look_every: 0,
            });
        }
        if self.defaults.get("repeats").is_some() {
            return Err(StopRuleError::Repeats);
        }
        let min_rounds = self.min_repeats.unwrap_or(3);
        let max_rounds = self.max_repeats.unwrap_or(20);
        if !(3..=1000).contains(&min_rounds) || !(min_rounds..=1000).contains(&max_rounds) {
            return Err(StopRuleError::Rounds {
                min_rounds,
                max_rounds,
            });
        }
        if let Some(l) = self.look_every {
            if l > max_rounds {
                return Err(StopRuleError::LookPastEnd {
                    look_every: l,
                    max_rounds,
                });
            }
            LookDesign::new(0.95, l as usize, max_rounds as usize)
                .map_err(|design| StopRuleError::Looks { design, max_rounds })?;
        }
        let look_every = self.look_every.unwrap_or(0);
        Ok(StopRule {
            precision_pct: Some(precision.unwrap_or(DEFAULT_PRECISION_PCT)),
            metric,
            budget_s,
            min_rounds,
            max_rounds,
            look_every,
        })
    }

    /// The order of a round's cells: as `order` says; by default each point's setups back to
    /// back, unless a setup mounts `storage` (its filesystem is made once per block).
    pub fn order(&self) -> CellOrder {
        match self.order.as_deref() {
            Some("setups") => CellOrder::Setups,
            Some(_) => CellOrder::Points,
            None if self.variant.iter().any(|v| v.storage.is_some())
                || self
                    .factors
                    .values()
                    .flat_map(|l| l.values())
                    .any(|v| v.storage.is_some()) =>
            {
                CellOrder::Setups
            }
            None => CellOrder::Points,
        }
    }

    /// Rounds expanded into cells: every round the study may run.
    pub fn rounds(&self) -> u32 {
        self.stop_rule()
            .map_or_else(|_| self.defaults.repeats(), |r| r.max_rounds)
    }
}

/// `"5%"`, `"2.5 %"`, `5` or `2.5`: a percentage above 0 and at most 100.
fn percent(v: &toml::Value) -> Result<f64, StopRuleError> {
    let p = match v {
        toml::Value::Integer(n) => Some(*n as f64),
        toml::Value::Float(f) => Some(*f),
        toml::Value::String(t) => t.trim().trim_end_matches('%').trim().parse::<f64>().ok(),
        _ => None,
    };
    p.filter(|p| *p > 0.0 && *p <= 100.0)
        .ok_or_else(|| StopRuleError::Precision(v.to_string()))
}
