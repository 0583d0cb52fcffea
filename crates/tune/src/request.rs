//! `qpslab tune` as one call: the target resolved ([`qpslab_lab::request::target`]: the
//! embedded sandbox started, the connection flags applied), the results store opened, the
//! session ([`crate::session`]), and the sandbox stopped when the session failed. The caller
//! checks its input into a [`TuneRequest`], watches through an [`Observer`], renders the
//! [`TuneOutcome`], then stops the sandbox it holds ([`Connected::finish`]).

use crate::{Observer, Outcome, Request, Target, TuneError};
use qpslab_lab::request::target::{self, Connected, TargetRequest};
use qpslab_lab::server::restore::Ledger;
use qpslab_sandbox::SandboxHome;
use qpslab_store::Store;
use std::path::Path;
use std::sync::atomic::AtomicBool;

/// A whole `qpslab tune`: what to tune, on which server, stored where.
pub struct TuneRequest<'a> {
    /// What to tune, checked (see [`Request`]).
    pub request: &'a Request,
    /// The server: a sandbox of ours (started now for the embedded default) or the user's.
    pub target: TargetRequest,
    /// The target options as typed (no password), for the commands an error names.
    pub target_args: Vec<String>,
    /// The lab directory: its sandboxes, the ledger of changed settings.
    pub lab: &'a SandboxHome,
    /// The results store, created when missing.
    pub store: &'a Path,
}

/// What a tune session found, and the server it ran on.
pub struct TuneOutcome {
    /// The session's outcome, for the caller to render.
    pub outcome: Outcome,
    /// The server, holding the sandbox started for this session: the caller renders, then
    /// stops it with [`Connected::finish`].
    pub target: Connected,
}

/// Runs `req`: resolves the target (starting the embedded sandbox), opens the store and runs
/// the session (`session::tune`), reporting to `obs`; `stop` (Ctrl-C) ends it early.
/// A failed session stops the sandbox it started (a failure to stop is left unsaid: the
/// session's error is the one to report).
pub fn tune(
    req: TuneRequest,
    obs: &mut dyn Observer,
    stop: &AtomicBool,
) -> Result<TuneOutcome, TuneError> {
    let connected = target::resolve(&req.target, req.lab, &mut |line| obs.message(line))
        .map_err(TuneError::Target)?;
    match session(&req, &connected, obs, stop) {
        Ok(outcome) => Ok(TuneOutcome {
            outcome,
            target: connected,
        }),
        Err(e) => {
            let _ = connected.finish(&mut |line| obs.message(line));
            Err(e)
        }
    }
}

/// The session on the connected server, in the store opened now.
fn session(
    req: &TuneRequest,
    connected: &Connected,
    obs: &mut dyn Observer,
    stop: &AtomicBool,
) -> Result<Outcome, TuneError> {
    if !connected.ours {
        obs.message(&format!(
            "{}: only settings SET GLOBAL can change are tuned, and each is put back at the end",
            connected.options.describe()
        ));
    }
    let mut store = Store::open(req.store)?;
    // The settings a session changes are recorded where every host sharing its store looks
    // for them: in that store when it is a server's.
    let ledger = Ledger::for_store(req.lab.path(), req.store)?;
    let target = Target {
        options: &connected.options,
        server_pid: connected.server_pid,
        home: req.lab,
        ledger: &ledger,
        sandbox: connected.server(req.lab, &req.target_args).sandbox,
        target_args: &req.target_args,
    };
    crate::session::tune(req.request, &target, &mut store, obs, stop)
}
