//! OS rules for a server on this host: transparent huge pages, swappiness, the CPU frequency
//! governor and the I/O scheduler of the datadir's device. Nothing is said about a remote
//! server's host: its facts are not ours to read.

use super::rule::finding;
use super::{Facts, Finding, FindingKind, Local, Severity};

/// The OS rules' findings (none for a remote server).
pub(super) fn rules(f: &Facts) -> Vec<Finding> {
    let Some(l) = &f.local else {
        return Vec::new();
    };
    [thp(l), swappiness(l), governor(l), scheduler(l)]
        .into_iter()
        .flatten()
        .collect()
}

fn os(
    variable: &str,
    current: &str,
    recommended: &str,
    severity: Severity,
    reason: String,
) -> Finding {
    finding(
        FindingKind::Os,
        variable,
        current,
        Some(recommended.into()),
        severity,
        reason,
    )
}

/// THP `always` makes the kernel compact memory and back the server's allocations with huge
/// pages it did not ask for: latency stalls and memory bloat.
fn thp(l: &Local) -> Option<Finding> {
    (l.host.thp == "always").then(|| {
        os(
            "transparent_hugepage",
            "always",
            "madvise",
            Severity::Medium,
            "/sys/kernel/mm/transparent_hugepage/enabled is always: khugepaged compaction stalls \
             and allocator memory bloat; madvise (or never) leaves huge pages to programs that ask"
                .into(),
        )
    })
}

/// A high swappiness lets the kernel swap the buffer pool out in favour of the page cache.
fn swappiness(l: &Local) -> Option<Finding> {
    let v: u32 = l.host.swappiness.parse().ok()?;
    (v > 10).then(|| {
        let reason = format!("vm.swappiness {v}: the kernel may swap out buffer pool pages to keep file cache; 1 swaps only under real pressure");
        os("vm.swappiness", &l.host.swappiness, "1", Severity::Low, reason)
    })
}

/// A power-saving governor adds latency while the CPU ramps up.
fn governor(l: &Local) -> Option<Finding> {
    let g = l.host.cpu_governor.as_deref()?;
    (g != "performance").then(|| {
        let reason = format!("CPU frequency governor {g}: cores clock down between bursts and take time to ramp up, which shows as latency at low load");
        os("cpufreq scaling_governor", g, "performance", Severity::Low, reason)
    })
}

/// Solid-state devices need no reordering; spinning disks want a deadline scheduler.
fn scheduler(l: &Local) -> Option<Finding> {
    let s = &l.storage;
    let (current, spinning) = (s.io_scheduler.as_deref()?, s.rotational?);
    let device = s.device.as_deref().unwrap_or("?");
    let want = match (spinning, current) {
        (false, "bfq" | "cfq" | "kyber") => "none",
        (true, "none" | "noop") => "mq-deadline",
        _ => return None,
    };
    let kind = if spinning {
        "a spinning disk"
    } else {
        "solid-state"
    };
    let reason = format!("datadir device {device} is {kind} with I/O scheduler {current}: {want} suits it (less CPU per I/O, no starvation of InnoDB's flushing)");
    Some(os(
        &format!("I/O scheduler of {device}"),
        current,
        want,
        Severity::Low,
        reason,
    ))
}
