//! Tuning with proof (`qpslab tune`): searches a server's settings for a workload within a
//! wall-time budget, then confirms the best configuration against the baseline in paired rounds
//! stored as a study, until the anytime-valid interval of the throughput ratio decides or the
//! confirmation's share of the budget is spent, and crowns it only when that interval lies
//! above 1.
//!
//! The tuner sits above the lab and `report`: its decisions need `report`'s statistics (a ratio
//! with its interval on the log scale), and everything that touches a server is the lab's
//! (`advise`, `live::set_global`, `exec::measure`, `study::create`). The pieces:
//!
//! - [`knobs`] (pure): the curated knob list and the candidate values of a server;
//! - [`search`] (pure): which configurations to try, how many fit, who survives a rung;
//! - [`budget`] (pure): the budget split between the search, the confirmation and the rechecks;
//! - [`confirm`] (pure): the A/B order of the confirmation, when it stops, and its verdict;
//! - `apply`: changing the settings with `SET GLOBAL` and putting them back;
//! - `bench`: a search trial (one engine phase) and the proof study's measurements;
//! - `session`: the flow, the budget's split and the two searches; `proof`: the confirmation's
//!   rounds; `conclude`: the rechecks and the outcome;
//! - `request`: the whole command: the target resolved (the embedded sandbox started), the
//!   store opened, the session.
//!
//! One call, [`tune`], runs a session; it prints nothing: progress goes to an [`Observer`],
//! and the [`TuneOutcome`] is the caller's to render (summary, `tuned.cnf`, JSON), before it
//! stops the sandbox the outcome holds.
//!
//! Its parts, file by file (the crate map in docs/ARCHITECTURE.md points here): tuning with proof
//! (`qpslab tune`): the knob space (`knobs.rs`), the budget's split (`budget.rs`), the budgeted
//! search (`search.rs`), the confirmation's A/B order, stopping rule and verdict
//! (`confirm.rs`), `SET GLOBAL` and its restore (`apply.rs`), trials and the proof study
//! (`bench.rs`), the session (`session.rs`, `proof.rs`, `conclude.rs`), the whole command with its target
//! and store (`request.rs`); progress through its `Observer`, the `Outcome` rendered by the CLI
//! (`render/tune.rs`).
//!
//! ```no_run
//! # fn demo(req: qpslab_tune::TuneRequest, obs: &mut dyn qpslab_tune::Observer)
//! # -> Result<(), Box<dyn std::error::Error>> {
//! let stop = std::sync::atomic::AtomicBool::new(false);
//! let done = qpslab_tune::tune(req, obs, &stop)?;
//! if done.outcome.significant() {
//!     // `done.outcome.best`: the confirmed settings, for the caller to render as a my.cnf
//!     // section
//! }
//! done.target.finish(&mut |line| eprintln!("{line}"))?;
//! # Ok(()) }
//! ```

mod apply;
mod bench;
pub mod budget;
mod conclude;
pub mod confirm;
mod error;
pub mod knobs;
mod proof;
mod request;
pub mod search;
mod session;

pub use conclude::{Minimized, Outcome, Removal};
pub use confirm::verdict_words;
pub use error::TuneError;
pub use proof::{confirmation_json, Confirmed};
pub use request::{tune, TuneOutcome, TuneRequest};

use knobs::Space;
use qpslab_core::advise::Durability;
use qpslab_core::env::ServerInfo;
use qpslab_core::{ConnectOptions, RunPlan};
use qpslab_engine::workload::Workload;
use qpslab_lab::run::ready::{OurSandbox, Server};
use qpslab_sandbox::SandboxHome;
use search::Config;

/// How the knob space is searched within the budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Search {
    /// Successive halving seeded by advise: short trials, the better half re-run twice as long.
    Halving,
    /// Random configurations, one trial each (the comparison for the search).
    Random,
}

/// What to tune, checked by the caller (see [`confirmation_cost`], [`confirm::MIN_REPEATS`],
/// [`knobs::check_known`]).
#[derive(Clone, Debug)]
pub struct Request {
    /// The workload's plan, with one thread count and the trial time as its stop time.
    pub plan: RunPlan,
    /// The workload of the plan's options.
    pub workload: Workload,
    /// The sessions measured (the plan's one thread count).
    pub threads: u32,
    /// Seconds for the whole session: the search, the confirmation and the rechecks
    /// ([`budget::Shares`]).
    pub budget_s: f64,
    /// Whether knobs that trade crash safety for speed may be tuned.
    pub durability: Durability,
    /// Only these knobs (empty: every knob of the list the server can change).
    pub knobs: Vec<String>,
    /// Fewest rounds of the confirmation (one measurement of each side a round), before its
    /// interval may stop it.
    pub repeats: u32,
    /// How the knob space is searched.
    pub search: Search,
    /// The command line, stored with the proof study's runs (no password).
    pub command: String,
}

/// The server a session tunes.
#[derive(Clone, Copy, Debug)]
pub struct Target<'a> {
    /// How to open sessions (the schema of the sbtest tables set).
    pub options: &'a ConnectOptions,
    /// The pid of our sandbox's server, for its CPUs and its telemetry.
    pub server_pid: Option<u32>,
    /// The lab directory: the proof study's environment.
    pub home: &'a SandboxHome,
    /// The restore trail the session records the settings it changes in first (the lab
    /// directory's, or a server store's: `Ledger::for_store`).
    pub ledger: &'a qpslab_lab::server::restore::Ledger,
    /// The sandbox of ours the server is, whose dataset the session builds when missing;
    /// `None`: the user's server, whose dataset is only checked.
    pub sandbox: Option<OurSandbox<'a>>,
    /// The target options as typed (no password), for the `qpslab prepare` command a missing
    /// dataset on the user's server names.
    pub target_args: &'a [String],
}

impl<'a> Target<'a> {
    /// The options without a default schema (the control connection's).
    pub fn server_options(&self) -> ConnectOptions {
        ConnectOptions {
            database: None,
            ..self.options.clone()
        }
    }

    /// The server as the lab readies it (its dataset).
    pub fn server(&self) -> Server<'a> {
        Server {
            target: self.options,
            sandbox: self.sandbox,
            pid: self.server_pid,
            target_args: self.target_args,
        }
    }
}

/// One measured trial of the search, as it is reported.
#[derive(Clone, Copy, Debug)]
pub struct Trial<'a> {
    /// From 1, in the order measured.
    pub seq: u32,
    /// The round of successive halving (0 for random search).
    pub round: u32,
    /// The rung of successive halving within its round (0 for random search).
    pub rung: u32,
    /// Seconds measured.
    pub secs: f64,
    /// The configuration measured.
    pub config: &'a Config,
    /// Its transactions per second.
    pub tps: f64,
    /// The best configuration so far.
    pub best: Option<Best<'a>>,
}

/// The search's best configuration so far, as a [`Trial`] reports it.
#[derive(Clone, Copy, Debug)]
pub struct Best<'a> {
    /// The configuration.
    pub config: &'a Config,
    /// Its transactions per second.
    pub tps: f64,
    /// The interval of its per-interval tps at [`confirm::LEVEL`] (when they vary).
    pub interval: Option<(f64, f64)>,
}

/// A round of the confirmation, as it is reported.
#[derive(Clone, Copy, Debug)]
pub struct ConfirmRound {
    /// From 1.
    pub round: usize,
    /// Its two throughputs, whether both sides were stable, and its length.
    pub measured: confirm::Round,
    /// The verdict so far (`None`: fewer than three rounds fit to pair).
    pub gain: Option<confirm::Gain>,
    /// Rounds so far left out for an unstable side.
    pub dropped: usize,
}

/// Where a session's progress goes. Every method may do nothing.
pub trait Observer {
    /// Connected: the server's version and comment; `target` is its redacted description.
    fn server(&mut self, _server: &ServerInfo, _target: &str) {}
    /// Where building (on a sandbox of ours) or checking the workload's dataset reports, once
    /// the knobs named were checked against the server (`None`: nowhere).
    fn dataset(&mut self) -> Option<&mut dyn qpslab_lab::run::exec::Observer> {
        None
    }
    /// The knob space searched, and the knobs of the list left out with why.
    fn space(&mut self, _space: &Space) {}
    /// A line to show: how to restore by hand if killed, a setting put back, a warning.
    fn message(&mut self, _line: &str) {}
    /// The search begins, with up to `n` configurations (successive halving: each round).
    fn search(&mut self, _search: Search, _n: usize) {}
    /// The search ended: it converged, or the budget ended it.
    fn search_ended(&mut self, _ended: &search::Ended) {}
    /// A trial of the search was measured.
    fn trial(&mut self, _trial: &Trial<'_>) {}
    /// One report interval of a trial (the session's name as its run, `trial N (PHASE)` as
    /// its cell) or of a confirmation's measurement (its run and cell).
    fn interval(&mut self, _i: &qpslab_lab::run::exec::Interval<'_>) {}
    /// The confirmation begins for `best` with `share_s` seconds (its share of the budget and
    /// what the search left); `None`: the baseline won, nothing to confirm.
    fn confirming(&mut self, _best: Option<&Config>, _share_s: f64) {}
    /// A round of the confirmation was measured.
    fn confirm_round(&mut self, _round: &ConfirmRound) {}
    /// The search and the confirmation took `elapsed_s` of the budget.
    fn spent(&mut self, _elapsed_s: f64, _budget_s: f64) {}
}

/// Seconds `repeats` rounds of the confirmation take by the plan (its minimum, and before any
/// round was measured the estimate of one): each measurement's time and warm-up, and a second
/// for the settings.
pub fn confirmation_cost(plan: &RunPlan, repeats: u32) -> f64 {
    let one = plan.stop.time_s.unwrap_or(0.0) + plan.warmup_s + 1.0;
    2.0 * f64::from(repeats) * one
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_confirmation_costs_its_measurements_and_their_warm_ups() {
        let mut plan = RunPlan::new(qpslab_core::WorkloadOptions::new(
            qpslab_core::WorkloadKind::OltpReadOnly,
        ));
        plan.stop.time_s = Some(3.0);
        plan.warmup_s = 1.0;
        // 2 sides × 3 repeats × (3 s measured + 1 s warm-up + 1 s for the settings).
        assert_eq!(confirmation_cost(&plan, 3), 30.0);
    }
}
