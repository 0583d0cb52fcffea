//! One tune session on a connected server: the dataset, the knob space from the server's own
//! variables, the budget split, the search seeded by advise, the confirmation, and the outcome.

use crate::apply::Applier;
use crate::bench::{Bench, TrialResult};
use crate::budget::Shares;
use crate::conclude::{conclude, recheck_cost, Outcome};
use crate::knobs::{self, Knob, Sizes, Space};
use crate::search::{self, Config, Found};
use crate::{
    confirm, confirmation_cost, Best, Observer, Request, Search, Target, Trial, TuneError,
};
use qpslab_advise::{advise, gather, needs_restart, Facts};
use qpslab_engine::rand::Rng;
use qpslab_stats::{estimate, t_quantile};
use qpslab_store::Store;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// Runs a tune session of `req` on `target`, storing its trials and proof study in `store`:
/// the search within the budget, the confirmation, and every changed setting put back (also
/// on error, and when `stop` is raised: the running phase stops and the restore runs).
/// Progress goes to `obs`; the outcome is the caller's to render.
pub fn tune(
    req: &Request,
    target: &Target,
    store: &mut Store,
    obs: &mut dyn Observer,
    stop: &AtomicBool,
) -> Result<Outcome, TuneError> {
    let server = target.server_options();
    let mut control = qpslab_wire::Conn::connect(&server).map_err(|source| TuneError::Connect {
        target: target.options.describe(),
        source,
    })?;
    let info = qpslab_probe::server_info(&mut control).map_err(|source| TuneError::Probe {
        doing: "reading server variables",
        source,
    })?;
    obs.server(&info, &target.options.describe());
    let ledger = target.ledger;
    // The leftovers of a killed tune would be taken as the baseline and "restored" at the end.
    ledger.refuse_leftovers(&server)?;
    let local = target.options.endpoint.is_local();
    let read = |control: &mut qpslab_wire::Conn| {
        gather(control, local).map_err(|source| TuneError::Probe {
            doing: "reading the server's variables",
            source,
        })
    };
    let facts = read(&mut control)?;
    // The knobs are checked against the server before the dataset is built; their sizes
    // follow the data once it is there.
    space(&facts, req)?;
    // On a sandbox of ours, its shared use, held until the session ends: nobody rebuilds the
    // dataset under the measurements.
    let _held = dataset(target, req, obs)?;
    let facts = read(&mut control)?;
    let space = space(&facts, req)?;
    obs.space(&space);
    let names: Vec<String> = space.knobs.iter().map(|k| k.name.clone()).collect();
    // Declared before the bench, so dropped after it: the applier's own restore comes first.
    let guard = ledger.begin(&server, "tune", &names)?;
    if let Some(hint) = guard.killed_hint() {
        obs.message(&hint);
    }
    let started = Instant::now();
    let mut bench = Bench {
        target,
        plan: req.plan.clone(),
        workload: &req.workload,
        threads: req.threads,
        applier: Applier::new(target.options, &space.knobs),
        store,
        session: format!("tune-{}-{}", unix_secs(), std::process::id()),
        seq: 0,
        overhead_s: req.plan.warmup_s + 2.0,
        command: &req.command,
        stop,
    };
    let outcome = search_and_confirm(req, &mut bench, &facts, &space, obs, started);
    if outcome.is_ok() {
        obs.spent(started.elapsed().as_secs_f64(), req.budget_s);
    }
    for line in bench.applier.restore() {
        obs.message(&line);
    }
    let outcome = outcome?;
    if let Err(e) = guard.finish() {
        obs.message(&format!("warning: {e}"));
    }
    Ok(outcome)
}

/// The budget split ([`Shares`]), the search within its share, then the confirmation and the
/// rechecks within theirs.
fn search_and_confirm(
    req: &Request,
    bench: &mut Bench,
    facts: &Facts,
    space: &Space,
    obs: &mut dyn Observer,
    started: Instant,
) -> Result<Outcome, TuneError> {
    let trial_s = req.plan.stop.time_s.unwrap_or(10.0);
    let shares = Shares::split(
        req.budget_s,
        confirmation_cost(&req.plan, req.repeats),
        recheck_cost(trial_s, bench.overhead_s),
        space.knobs.len() > 1,
    );
    obs.message(&format!("budget: {}", shares.words()));
    let seed = seed_config(facts, req, &space.knobs);
    let clock = (started, shares.search_s);
    let found = match req.search {
        Search::Halving => halving(bench, &space.knobs, &seed, clock, obs)?,
        Search::Random => random(bench, &space.knobs, clock, obs)?,
    };
    conclude(req, bench, (space, found), (started, shares), obs)
}

/// The knob space of the server.
fn space(facts: &Facts, req: &Request) -> Result<Space, TuneError> {
    let restart = |n: &str| needs_restart(&facts.read_only, n);
    let server = knobs::ServerVariables {
        variables: &facts.server.variables,
        needs_restart: &restart,
    };
    let sizes = Sizes {
        memory_bytes: facts.local.as_ref().map_or(0, |l| l.host.memory_bytes),
        available_bytes: facts
            .local
            .as_ref()
            .and_then(|_| qpslab_probe::memory_available()),
        data_bytes: facts.innodb_bytes,
    };
    knobs::space(&server, &sizes, req.durability, &req.knobs)
}

/// Advise's recommendations for the knobs being searched, as one configuration.
fn seed_config(facts: &Facts, req: &Request, knobs: &[Knob]) -> Config {
    advise(facts, req.durability)
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

/// Successive halving in rounds: each round halves its candidates down to a leader, which the
/// next round carries with the baseline against configurations not measured yet, until every
/// configuration of the space was measured (converged) or the budget has no room for a new one.
fn halving(
    b: &mut Bench,
    knobs: &[Knob],
    seed: &Config,
    clock: Clock,
    obs: &mut dyn Observer,
) -> Result<Found, TuneError> {
    let trial_s = b.plan.stop.time_s.unwrap_or(10.0);
    let candidates = search::space_size(knobs);
    let mut rng = Rng::new(b.plan.workload.rand.seed);
    let (mut measured, mut alone, mut leader) = (Vec::<Config>::new(), Vec::new(), Config::new());
    let mut best: Option<(Config, TrialResult)> = None;
    let mut round = 0;
    let ended = loop {
        let n = search::halving_size(left(clock), trial_s, b.overhead_s);
        // The first round measures the baseline and one other whatever the budget says.
        let n = if round == 0 { n.max(2) } else { n };
        // The baseline runs in every round with room for it beside the leader and a new
        // configuration; with room for two, the leader meets a new one alone.
        let carried: Vec<Config> = match (leader.is_empty(), n >= 3) {
            (true, _) => vec![Config::new()],
            (false, true) => vec![Config::new(), leader.clone()],
            (false, false) => vec![leader.clone()],
        };
        let mut alive = search::halving_candidates(knobs, seed, (&carried, &measured), n, &mut rng);
        let room = alive.iter().filter(|c| !measured.contains(*c)).count();
        if let Some(ended) = search::stop(measured.len(), candidates, room) {
            break ended;
        }
        obs.search(Search::Halving, alive.len());
        let (mut secs, mut rung) = (trial_s, 0);
        while alive.len() > 1 {
            let mut scored = Vec::new();
            for config in &alive {
                if !scored.is_empty() && left(clock) < secs + b.overhead_s {
                    break;
                }
                let m = b.trial(config, secs, &format!("round {round} rung {rung}"), obs)?;
                if !measured.contains(config) {
                    measured.push(config.clone());
                }
                // A longer rung's (or a new round's) first trial outranks the trials before it.
                let fresh = (rung > 0 || round > 0) && scored.is_empty();
                if fresh || best.as_ref().is_none_or(|(_, x)| m.tps >= x.tps) {
                    best = Some((config.clone(), m.clone()));
                }
                progress(obs, (b.seq, [round, rung], secs), config, &m, best.as_ref());
                scored.push((config.clone(), m.tps));
            }
            if rung == 0 {
                for a in relative_to_baseline(&scored) {
                    if !alone.iter().any(|(c, _)| *c == a.0) {
                        alone.push(a);
                    }
                }
            }
            let out_of_time = scored.len() < alive.len();
            alive = search::survivors(scored).into_iter().map(|s| s.0).collect();
            (secs, rung) = (secs * 2.0, rung + 1);
            if out_of_time || left(clock) < alive.len() as f64 * (secs + b.overhead_s) {
                break;
            }
        }
        leader = alive.into_iter().next().unwrap_or_default();
        round += 1;
    };
    obs.search_ended(&ended);
    Ok(Found {
        best: leader,
        alone,
        ended,
    })
}

/// Random configurations, one trial each, until every configuration of the space was measured
/// or the budget has no room for another trial.
fn random(
    b: &mut Bench,
    knobs: &[Knob],
    clock: Clock,
    obs: &mut dyn Observer,
) -> Result<Found, TuneError> {
    let trial_s = b.plan.stop.time_s.unwrap_or(10.0);
    let n = search::random_size(left(clock), trial_s, b.overhead_s).max(2);
    let candidates = search::space_size(knobs);
    let mut rng = Rng::new(b.plan.workload.rand.seed);
    obs.search(Search::Random, n);
    let mut scored: Vec<(Config, f64)> = Vec::new();
    let mut measured: Vec<Config> = Vec::new();
    let mut best: Option<(Config, TrialResult)> = None;
    let ended = loop {
        // The baseline and one other whatever the budget says; then while a trial fits.
        let fits = scored.len() < 2 || left(clock) >= trial_s + b.overhead_s;
        if let Some(ended) = search::stop(measured.len(), candidates, usize::from(fits)) {
            break ended;
        }
        let config = match scored.is_empty() {
            true => Config::new(),
            false => search::random_config(knobs, &mut rng),
        };
        let m = b.trial(&config, trial_s, "random", obs)?;
        if !measured.contains(&config) {
            measured.push(config.clone());
        }
        if best.as_ref().is_none_or(|(_, x)| m.tps >= x.tps) {
            best = Some((config.clone(), m.clone()));
        }
        progress(obs, (b.seq, [0, 0], trial_s), &config, &m, best.as_ref());
        scored.push((config, m.tps));
    };
    obs.search_ended(&ended);
    let alone = relative_to_baseline(&scored);
    Ok(Found {
        best: best.map(|b| b.0).unwrap_or_default(),
        alone,
        ended,
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

/// Tells `obs` of a trial (`(seq, [round, rung], secs)`), with the best so far and its
/// interval.
fn progress(
    obs: &mut dyn Observer,
    (seq, [round, rung], secs): (u32, [u32; 2], f64),
    config: &Config,
    m: &TrialResult,
    best: Option<&(Config, TrialResult)>,
) {
    let best = best.map(|(bc, bm)| {
        let interval = estimate(&bm.per_interval)
            .filter(|e| e.has_uncertainty())
            .map(|e| {
                let half = t_quantile(0.5 + confirm::LEVEL / 2.0, e.df()) * e.se;
                ((e.mean - half).max(0.0), e.mean + half)
            });
        Best {
            config: bc,
            tps: bm.tps,
            interval,
        }
    });
    obs.trial(&Trial {
        seq,
        round,
        rung,
        secs,
        config,
        tps: m.tps,
        best,
    });
}

fn unix_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Builds (on a sandbox of ours, when missing) or checks the workload's dataset on `target`,
/// reporting to the observer's dataset observer; returns a sandbox's shared use.
fn dataset(
    target: &Target,
    req: &Request,
    obs: &mut dyn Observer,
) -> Result<Option<qpslab_sandbox::SandboxUse>, TuneError> {
    let mut quiet = qpslab_lab::run::exec::Quiet;
    let loading = match obs.dataset() {
        Some(o) => o,
        None => &mut quiet,
    };
    qpslab_lab::dataset::ready::ensure_dataset(&target.server(), &req.plan.workload, None, loading)
        .map_err(|e| TuneError::Dataset(Box::new(e)))
}
