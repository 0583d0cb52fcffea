//! I/O rules: how InnoDB opens its files and how fast it may flush, against the storage of the
//! datadir (known for a server on this host).

use super::rule::server_finding;
use super::{Facts, Finding, Severity};

/// The I/O rules' findings.
pub(super) fn rules(f: &Facts) -> Vec<Finding> {
    let mut found: Vec<Finding> = flush_method(f).into_iter().collect();
    found.extend(io_capacity(f));
    found
}

/// Whether the datadir is on a spinning disk, when this host's storage is known.
fn rotational(f: &Facts) -> Option<(bool, String)> {
    let s = &f.local.as_ref()?.storage;
    Some((
        s.rotational?,
        s.device.clone().unwrap_or_else(|| "?".into()),
    ))
}

/// Without O_DIRECT every page is cached twice: in the buffer pool and in the OS page cache.
fn flush_method(f: &Facts) -> Option<Finding> {
    let method = f.var("innodb_flush_method")?;
    if method.starts_with("O_DIRECT") {
        return None;
    }
    let fs = f.local.as_ref().and_then(|l| l.storage.fs_type.clone());
    if fs.as_deref() == Some("tmpfs") {
        return None; // tmpfs refuses O_DIRECT and has no page cache to double.
    }
    let on = fs.map_or_else(String::new, |fs| format!(" (datadir on {fs})"));
    let reason =
        format!(
        "innodb_flush_method {}{on}: data pages are cached twice, in the buffer pool and the OS \
         page cache, and the OS cache competes with the pool for RAM",
        if method.is_empty() { "fsync (default)" } else { method }
    );
    server_finding(
        f,
        "innodb_flush_method",
        Some("O_DIRECT".into()),
        Severity::Medium,
        reason,
    )
}

/// The background flushing rate InnoDB assumes the storage sustains.
fn io_capacity(f: &Facts) -> Vec<Finding> {
    let (Some(cap), Some((spinning, device))) = (f.num("innodb_io_capacity"), rotational(f)) else {
        return Vec::new();
    };
    let kind = if spinning {
        "a spinning disk"
    } else {
        "solid-state (not rotational)"
    };
    let want = match (spinning, cap) {
        (false, c) if c < 1000 => 1000,
        (true, c) if c > 400 => 200,
        _ => return Vec::new(),
    };
    let reason = format!(
        "datadir device {device} is {kind}; innodb_io_capacity {cap} is sized for {}",
        if spinning {
            "SSDs: flushing will saturate the disk"
        } else {
            "one spinning disk: dirty pages pile up under writes"
        }
    );
    let mut found: Vec<Finding> = server_finding(
        f,
        "innodb_io_capacity",
        Some(want.to_string()),
        Severity::Low,
        reason,
    )
    .into_iter()
    .collect();
    if let Some(max) = f.num("innodb_io_capacity_max").filter(|&m| m < 2 * want) {
        let reason = format!("innodb_io_capacity_max {max} must stay at least innodb_io_capacity ({want}); twice it leaves room for bursts");
        found.extend(server_finding(
            f,
            "innodb_io_capacity_max",
            Some((2 * want).to_string()),
            Severity::Low,
            reason,
        ));
    }
    found
}
