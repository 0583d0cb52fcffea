//! From option values to what the engine and the study runner take: every check of a run
//! option happens here, whether the value came from a flag or a spec key.

use super::builder::{Builder, Origin, Resolved};
use super::table::{find, OptionDef};
use crate::error::OptionError;
use serde_json::Value;

/// How `def` is named in an error, `--table-size` or `table_size`; a positional argument is
/// not named (its errors name it themselves: "unknown workload 'x'").
fn label(origin: Origin, def: &OptionDef) -> Option<String> {
    match origin {
        Origin::Flags if def.positional() => None,
        Origin::Flags => Some(def.flag()),
        Origin::Spec => Some(def.name.to_string()),
    }
}

/// Resolves `values` (option name, value; names as in the table, aliases already mapped) on
/// top of the defaults. Errors are one line naming the option as `origin` spells it.
pub fn resolve<'n, 'v>(
    values: impl IntoIterator<Item = (&'n str, &'v Value)>,
    origin: Origin,
) -> Result<Resolved, OptionError> {
    let mut b = Builder::new(origin);
    for (name, v) in values {
        let def = find(name).ok_or_else(|| OptionError(format!("unknown run option `{name}`")))?;
        (def.apply)(&mut b, v).map_err(|e| match label(origin, def) {
            Some(name) => OptionError(format!("{name}: {e}")),
            None => OptionError(e),
        })?;
    }
    Ok(b.finish()?)
}

/// Checks one value of option `def` on its own (as a spec is read).
pub fn check(def: &OptionDef, v: &Value) -> Result<(), OptionError> {
    Ok((def.apply)(&mut Builder::new(Origin::Spec), v)?)
}

/// The default of `def` as `run --help` shows it.
pub fn default_text(def: &OptionDef) -> String {
    (def.default)(&Builder::new(Origin::Flags))
}
