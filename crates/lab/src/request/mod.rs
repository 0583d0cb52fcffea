//! Whole commands as one call each: a request the caller builds from its own input (the CLI
//! from its flags), the work behind it, and an outcome to render. [`run`] is `qpslab run`:
//! the target resolved ([`target`]: the embedded sandbox started), the profile checks, the
//! store, readying the server and the sweep; its [`RunError`] says what the command prints and
//! whose fault it is.

mod error;
pub mod profile;
pub mod run;
pub mod target;

pub use error::RunError;
pub use run::{run, RunObserver, RunOutcome, RunRequest};
