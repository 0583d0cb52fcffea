//! Whole commands as one call each: a request the caller builds from its own input (the CLI
//! from its flags), the work behind it, and an outcome to render. [`run`] is `qpslab run`:
//! the profile checks, the store, readying the server and the sweep.

pub mod profile;
pub mod run;

pub use run::{run, RunError, RunObserver, RunOutcome, RunRequest};
