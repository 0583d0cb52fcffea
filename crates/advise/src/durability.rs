//! Durability settings trade crash safety for speed. They are always listed with their
//! trade-off and recommended only with `--durability relaxed`.

use super::rule::finding;
use super::{Durability, Facts, Finding, FindingKind, Severity};

/// The durability findings.
pub(super) fn rules(f: &Facts, mode: Durability) -> Vec<Finding> {
    [
        flush_at_commit(f, mode),
        sync_binlog(f, mode),
        doublewrite(f),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// A durability finding: `relaxed` is recommended only when asked for and not already set.
fn trade(
    f: &Facts,
    variable: &str,
    relaxed: &str,
    mode: Durability,
    what: &str,
) -> Option<Finding> {
    let current = f.var(variable)?;
    let asked = mode == Durability::Relaxed;
    let (recommended, severity, note) = match (current == relaxed, asked) {
        (true, _) => (None, Severity::Info, "already relaxed"),
        (false, true) => (
            Some(relaxed.to_string()),
            Severity::Medium,
            "recommended because --durability relaxed was given",
        ),
        (false, false) => (
            None,
            Severity::Info,
            "not recommended without --durability relaxed",
        ),
    };
    let reason = format!("{variable} {current}; {relaxed} {what} ({note})");
    Some(finding(
        FindingKind::Durability,
        variable,
        current,
        recommended,
        severity,
        reason,
    ))
}

fn flush_at_commit(f: &Facts, mode: Durability) -> Option<Finding> {
    trade(f, "innodb_flush_log_at_trx_commit", "2", mode, "writes the redo log at each commit but syncs it once a second: much faster commits on slow fsync; an OS crash or power loss loses up to a second of commits, a server crash alone loses none")
}

fn sync_binlog(f: &Facts, mode: Durability) -> Option<Finding> {
    if f.var("log_bin")? != "ON" {
        return None; // Without a binary log the setting does nothing.
    }
    trade(f, "sync_binlog", "0", mode, "leaves syncing the binary log to the OS: faster commits; an OS crash may lose binlog events that committed, so replicas and point-in-time recovery can diverge")
}

/// Turning the doublewrite buffer off risks torn pages that InnoDB cannot repair: corruption,
/// not lost commits. It is listed, never recommended, even with `--durability relaxed`.
fn doublewrite(f: &Facts) -> Option<Finding> {
    let current = f.var("innodb_doublewrite")?;
    let reason = format!("innodb_doublewrite {current}; OFF saves a second write of every flushed page, but a crash mid-write can leave torn pages that InnoDB cannot repair: never recommended, not even with --durability relaxed, unless the storage writes 16 KiB pages atomically");
    Some(finding(
        FindingKind::Durability,
        "innodb_doublewrite",
        current,
        None,
        Severity::Info,
        reason,
    ))
}
