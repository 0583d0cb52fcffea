//! Which server variables a capture changes, to what, and the SQL that sets and restores them.
//! Pure: the values come from `SHOW GLOBAL VARIABLES`, so each server gets only the variables
//! it has (MariaDB's `log_slow_verbosity`, MySQL's `log_slow_extra`, ...).

use qpslab_core::literal::quote;
use qpslab_lab::server::restore::{restore_line, same, Saved};
use serde::Serialize;
use std::collections::BTreeMap;

/// How a variable's value is written in `SET GLOBAL`: numbers bare (a quoted number is an
/// "incorrect argument type" for a numeric variable), everything else quoted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Number,
    Text,
}

/// The variables that make the slow log take every statement, with the value each gets during
/// the window, in the order they are set (the log is switched on last, by [`Changes::plan`]).
const EVERY_STATEMENT: &[(&str, Kind, &str)] = &[
    // Every statement is "slow".
    ("long_query_time", Kind::Number, "0"),
    // MariaDB/Percona: log every statement, not one in N sessions or queries.
    ("log_slow_rate_limit", Kind::Number, "1"),
    ("min_examined_row_limit", Kind::Number, "0"),
    // MariaDB: an empty filter logs every kind of statement (the default lists plan kinds).
    ("log_slow_filter", Kind::Text, ""),
    ("log_slow_admin_statements", Kind::Text, "ON"),
    // MariaDB: statements inside stored procedures stay out (the CALL itself is logged, so a
    // replay runs each procedure once, not its body twice); admin, CALL and replicated
    // statements are logged.
    ("log_slow_disabled_statements", Kind::Text, "sp"),
    // MariaDB/Percona: Rows_affected, Pages_accessed and the query plan's flags per entry.
    ("log_slow_verbosity", Kind::Text, "query_plan,innodb"),
    // MySQL 8: Rows_affected, Bytes_sent, Read_* handler counts per entry.
    ("log_slow_extra", Kind::Text, "ON"),
];

/// One variable a capture changes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Change {
    /// The global variable.
    pub name: String,
    /// Its value before the capture, restored after.
    pub old: String,
    /// Its value during the window.
    pub during: String,
    #[serde(skip)]
    kind: Kind,
}

impl Change {
    fn set(&self, value: &str) -> String {
        format!("{}={}", self.name, self.literal(value))
    }

    fn literal(&self, value: &str) -> String {
        match self.kind {
            Kind::Number => value.to_string(),
            Kind::Text => quote(value),
        }
    }
}

/// Every variable a capture changes, in the order they are set.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Changes(pub Vec<Change>);

/// The names of every variable a capture may change, for one `SHOW GLOBAL VARIABLES` query.
pub fn names() -> Vec<&'static str> {
    let mut n = vec!["slow_query_log", "slow_query_log_file", "log_output"];
    n.extend(EVERY_STATEMENT.iter().map(|(name, _, _)| *name));
    n
}

impl Changes {
    /// The changes that make the server log every statement to `log_file`, given its current
    /// global variables: only the variables it has, only those whose value differs (the log's
    /// file always does), the log switched on last.
    pub fn plan(vars: &BTreeMap<String, String>, log_file: &str) -> Changes {
        let mut out = Vec::new();
        let mut push = |name: &str, kind: Kind, during: String| {
            if let Some(old) = vars.get(name) {
                if !same(old, &during) {
                    out.push(Change {
                        name: name.to_string(),
                        old: old.clone(),
                        during,
                        kind,
                    });
                }
            }
        };
        if let Some(old) = vars.get("log_output") {
            push("log_output", Kind::Text, with_file_output(old));
        }
        push("slow_query_log_file", Kind::Text, log_file.to_string());
        for (name, kind, value) in EVERY_STATEMENT {
            push(name, *kind, value.to_string());
        }
        push("slow_query_log", Kind::Text, "ON".to_string());
        Changes(out)
    }

    /// The statements that apply the changes, one per variable, in order.
    pub fn apply_sql(&self) -> Vec<String> {
        self.0
            .iter()
            .map(|c| format!("SET GLOBAL {}", c.set(&c.during)))
            .collect()
    }

    /// The statements that restore the old values, one per variable: the log is switched
    /// back first, so nothing more is written to the capture's file.
    pub fn restore_sql(&self) -> Vec<String> {
        self.0
            .iter()
            .rev()
            .map(|c| format!("SET GLOBAL {}", c.set(&c.old)))
            .collect()
    }

    /// The old values, as recorded before the first change (`qpslab_lab::server::restore`).
    pub fn saved(&self) -> Vec<Saved> {
        self.0
            .iter()
            .map(|c| Saved {
                name: c.name.clone(),
                value: Some(c.old.clone()),
                literal: c.literal(&c.old),
            })
            .collect()
    }

    /// One statement restoring everything, for the user to run by hand if qpslab is killed.
    pub fn restore_line(&self) -> String {
        restore_line(&self.saved())
    }
}

/// `log_output` with FILE added: the other destinations (TABLE for the general log) stay.
fn with_file_output(old: &str) -> String {
    let parts: Vec<&str> = old.split(',').map(str::trim).collect();
    if parts.iter().any(|p| p.eq_ignore_ascii_case("FILE")) {
        old.to_string()
    } else if parts.iter().any(|p| p.eq_ignore_ascii_case("NONE")) || old.trim().is_empty() {
        // NONE wins over every other destination: it must go.
        "FILE".to_string()
    } else {
        format!("{old},FILE")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mariadb() -> BTreeMap<String, String> {
        [
            ("slow_query_log", "OFF"),
            ("slow_query_log_file", "vm-slow.log"),
            ("log_output", "FILE"),
            ("long_query_time", "10.000000"),
            ("log_slow_rate_limit", "1"),
            ("min_examined_row_limit", "0"),
            ("log_slow_filter", "admin,filesort,full_scan"),
            ("log_slow_admin_statements", "ON"),
            ("log_slow_disabled_statements", "sp"),
            ("log_slow_verbosity", ""),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
    }

    #[test]
    fn only_what_differs_changes_and_the_log_goes_on_last() {
        let c = Changes::plan(&mariadb(), "/data/cap.log");
        let names: Vec<&str> = c.0.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "slow_query_log_file",
                "long_query_time",
                "log_slow_filter",
                "log_slow_verbosity",
                "slow_query_log"
            ]
        );
        assert_eq!(
            c.apply_sql()[..2],
            [
                "SET GLOBAL slow_query_log_file='/data/cap.log'",
                "SET GLOBAL long_query_time=0"
            ]
        );
    }

    #[test]
    fn restoring_switches_the_log_off_first_and_fits_one_line() {
        let c = Changes::plan(&mariadb(), "/data/cap.log");
        assert_eq!(c.restore_sql()[0], "SET GLOBAL slow_query_log='OFF'");
        assert_eq!(
            c.restore_line(),
            "SET GLOBAL slow_query_log='OFF', log_slow_verbosity='', \
             log_slow_filter='admin,filesort,full_scan', long_query_time=10.000000, \
             slow_query_log_file='vm-slow.log';"
        );
    }

    #[test]
    fn a_server_without_a_variable_is_not_asked_to_set_it() {
        let mut mysql = mariadb();
        mysql.retain(|k, _| !k.starts_with("log_slow_") || k == "log_slow_admin_statements");
        mysql.insert("log_slow_extra".into(), "OFF".into());
        let c = Changes::plan(&mysql, "x.log");
        assert!(c
            .0
            .iter()
            .any(|c| c.name == "log_slow_extra" && c.during == "ON"));
        assert!(!c.0.iter().any(|c| c.name == "log_slow_verbosity"));
    }

    #[test]
    fn file_output_is_added_to_the_others() {
        assert_eq!(with_file_output("TABLE"), "TABLE,FILE");
        assert_eq!(with_file_output("FILE,TABLE"), "FILE,TABLE");
        assert_eq!(with_file_output("NONE"), "FILE");
    }

    #[test]
    fn quoted_values_cannot_end_the_literal() {
        assert_eq!(quote(r"a'b\"), r"'a\'b\\'");
    }
}
