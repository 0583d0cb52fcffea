//! One shard of a run that several client processes share (`--shard I/N|auto`): the shard's
//! place resolved from the flags or the launcher's environment ([`settle_plan`]), its share
//! of each phase's sessions and rate ([`phase_share`]), and the meetings through the server
//! under test that make every shard wait for the dataset and start and end together
//! ([`meet`]). [`merge`] turns the stored shards into one run; [`group`] finds a group's
//! shards among a store's runs (`merge --group`).

pub mod group;
pub mod meet;
pub mod merge;

use qpslab_core::result::{PhaseResult, Sample};
use qpslab_core::shard::{self, seed_of, share, Shard, ShardError, ShardSpec};
use qpslab_core::{ConnectOptions, RunPlan};
use qpslab_engine::workload::Workload;
use std::sync::atomic::AtomicBool;

/// Resolves `plan.shard` in place: index, count and group from the flags or, for `auto`, the
/// launcher's environment; this shard's seed derived from the run's. `--shard 0/1` is an
/// ordinary run (the spec is dropped). Refuses a thread count that leaves a shard without a
/// session, and `--events` (shards share one end time).
pub fn settle_plan(plan: &mut RunPlan) -> Result<(), ShardError> {
    let Some(spec) = plan.shard.clone() else {
        return Ok(());
    };
    let key = plan_key(plan);
    let launcher = || shard::from_launcher(&|k| std::env::var(k).ok());
    let s = shard::resolve(&spec, launcher, &key)?;
    if s.count == 1 {
        plan.shard = None;
        return Ok(());
    }
    if let Some(&t) = plan.threads.iter().find(|t| **t < s.count) {
        return Err(ShardError::TooFewSessions {
            threads: t,
            count: s.count,
        });
    }
    if plan.stop.events.is_some() {
        return Err(ShardError::Events);
    }
    let run_seed = plan.workload.rand.seed;
    plan.workload.rand.seed = seed_of(run_seed, s.index, s.count);
    plan.shard = Some(ShardSpec {
        index: Some(s.index),
        count: Some(s.count),
        group: Some(s.group),
        run_seed: Some(run_seed),
        timeout_s: spec.timeout_s,
    });
    Ok(())
}

/// The plan as every shard of the run sees it: no seed (each shard's may come from its own
/// clock), no shard place, no placement; hashed into the default group.
fn plan_key(plan: &RunPlan) -> String {
    let mut p = plan.clone();
    p.workload.rand.seed = 0;
    p.shard = None;
    p.placement = None;
    p.client_cpus = None;
    p.event_loops = None;
    serde_json::to_string(&p).unwrap_or_default()
}

/// The resolved shard of `plan`, when it runs one of several.
pub fn of(plan: &RunPlan) -> Option<Shard> {
    plan.shard
        .as_ref()
        .and_then(ShardSpec::resolved)
        .filter(|s| s.count > 1)
}

/// This shard's sessions of a phase of `threads` in all, and `plan` with its share of the
/// rate (the plan unchanged for an ordinary run).
pub fn phase_share(plan: &RunPlan, threads: u32) -> (u32, RunPlan) {
    let Some(s) = of(plan) else {
        return (threads, plan.clone());
    };
    let mine = share(threads, s.index, s.count);
    let mut p = plan.clone();
    if let Some(r) = p.rate.as_mut() {
        r.per_second = shard::rate_share(r.per_second, mine, threads);
    }
    (mine, p)
}

/// Runs the phase of `threads` = (in all, this process's) sessions: an ordinary one, or for a
/// shard of several, gated by the meeting of every shard on the server (`crate::shard::meet`),
/// its measured start and end recorded in the server's clock.
pub(crate) fn run_phase(
    target: &ConnectOptions,
    plan: &RunPlan,
    workload: &Workload,
    (total, threads): (u32, u32),
    on_sample: &mut dyn FnMut(&Sample),
    stop: &AtomicBool,
) -> Result<PhaseResult, qpslab_engine::RunError> {
    let Some(shard) = of(plan) else {
        return qpslab_engine::run_phase(target, plan, workload, threads, on_sample, stop);
    };
    let timeout = meet::timeout_s(plan);
    let meeting = meet::Meeting::new(target, shard, timeout, stop);
    let key = format!("t{total}");
    let mut offset = 0.0;
    let mut gate = || {
        meeting.start(&key).map(|(at, off)| {
            offset = off;
            Some(at)
        })
    };
    let result =
        qpslab_engine::run_phase_gated(target, plan, workload, threads, on_sample, stop, &mut gate);
    meeting.leave(&key);
    let mut phase = result?;
    if let Some(s) = phase.shard.as_mut() {
        s.start_unix_s += offset;
        s.end_unix_s += offset;
    }
    Ok(phase)
}

#[cfg(test)]
mod tests {
    use super::*;
    use qpslab_core::plan::{Arrival, RateSpec};
    use qpslab_core::{WorkloadKind, WorkloadOptions};

    fn sharded(index: u32, count: u32) -> RunPlan {
        let mut p = RunPlan::new(WorkloadOptions::new(WorkloadKind::OltpPointSelect));
        p.threads = vec![10];
        p.workload.rand.seed = 7;
        p.rate = Some(RateSpec {
            per_second: 1000.0,
            arrival: Arrival::Poisson,
        });
        p.shard = Some(ShardSpec {
            index: Some(index),
            count: Some(count),
            group: Some("g".into()),
            ..ShardSpec::default()
        });
        p
    }

    #[test]
    fn each_shard_takes_its_share_and_its_own_seed() {
        let mut seeds = Vec::new();
        let mut sessions = 0;
        let mut rate = 0.0;
        for i in 0..3 {
            let mut p = sharded(i, 3);
            settle_plan(&mut p).unwrap();
            assert_eq!(p.shard.as_ref().unwrap().run_seed, Some(7));
            seeds.push(p.workload.rand.seed);
            let (t, q) = phase_share(&p, 10);
            sessions += t;
            rate += q.rate.unwrap().per_second;
            if i == 0 {
                assert_eq!(t, 4);
            }
        }
        assert_eq!(sessions, 10);
        assert!((rate - 1000.0).abs() < 1e-9);
        seeds.dedup();
        assert_eq!(seeds.len(), 3);
    }

    #[test]
    fn one_shard_is_an_ordinary_run_and_too_few_sessions_are_refused() {
        let mut p = sharded(0, 1);
        settle_plan(&mut p).unwrap();
        assert!(p.shard.is_none());
        assert_eq!(p.workload.rand.seed, 7);
        let mut p = sharded(0, 3);
        p.threads = vec![8, 2];
        let e = settle_plan(&mut p).unwrap_err();
        assert_eq!(
            e,
            ShardError::TooFewSessions {
                threads: 2,
                count: 3
            }
        );
        let mut p = sharded(1, 3);
        p.stop.events = Some(100);
        assert_eq!(settle_plan(&mut p), Err(ShardError::Events));
    }

    #[test]
    fn the_default_group_ignores_seed_and_place() {
        let mut a = sharded(0, 3);
        let mut b = sharded(2, 3);
        b.workload.rand.seed = 99;
        a.shard.as_mut().unwrap().group = None;
        b.shard.as_mut().unwrap().group = None;
        assert_eq!(plan_key(&a), plan_key(&b));
    }
}
