//! `SHOW GLOBAL STATUS` snapshots and the difference between two of them.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One status value: most are integers; a few are decimals (`Busy_time`) or words
/// (`Innodb_buffer_pool_load_status`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum StatusValue {
    /// A non-negative integer counter or gauge.
    Int(u64),
    /// A decimal value, e.g. seconds.
    Float(f64),
    /// Anything else, verbatim (`ON`, `Disconnected`, empty...).
    Text(String),
}

impl StatusValue {
    /// Classifies the server's text.
    pub fn parse(text: &str) -> StatusValue {
        if let Ok(n) = text.parse::<u64>() {
            StatusValue::Int(n)
        } else if let Some(f) = text
            .parse::<f64>()
            .ok()
            .filter(|f| f.is_finite() && text.bytes().any(|b| b == b'.'))
        {
            StatusValue::Float(f)
        } else {
            StatusValue::Text(text.to_string())
        }
    }

    /// The integer, if this is one.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            StatusValue::Int(n) => Some(*n),
            _ => None,
        }
    }
}

/// One `SHOW GLOBAL STATUS` snapshot, by variable name as the server spells it.
pub type GlobalStatus = BTreeMap<String, StatusValue>;

/// Builds a snapshot from `(name, value)` rows; a NULL value (MariaDB's `Max_memory_used`
/// without the feature) is kept as empty text.
pub fn status_from_rows<'a>(
    rows: impl IntoIterator<Item = (&'a str, Option<&'a str>)>,
) -> GlobalStatus {
    rows.into_iter()
        .map(|(k, v)| (k.to_string(), StatusValue::parse(v.unwrap_or(""))))
        .collect()
}

/// Whether an integer status variable is a level (read as is) rather than a running total
/// (read as a difference). The server does not say; these are the families documented as
/// current values in MariaDB and MySQL.
pub fn is_gauge(name: &str) -> bool {
    const EXACT: &[&str] = &[
        "Max_used_connections",
        "Innodb_row_lock_current_waits",
        "Innodb_row_lock_time_avg",
        "Innodb_row_lock_time_max",
        "Innodb_history_list_length",
        "Innodb_checkpoint_age",
        "Innodb_checkpoint_max_age",
        "Innodb_page_size",
        "Innodb_num_open_files",
        "Innodb_max_trx_id",
        "Memory_used",
        "Memory_used_initial",
        "Qcache_free_blocks",
        "Qcache_free_memory",
        "Qcache_queries_in_cache",
        "Qcache_total_blocks",
        "Key_blocks_not_flushed",
        "Key_blocks_unused",
        "Key_blocks_used",
        "Slave_open_temp_tables",
        "Prepared_stmt_count",
        "Uptime",
        "Uptime_since_flush_status",
    ];
    const PREFIXES: &[&str] = &[
        "Threads_",
        "Open_",
        "Innodb_buffer_pool_pages_",
        "Innodb_buffer_pool_bytes_",
        "Innodb_data_pending_",
        "Innodb_os_log_pending_",
        "Innodb_mem_",
        "Innodb_current_",
        "Innodb_onlineddl_",
        "Rpl_semi_sync_master_clients",
    ];
    // Threads_created is a total despite its family; Uptime is listed as a level because its
    // difference is merely the elapsed time.
    name != "Threads_created"
        && (EXACT.contains(&name) || PREFIXES.iter().any(|p| name.starts_with(p)))
}

/// What changed between two status snapshots taken `elapsed_s` apart.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StatusDelta {
    /// Seconds between the snapshots.
    pub elapsed_s: f64,
    /// Running totals (`Com_select`, `Handler_read_key`, `Innodb_rows_read`, `Questions`...):
    /// after minus before, never negative: a counter that went back was reset (`FLUSH STATUS`,
    /// or every counter when the server restarted, seen as a smaller `Uptime`) and counts from
    /// zero.
    pub counters: BTreeMap<String, i64>,
    /// Levels (`Threads_running`, `Innodb_buffer_pool_pages_dirty`...): the later value.
    pub gauges: BTreeMap<String, u64>,
}

impl StatusDelta {
    /// The delta between `before` and `after`, over the integer variables present in both.
    pub fn between(before: &GlobalStatus, after: &GlobalStatus, elapsed_s: f64) -> StatusDelta {
        let mut d = StatusDelta {
            elapsed_s,
            ..Default::default()
        };
        let uptime = |s: &GlobalStatus| s.get("Uptime").and_then(StatusValue::as_u64);
        let restarted = matches!((uptime(before), uptime(after)), (Some(b), Some(a)) if a < b);
        for (name, value) in after {
            let (Some(a), Some(b)) = (value.as_u64(), before.get(name).and_then(|v| v.as_u64()))
            else {
                continue;
            };
            if is_gauge(name) {
                d.gauges.insert(name.clone(), a);
            } else {
                let diff = if restarted || a < b { a } else { a - b };
                let diff = i64::try_from(diff).unwrap_or(i64::MAX);
                d.counters.insert(name.clone(), diff);
            }
        }
        d
    }

    /// A counter's change, 0 when it is unknown.
    pub fn counter(&self, name: &str) -> i64 {
        self.counters.get(name).copied().unwrap_or(0)
    }

    /// A counter's change per second, when known and time passed.
    pub fn per_second(&self, name: &str) -> Option<f64> {
        let c = self.counters.get(name)?;
        (self.elapsed_s > 0.0).then(|| *c as f64 / self.elapsed_s)
    }

    /// The sum of the counters whose name starts with `prefix` (e.g. every `Com_`).
    pub fn sum_prefix(&self, prefix: &str) -> i64 {
        self.counters
            .iter()
            .filter(|(k, _)| k.starts_with(prefix))
            .map(|(_, v)| *v)
            .sum()
    }

    /// Only the counters that changed and all gauges: what is worth storing per interval.
    pub fn nonzero(mut self) -> StatusDelta {
        self.counters.retain(|_, v| *v != 0);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn captured(tsv: &str) -> GlobalStatus {
        status_from_rows(tsv.lines().map(|l| match l.split_once('\t') {
            Some((k, "NULL")) => (k, None),
            Some((k, v)) => (k, Some(v)),
            None => (l, Some("")),
        }))
    }

    #[test]
    fn values_are_classified() {
        assert_eq!(StatusValue::parse("1400"), StatusValue::Int(1400));
        assert_eq!(StatusValue::parse("0.007490"), StatusValue::Float(0.00749));
        assert_eq!(StatusValue::parse("OFF"), StatusValue::Text("OFF".into()));
        assert_eq!(StatusValue::parse(""), StatusValue::Text(String::new()));
        assert_eq!(StatusValue::parse("inf"), StatusValue::Text("inf".into()));
        assert_eq!(StatusValue::parse("-3"), StatusValue::Text("-3".into()));
    }

    /// Two snapshots of a MariaDB 10.11 server with 50 `SELECT n` in between.
    #[test]
    fn delta_of_captured_snapshots() {
        let before = captured(include_str!(
            "../tests/data/mariadb-10.11-global-status-1.tsv"
        ));
        let after = captured(include_str!(
            "../tests/data/mariadb-10.11-global-status-2.tsv"
        ));
        assert!(before.len() > 500, "{}", before.len());
        assert_eq!(
            before["Innodb_buffer_pool_load_status"],
            StatusValue::Text("Buffer pool(s) load completed at 261122 10:28:17".into())
        );
        assert_eq!(before["Busy_time"], StatusValue::Float(0.0));
        let d = StatusDelta::between(&before, &after, 2.0);
        assert_eq!(d.counter("Com_select"), 50);
        assert_eq!(d.per_second("Com_select"), Some(25.0));
        assert_eq!(d.counter("Handler_read_rnd_next"), 1243 - 680);
        assert_eq!(d.counter("Bytes_received"), 1668 - 606);
        assert!(d.sum_prefix("Com_") >= 51, "{}", d.sum_prefix("Com_"));
        assert_eq!(
            d.gauges.get("Threads_running"),
            after["Threads_running"].as_u64().as_ref()
        );
        assert!(!d.counters.contains_key("Threads_running"));
        assert!(d.counters.contains_key("Threads_created"));
        assert!(!d.counters.contains_key("Busy_time"));
        let json = serde_json::to_value(d.clone().nonzero()).unwrap();
        assert_eq!(json["counters"]["Com_select"], 50);
        assert!(json["counters"].get("Com_insert").is_none());
        assert!(d.counters.contains_key("Com_insert"));
    }

    #[test]
    fn a_flush_between_snapshots_counts_from_zero_and_gauges_read_as_is() {
        let before = status_from_rows([("Questions", Some("100")), ("Open_tables", Some("40"))]);
        let after = status_from_rows([("Questions", Some("7")), ("Open_tables", Some("38"))]);
        let d = StatusDelta::between(&before, &after, 0.0);
        assert_eq!(d.counter("Questions"), 7);
        assert_eq!(d.gauges["Open_tables"], 38);
        assert_eq!(d.per_second("Questions"), None);
    }

    #[test]
    fn after_a_restart_every_counter_counts_from_zero() {
        let before = status_from_rows([
            ("Uptime", Some("900")),
            ("Questions", Some("100")),
            ("Com_select", Some("50")),
        ]);
        // Restarted: Uptime went back; Questions happens to be above its old value.
        let after = status_from_rows([
            ("Uptime", Some("3")),
            ("Questions", Some("130")),
            ("Com_select", Some("20")),
        ]);
        let d = StatusDelta::between(&before, &after, 1.0);
        assert_eq!(d.counter("Questions"), 130);
        assert_eq!(d.counter("Com_select"), 20);
        assert!(d.counters.values().all(|v| *v >= 0));
    }
}
