//! Exit codes: 0 success, 1 runtime failure, 2 the user's mistake. Errors travel as `anyhow`
//! chains; a [`UserError`] anywhere in the chain, or a library error that says it is the user's,
//! makes the exit code 2.

use qpslab_core::fault::{Blame, Fault};

/// A mistake in what the user asked for (bad option value, unknown name, wrong password...).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UserError(pub String);

/// Builds a user error.
pub fn user(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(UserError(msg.into()))
}

/// A library error as the CLI reports it: its message as it is, and its fault (see
/// [`qpslab_core::fault::Blame`]) judged once, here, for the exit code.
pub fn fail<E: Blame>(e: E) -> anyhow::Error {
    anyhow::Error::new(Judged {
        fault: e.fault(),
        inner: Box::new(e),
    })
}

/// A library error whose fault was judged where it entered the CLI.
#[derive(Debug)]
struct Judged {
    fault: Fault,
    inner: Box<dyn std::error::Error + Send + Sync + 'static>,
}

impl std::fmt::Display for Judged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.inner.fmt(f)
    }
}

impl std::error::Error for Judged {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.inner.source()
    }
}

/// The process exit code for an error chain.
pub fn exit_code(err: &anyhow::Error) -> i32 {
    for cause in err.chain() {
        if cause.is::<UserError>() {
            return 2;
        }
        if let Some(j) = cause.downcast_ref::<Judged>() {
            return if j.fault == Fault::User { 2 } else { 1 };
        }
        // Library errors that entered by `?` rather than through [`fail`]: judged here.
        if let Some(f) = judged_by::<qpslab_sandbox::Error>(cause)
            .or_else(|| judged_by::<qpslab_engine::RunError>(cause))
            .or_else(|| judged_by::<qpslab_wire::Error>(cause))
            .or_else(|| judged_by::<qpslab_store::Error>(cause))
        {
            return if f == Fault::User { 2 } else { 1 };
        }
        if let Some(e) = cause.downcast_ref::<qpslab_engine::prepare::PrepareError>() {
            // A failed statement is judged by the client's error further down the chain.
            if e.is_user_error() {
                return 2;
            }
        }
    }
    1
}

/// The fault of `cause` when it is an `E`.
fn judged_by<E: Blame>(cause: &(dyn std::error::Error + 'static)) -> Option<Fault> {
    cause.downcast_ref::<E>().map(Blame::fault)
}

/// An `ExecError` as an error chain that keeps the engine's and the client's errors visible to
/// the exit-code mapping.
pub fn exec_error(e: qpslab_lab::ExecError) -> anyhow::Error {
    use qpslab_lab::ExecError as E;
    if e.is_user_error() {
        return user(e.to_string());
    }
    match e {
        E::Run(e) => e.into(),
        E::Connect { target, source } => {
            anyhow::Error::new(source).context(format!("connecting to {target}"))
        }
        // Its message names the step that failed (checking, loading, dropping, ...).
        E::Dataset(e) => anyhow::Error::new(e),
        other => other.into(),
    }
}
