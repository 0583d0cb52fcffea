//! What `qpslab advise` finds: one [`Finding`] per setting worth a look, with the figure it
//! came from. `tune` seeds its search from the same list.

use serde::{Deserialize, Serialize};

/// How much a finding matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Likely to cost a large share of throughput (e.g. a dataset that misses the buffer pool).
    High,
    /// Worth changing; a measurable effect on many workloads.
    Medium,
    /// A small or workload-dependent effect.
    Low,
    /// Nothing to change, or too little evidence to say: shown so the user knows it was checked.
    Info,
}

impl Severity {
    /// The lowercase name (`high`...).
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::High => "high",
            Severity::Medium => "medium",
            Severity::Low => "low",
            Severity::Info => "info",
        }
    }
}

/// What a finding is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FindingKind {
    /// A server variable.
    Server,
    /// A setting of the host's kernel (THP, swappiness, governor, I/O scheduler).
    Os,
    /// A server variable that trades crash safety for speed: recommended only when asked.
    Durability,
}

impl FindingKind {
    /// The lowercase name (`server`...).
    pub fn as_str(self) -> &'static str {
        match self {
            FindingKind::Server => "server",
            FindingKind::Os => "os",
            FindingKind::Durability => "durability",
        }
    }
}

/// Whether durability may be traded for speed (`--durability`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Durability {
    /// Keep full crash safety: durability findings only describe the trade-off.
    #[default]
    Strict,
    /// Recommend relaxed durability settings (a crash may lose the last second of commits).
    Relaxed,
}

/// One piece of advice.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// The server variable (as `SHOW GLOBAL VARIABLES` names it) or OS setting
    /// (`vm.swappiness`, `transparent_hugepage`...).
    pub variable: String,
    /// Its current value.
    pub current: String,
    /// The value advised; `None` when the finding recommends nothing (too little evidence,
    /// already fine, or a durability trade-off not asked for).
    pub recommended: Option<String>,
    /// Why, with the figures it came from.
    pub reason: String,
    /// How much it matters.
    pub severity: Severity,
    /// Whether the server must restart for a change to apply (`false` for OS settings).
    pub restart_needed: bool,
    /// Server, OS or durability.
    pub kind: FindingKind,
}

impl Finding {
    /// Whether this finding recommends a change.
    pub fn recommends(&self) -> bool {
        self.recommended.is_some()
    }
}
