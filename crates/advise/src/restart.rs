//! Whether a variable can change at run time. MariaDB says so itself
//! (`information_schema.SYSTEM_VARIABLES.READ_ONLY`, read when the facts are gathered); MySQL 8's
//! `performance_schema.variables_info` has no such flag, so for MySQL and Percona a small table
//! lists the knobs the rules recommend, from MySQL 8.0's reference manual. That table has not
//! been checked against a real MySQL server here (only MariaDB is installed).

use std::collections::BTreeMap;

/// Knobs the rules may name that MySQL 8.0 cannot change with `SET GLOBAL`.
const MYSQL_RESTART: &[&str] = &[
    "innodb_buffer_pool_instances",
    "innodb_doublewrite",
    "innodb_flush_method",
    "innodb_log_file_size",
    "innodb_log_files_in_group",
    "performance_schema",
];

/// Whether changing `variable` needs a restart: the server's own read-only flags when it gives
/// them (an unlisted variable counts as needing one), otherwise the MySQL table.
pub fn needs_restart(read_only: &BTreeMap<String, bool>, variable: &str) -> bool {
    if read_only.is_empty() {
        return MYSQL_RESTART.contains(&variable);
    }
    read_only.get(variable).copied().unwrap_or(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_servers_flag_wins_over_the_table() {
        let mut f = BTreeMap::new();
        assert!(needs_restart(&f, "innodb_log_file_size"));
        assert!(!needs_restart(&f, "innodb_buffer_pool_size"));
        // MariaDB 10.11 resizes its redo log at run time.
        f.insert("innodb_log_file_size".into(), false);
        f.insert("performance_schema".into(), true);
        assert!(!needs_restart(&f, "innodb_log_file_size"));
        assert!(needs_restart(&f, "performance_schema"));
        assert!(needs_restart(&f, "not_listed"));
    }
}
