//! A global variable changed between phases (`qpslab tune`) rather than inside one: the `set`
//! action's own executor and restore, so there is one way to change a setting and put it back.

use super::act::{self, Undo};
use qpslab_core::live::Action;
use qpslab_core::ConnectOptions;

/// A global variable that was changed, with the value (an SQL literal) it had before.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Changed {
    /// The variable.
    pub name: String,
    /// Its value before the change, as an SQL literal.
    pub previous: String,
}

/// A `SET GLOBAL` that did not take: the server's refusal (or the failed connection) in
/// words. A runtime failure: the value was checked before it was sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SetRefused(pub String);

/// `SET GLOBAL name = value` on a new connection to `target`, after reading the value it had;
/// the server's refusal in words otherwise.
pub fn set_global(target: &ConnectOptions, name: &str, value: &str) -> Result<Changed, SetRefused> {
    let action = Action::Set {
        name: name.to_string(),
        value: value.to_string(),
    };
    let done = act::run(target, None, &action);
    match done.undo {
        Some(Undo::Setting(name, previous)) => Ok(Changed { name, previous }),
        _ => Err(SetRefused(done.outcome)),
    }
}

impl Changed {
    /// Puts the variable back (retrying while the server says an earlier change is still in
    /// progress); the outcome in words, `name=value ok` or why not.
    pub fn restore(&self, target: &ConnectOptions) -> String {
        act::undo(
            target,
            Undo::Setting(self.name.clone(), self.previous.clone()),
        )
    }
}
