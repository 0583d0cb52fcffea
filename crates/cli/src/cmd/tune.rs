//! `qpslab tune`: searches the server's settings for the workload within a wall-time budget,
//! then confirms the best configuration against the baseline in paired rounds stored as a
//! study, until its anytime-valid interval decides or its share of the budget is spent, and
//! crowns it only when the interval of the throughput ratio lies above 1.
//!
//! The tuner is `qpslab_tune`; this module checks the arguments into its `TuneRequest`, calls
//! `qpslab_tune::tune` once (which starts the embedded sandbox, opens the store and runs the
//! session), prints its progress, writes its outcome (`crate::render::tune`), then stops the
//! sandbox.

use crate::args::{DurabilityArg, Format, SearchArg, TargetArgs, TuneArgs};
use crate::error::{exec_error, fail, user};
use crate::out::Output;
use crate::printer::Printer;
use crate::render::tune::{self as render_tune, Context};
use crate::signals::INTERRUPTED;
use crate::target::{command_args, sandbox_home, Connected};
use anyhow::Result;
use qpslab_core::advise::Durability;
use qpslab_core::env::ServerInfo;
use qpslab_core::fault::Blame;
use qpslab_engine::workload::Workload;
use qpslab_lab::run::ready::ReadyError;
use qpslab_tune::knobs::{self, Space};
use qpslab_tune::search::{describe, Config, Ended};
use qpslab_tune::{
    confirm, ConfirmRound, Observer, Request, Search, Trial, TuneError, TuneOutcome, TuneRequest,
};

/// Runs `qpslab tune`.
pub fn tune(a: TuneArgs) -> Result<()> {
    crate::db::accept(&a.on_target);
    let req = check(&a)?;
    let exporter = crate::metrics::start(a.metrics_addr.as_deref())?;
    let home = sandbox_home(&a.home);
    let target = crate::target::request(&a.target, Some(&a.embedded))?;
    let mut printer = TunePrinter {
        a: &a,
        req: &req,
        loading: Printer::new(),
        started: std::time::Instant::now(),
        metrics: exporter.as_ref().map(|e| e.registry().clone()),
    };
    let tune = TuneRequest {
        request: &req,
        target,
        target_args: command_args(&a.target),
        lab: &home,
        store: &a.db.db,
    };
    let done =
        qpslab_tune::tune(tune, &mut printer, &INTERRUPTED).map_err(|e| error(e, &a.target))?;
    // Written before the sandbox stops, as the session's last words.
    let rendered = render(&a, &req, &done);
    let stopped = Connected(done.target).finish();
    rendered?;
    stopped
}

/// The session's outputs: `--out`'s my.cnf section and the summary (or `--format json`).
fn render(a: &TuneArgs, req: &Request, done: &TuneOutcome) -> Result<()> {
    let outcome = &done.outcome;
    let context = Context {
        workload: &req.plan.workload.label(),
        threads: req.threads,
        target: &done.target.options.describe(),
        budget_s: req.budget_s,
    };
    if let Some(out) = &a.out {
        let text = render_tune::render(&render_tune::cnf(&context, outcome));
        crate::outfile::write("--out", out, &text)?;
        crate::outfile::tell("the tuned settings", out);
    }
    Output::new(&a.output, "tune")?.emit(|f| match f {
        Format::Json => crate::out::json(&render_tune::json_doc(outcome)),
        _ => Ok(render_tune::summary(&context, outcome)
            .iter()
            .map(|line| format!("{line}\n"))
            .collect()),
    })
}

/// The tuner's error as an error chain for the exit-code mapping: the lab's errors as their
/// own commands map them.
fn error(e: TuneError, t: &TargetArgs) -> anyhow::Error {
    match e {
        TuneError::Target(e) => fail(e),
        TuneError::Dataset(e) => match *e {
            ReadyError::Dataset(e) => exec_error(e),
            ReadyError::Sandbox(e) => e.into(),
            e => anyhow::Error::new(e),
        },
        TuneError::Exec(e) => exec_error(*e),
        TuneError::Measure {
            label,
            study,
            source,
        } => exec_error(*source).context(format!("measuring {label} of {study}")),
        TuneError::Restore(e) => crate::cmd::restore::error(e, t),
        e if e.is_user_error() => user(e.to_string()),
        e => e.into(),
    }
}

/// Prints a session's progress on stderr.
struct TunePrinter<'a> {
    a: &'a TuneArgs,
    req: &'a Request,
    /// Where building or checking the dataset reports.
    loading: Printer,
    /// When the session began, for the budget's ETA.
    started: std::time::Instant,
    /// The live metrics endpoint's registry (`--metrics-addr`).
    metrics: Option<qpslab_metrics::Registry>,
}

impl Observer for TunePrinter<'_> {
    fn server(&mut self, server: &ServerInfo, target: &str) {
        // The budget is counted from the session's start, once the server is reached.
        self.started = std::time::Instant::now();
        eprintln!(
            "server: {} ({}) at {target}",
            server.version, server.version_comment
        );
    }

    fn dataset(&mut self) -> Option<&mut dyn qpslab_lab::run::exec::Observer> {
        Some(&mut self.loading)
    }

    fn space(&mut self, space: &Space) {
        for k in &space.knobs {
            eprintln!("{}", render_tune::knob_line(k));
        }
        for skipped in &space.skipped {
            eprintln!("not tuned: {skipped}");
        }
    }

    fn message(&mut self, line: &str) {
        eprintln!("{line}");
    }

    fn search(&mut self, search: Search, n: usize) {
        match search {
            Search::Halving => eprintln!("search: successive halving of {n} configurations"),
            Search::Random => eprintln!("search: random, up to {n} configurations"),
        }
    }

    fn search_ended(&mut self, ended: &Ended) {
        eprintln!("{}", ended.words());
    }

    fn trial(&mut self, trial: &Trial<'_>) {
        // The budget bounds the session: what is left of it is the ETA.
        let (elapsed, budget) = (self.started.elapsed(), self.req.budget_s);
        eprintln!(
            "{} · {} of the {} budget{}",
            render_tune::trial_line(trial),
            crate::progress::duration_text(elapsed.as_secs_f64()),
            crate::progress::duration_text(budget),
            crate::progress::eta_text(elapsed.as_secs_f64(), budget, elapsed)
        );
    }

    fn interval(&mut self, i: &qpslab_lab::run::exec::Interval<'_>) {
        crate::metrics::report(self.metrics.as_ref(), i);
    }

    fn confirming(&mut self, best: Option<&Config>, share_s: f64) {
        match best {
            None => eprintln!("the baseline was best in the search: nothing to confirm"),
            Some(best) => eprintln!(
                "confirming {} against the baseline: paired rounds of {} s a side, at least {}, \
                 until the interval decides or {share_s:.0} s are spent",
                describe(best),
                self.a.trial_time.as_secs_f64(),
                self.a.repeats
            ),
        }
    }

    fn confirm_round(&mut self, round: &ConfirmRound) {
        eprintln!("{}", render_tune::confirm_round_line(round));
    }

    fn spent(&mut self, elapsed_s: f64, budget_s: f64) {
        eprintln!("{elapsed_s:.0} s of a {budget_s:.0} s budget");
    }
}

/// The arguments, checked before anything starts, as the tuner's request.
fn check(a: &TuneArgs) -> Result<Request> {
    crate::db::check(&a.db.db)?;
    if let Some(p) = &a.out {
        crate::outfile::check("--out", p, true)?;
    }
    Output::new(&a.output, "tune")?;
    let budget_s = parse_budget(&a.budget).map_err(user)?;
    knobs::check_known(&a.knobs).map_err(|e| user(e.to_string()))?;
    if a.repeats < confirm::MIN_REPEATS {
        return Err(user(format!(
            "--repeats must be at least {} (got {})",
            confirm::MIN_REPEATS,
            a.repeats
        )));
    }
    let trial_s = a.trial_time.as_secs_f64();
    if trial_s < 1.0 {
        return Err(user("--trial-time must be at least 1 second"));
    }
    let mut plan = crate::plan::options_plan(&a.options.0)?.plan;
    let [threads] = plan.threads[..] else {
        return Err(user(
            "tune measures one thread count: give --threads a single value",
        ));
    };
    if plan.workload.tpcc.mode == qpslab_core::tpcc::TpccMode::Spec {
        return Err(user(
            "tune tpcc measures stress mode only: in --mode spec the keying and think times \
             set the throughput (at most 12.86 New-Orders/min per warehouse), not the server",
        ));
    }
    plan.stop.time_s = Some(trial_s);
    plan.stop.events = None;
    let confirm_s = qpslab_tune::confirmation_cost(&plan, a.repeats);
    if budget_s < confirm_s + trial_s * 2.0 {
        return Err(user(format!(
            "--budget {}: too small; the confirmation's fewest rounds alone take about \
             {confirm_s:.0} s ({} rounds of 2 measurements of {} s): give at least {:.0} s or a \
             shorter --trial-time",
            a.budget,
            a.repeats,
            trial_s,
            confirm_s + trial_s * 2.0
        )));
    }
    let workload = Workload::new(&plan.workload).map_err(|e| user(e.to_string()))?;
    Ok(Request {
        plan,
        workload,
        threads,
        budget_s,
        durability: match a.durability {
            DurabilityArg::Strict => Durability::Strict,
            DurabilityArg::Relaxed => Durability::Relaxed,
        },
        knobs: a.knobs.clone(),
        repeats: a.repeats,
        search: match a.search {
            SearchArg::Halving => Search::Halving,
            SearchArg::Random => Search::Random,
        },
        command: crate::target::command_line(),
    })
}

/// `90`, `90s`, `10m`, `1h` as seconds.
fn parse_budget(s: &str) -> Result<f64, String> {
    qpslab_core::units::budget_seconds(s)
        .map_err(|_| format!("--budget {s}: use a time like 90s, 10m or 1h"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_read_as_seconds() {
        assert_eq!(parse_budget("90"), Ok(90.0));
        assert_eq!(parse_budget("90s"), Ok(90.0));
        assert_eq!(parse_budget("10m"), Ok(600.0));
        assert_eq!(parse_budget("1h"), Ok(3600.0));
        assert!(parse_budget("0").is_err());
        assert!(parse_budget("ten").is_err());
        assert!(parse_budget("5d").is_err());
    }
}
