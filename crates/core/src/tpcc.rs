//! TPC-C's run options and figures: the mode (`stress` without keying or think time, `spec`
//! with them), the spec's timing constants, what a phase measured besides its events (the
//! server's count of New-Orders, retries per transaction type, the consistency check after
//! it). The rates every surface prints are defined once, in `phase_tpcc`
//! ([`crate::PhaseResult::new_orders_per_min`], [`crate::PhaseResult::server_nopm`],
//! [`crate::PhaseResult::tpmc`]).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// One of TPC-C's consistency conditions (spec clause 3.3.2) as checked on a server.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsistencyCondition {
    /// The spec's number (1 to 12).
    pub number: u32,
    /// The rule, e.g. `W_YTD = sum(D_YTD)`.
    pub rule: String,
    /// The warehouses, districts or customers that break it, with the figures
    /// (`warehouse 1: ...`).
    pub offenders: Vec<String>,
    /// Why the condition was not judged, and how that was seen (condition 11 holds only until
    /// the first Delivery after the load); none: judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_applicable: Option<String>,
}

impl ConsistencyCondition {
    /// True when nothing breaks the rule (a condition not judged breaks nothing).
    pub fn passed(&self) -> bool {
        self.offenders.is_empty()
    }
}

/// `condition 1 (W_YTD = sum(D_YTD)): pass`, `FAIL: ` and the offenders, or `not applicable: `
/// and why: the one line `check tpcc`, `run tpcc --check` and reports print.
impl fmt::Display for ConsistencyCondition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "condition {} ({}): ", self.number, self.rule)?;
        if let Some(why) = &self.not_applicable {
            write!(f, "{NOT_APPLICABLE}: {why}")
        } else if self.passed() {
            f.write_str("pass")
        } else {
            write!(f, "FAIL: {}", self.offenders.join("; "))
        }
    }
}

/// The word a condition's line gives instead of `pass` or `FAIL` when it was not judged.
pub const NOT_APPLICABLE: &str = "not applicable";

/// The five transaction types, in the spec's order, as the engine names their events.
pub const TYPES: [&str; 5] = [
    "new_order",
    "payment",
    "order_status",
    "delivery",
    "stock_level",
];

/// Keying time in seconds per type (spec clause 5.2.5.7), in [`TYPES`]' order.
pub const KEYING_S: [f64; 5] = [18.0, 3.0, 2.0, 2.0, 2.0];

/// Mean think time in seconds per type (clause 5.2.5.7), in [`TYPES`]' order; a think time is
/// drawn from a negative exponential distribution with this mean, truncated at 10 times it.
pub const THINK_MEAN_S: [f64; 5] = [12.0, 12.0, 10.0, 5.0, 5.0];

/// The 90th-percentile response-time limit in seconds per type (clause 5.2.5.4), in
/// [`TYPES`]' order; none for Delivery, whose limit applies to its deferred execution, which
/// qpslab does not defer.
pub const LIMIT_P90_S: [Option<f64>; 5] = [Some(5.0), Some(5.0), Some(5.0), None, Some(20.0)];

/// Terminals per warehouse in spec mode (clause 4.2.2).
pub const TERMINALS_PER_WAREHOUSE: u32 = 10;

/// The most tpmC a warehouse can give with the spec's keying and think times (clause 4.2.2):
/// efficiency is tpmC over this times the warehouses.
pub const TPMC_PER_WAREHOUSE: f64 = 12.86;

/// How TPC-C's transactions are driven.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TpccMode {
    /// Back to back, no keying or think time: NewOrder/min, never tpmC.
    #[default]
    Stress,
    /// Keying and think times per the spec, 10 terminals per warehouse: tpmC.
    Spec,
}

impl TpccMode {
    /// The mode's name, as typed.
    pub fn name(self) -> &'static str {
        match self {
            TpccMode::Stress => "stress",
            TpccMode::Spec => "spec",
        }
    }
}

impl fmt::Display for TpccMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TpccMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "stress" => Ok(TpccMode::Stress),
            "spec" => Ok(TpccMode::Spec),
            _ => Err(format!("must be stress or spec, not '{s}'")),
        }
    }
}

/// `run tpcc`'s own options.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TpccRun {
    /// `--mode` (stress).
    pub mode: TpccMode,
    /// `--think-scale` (1): keying and think times are multiplied by it in spec mode; a
    /// scaled run is not spec-compliant and says so.
    pub think_scale: f64,
    /// `--check` (off): check the consistency conditions after each phase (all twelve;
    /// condition 11 is judged only while no Delivery has run since the load).
    pub check: bool,
}

impl Default for TpccRun {
    fn default() -> Self {
        TpccRun {
            mode: TpccMode::Stress,
            think_scale: 1.0,
            check: false,
        }
    }
}

impl TpccRun {
    /// True for the defaults (stress mode, no think-time scale, no check).
    pub fn is_default(&self) -> bool {
        *self == TpccRun::default()
    }
}

/// What a TPC-C phase measured besides its events and latencies.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TpccFigures {
    /// The mode the phase ran in.
    pub mode: TpccMode,
    /// Keying and think times' scale (1: as the spec says).
    pub think_scale: f64,
    /// Warehouses the phase ran on.
    pub warehouses: u32,
    /// New-Orders the server committed over the measured phase: the change of
    /// `sum(d_next_o_id)` of DISTRICT, read when measurement began and when its last event
    /// ended. A rolled-back New-Order (1%, spec clause 2.4.2.3) undoes its increment, so this
    /// counts committed New-Orders only, as the client's count does.
    pub server_new_orders: u64,
    /// Retried errors (1213 deadlock, 1205 lock wait timeout, 1020) per transaction type and
    /// server code; each retried transaction rolled back and ran again.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub retries: BTreeMap<String, BTreeMap<u16, u64>>,
    /// The consistency conditions checked after the phase (`run tpcc --check`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<Vec<ConsistencyCondition>>,
}

impl TpccFigures {
    /// Whether keying and think times were scaled (spec mode only): the run is then not
    /// spec-compliant.
    pub fn scaled(&self) -> bool {
        self.mode == TpccMode::Spec && (self.think_scale - 1.0).abs() > 1e-12
    }

    /// Retries of transaction type `t`, all codes.
    pub fn retries_of(&self, t: &str) -> u64 {
        self.retries.get(t).map_or(0, |m| m.values().sum())
    }

    /// The conditions that failed, by number (none when no check ran or all passed).
    pub fn failed_conditions(&self) -> Vec<u32> {
        self.check
            .iter()
            .flatten()
            .filter(|c| !c.passed())
            .map(|c| c.number)
            .collect()
    }
}

/// One transaction type's 90th-percentile response time against the spec's limit.
#[derive(Clone, Debug, PartialEq)]
pub struct ResponseLimit {
    /// The type, as in [`TYPES`].
    pub kind: &'static str,
    /// Its 90th percentile, ms (none: no event of it completed).
    pub p90_ms: Option<f64>,
    /// The limit, seconds (none: not judged, Delivery).
    pub limit_s: Option<f64>,
}

impl ResponseLimit {
    /// Whether the percentile is within the limit (none: not judged or nothing measured).
    pub fn passed(&self) -> Option<bool> {
        Some(self.p90_ms? <= self.limit_s? * 1e3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_failed_conditions_and_modes() {
        assert_eq!("spec".parse::<TpccMode>().unwrap(), TpccMode::Spec);
        assert!("fast".parse::<TpccMode>().is_err());
        let mut t = TpccFigures::default();
        t.retries
            .entry("payment".into())
            .or_default()
            .extend([(1213, 2), (1205, 1)]);
        assert_eq!(t.retries_of("payment"), 3);
        assert_eq!(t.retries_of("delivery"), 0);
        assert!(t.failed_conditions().is_empty());
        t.check = Some(vec![
            ConsistencyCondition {
                number: 1,
                rule: "r".into(),
                offenders: vec![],
                not_applicable: None,
            },
            ConsistencyCondition {
                number: 2,
                rule: "r".into(),
                offenders: vec!["w 1".into()],
                not_applicable: None,
            },
            ConsistencyCondition {
                number: 11,
                rule: "r".into(),
                offenders: vec![],
                not_applicable: Some("a Delivery ran".into()),
            },
        ]);
        assert_eq!(
            t.failed_conditions(),
            vec![2],
            "not applicable is no failure"
        );
        let lines: Vec<String> = t.check.iter().flatten().map(|c| c.to_string()).collect();
        assert_eq!(lines[0], "condition 1 (r): pass");
        assert_eq!(lines[1], "condition 2 (r): FAIL: w 1");
        assert_eq!(lines[2], "condition 11 (r): not applicable: a Delivery ran");
        // A check stored before conditions could be not applicable reads back as judged.
        let old: ConsistencyCondition =
            serde_json::from_str(r#"{"number":1,"rule":"r","offenders":[]}"#).unwrap();
        assert_eq!(old, t.check.as_ref().unwrap()[0]);
        let json = serde_json::to_string(&old).unwrap();
        assert!(!json.contains("not_applicable"), "{json}");
    }
}
