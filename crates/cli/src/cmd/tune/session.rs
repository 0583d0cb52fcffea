//! One tune session on a connected server: the dataset, the knob space from the server's own
//! variables, the budgeted search seeded by advise, the confirmation, and the outputs.

use super::apply::Applier;
use super::bench::{Bench, Measured};
use super::knobs::{self, Knob, Sizes, Space};
use super::search::{self, describe, Config, Found, Rng};
use super::session_out::conclude;
use super::{confirm, Checked};
use crate::args::{SearchArg, TuneArgs};
use crate::error::user;
use crate::target::Connected;
use anyhow::{Context, Result};
use qpslab_engine::workload::Workload;
use qpslab_lab::advise::{advise, gather, needs_restart, Facts};
use qpslab_sandbox::SandboxHome;
use qpslab_stats::{estimate, t_quantile};
use qpslab_store::Store;
use std::time::Instant;

/// Runs the session; prints progress on stderr and the outcome on stdout.
pub(super) fn run(
    a: &TuneArgs,
    c: &Checked,
    workload: &Workload,
    store: &mut Store,
    target: &Connected,
    home: &SandboxHome,
) -> Result<()> {
    let (mut control, _) = target.control()?;
    let server = target.server_options();
    // The leftovers of a killed tune would be taken as the baseline and "restored" at the end.
    crate::cmd::restore::refuse_leftovers(home, &server, &a.target)?;
    let local = target.options.endpoint.is_local();
    let facts = gather(&mut control, local).context("reading the server's variables")?;
    // The knobs are checked against the server before the dataset is built; their sizes
    // follow the data once it is there.
    space(&facts, c, &a.knobs, false)?;
    let _sandbox = crate::dataset::ensure_dataset(target, &a.target, &c.plan.workload, None)?;
    let facts = gather(&mut control, local).context("reading the server's variables")?;
    let space = space(&facts, c, &a.knobs, true)?;
    let names: Vec<String> = space.knobs.iter().map(|k| k.name.clone()).collect();
    // Declared before the bench, so dropped after it: the applier's own restore comes first.
    let guard = crate::cmd::restore::guard(home, &server, &a.target, "tune", &names)?;
    let started = Instant::now();
    let session = format!("tune-{}-{}", unix_secs(), std::process::id());
    let mut bench = Bench {
        target,
        plan: c.plan.clone(),
        workload,
        threads: c.threads,
        applier: Applier::new(&target.options, &space.knobs),
        store,
        session,
        seq: 0,
        overhead_s: c.plan.warmup_s + 2.0,
    };
    let reserve = super::confirmation_cost(&c.plan, a.repeats);
    let seed = seed_config(&facts, c, &space.knobs);
    let deadline = c.budget_s - reserve;
    let found = match a.search {
        SearchArg::Halving => halving(&mut bench, &space.knobs, &seed, (started, deadline))?,
        SearchArg::Random => random(&mut bench, &space.knobs, (started, deadline))?,
    };
    let outcome = conclude(a, c, &mut bench, &space, found, home)?;
    eprintln!(
        "{:.0} s of a {:.0} s budget",
        started.elapsed().as_secs_f64(),
        c.budget_s
    );
    for line in bench.applier.restore() {
        eprintln!("{line}");
    }
    crate::cmd::restore::finish(guard);
    outcome.print();
    Ok(())
}

/// The knob space of the server, with what was left out said on stderr.
fn space(facts: &Facts, c: &Checked, only: &[String], show: bool) -> Result<Space> {
    let restart = |n: &str| needs_restart(&facts.read_only, n);
    let server = knobs::Server {
        variables: &facts.server.variables,
        needs_restart: &restart,
    };
    let sizes = Sizes {
        memory_bytes: facts.local.as_ref().map_or(0, |l| l.host.memory_bytes),
        data_bytes: facts.innodb_bytes,
    };
    let s = knobs::space(&server, &sizes, c.durability, only).map_err(user)?;
    if !show {
        return Ok(s);
    }
    for k in &s.knobs {
        let mark = if k.durability { " (durability)" } else { "" };
        eprintln!(
            "knob {}{mark}: {} → {}",
            k.name,
            k.current,
            k.values.join(", ")
        );
    }
    for skipped in &s.skipped {
        eprintln!("not tuned: {skipped}");
    }
    Ok(s)
}

/// Advise's recommendations for the knobs being searched, as one configuration.
fn seed_config(facts: &Facts, c: &Checked, knobs: &[Knob]) -> Config {
    advise(facts, c.durability)
        .into_iter()
        .filter(|f| f.recommends())
        .filter_map(|f| {
            let knob = knobs.iter().find(|k| k.name == f.variable)?;
            let value = f.recommended?;
            // The list's spelling of the same value, so the seed repeats no candidate.
            let value = knob
                .values
                .iter()
                .find(|v| knobs::same_value(v, &value))
                .cloned()
                .unwrap_or(value);
            (!knobs::same_value(&value, &knob.current)).then_some((f.variable, value))
        })
        .collect()
}

/// The search's clock: when it started and the seconds it may use.
type Clock = (Instant, f64);

fn left(clock: Clock) -> f64 {
    clock.1 - clock.0.elapsed().as_secs_f64()
}

fn halving(b: &mut Bench, knobs: &[Knob], seed: &Config, clock: Clock) -> Result<Found> {
    let trial_s = b.plan.stop.time_s.unwrap_or(10.0);
    let n = search::halving_size(left(clock), trial_s, b.overhead_s).max(2);
    let mut rng = Rng::new(b.plan.workload.rand.seed);
    let mut alive: Vec<Config> = search::halving_candidates(knobs, seed, n, &mut rng);
    eprintln!(
        "search: successive halving of {} configurations",
        alive.len()
    );
    let (mut secs, mut rung, mut alone) = (trial_s, 0, Vec::new());
    let mut best: Option<(Config, Measured)> = None;
    while alive.len() > 1 {
        let mut scored = Vec::new();
        for config in &alive {
            if !scored.is_empty() && left(clock) < secs + b.overhead_s {
                break;
            }
            let m = b.trial(config, secs, &format!("rung {rung}"))?;
            // A longer rung's first trial outranks the shorter trials before it.
            let new_rung = rung > 0 && scored.is_empty();
            if new_rung || best.as_ref().is_none_or(|(_, x)| m.tps >= x.tps) {
                best = Some((config.clone(), m.clone()));
            }
            progress(b.seq, rung, secs, config, &m, best.as_ref());
            scored.push((config.clone(), m.tps));
        }
        if rung == 0 {
            alone = relative_to_baseline(&scored);
        }
        let out_of_time = scored.len() < alive.len();
        alive = search::survivors(scored).into_iter().map(|s| s.0).collect();
        (secs, rung) = (secs * 2.0, rung + 1);
        if out_of_time || left(clock) < alive.len() as f64 * (secs + b.overhead_s) {
            break;
        }
    }
    Ok(Found {
        best: alive.into_iter().next().unwrap_or_default(),
        alone,
    })
}

fn random(b: &mut Bench, knobs: &[Knob], clock: Clock) -> Result<Found> {
    let trial_s = b.plan.stop.time_s.unwrap_or(10.0);
    let n = search::random_size(left(clock), trial_s, b.overhead_s).max(2);
    let mut rng = Rng::new(b.plan.workload.rand.seed);
    let candidates = search::random_candidates(knobs, n, &mut rng);
    eprintln!("search: random, up to {n} configurations");
    let mut scored: Vec<(Config, f64)> = Vec::new();
    let mut best: Option<(Config, Measured)> = None;
    for config in &candidates {
        if scored.len() >= 2 && left(clock) < trial_s + b.overhead_s {
            break;
        }
        let m = b.trial(config, trial_s, "random")?;
        if best.as_ref().is_none_or(|(_, x)| m.tps >= x.tps) {
            best = Some((config.clone(), m.clone()));
        }
        progress(b.seq, 0, trial_s, config, &m, best.as_ref());
        scored.push((config.clone(), m.tps));
    }
    let alone = relative_to_baseline(&scored);
    Ok(Found {
        best: best.map(|b| b.0).unwrap_or_default(),
        alone,
    })
}

/// Each one-knob configuration's throughput over the baseline's, measured in the same round.
fn relative_to_baseline(scored: &[(Config, f64)]) -> Vec<(Config, f64)> {
    let Some(base) = scored.iter().find(|s| s.0.is_empty()).map(|s| s.1) else {
        return Vec::new();
    };
    scored
        .iter()
        .filter(|s| s.0.len() == 1 && base > 0.0)
        .map(|s| (s.0.clone(), s.1 / base))
        .collect()
}

/// `trial 3 · rung 0 · 5 s · knob=value · 812.4 tps · best: knob=value 1630.2 tps [1580.1, 1680.3]`
fn progress(
    seq: u32,
    rung: u32,
    secs: f64,
    c: &Config,
    m: &Measured,
    best: Option<&(Config, Measured)>,
) {
    let mut line = format!(
        "trial {seq} · rung {rung} · {secs:.0} s · {} · {:.1} tps",
        describe(c),
        m.tps
    );
    if let Some((bc, bm)) = best {
        line.push_str(&format!(" · best: {} {:.1} tps", describe(bc), bm.tps));
        if let Some(e) = estimate(&bm.per_interval).filter(|e| e.has_uncertainty()) {
            let half = t_quantile(0.5 + confirm::LEVEL / 2.0, e.df()) * e.se;
            line.push_str(&format!(
                " [{:.1}, {:.1}]",
                (e.mean - half).max(0.0),
                e.mean + half
            ));
        }
    }
    eprintln!("{line}");
}

fn unix_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
