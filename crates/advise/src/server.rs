//! Cache and connection rules, each judged on the server's own counters since it started:
//! table cache misses, thread creation, temporary tables on disk, connections near the limit,
//! and features that cost throughput (performance schema, query cache).

use super::fmt::count;
use super::rule::{server_finding, too_early};
use super::{Facts, Finding, Severity};
use qpslab_core::units::short_size;
use qpslab_core::units::span_text;

const MIB: u64 = 1 << 20;

/// The cache and connection rules' findings.
pub(super) fn rules(f: &Facts) -> Vec<Finding> {
    let mut found: Vec<Finding> = [
        table_cache(f),
        thread_cache(f),
        max_connections(f),
        performance_schema(f),
        query_cache(f),
    ]
    .into_iter()
    .flatten()
    .collect();
    found.extend(tmp_tables(f));
    found
}

/// A table cache that is full and keeps opening tables.
fn table_cache(f: &Facts) -> Option<Finding> {
    let cache = f.num("table_open_cache")?;
    if let Some(early) = too_early(f, "table_open_cache", "table cache misses") {
        return Some(early);
    }
    let (opened, open, up) = (
        f.counter("Opened_tables"),
        f.counter("Open_tables"),
        f.uptime_s(),
    );
    let per_s = opened as f64 / up as f64;
    if open * 100 < cache * 95 || per_s < 0.1 {
        return None;
    }
    let want = (cache * 2).min(
        f.num("open_files_limit")
            .map_or(u64::MAX, |l| l / 2)
            .max(cache),
    );
    if want <= cache {
        return None;
    }
    let reason = format!("Open_tables {open} of table_open_cache {cache} and Opened_tables {} in {} ({per_s:.1}/s): tables are closed and reopened", count(opened), span_text(up));
    server_finding(
        f,
        "table_open_cache",
        Some(want.to_string()),
        Severity::Medium,
        reason,
    )
}

/// Threads created for new connections that a larger cache would have reused.
fn thread_cache(f: &Facts) -> Option<Finding> {
    let cache = f.num("thread_cache_size")?;
    if f.var("thread_handling") == Some("pool-of-threads") {
        return None; // The thread pool keeps its own threads.
    }
    let (created, connections) = (f.counter("Threads_created"), f.counter("Connections"));
    if connections < 1000 {
        let reason =
            format!("{connections} connections since start: too few to judge the thread cache");
        return server_finding(f, "thread_cache_size", None, Severity::Info, reason);
    }
    let miss = created as f64 / connections as f64;
    let used = f.counter("Max_used_connections");
    // A cache as large as the peak of connections keeps every thread that ends, so a cache
    // that large cannot miss again: the advice is not repeated once applied.
    let want = used.min(16_384);
    if miss < 0.01 || want <= cache {
        return None;
    }
    let reason = format!("Threads_created {} of {} connections ({:.1}%), Max_used_connections {used}: a thread per new connection", count(created), count(connections), 100.0 * miss);
    server_finding(
        f,
        "thread_cache_size",
        Some(want.to_string()),
        Severity::Low,
        reason,
    )
}

/// Internal temporary tables that outgrow memory go to disk; the smaller of the two limits
/// applies, so both are raised together.
fn tmp_tables(f: &Facts) -> Vec<Finding> {
    let (Some(tmp), Some(heap)) = (f.num("tmp_table_size"), f.num("max_heap_table_size")) else {
        return Vec::new();
    };
    let (disk, all) = (
        f.counter("Created_tmp_disk_tables"),
        f.counter("Created_tmp_tables"),
    );
    if all < 1000 {
        let reason = format!("{all} temporary tables since start: too few to judge");
        return server_finding(f, "tmp_table_size", None, Severity::Info, reason)
            .into_iter()
            .collect();
    }
    let share = disk as f64 / all as f64;
    let limit = tmp.min(heap);
    // A fixed target: the counters run since start, so a size relative to the current one
    // would be advised again and again after it is applied.
    let want = 64 * MIB;
    if share < 0.1 || want <= limit {
        return Vec::new();
    }
    let reason = format!("Created_tmp_disk_tables {} of {} ({:.0}%), in-memory limit {} (the smaller of tmp_table_size and max_heap_table_size); tables with BLOB/TEXT columns go to disk whatever the limit", count(disk), count(all), 100.0 * share, short_size(limit));
    [("tmp_table_size", tmp), ("max_heap_table_size", heap)]
        .into_iter()
        .filter(|(_, v)| *v < want)
        .filter_map(|(name, _)| {
            server_finding(
                f,
                name,
                Some(want.to_string()),
                Severity::Low,
                reason.clone(),
            )
        })
        .collect()
}

/// Connections that came close to the limit (or were refused).
fn max_connections(f: &Facts) -> Option<Finding> {
    let max = f.num("max_connections")?;
    let (used, refused) = (
        f.counter("Max_used_connections"),
        f.counter("Connection_errors_max_connections"),
    );
    // Refusals count since start; only the peak against today's limit decides.
    if used * 10 < max * 9 {
        return None;
    }
    let want = (used.max(max) * 3 / 2).max(max + 1);
    let reason = format!("Max_used_connections {used} of max_connections {max}, {refused} refused (Connection_errors_max_connections)");
    server_finding(
        f,
        "max_connections",
        Some(want.to_string()),
        Severity::Medium,
        reason,
    )
}

/// The performance schema instruments every statement: a few percent on short ones.
fn performance_schema(f: &Facts) -> Option<Finding> {
    if f.var("performance_schema")? != "ON" {
        return None;
    }
    let reason = "performance_schema ON: instrumenting every statement typically costs a few percent of throughput on short queries (measure it with a study); keep it if you rely on it for diagnostics".to_string();
    server_finding(
        f,
        "performance_schema",
        Some("OFF".into()),
        Severity::Low,
        reason,
    )
}

/// The query cache serialises every query on one mutex (gone in MySQL 8, present in MariaDB).
fn query_cache(f: &Facts) -> Option<Finding> {
    let kind = f.var("query_cache_type")?;
    if kind == "OFF" || f.num("query_cache_size") == Some(0) {
        return None;
    }
    let reason = format!(
        "query_cache_type {kind}, query_cache_size {}: Qcache_hits {}, Qcache_inserts {}, Qcache_lowmem_prunes {}; every query and every write takes the cache's one mutex",
        short_size(f.num("query_cache_size").unwrap_or(0)),
        count(f.counter("Qcache_hits")),
        count(f.counter("Qcache_inserts")),
        count(f.counter("Qcache_lowmem_prunes"))
    );
    server_finding(
        f,
        "query_cache_type",
        Some("OFF".into()),
        Severity::Medium,
        reason,
    )
}
