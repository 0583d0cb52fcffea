//! Every run option, declared once ([`OptionDef`]): `qpslab run`/`prepare` build their flags
//! from this table and a spec's `[defaults]` and `[sweep]` accept exactly its keys, so an option
//! cannot exist in one and not the other.

use super::client_keys::CLIENT;
pub use super::def::{OptionDef, Scope, Study};
use super::io_keys::FILEIO;
use super::label_keys::LABEL;
use super::live_keys::LIVE;
use super::run_keys::{RUN, STUDY};
use super::script_keys::SCRIPT;
use super::shard_keys::SHARD;
use super::sysbench_keys::SYSBENCH;
use super::workload_keys::WORKLOAD;
use std::sync::LazyLock;

/// The options, in the order `run --help` lists them: the workload's, the run's, the study's.
pub static OPTIONS: LazyLock<Vec<OptionDef>> = LazyLock::new(|| {
    [
        WORKLOAD, SCRIPT, RUN, SYSBENCH, LIVE, SHARD, CLIENT, LABEL, STUDY, FILEIO,
    ]
    .concat()
});

/// The option named `name` (or an alias of it).
pub fn find(name: &str) -> Option<&'static OptionDef> {
    OPTIONS
        .iter()
        .find(|d| d.name == name || d.alias == Some(name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::builder::{Builder, Origin};
    use crate::options::resolve::resolve;
    use serde_json::Value;

    #[test]
    fn names_are_unique_and_examples_apply() {
        let mut seen = std::collections::HashSet::new();
        for d in OPTIONS.iter() {
            assert!(seen.insert(d.name), "{} twice", d.name);
            let ex = Value::String(d.example.into());
            let r = resolve([(d.name, &ex)], Origin::Flags)
                .unwrap_or_else(|e| panic!("{}: example {}: {e}", d.name, d.example));
            let default = super::super::resolve::default_text(d);
            assert_ne!(
                (d.default)(&{
                    let mut b = Builder::new(Origin::Flags);
                    (d.apply)(&mut b, &ex).unwrap();
                    b
                }),
                default,
                "{}: the example {} should differ from the default",
                d.name,
                d.example
            );
            drop(r);
            for c in d.choices {
                assert!((d.apply)(
                    &mut Builder::new(Origin::Flags),
                    &Value::String((*c).into())
                )
                .is_ok());
            }
        }
    }

    #[test]
    fn errors_name_the_option_as_written() {
        let v = Value::String("0".into());
        let e = resolve([("table_size", &v)], Origin::Flags).unwrap_err().0;
        assert!(e.starts_with("--table-size:"), "{e}");
        let e = resolve([("table_size", &v)], Origin::Spec).unwrap_err().0;
        assert!(e.starts_with("table_size:"), "{e}");
        assert_eq!(find("duration").map(|d| d.name), Some("time"));
    }
}
