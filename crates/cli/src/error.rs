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
        if let Some(e) = cause.downcast_ref::<qpslab_sandbox::Error>() {
            return if e.is_user_error() { 2 } else { 1 };
        }
        if let Some(e) = cause.downcast_ref::<qpslab_engine::RunError>() {
            return if e.is_user_error() { 2 } else { 1 };
        }
        if let Some(e) = cause.downcast_ref::<qpslab_engine::prepare::PrepareError>() {
            // A failed statement is judged by the client's error further down the chain.
            if e.is_user_error() {
                return 2;
            }
        }
        if let Some(e) = cause.downcast_ref::<qpslab_wire::Error>() {
            return if wire_is_user_error(e) { 2 } else { 1 };
        }
        if let Some(e) = cause.downcast_ref::<qpslab_store::Error>() {
            return if e.is_user_error() { 2 } else { 1 };
        }
    }
    1
}

/// Wrong credentials, unknown database, or no MySQL server answering where the user pointed
/// us (refused, unknown host, silent past --connect-timeout, not speaking MySQL).
pub fn wire_is_user_error(e: &qpslab_wire::Error) -> bool {
    if matches!(e, qpslab_wire::Error::Unreachable(_)) {
        // Silent, or not a MySQL server: as unreachable as a refused connection.
        return true;
    }
    match e.server_code() {
        // access denied (1045, 1698), unknown database (1049), host not allowed (1130)
        // too many connections (1040): the user asked for more sessions than the server accepts
        Some(code) => matches!(code, 1040 | 1045 | 1049 | 1130 | 1698),
        None => matches!(e, qpslab_wire::Error::Io(io) if matches!(
            io.kind(),
            std::io::ErrorKind::ConnectionRefused
                | std::io::ErrorKind::NotFound
                | std::io::ErrorKind::PermissionDenied
                | std::io::ErrorKind::HostUnreachable
                | std::io::ErrorKind::NetworkUnreachable
                | std::io::ErrorKind::AddrNotAvailable
        // A host name that does not resolve (getaddrinfo's errors have no stable kind).
        ) || io.to_string().contains("failed to lookup address")),
    }
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
