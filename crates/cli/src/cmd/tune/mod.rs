//! `qpslab tune`: searches the server's settings for the workload within a wall-time budget,
//! then confirms the best configuration against the baseline in interleaved repeats stored as
//! a study, and crowns it only when the interval of the throughput ratio excludes 1.
//!
//! The search lives here rather than in the lab because its decisions need `qpslab_report`'s
//! intervals and the lab does not see `report` (see docs/ARCHITECTURE.md, "Tune"). The pieces:
//! the knob space (`knobs`), the search's bookkeeping (`search`), the decision (`confirm`),
//! changing and restoring settings (`apply`), measuring (`bench`), the output file (`cnf`) and
//! the session itself (`session`).

mod apply;
mod bench;
mod cnf;
mod confirm;
mod knobs;
mod search;
mod session;
mod session_out;

use crate::args::{DurabilityArg, TuneArgs};
use crate::error::user;
use crate::target::{connect, sandbox_home};
use anyhow::Result;
use qpslab_core::advise::Durability;
use qpslab_engine::workload::Workload;

/// Runs `qpslab tune`.
pub fn tune(a: TuneArgs) -> Result<()> {
    let checked = check(&a)?;
    let workload = Workload::new(&checked.plan.workload).map_err(|e| user(e.to_string()))?;
    let home = sandbox_home(&a.home);
    let connected = connect(&a.target, Some(&a.embedded), &home)?;
    if !connected.ours {
        eprintln!("{}: only settings SET GLOBAL can change are tuned (--apply-dynamic-only), and each is put back at the end", connected.options.describe());
    }
    let outcome = crate::db::open_to_write(&a.db.db)
        .and_then(|mut store| session::run(&a, &checked, &workload, &mut store, &connected, &home));
    let stopped = connected.finish();
    outcome?;
    stopped
}

/// The arguments, checked before anything starts.
pub(crate) struct Checked {
    plan: qpslab_core::RunPlan,
    threads: u32,
    budget_s: f64,
    durability: Durability,
}

fn check(a: &TuneArgs) -> Result<Checked> {
    crate::db::check(&a.db.db)?;
    for (flag, path) in [("--out", &a.out), ("--json", &a.json)] {
        if let Some(p) = path {
            crate::outfile::check(flag, p, true)?;
        }
    }
    let budget_s = parse_budget(&a.budget).map_err(user)?;
    knobs::check_known(&a.knobs).map_err(user)?;
    if a.repeats < confirm::MIN_REPEATS {
        return Err(user(format!(
            "--repeats must be at least {} (got {})",
            confirm::MIN_REPEATS,
            a.repeats
        )));
    }
    if a.trial_time == 0 {
        return Err(user("--trial-time must be at least 1 second"));
    }
    let mut plan = crate::plan::options_plan(&a.options.0)?.plan;
    let [threads] = plan.threads[..] else {
        return Err(user(
            "tune measures one thread count: give --threads a single value",
        ));
    };
    plan.stop.time_s = Some(f64::from(a.trial_time));
    plan.stop.events = None;
    let confirm_s = confirmation_cost(&plan, a.repeats);
    if budget_s < confirm_s + f64::from(a.trial_time) * 2.0 {
        return Err(user(format!(
            "--budget {}: too small; the confirmation alone takes about {confirm_s:.0} s \
             (2 × {} measurements of {} s): give at least {:.0} s or a shorter --trial-time",
            a.budget,
            a.repeats,
            a.trial_time,
            confirm_s + f64::from(a.trial_time) * 2.0
        )));
    }
    let durability = match a.durability {
        DurabilityArg::Strict => Durability::Strict,
        DurabilityArg::Relaxed => Durability::Relaxed,
    };
    Ok(Checked {
        plan,
        threads,
        budget_s,
        durability,
    })
}

/// Seconds a confirmation of `repeats` measurements per side takes, by the plan: each
/// measurement's time and warm-up, and a second for the settings.
fn confirmation_cost(plan: &qpslab_core::RunPlan, repeats: u32) -> f64 {
    let one = plan.stop.time_s.unwrap_or(0.0) + plan.warmup_s + 1.0;
    2.0 * f64::from(repeats) * one
}

/// `90`, `90s`, `10m`, `1h` as seconds.
fn parse_budget(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let (num, unit) = match t.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => t.split_at(i),
        None => (t, "s"),
    };
    let mult = match unit {
        "s" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => return Err(format!("--budget {s}: use a time like 90s, 10m or 1h")),
    };
    match num.trim().parse::<f64>() {
        Ok(n) if n > 0.0 && n.is_finite() => Ok(n * mult),
        _ => Err(format!("--budget {s}: use a time like 90s, 10m or 1h")),
    }
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
