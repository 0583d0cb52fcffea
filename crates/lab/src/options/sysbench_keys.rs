//! sysbench's own names for options qpslab has under another name, with sysbench's values, so
//! that a sysbench command line (or a study written from one) means the same here.

use super::def::{choices, def, percentiles, percentiles_text, OptionDef, Scope};
use super::value::{choice, float, text};
use qpslab_core::RetryErrors;
use serde_json::Value;

/// sysbench's `--db-ps-mode` values: `auto` uses prepared statements, `disable` the text
/// protocol.
const PS_MODES: &[&str] = &["auto", "disable"];

/// The options under sysbench's names.
pub(crate) static SYSBENCH: &[OptionDef] = &[
    choices(
        def(
            "db_ps_mode",
            Scope::Run,
            "MODE",
            "sysbench's name for --ps: auto (prepared statements, --ps on) or disable (the \
             text protocol, --ps off)",
            "disable",
            |b, v| {
                b.plan.prepared_statements = choice(v, PS_MODES)? == "auto";
                Ok(())
            },
            |b| {
                if b.plan.prepared_statements {
                    "auto"
                } else {
                    "disable"
                }
                .into()
            },
        ),
        PS_MODES,
    ),
    def(
        "mysql_ignore_errors",
        Scope::Run,
        "CODES|all",
        "Server errors after which an event is rolled back, counted and run again instead of \
         stopping the phase: a comma-separated list of codes (replacing the default list) or \
         all; a lost connection reconnects either way",
        "1062,1213",
        |b, v| {
            b.plan.ignore_errors = RetryErrors::parse(&text(v)?)?;
            Ok(())
        },
        |b| b.plan.ignore_errors.to_string(),
    ),
    def(
        "percentile",
        Scope::Run,
        "N",
        "sysbench's name for --percentiles with one percentile (1-100): the one its interval \
         line and summary show",
        "99",
        |b, v| {
            let p = float(v)?;
            if p == 0.0 {
                // sysbench's 0 turns percentiles off; qpslab always measures them.
                return Err("0 (no percentile) is not supported: give 1-100".into());
            }
            b.plan.percentiles = percentiles(&Value::String(format!("{p}")))?;
            Ok(())
        },
        percentiles_text,
    ),
];

#[cfg(test)]
mod tests {
    use crate::options::builder::Origin;
    use crate::options::resolve::resolve;
    use serde_json::Value;

    fn plan(key: &str, v: &str) -> Result<qpslab_core::RunPlan, String> {
        let v = Value::String(v.into());
        resolve([(key, &v)], Origin::Flags)
            .map(|r| r.plan)
            .map_err(|e| e.0)
    }

    #[test]
    fn ignore_errors_takes_sysbench_values() {
        use qpslab_core::RetryErrors;
        let p = plan("mysql_ignore_errors", "all").unwrap();
        assert_eq!(p.ignore_errors, RetryErrors::All);
        let p = plan("mysql_ignore_errors", "1062").unwrap();
        assert_eq!(p.ignore_errors, RetryErrors::Codes(vec![1062]));
        let p = plan("mysql_ignore_errors", "1213,1020,1205").unwrap();
        assert_eq!(p.ignore_errors, RetryErrors::Default);
        assert!(plan("mysql_ignore_errors", "deadlock").is_err());
    }

    #[test]
    fn sysbench_names_mean_what_they_mean_in_sysbench() {
        assert!(!plan("db_ps_mode", "disable").unwrap().prepared_statements);
        assert!(plan("db_ps_mode", "auto").unwrap().prepared_statements);
        assert!(plan("db_ps_mode", "off").is_err());
        assert_eq!(plan("percentile", "99").unwrap().percentiles, vec![99.0]);
        assert!(plan("percentile", "0").unwrap_err().contains("1-100"));
        assert!(plan("percentile", "101").is_err());
    }
}
