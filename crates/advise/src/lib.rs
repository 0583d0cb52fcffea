//! The version-aware advisor behind `qpslab advise`: facts about a server (and, when it runs
//! here, its host), rules that turn them into [`Finding`]s, each with the figures it came from.
//!
//! Two guarantees live in one place, [`advise`], so no rule has to remember them: a finding
//! never names a server variable the server lacks (a rule that does is caught by the tests and
//! dropped at run time), and whether a change needs a restart comes from the server's own flags
//! ([`restart`]), not from each rule. Durability settings are only ever recommended with
//! [`Durability::Relaxed`]; otherwise they are listed with their trade-off.
//!
//! Its parts, file by file (the crate map in docs/ARCHITECTURE.md points here): the version-aware
//! advisor: a server's and its host's facts (`facts.rs`), the rules (`memory.rs`, `io.rs`,
//! `server.rs`, `host.rs`, `durability.rs`, each building its findings with `rule.rs`) and whether
//! a change needs a restart (`restart.rs`); used by `qpslab advise` and to seed `tune`.
//!
//! ```no_run
//! # fn demo(conn: &mut qpslab_wire::Conn) -> Result<(), qpslab_probe::Error> {
//! use qpslab_core::advise::Durability;
//! let facts = qpslab_advise::gather(conn, true)?;
//! for f in qpslab_advise::advise(&facts, Durability::Strict) {
//!     println!("{} {} -> {:?}: {}", f.variable, f.current, f.recommended, f.reason);
//! }
//! # Ok(()) }
//! ```

mod durability;
mod facts;
mod fmt;
mod host;
mod io;
mod memory;
mod restart;
mod rule;
mod server;

pub use facts::{gather, read_facts, Facts, FactsError, Local};
pub use fmt::count;
pub use qpslab_core::advise::{Durability, Finding, FindingKind, Severity};
pub use restart::needs_restart;
pub use rule::MIN_UPTIME_S;

/// Every finding for `facts`, recommendations first, most severe first.
pub fn advise(facts: &Facts, durability: Durability) -> Vec<Finding> {
    let mut found: Vec<Finding> = raw(facts, durability)
        .into_iter()
        .filter(|f| names_only_known(facts, f))
        .map(|mut f| {
            f.restart_needed = f.kind != FindingKind::Os && facts.needs_restart(&f.variable);
            f
        })
        .collect();
    found.sort_by_key(|f| (!f.recommends(), f.severity));
    found
}

/// What the rules say, before the checks of [`advise`].
fn raw(facts: &Facts, durability: Durability) -> Vec<Finding> {
    let mut all = Vec::new();
    all.extend(memory::rules(facts));
    all.extend(io::rules(facts));
    all.extend(server::rules(facts));
    all.extend(host::rules(facts));
    all.extend(durability::rules(facts, durability));
    all
}

/// A server or durability finding must name a variable of this server's
/// `SHOW GLOBAL VARIABLES`; OS findings name host settings.
fn names_only_known(facts: &Facts, f: &Finding) -> bool {
    f.kind == FindingKind::Os || facts.var(&f.variable).is_some()
}

#[cfg(test)]
mod tests;
