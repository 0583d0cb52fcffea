//! Opening a loop's sessions before the phase starts: blocking connects, a few in parallel.

use super::Shared;
use crate::run::error::RunError;
use crate::run::session::{open, Session};
use std::sync::atomic::Ordering;
use std::time::Instant;

/// Connections opened at once per loop: opening is a round-trip chain (handshake, auth,
/// prepares), so a few in parallel keep both sides busy.
const OPENERS_PER_LOOP: usize = 4;

/// Opens the sessions `ids` (blocking), a few at a time.
pub(crate) fn open_sessions(shared: &Shared<'_>, ids: &[u32]) -> Result<Vec<Session>, RunError> {
    let chunk = ids.len().div_ceil(OPENERS_PER_LOOP).max(1);
    std::thread::scope(|scope| {
        let workers: Vec<_> = ids
            .chunks(chunk)
            .map(|part| scope.spawn(move || open_some(shared, part)))
            .collect();
        let mut out = Vec::with_capacity(ids.len());
        let mut failure = None;
        for w in workers {
            match w.join() {
                Ok(Ok(mut s)) => out.append(&mut s),
                Ok(Err(e)) => keep_first_cause(&mut failure, e),
                Err(_) => {
                    failure
                        .get_or_insert(RunError::Internal("a connecting thread panicked".into()));
                }
            }
        }
        failure.map_or(Ok(out), Err)
    })
}

/// Keeps the first error that is not a consequence of another (`Interrupted` after an abort).
pub(crate) fn keep_first_cause(slot: &mut Option<RunError>, e: RunError) {
    if slot.is_none() || matches!(slot, Some(RunError::Interrupted)) {
        *slot = Some(e);
    }
}

fn open_some(shared: &Shared<'_>, ids: &[u32]) -> Result<Vec<Session>, RunError> {
    let now = Instant::now();
    let mut out = Vec::with_capacity(ids.len());
    for &id in ids {
        if shared.stopping() {
            return Err(RunError::Interrupted);
        }
        let opened = open(
            shared.target,
            shared.workload,
            shared.ps(),
            shared.pipeline(),
            shared.plan.isolation,
        )
        .inspect_err(|_| {
            // No point opening the rest: the phase cannot start.
            shared.abort.store(true, Ordering::Relaxed);
        })?;
        let gen = shared
            .workload
            .session_in(id, shared.sessions, shared.seed());
        out.push(Session::new(opened, gen, now));
    }
    Ok(out)
}
