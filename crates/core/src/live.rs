//! Live actions inside one run (`qpslab run --at TIME:ACTION`): what to do to the server at a
//! time of each measured phase, what happened when it was done, and how the throughput before
//! compared with the throughput after ([`judge_actions`]).
//!
//! ```
//! use qpslab_core::live::{Action, LiveAction};
//! let a = LiveAction::parse("1m30s:set innodb_buffer_pool_size=512M").unwrap();
//! assert_eq!(a.at_s, 90.0);
//! assert_eq!(a.action.sql().unwrap(), "SET GLOBAL innodb_buffer_pool_size = 536870912");
//! assert!(matches!(LiveAction::parse("5:sql FLUSH TABLES").unwrap().action, Action::Sql { .. }));
//! ```

use serde::{Deserialize, Serialize};
use std::fmt;

mod judge;
pub use judge::{judge_actions, MIN_INTERVALS};

/// The settle window after an action unless `--settle-after` says otherwise: the intervals in
/// it belong to neither segment.
pub const DEFAULT_SETTLE_AFTER_S: f64 = 5.0;

/// One thing done to the server while a phase runs. Each variant has its own executor in
/// `qpslab_lab::live`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Action {
    /// `set NAME=VALUE`: `SET GLOBAL NAME = VALUE`, restored at the end of the phase.
    Set {
        /// The global variable.
        name: String,
        /// The value as typed (`512M`, `ON`, `8`).
        value: String,
    },
    /// `sql STATEMENT`: the statement as written.
    Sql {
        /// The statement.
        statement: String,
    },
    /// `pin CLASS=CPUS[,nice=N]`: the server's threads of a class placed on CPUs (as `--pin`),
    /// given back the server's own CPUs at the end of the phase.
    Pin {
        /// The placement rule as typed (checked by [`crate::placement::Rule::parse`]).
        rule: String,
    },
}

impl Action {
    /// Reads `set NAME=VALUE` or `sql STATEMENT`.
    pub fn parse(text: &str) -> Result<Action, String> {
        let text = text.trim();
        let (verb, rest) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
        let rest = rest.trim();
        match verb {
            "set" => {
                let (name, value) = rest.split_once('=').ok_or_else(|| {
                    format!(
                        "`set` takes NAME=VALUE (set innodb_buffer_pool_size=512M), not '{rest}'"
                    )
                })?;
                let (name, value) = (name.trim(), value.trim());
                if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    return Err(format!("`set`: '{name}' is not a server variable name"));
                }
                if value.is_empty() {
                    return Err(format!("`set {name}=`: the value is missing"));
                }
                Ok(Action::Set {
                    name: name.to_ascii_lowercase(),
                    value: value.to_string(),
                })
            }
            "sql" if !rest.is_empty() => Ok(Action::Sql {
                statement: rest.to_string(),
            }),
            "sql" => Err("`sql` takes a statement (sql FLUSH TABLES)".into()),
            "pin" => {
                crate::placement::Rule::parse(rest).map_err(|e| format!("`pin`: {e}"))?;
                Ok(Action::Pin {
                    rule: rest.to_string(),
                })
            }
            _ => Err(format!(
                "unknown action '{verb}': use `set NAME=VALUE`, `sql STATEMENT` or `pin CLASS=CPUS`"
            )),
        }
    }

    /// The statement that carries the action out (none for `pin`, which is no SQL).
    pub fn sql(&self) -> Option<String> {
        match self {
            Action::Set { name, value } => {
                Some(format!("SET GLOBAL {name} = {}", sql_literal(value)))
            }
            Action::Sql { statement } => Some(statement.clone()),
            Action::Pin { .. } => None,
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Set { name, value } => write!(f, "set {name}={value}"),
            Action::Sql { statement } => write!(f, "sql {statement}"),
            Action::Pin { rule } => write!(f, "pin {rule}"),
        }
    }
}

/// An action and its time, in seconds from the start of the measured phase.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LiveAction {
    /// Seconds from the start of the measured phase (after warm-up).
    pub at_s: f64,
    /// What to do.
    pub action: Action,
}

impl LiveAction {
    /// Reads `TIME:ACTION`: `30s:set innodb_buffer_pool_size=512M`, `1m30s:sql FLUSH TABLES`.
    pub fn parse(text: &str) -> Result<LiveAction, String> {
        let (time, action) = text.split_once(':').ok_or_else(|| {
            format!("expects TIME:ACTION (30s:set innodb_buffer_pool_size=512M), not '{text}'")
        })?;
        Ok(LiveAction {
            at_s: parse_time(time)?,
            action: Action::parse(action)?,
        })
    }
}

impl fmt::Display for LiveAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}s:{}", self.at_s, self.action)
    }
}

/// `30`, `30s`, `1m30s`, `500ms`, `0.5`: seconds from zero.
fn parse_time(t: &str) -> Result<f64, String> {
    let t = t.trim();
    let bad = || format!("'{t}' is not a time (30, 30s, 1m30s, 500ms)");
    let mut total = 0.0;
    let mut rest = t;
    if let Ok(s) = t.parse::<f64>() {
        return (s.is_finite() && s >= 0.0).then_some(s).ok_or_else(bad);
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(bad)?;
        let n: f64 = rest[..digits].parse().map_err(|_| bad())?;
        let unit_len = rest[digits..]
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len() - digits);
        let scale = match &rest[digits..digits + unit_len] {
            "ms" => 0.001,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return Err(bad()),
        };
        total += n * scale;
        rest = &rest[digits + unit_len..];
    }
    (!t.is_empty() && total.is_finite())
        .then_some(total)
        .ok_or_else(bad)
}

/// A value as an SQL literal: numbers as they are, sizes (`512M`, `1G`) in bytes, keywords
/// such as `ON` or `DEFAULT` as they are, anything else quoted.
pub fn sql_literal(value: &str) -> String {
    let v = value.trim();
    if v.parse::<f64>().is_ok() {
        return v.to_string();
    }
    if let Some(bytes) = size_bytes(v) {
        return bytes.to_string();
    }
    let keyword = ["ON", "OFF", "DEFAULT", "TRUE", "FALSE"];
    if keyword.iter().any(|k| k.eq_ignore_ascii_case(v)) {
        return v.to_ascii_uppercase();
    }
    let quoted = v.starts_with('\'') && v.ends_with('\'') && v.len() >= 2;
    if quoted {
        return v.to_string();
    }
    format!("'{}'", v.replace('\\', "\\\\").replace('\'', "''"))
}

/// `512M` → 536870912 (K, M, G, T, in powers of 1024, as my.cnf reads them).
fn size_bytes(v: &str) -> Option<u64> {
    let last = v.char_indices().next_back()?.0;
    let (num, unit) = v.split_at(last);
    let shift = match unit.to_ascii_uppercase().as_str() {
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => return None,
    };
    num.parse::<u64>().ok()?.checked_mul(1u64 << shift)
}

/// Before against after on one per-interval metric.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SegmentChange {
    /// The mean before the action.
    pub before: f64,
    /// The mean after the action and its settle window.
    pub after: f64,
    /// `after / before − 1`, in percent.
    pub change_pct: f64,
    /// The 95% interval of the change, in percent.
    pub ci_low: f64,
    /// The 95% interval of the change, in percent.
    pub ci_high: f64,
    /// Whether the interval excludes no change.
    pub significant: bool,
}

/// What an action did and, once judged, how the phase changed around it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ActionRecord {
    /// `set innodb_buffer_pool_size=512M`.
    pub action: String,
    /// When it was due, seconds from the start of the measured phase.
    pub at_s: f64,
    /// When it actually started.
    pub started_s: f64,
    /// `ok`, or the server's error message.
    pub outcome: String,
    /// How long the statement took.
    pub took_ms: f64,
    /// What `set` was put back to when the phase ended: `innodb_buffer_pool_size=8388608 ok`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restored: Option<String>,
    /// Per-interval TPS before and after (none: not judged).
    #[serde(default, skip_serializing_if = "Option::is_none", flatten)]
    pub tps: Option<SegmentChange>,
    /// Per-interval p95 latency before and after, in ms (none: not judged or no p95).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p95_ms: Option<SegmentChange>,
    /// The verdict in words: `gain`, `loss`, `no significant change`, `too short to judge`.
    #[serde(default)]
    pub judgment: String,
}

impl ActionRecord {
    /// Whether the action's statement succeeded.
    pub fn ok(&self) -> bool {
        self.outcome == "ok" || self.outcome.starts_with("ok (")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_in_every_spelling() {
        for (t, s) in [
            ("30", 30.0),
            ("30s", 30.0),
            ("1m30s", 90.0),
            ("500ms", 0.5),
            ("0.5", 0.5),
            ("1h", 3600.0),
        ] {
            assert_eq!(parse_time(t).unwrap(), s, "{t}");
        }
        for bad in ["", "soon", "-1", "5x", "s", "1m30"] {
            assert!(parse_time(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn actions_and_their_statements() {
        let a = LiveAction::parse("8s:set innodb_buffer_pool_size=512M").unwrap();
        assert_eq!(a.at_s, 8.0);
        assert_eq!(a.action.to_string(), "set innodb_buffer_pool_size=512M");
        assert_eq!(
            a.action.sql().unwrap(),
            "SET GLOBAL innodb_buffer_pool_size = 536870912"
        );
        let s = LiveAction::parse("2:sql SELECT 1: two").unwrap();
        assert_eq!(s.action.sql().unwrap(), "SELECT 1: two");
        let p = LiveAction::parse("10s:pin thread/innodb/page_cleaner_thread=0").unwrap();
        assert_eq!(
            p.action.to_string(),
            "pin thread/innodb/page_cleaner_thread=0"
        );
        assert!(p.action.sql().is_none());
        assert!(LiveAction::parse("10s:pin page_cleaner=0").is_err());
        assert!(LiveAction::parse("10s:pin thread/sql/one_connection").is_err());
        assert_eq!(sql_literal("ON"), "ON");
        assert_eq!(sql_literal("0.5"), "0.5");
        assert_eq!(sql_literal("it's"), "'it''s'");
        assert_eq!(sql_literal("'x'"), "'x'");
        assert_eq!(sql_literal("2k"), "2048");
        assert_eq!(sql_literal("é"), "'é'");
        assert_eq!(sql_literal("1é"), "'1é'");
    }

    #[test]
    fn bad_actions_say_why() {
        let e = |t: &str| LiveAction::parse(t).unwrap_err();
        assert!(e("set x=1").contains("TIME:ACTION"), "{}", e("set x=1"));
        assert!(e("5:set innodb_buffer_pool_size").contains("NAME=VALUE"));
        assert!(e("5:set a b=1").contains("not a server variable"));
        assert!(e("5:set x=").contains("value is missing"));
        assert!(e("5:pin x=1").starts_with("`pin`: "), "{}", e("5:pin x=1"));
        assert!(e("5:nap 3").contains("unknown action 'nap'"));
        assert!(e("5:sql").contains("takes a statement"));
        assert!(e("later:sql SELECT 1").contains("not a time"));
    }

    #[test]
    fn a_record_round_trips_with_its_judgment_flat() {
        let r = ActionRecord {
            action: "set a=1".into(),
            at_s: 8.0,
            started_s: 8.01,
            outcome: "ok".into(),
            took_ms: 3.0,
            restored: None,
            tps: Some(SegmentChange {
                before: 100.0,
                after: 200.0,
                change_pct: 100.0,
                ci_low: 80.0,
                ci_high: 120.0,
                significant: true,
            }),
            p95_ms: None,
            judgment: "gain".into(),
        };
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["change_pct"], 100.0);
        assert_eq!(v["significant"], true);
        assert_eq!(serde_json::from_value::<ActionRecord>(v).unwrap(), r);
    }
}
