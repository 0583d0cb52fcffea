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

/// A live action that cannot be read: every variant is the user's mistake.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LiveError {
    /// Not `TIME:ACTION`.
    #[error("expects TIME:ACTION (30s:set innodb_buffer_pool_size=512M), not '{given}'")]
    Syntax {
        /// The text as given.
        given: String,
    },
    /// The time is not one.
    #[error(transparent)]
    Time(#[from] crate::units::UnitError),
    /// `set` without `NAME=VALUE`.
    #[error("`set` takes NAME=VALUE (set innodb_buffer_pool_size=512M), not '{given}'")]
    SetSyntax {
        /// What followed `set`.
        given: String,
    },
    /// `set` of a name that cannot be a server variable.
    #[error("`set`: '{name}' is not a server variable name")]
    VariableName {
        /// The name as given.
        name: String,
    },
    /// `set NAME=` without a value.
    #[error("`set {name}=`: the value is missing")]
    NoValue {
        /// The variable.
        name: String,
    },
    /// `sql` without a statement.
    #[error("`sql` takes a statement (sql FLUSH TABLES)")]
    NoStatement,
    /// `pin` with a rule that is not one.
    #[error("`pin`: {0}")]
    Pin(crate::placement::PinError),
    /// A verb other than `set`, `sql` or `pin`.
    #[error("unknown action '{verb}': use `set NAME=VALUE`, `sql STATEMENT` or `pin CLASS=CPUS`")]
    UnknownAction {
        /// The verb as given.
        verb: String,
    },
}

/// One thing done to the server while a phase runs. Each variant has its own executor in
/// `qpslab_lab::run::live`.
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
    pub fn parse(text: &str) -> Result<Action, LiveError> {
        let text = text.trim();
        let (verb, rest) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
        let rest = rest.trim();
        match verb {
            "set" => {
                let (name, value) = rest.split_once('=').ok_or_else(|| LiveError::SetSyntax {
                    given: rest.to_string(),
                })?;
                let (name, value) = (name.trim(), value.trim());
                if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    return Err(LiveError::VariableName {
                        name: name.to_string(),
                    });
                }
                if value.is_empty() {
                    return Err(LiveError::NoValue {
                        name: name.to_string(),
                    });
                }
                Ok(Action::Set {
                    name: name.to_ascii_lowercase(),
                    value: value.to_string(),
                })
            }
            "sql" if !rest.is_empty() => Ok(Action::Sql {
                statement: rest.to_string(),
            }),
            "sql" => Err(LiveError::NoStatement),
            "pin" => {
                crate::placement::Rule::parse(rest).map_err(LiveError::Pin)?;
                Ok(Action::Pin {
                    rule: rest.to_string(),
                })
            }
            _ => Err(LiveError::UnknownAction {
                verb: verb.to_string(),
            }),
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
    pub fn parse(text: &str) -> Result<LiveAction, LiveError> {
        let (time, action) = text.split_once(':').ok_or_else(|| LiveError::Syntax {
            given: text.to_string(),
        })?;
        Ok(LiveAction {
            at_s: crate::units::offset_seconds(time)?,
            action: Action::parse(action)?,
        })
    }
}

impl fmt::Display for LiveAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}s:{}", self.at_s, self.action)
    }
}

/// A value as an SQL literal: numbers as they are, sizes (`512M`, `1G`) in bytes, keywords
/// such as `ON` or `DEFAULT` as they are, anything else quoted.
pub fn sql_literal(value: &str) -> String {
    let v = value.trim();
    if v.parse::<f64>().is_ok() {
        return v.to_string();
    }
    if let Ok(bytes) = crate::units::cnf_size(v) {
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
    fn the_time_is_read_as_units_offset_seconds_reads_it() {
        // Every spelling is tested with `crate::units::offset_seconds`.
        let at = |t: &str| LiveAction::parse(&format!("{t}:sql DO 1")).map(|a| a.at_s);
        assert_eq!(at("1m30s"), Ok(90.0));
        assert_eq!(
            at("soon").unwrap_err().to_string(),
            "'soon' is not a time (30, 30s, 1m30s, 500ms)"
        );
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
        let e = |t: &str| LiveAction::parse(t).unwrap_err().to_string();
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
