//! Memory and redo rules: the buffer pool against the data and the machine's RAM (the
//! headline: a stock 128 MiB pool in front of a larger dataset), its instances, and the redo
//! log against the write rate.

use super::fmt::{count, round_up};
use super::rule::{server_finding, too_early};
use super::{Facts, Finding, Severity};
use qpslab_core::units::short_size;
use qpslab_core::units::span_text;

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;
/// Buffer pool sizes are multiples of the default chunk (128 MiB).
const CHUNK: u64 = 128 * MIB;
/// The share of RAM a dedicated server's buffer pool may take.
const RAM_SHARE: f64 = 0.7;

/// The memory rules' findings.
pub(super) fn rules(f: &Facts) -> Vec<Finding> {
    [buffer_pool(f), pool_instances(f), redo_log(f)]
        .into_iter()
        .flatten()
        .collect()
}

/// RAM of a local server's host, when known.
fn ram(f: &Facts) -> Option<u64> {
    f.local
        .as_ref()
        .map(|l| l.host.memory_bytes)
        .filter(|&m| m > 0)
}

/// `data 2 GiB, buffer pool 128 MiB, hit ratio 91.2% (Innodb_buffer_pool_reads 81k of 920k)`.
fn pool_figures(f: &Facts, pool: u64) -> String {
    let (reads, requests) = (
        f.counter("Innodb_buffer_pool_reads"),
        f.counter("Innodb_buffer_pool_read_requests"),
    );
    let hit = if requests >= 10_000 {
        let ratio = 100.0 * (1.0 - reads as f64 / requests as f64);
        format!(
            ", hit ratio {ratio:.1}% (Innodb_buffer_pool_reads {} of {})",
            count(reads),
            count(requests)
        )
    } else {
        format!(", too few page reads yet for a hit ratio ({requests})")
    };
    format!(
        "data {}, buffer pool {}{hit}",
        short_size(f.innodb_bytes),
        short_size(pool)
    )
}

/// The buffer pool against the InnoDB data it should hold and the RAM it may use.
fn buffer_pool(f: &Facts) -> Option<Finding> {
    const VAR: &str = "innodb_buffer_pool_size";
    let pool = f.num(VAR)?;
    let data = f.innodb_bytes;
    let figures = pool_figures(f, pool);
    let cap = ram(f).map(|r| (r as f64 * RAM_SHARE) as u64 / CHUNK * CHUNK);
    if let (Some(r), Some(c)) = (ram(f), cap) {
        if pool > r * 9 / 10 {
            let reason = format!("{figures}; the pool takes more than 90% of RAM {}: the server may swap or be killed", short_size(r));
            return server_finding(
                f,
                VAR,
                Some(c.max(CHUNK).to_string()),
                Severity::High,
                reason,
            );
        }
    }
    if data <= pool * 9 / 10 {
        let reason = format!("{figures}: the data fits with room to grow");
        return server_finding(f, VAR, None, Severity::Info, reason);
    }
    let ram_text = match (ram(f), cap) {
        (Some(r), Some(c)) => format!("RAM {} (70%: {})", short_size(r), short_size(c)),
        _ => "host RAM unknown (not a local server): make sure it has room".to_string(),
    };
    let want = round_up(data + data / 4, CHUNK);
    let target = cap.map_or(want, |c| want.min(c));
    if target <= pool {
        let reason = format!("{figures}; {ram_text}: no room for a larger pool on this host");
        return server_finding(f, VAR, None, Severity::Medium, reason);
    }
    let fit = if target == want {
        "holds the data with 25% to spare".to_string()
    } else {
        let short = short_size(data.saturating_sub(target));
        format!("is as much as 70% of RAM allows ({short} short of the data)")
    };
    let reason = format!(
        "{figures}: the pool cannot hold the data, so pages are read from disk again and again; {} {fit}; {ram_text}",
        short_size(target)
    );
    server_finding(f, VAR, Some(target.to_string()), Severity::High, reason)
}

/// MySQL splits a large pool into instances to spread its mutexes. MariaDB has had a single
/// instance since 10.5 (the variable is ignored there and gone in 10.6), so no advice.
fn pool_instances(f: &Facts) -> Option<Finding> {
    if f.is_mariadb() {
        return None;
    }
    let pool = f.num("innodb_buffer_pool_size")?;
    let instances = f.num("innodb_buffer_pool_instances")?;
    let want = (pool / GIB).clamp(1, 8);
    if pool < 2 * GIB || instances >= want {
        return None;
    }
    let reason = format!("buffer pool {} in {instances} instance(s): one per GiB (up to 8) spreads the pool's mutex contention", short_size(pool));
    server_finding(
        f,
        "innodb_buffer_pool_instances",
        Some(want.to_string()),
        Severity::Low,
        reason,
    )
}

/// The redo log should hold about an hour of writes, so checkpoints do not force flushing.
fn redo_log(f: &Facts) -> Option<Finding> {
    // MySQL 8.0.30+ sizes the redo log with one variable; before, and in MariaDB, it is the
    // file size (times the files in the group where that variable still exists).
    let (variable, per_file, files) = match f.num("innodb_redo_log_capacity") {
        Some(c) => ("innodb_redo_log_capacity", c, 1),
        None => (
            "innodb_log_file_size",
            f.num("innodb_log_file_size")?,
            f.num("innodb_log_files_in_group").unwrap_or(1).max(1),
        ),
    };
    if let Some(early) = too_early(f, variable, "the redo log's write rate") {
        return Some(early);
    }
    let (up, written) = (f.uptime_s(), f.counter("Innodb_os_log_written"));
    let total = per_file * files;
    let hour = written.saturating_mul(3600) / up.max(1);
    let waits = f.counter("Innodb_log_waits");
    let figures = format!(
        "redo log {} ; Innodb_os_log_written {} in {} ({}/s), Innodb_log_waits {waits}",
        short_size(total),
        short_size(written),
        span_text(up),
        short_size(written / up.max(1))
    )
    .replace(" ;", ";");
    if hour <= total || written < 64 * MIB {
        let reason = format!("{figures}: holds an hour of writes or more");
        return server_finding(f, variable, None, Severity::Info, reason);
    }
    let target = round_up(hour.min(16 * GIB), CHUNK * files) / files;
    if target <= per_file {
        return None; // Already at the largest size advised.
    }
    let minutes = total.saturating_mul(60) / hour.max(1);
    let severity = if waits > 0 || total * 4 < hour {
        Severity::Medium
    } else {
        Severity::Low
    };
    let reason = format!("{figures}: holds {minutes} min of writes; an hour's worth ({}) lets checkpoints flush smoothly instead of in bursts", short_size(hour));
    server_finding(f, variable, Some(target.to_string()), severity, reason)
}
