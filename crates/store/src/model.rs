//! The values the store takes and gives back.

use qpslab_core::env::{HostFacts, ServerInfo};
use qpslab_core::plan::RunPlan;
use qpslab_core::result::PhaseResult;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use std::time::{SystemTime, UNIX_EPOCH};

/// Seconds since the Unix epoch (UTC). An `f64` keeps microseconds for centuries and survives
/// SQLite's REAL and JSON unchanged.
pub type UnixSeconds = f64;

/// The store's id of a run (its `runs.id`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RunId(pub i64);

impl fmt::Display for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Where a run stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Phases are still being recorded (or the process died before finishing it).
    Running,
    /// Every planned phase ran.
    Completed,
    /// A phase failed; the phases before it are kept.
    Failed,
    /// The user stopped it (Ctrl-C).
    Interrupted,
}

impl RunStatus {
    /// The word stored in `runs.status`.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Completed => "completed",
            RunStatus::Failed => "failed",
            RunStatus::Interrupted => "interrupted",
        }
    }
}

impl fmt::Display for RunStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A status word that is not one of its enum's (`RunStatus`, `CellStatus`, ...): read back from
/// a store, a damaged row ([`crate::Error::Corrupt`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {kind} '{word}'")]
pub struct UnknownStatus {
    /// What the word names: `run status`, or the enum's name (`CellStatus`).
    pub kind: &'static str,
    /// The word as given.
    pub word: String,
}

impl FromStr for RunStatus {
    type Err = UnknownStatus;
    fn from_str(s: &str) -> Result<Self, UnknownStatus> {
        Ok(match s {
            "running" => RunStatus::Running,
            "completed" => RunStatus::Completed,
            "failed" => RunStatus::Failed,
            "interrupted" => RunStatus::Interrupted,
            _ => {
                return Err(UnknownStatus {
                    kind: "run status",
                    word: s.to_string(),
                })
            }
        })
    }
}

/// What describes a run as a whole; written with its first phase.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunMeta {
    /// A unique id chosen by the caller ([`new_run_uuid`]); phases with the same uuid belong to
    /// the same run.
    pub uuid: String,
    /// When the run began.
    pub started_at: UnixSeconds,
    /// The command line, without secrets. URL passwords (`scheme://user:pass@`) are removed
    /// again before storing, as a second line of defence.
    pub command: String,
    /// The full plan (it holds no connection secrets by construction).
    pub plan: RunPlan,
    /// `user@host:port/db` or a `Dsn`'s Display: never a password (removed if present).
    pub target: String,
    /// The server measured.
    pub server: ServerInfo,
    /// The machine measured on.
    pub host: HostFacts,
    /// `qpslab` version that produced the run.
    pub tool_version: String,
    /// The study this run is a cell of, if any.
    pub study_id: Option<String>,
    /// The cell's label within its study, if any.
    pub cell_label: Option<String>,
}

impl RunMeta {
    /// A new run of `plan` on `target` (`server` on `host`), started now by `command`: a fresh
    /// uuid, this qpslab's version, no study.
    pub fn new(
        plan: RunPlan,
        target: String,
        server: ServerInfo,
        host: HostFacts,
        command: String,
    ) -> RunMeta {
        RunMeta {
            uuid: new_run_uuid(),
            started_at: unix_now(),
            command,
            plan,
            target,
            server,
            host,
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            study_id: None,
            cell_label: None,
        }
    }

    /// This run as the cell `cell_label` of the study named `study`.
    pub fn in_study(self, study: &str, cell_label: &str) -> RunMeta {
        RunMeta {
            study_id: Some(study.to_string()),
            cell_label: Some(cell_label.to_string()),
            ..self
        }
    }

    /// Another run described as this one but of `plan`: a fresh uuid, started now.
    pub fn another(&self, plan: RunPlan) -> RunMeta {
        RunMeta {
            uuid: new_run_uuid(),
            started_at: unix_now(),
            plan,
            ..self.clone()
        }
    }
}

pub use qpslab_core::telemetry::TelemetrySample;

/// One line of `qpslab show`'s run list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// The run's id.
    pub id: RunId,
    /// The run's uuid.
    pub uuid: String,
    /// When it began.
    pub started_at: UnixSeconds,
    /// Where it stands.
    pub status: RunStatus,
    /// Workload name, e.g. `oltp_read_only`.
    pub workload: String,
    /// Redacted target.
    pub target: String,
    /// `@@version` of the server.
    pub server_version: String,
    /// Phases recorded.
    pub phases: u32,
    /// Highest events per second among its phases.
    pub best_tps: f64,
    /// Highest queries per second among its phases.
    pub best_qps: f64,
}

/// A measured phase as stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoredPhase {
    /// Order within the run, from 1.
    pub seq: u32,
    /// When the phase was written (right after it ended).
    pub recorded_at: UnixSeconds,
    /// The phase, with its samples and histograms.
    pub result: PhaseResult,
    /// Telemetry taken during it, in the order given.
    pub telemetry: Vec<TelemetrySample>,
}

/// A whole run read back.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoredRun {
    /// Its id.
    pub id: RunId,
    /// What was recorded with its first phase.
    pub meta: RunMeta,
    /// Where it stands.
    pub status: RunStatus,
    /// When [`crate::Store::finish_run`] was called, if it was.
    pub finished_at: Option<UnixSeconds>,
    /// Its phases in the order they ran.
    pub phases: Vec<StoredPhase>,
}

/// The current time as [`UnixSeconds`].
pub fn unix_now() -> UnixSeconds {
    // A clock before 1970 is a broken clock; 0 is as good an answer as any.
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// A random (version 4) UUID for a new run.
pub fn new_run_uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// `text` with the password of every `scheme://user:password@` URL removed.
pub fn redact_url_passwords(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        out.push_str(&rest[..i + 3]);
        rest = &rest[i + 3..];
        // The authority ends at the first '/', '?', '#' or whitespace; its userinfo at the last
        // '@' before that.
        let end = rest
            .find(|c: char| c == '/' || c == '?' || c == '#' || c.is_whitespace())
            .unwrap_or(rest.len());
        let authority = &rest[..end];
        if let Some(at) = authority.rfind('@') {
            let userinfo = &authority[..at];
            let user = userinfo.split_once(':').map_or(userinfo, |(u, _)| u);
            out.push_str(user);
            out.push_str(&authority[at..]);
        } else {
            out.push_str(authority);
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_are_v4_and_distinct() {
        let a = new_run_uuid();
        let b = new_run_uuid();
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "4");
        assert!("89ab".contains(&a[19..20]), "{a}");
    }

    #[test]
    fn a_run_meta_is_new_then_placed_in_a_study_then_run_again() {
        use qpslab_core::workload::{WorkloadKind, WorkloadOptions};
        let plan = RunPlan::new(WorkloadOptions::new(WorkloadKind::OltpReadOnly));
        let host = HostFacts::default();
        let m = RunMeta::new(
            plan.clone(),
            "t".into(),
            ServerInfo::default(),
            host,
            "c".into(),
        );
        assert_eq!(m.tool_version, env!("CARGO_PKG_VERSION"));
        assert!(m.started_at > 0.0);
        assert_eq!(
            (m.study_id.as_deref(), m.cell_label.as_deref()),
            (None, None)
        );
        let m = m.in_study("s", "a/r1");
        assert_eq!(m.study_id.as_deref(), Some("s"));
        assert_eq!(m.cell_label.as_deref(), Some("a/r1"));
        let mut other_plan = plan;
        other_plan.threads = vec![8];
        let again = m.another(other_plan.clone());
        assert_ne!(again.uuid, m.uuid);
        assert_eq!(again.plan, other_plan);
        assert_eq!((again.command.as_str(), again.target.as_str()), ("c", "t"));
        assert_eq!(again.cell_label, m.cell_label);
    }

    #[test]
    fn url_passwords_are_removed() {
        assert_eq!(
            redact_url_passwords("qpslab run x --target mysql://bench:pw@h:3306/db --threads 4"),
            "qpslab run x --target mysql://bench@h:3306/db --threads 4"
        );
        assert_eq!(
            redact_url_passwords("a mysql://u:p@ss:w@[::1]/d?socket=/s b mariadb://r@h"),
            "a mysql://u@[::1]/d?socket=/s b mariadb://r@h"
        );
        assert_eq!(redact_url_passwords("no url here"), "no url here");
    }

    #[test]
    fn status_words_round_trip() {
        for s in [
            RunStatus::Running,
            RunStatus::Completed,
            RunStatus::Failed,
            RunStatus::Interrupted,
        ] {
            assert_eq!(s.as_str().parse::<RunStatus>().unwrap(), s);
        }
        let e = "done".parse::<RunStatus>().unwrap_err();
        assert_eq!(e.to_string(), "unknown run status 'done'");
        assert_eq!(
            crate::Error::from(e).to_string(),
            "damaged results store: unknown run status 'done'"
        );
    }
}

/// The store's id of a study (its `studies.id`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct StudyId(pub i64);

impl fmt::Display for StudyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}
