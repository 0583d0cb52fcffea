//! From option values to what the engine and the study runner take: every check of a run
//! option happens here, whether the value came from a flag or a spec key.

use super::builder::{Builder, Origin, Resolved};
use super::table::{find, OptionDef};
use serde_json::Value;

impl Origin {
    /// How `def` is named to a user of this origin.
    pub fn name(self, def: &OptionDef) -> String {
        match self {
            Origin::Flags if def.positional() => def.value_name.to_string(),
            Origin::Flags => def.flag(),
            Origin::Spec => def.name.to_string(),
        }
    }
}

/// Resolves `values` (option name, value; names as in the table, aliases already mapped) on
/// top of the defaults. Errors are one line naming the option as `origin` spells it.
pub fn resolve<'n, 'v>(
    values: impl IntoIterator<Item = (&'n str, &'v Value)>,
    origin: Origin,
) -> Result<Resolved, String> {
    let mut b = Builder::new(origin);
    for (name, v) in values {
        let def = find(name).ok_or_else(|| format!("unknown run option `{name}`"))?;
        (def.apply)(&mut b, v).map_err(|e| match (origin, def.positional()) {
            (Origin::Flags, true) => e,
            _ => format!("{}: {e}", origin.name(def)),
        })?;
    }
    b.finish()
}

/// Checks one value of option `def` on its own (as a spec is read).
pub fn check(def: &OptionDef, v: &Value) -> Result<(), String> {
    (def.apply)(&mut Builder::new(Origin::Spec), v)
}

/// The default of `def` as `run --help` shows it.
pub fn default_text(def: &OptionDef) -> String {
    (def.default)(&Builder::new(Origin::Flags))
}
