//! A replay of a captured server log (`qpslab replay`): what was replayed and how (stored in the
//! run's plan), and what happened to each class of statements (stored with the phase).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// How the logged statements are spread over our sessions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReplayMode {
    /// Each original connection's statements in order on one session of ours, with the log's
    /// timing scaled by the speed.
    Sessions,
    /// Every statement as fast as the sessions can take them from one shared cursor.
    Max,
}

impl ReplayMode {
    /// The `--mode` name.
    pub fn name(self) -> &'static str {
        match self {
            ReplayMode::Sessions => "sessions",
            ReplayMode::Max => "max",
        }
    }
}

impl fmt::Display for ReplayMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a replay ran: the log (identified by its content) and the options.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplayPlan {
    /// The log file as given.
    pub log: String,
    /// `slow` or `general`.
    pub log_type: String,
    /// The log's size in bytes.
    pub bytes: u64,
    /// SHA-256 of the log's content (hex): two replays of one log share it.
    pub sha256: String,
    /// Sessions or max.
    pub mode: ReplayMode,
    /// `--speed`: 1 keeps the log's timing, 2 twice as fast, 0 as fast as the order allows
    /// (sessions mode).
    pub speed: f64,
    /// `--threads`: the session cap (sessions mode) or the session count (max mode).
    pub threads: Option<u32>,
    /// `--database`: every statement runs there (none: the log's databases).
    pub database: Option<String>,
    /// `--read-only`: only reads and session statements run.
    pub read_only: bool,
    /// `--allow-admin`: server-level statements run (SHUTDOWN, SET GLOBAL, GRANT...).
    #[serde(default)]
    pub allow_admin: bool,
    /// `--allow-destructive`: DROP/TRUNCATE of databases and tables run.
    #[serde(default)]
    pub allow_destructive: bool,
    /// Statements the log holds that were to be replayed.
    pub statements: u64,
}

impl ReplayPlan {
    /// True when the log's timing sets the pace (sessions mode at a speed above 0), so the
    /// replay's throughput is the log's, not the server's limit.
    pub fn keeps_log_pace(&self) -> bool {
        self.mode == ReplayMode::Sessions && self.speed > 0.0
    }
}

/// What happened to one class of statements (one fingerprint).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClassOutcome {
    /// Short id (`c1`, `c2`... by first appearance in the log), as in the statement latencies.
    pub id: String,
    /// The class's fingerprint.
    pub fingerprint: String,
    /// Statements of the class executed (errors included).
    pub executed: u64,
    /// Failed statements by server error code (2013 for a lost connection).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub errors: BTreeMap<u16, u64>,
    /// Statements the replay's mode did not run (see `skip_reason`).
    #[serde(default, skip_serializing_if = "is_zero", alias = "skipped_writes")]
    pub skipped: u64,
    /// Why they did not run, and the flag that would run them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip_reason: Option<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What a replay did beyond the phase's numbers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReplayOutcome {
    /// Per class, in the order of first appearance.
    pub classes: Vec<ClassOutcome>,
    /// Admin commands and other entries that are not statements, skipped.
    pub skipped_admin: u64,
    /// Entries the log reader could not parse, skipped.
    pub skipped_unparsed: u64,
    /// Original connections in the log.
    pub connections: u64,
    /// Whether every statement was started (false when interrupted).
    pub complete: bool,
    /// Why the replay ended before its last statement (`interrupted`, the server gone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_early: Option<String>,
}

impl ReplayOutcome {
    /// Statements the replay's mode did not run.
    pub fn skipped(&self) -> u64 {
        self.classes.iter().map(|c| c.skipped).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcome_round_trips_and_sums_skips() {
        let mut errors = BTreeMap::new();
        errors.insert(1146, 12);
        let o = ReplayOutcome {
            classes: vec![
                ClassOutcome {
                    id: "c1".into(),
                    fingerprint: "select * from t where id = ?".into(),
                    executed: 20,
                    errors,
                    skipped: 0,
                    skip_reason: None,
                },
                ClassOutcome {
                    id: "c2".into(),
                    fingerprint: "update t set v = ? where id = ?".into(),
                    executed: 0,
                    errors: BTreeMap::new(),
                    skipped: 3,
                    skip_reason: Some("writes: not run by --read-only".into()),
                },
            ],
            skipped_admin: 1,
            ..Default::default()
        };
        assert_eq!(o.skipped(), 3);
        let json = serde_json::to_string(&o).unwrap();
        assert!(json.contains("\"1146\":12"), "{json}");
        assert_eq!(serde_json::from_str::<ReplayOutcome>(&json).unwrap(), o);
    }

    #[test]
    fn runs_stored_before_skip_reasons_read_their_skipped_writes() {
        let old = r#"{"id":"c1","fingerprint":"update t","executed":0,"skipped_writes":4}"#;
        let c: ClassOutcome = serde_json::from_str(old).unwrap();
        assert_eq!((c.skipped, c.skip_reason), (4, None));
    }
}
