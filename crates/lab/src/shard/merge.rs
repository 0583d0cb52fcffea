//! `qpslab merge`: the N shards of one run, each stored as a run of its own (on its own host),
//! made one run. Counters are sums; every latency figure comes from the shards' HDR histograms
//! added together (per phase, per statement kind and per interval), never from their
//! percentiles (a mean of p99s is not a p99); client CPU is summed and kept per shard with its
//! host, placement, measured start and end and stability; a reason against any shard (a
//! client-bound one above all) is a reason against the merged phase.
//!
//! Shard k's phase j merges with every other shard's phase j (all ran the same sweep), and
//! their intervals by position (they started together, on the same report interval).

use hdrhistogram::Histogram;
use qpslab_core::latency::{new_histogram, summarize};
use qpslab_core::result::{CpuUsage, HistogramBlob, LatencySummary, PhaseResult, Sample};
use qpslab_core::shard::{ShardMember, ShardPhase, ShardSpec};
use qpslab_core::stability::{Instability, Stability};
use qpslab_engine::run::blob;
use qpslab_store::{RunMeta, StoredPhase, StoredRun, TelemetrySample};
use std::collections::BTreeMap;

/// Why shards cannot be merged.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MergeError {
    /// None of the runs given is a shard.
    #[error("no shard runs in {0} (runs made with `qpslab run --shard I/N`)")]
    NoShards(String),
    /// The runs belong to several groups.
    #[error("the runs are shards of {} groups ({}): pick one run of a group as FILE:RUN_ID", .0.len(), .0.join(", "))]
    Groups(Vec<String>),
    /// Some shards of the group are missing.
    #[error("group {group}: shard(s) {}{} of {count} missing", missing.iter().map(u32::to_string).collect::<Vec<_>>().join(", "), if *more > 0 { format!(" and {more} more") } else { String::new() })]
    Missing {
        /// The group.
        group: String,
        /// Its shard count.
        count: u32,
        /// The first indexes not found (at most [`NAMED_MISSING`]).
        missing: Vec<u32>,
        /// How many more are missing than `missing` names.
        more: u32,
    },
    /// A stored shard's index is not below its group's count (a damaged or hand-edited store).
    #[error("group {group}: a run claims to be shard {index} of {count}; the store is damaged")]
    Index {
        /// The group.
        group: String,
        /// The index stored.
        index: u32,
        /// The count stored.
        count: u32,
    },
    /// The shards did not measure the same phases.
    #[error("group {group}: shard {index} has {phases} phase(s), shard 0 has {expected}")]
    Phases {
        /// The group.
        group: String,
        /// The shard that differs.
        index: u32,
        /// Its phases.
        phases: usize,
        /// Shard 0's.
        expected: usize,
    },
    /// A stored histogram could not be read.
    #[error("shard {index}: a stored histogram is not a V2 HDR histogram")]
    Histogram {
        /// The shard.
        index: u32,
    },
}

impl qpslab_core::fault::Blame for MergeError {
    /// Incomplete or mixed groups are the user's to fix; an unreadable histogram is not.
    fn fault(&self) -> qpslab_core::fault::Fault {
        qpslab_core::fault::user_if(!matches!(self, MergeError::Histogram { .. }))
    }
}

/// How many missing shards an error names before it counts the rest.
pub const NAMED_MISSING: usize = 10;

/// A merged phase with the telemetry stored beside it.
pub type MergedPhase = (PhaseResult, Vec<TelemetrySample>);

/// The group, count and index of a stored run, when it is a shard.
fn place(run: &StoredRun) -> Option<(String, u32, u32)> {
    let s = run.meta.plan.shard.as_ref()?.resolved()?;
    Some((s.group, s.count, s.index))
}

/// Of `runs`, the shards of one group, one per index in index order (of a shard measured
/// twice, the later run). `source` names where they came from in errors.
pub fn one_group(runs: Vec<StoredRun>, source: &str) -> Result<Vec<StoredRun>, MergeError> {
    let mut groups: BTreeMap<String, (u32, BTreeMap<u32, StoredRun>)> = BTreeMap::new();
    for run in runs {
        let Some((group, count, index)) = place(&run) else {
            continue;
        };
        if index >= count {
            return Err(MergeError::Index {
                group,
                index,
                count,
            });
        }
        let g = groups.entry(group).or_insert((count, BTreeMap::new()));
        g.0 = g.0.max(count);
        let later =
            g.1.get(&index)
                .is_none_or(|r| r.meta.started_at <= run.meta.started_at);
        if later {
            g.1.insert(index, run);
        }
    }
    if groups.len() > 1 {
        return Err(MergeError::Groups(groups.into_keys().collect()));
    }
    let Some((group, (count, shards))) = groups.into_iter().next() else {
        return Err(MergeError::NoShards(source.to_string()));
    };
    // The count is read from the store: it is checked against the shards the stores hold
    // (never more than the runs read), and the missing ones are named a few at a time, so a
    // count of 1e9 costs nothing to refuse.
    let held = shards.len() as u64;
    if u64::from(count) > held {
        let missing = (0..count)
            .filter(|i| !shards.contains_key(i))
            .take(NAMED_MISSING)
            .collect::<Vec<_>>();
        let more = (u64::from(count) - held - missing.len() as u64) as u32;
        return Err(MergeError::Missing {
            group,
            count,
            missing,
            more,
        });
    }
    Ok(shards.into_values().collect())
}

/// One merged run of `shards` (one group, in index order, from [`one_group`]): its meta
/// (shard 0's server and plan, the run's own seed, started when the first shard started) and
/// each phase with the telemetry of shard 0 (the server's, the same for all).
pub fn merge(
    shards: &[StoredRun],
    command: String,
) -> Result<(RunMeta, Vec<MergedPhase>), MergeError> {
    let first = &shards[0];
    let group = place(first).map(|p| p.0).unwrap_or_default();
    for (i, s) in shards.iter().enumerate() {
        if s.phases.len() != first.phases.len() {
            return Err(MergeError::Phases {
                group,
                index: i as u32,
                phases: s.phases.len(),
                expected: first.phases.len(),
            });
        }
    }
    let mut meta = first.meta.another(merged_plan(first));
    meta.command = command;
    meta.started_at = shards
        .iter()
        .map(|s| s.meta.started_at)
        .fold(f64::INFINITY, f64::min);
    let percentiles = first.meta.plan.percentiles.clone();
    let mut phases = Vec::new();
    for j in 0..first.phases.len() {
        let each: Vec<(&StoredRun, &StoredPhase)> =
            shards.iter().map(|s| (s, &s.phases[j])).collect();
        let phase = merge_phase(&each, &percentiles)?;
        phases.push((phase, first.phases[j].telemetry.clone()));
    }
    Ok((meta, phases))
}

/// Shard 0's plan as the whole run's: the run's seed, the group and count (no index).
fn merged_plan(first: &StoredRun) -> qpslab_core::RunPlan {
    let mut plan = first.meta.plan.clone();
    if let Some(s) = plan.shard.take() {
        if let Some(seed) = s.run_seed {
            plan.workload.rand.seed = seed;
        }
        plan.shard = Some(ShardSpec { index: None, ..s });
    }
    plan
}

/// The sum of the histograms given (each with its shard's index, for errors); none when no
/// shard has one.
fn summed<'a>(
    lists: impl Iterator<Item = (u32, Option<&'a HistogramBlob>)>,
) -> Result<Option<Histogram<u64>>, MergeError> {
    let mut sum: Option<Histogram<u64>> = None;
    for (index, b) in lists {
        let Some(b) = b else { continue };
        let h = b.histogram().ok_or(MergeError::Histogram { index })?;
        let total = sum.get_or_insert_with(new_histogram);
        total.add(&h).map_err(|_| MergeError::Histogram { index })?;
    }
    Ok(sum)
}

/// One merged phase of `each` shard's phase at one position.
fn merge_phase(
    each: &[(&StoredRun, &StoredPhase)],
    percentiles: &[f64],
) -> Result<PhaseResult, MergeError> {
    let results: Vec<&PhaseResult> = each.iter().map(|(_, p)| &p.result).collect();
    let idx = |k: usize| k as u32;
    let mut m = PhaseResult {
        threads: results.iter().map(|r| r.threads).sum(),
        duration_s: results.iter().map(|r| r.duration_s).fold(0.0, f64::max),
        events: results.iter().map(|r| r.events).sum(),
        reconnects: results.iter().map(|r| r.reconnects).sum(),
        client_cpu: cpu_sum(results.iter().map(|r| &r.client_cpu)),
        ..PhaseResult::default()
    };
    for r in &results {
        m.queries.read += r.queries.read;
        m.queries.write += r.queries.write;
        m.queries.other += r.queries.other;
        for (code, n) in &r.errors {
            *m.errors.entry(*code).or_insert(0) += n;
        }
    }
    // Every histogram name any shard has, `event` first as the engine stores them.
    let mut names: Vec<String> = Vec::new();
    for r in &results {
        for h in &r.histograms {
            if !names.contains(&h.name) {
                names.push(h.name.clone());
            }
        }
    }
    for name in &names {
        let lists = results
            .iter()
            .enumerate()
            .map(|(k, r)| (idx(k), r.histograms.iter().find(|h| &h.name == name)));
        let Some(h) = summed(lists)? else { continue };
        let summary = summarize(&h, percentiles);
        if name == "event" {
            m.latency = summary;
        } else {
            m.statements.push(qpslab_core::result::StatementLatency {
                kind: name.clone(),
                latency: summary,
            });
        }
        m.histograms.push(blob(name, &h));
    }
    // Events still waiting at a shard's end count in its max (see the engine).
    m.latency.max_ms = results
        .iter()
        .map(|r| r.latency.max_ms)
        .fold(m.latency.max_ms, f64::max);
    m.rate = merge_rate(&results);
    m.samples = merge_samples(&results, percentiles)?;
    m.stability = Some(merge_stability(&results));
    m.shard = Some(members(each));
    Ok(m)
}

fn cpu_sum<'a>(cpus: impl Iterator<Item = &'a CpuUsage>) -> CpuUsage {
    cpus.fold(CpuUsage::default(), |a, c| CpuUsage {
        user_s: a.user_s + c.user_s,
        sys_s: a.sys_s + c.sys_s,
        max_rss_kib: a.max_rss_kib.max(c.max_rss_kib),
    })
}

/// Targets, achieved rates and late events add up; the mean lag is weighted by events
/// started, the max is the largest.
fn merge_rate(results: &[&PhaseResult]) -> Option<qpslab_core::result::RateStats> {
    let rates: Vec<_> = results.iter().filter_map(|r| r.rate).collect();
    if rates.is_empty() {
        return None;
    }
    let mut m = qpslab_core::result::RateStats::default();
    let started: f64 = rates.iter().map(|r| r.achieved_per_s).sum();
    for r in &rates {
        m.target_per_s += r.target_per_s;
        m.achieved_per_s += r.achieved_per_s;
        m.late_events += r.late_events;
        m.client_late_events += r.client_late_events;
        m.max_lag_ms = m.max_lag_ms.max(r.max_lag_ms);
        m.client_max_late_ms = m.client_max_late_ms.max(r.client_max_late_ms);
        if started > 0.0 {
            m.mean_lag_ms += r.mean_lag_ms * r.achieved_per_s / started;
            m.client_mean_late_ms += r.client_mean_late_ms * r.achieved_per_s / started;
        }
    }
    Some(m)
}

/// Interval k of the merged phase: the shards' intervals k added, its latency from their
/// interval histograms (min, mean and max only when a shard did not keep one).
fn merge_samples(results: &[&PhaseResult], percentiles: &[f64]) -> Result<Vec<Sample>, MergeError> {
    let n = results.iter().map(|r| r.samples.len()).max().unwrap_or(0);
    let mut out = Vec::with_capacity(n);
    for k in 0..n {
        let each: Vec<(u32, &Sample)> = results
            .iter()
            .enumerate()
            .filter_map(|(i, r)| Some((i as u32, r.samples.get(k)?)))
            .collect();
        let mut s = Sample::default();
        for (_, x) in &each {
            s.elapsed_s = s.elapsed_s.max(x.elapsed_s);
            s.interval_s = s.interval_s.max(x.interval_s);
            s.events += x.events;
            s.queries.read += x.queries.read;
            s.queries.write += x.queries.write;
            s.queries.other += x.queries.other;
            s.errors += x.errors;
            s.reconnects += x.reconnects;
            s.late_events += x.late_events;
            s.max_lag_ms = s.max_lag_ms.max(x.max_lag_ms);
            s.client_late_events += x.client_late_events;
            s.client_max_late_ms = s.client_max_late_ms.max(x.client_max_late_ms);
            s.stuck_sessions += x.stuck_sessions;
            s.longest_in_flight_s = s.longest_in_flight_s.max(x.longest_in_flight_s);
        }
        s.client_cpu = cpu_sum(each.iter().map(|(_, x)| &x.client_cpu));
        let all_kept = each.iter().all(|(_, x)| x.histogram.is_some());
        if all_kept {
            let h = summed(each.iter().map(|(i, x)| (*i, x.histogram.as_ref())))?
                .unwrap_or_else(new_histogram);
            s.latency = summarize(&h, percentiles);
            s.histogram = Some(blob("event", &h));
        } else {
            s.latency = rough_latency(each.iter().map(|(_, x)| &x.latency));
        }
        out.push(s);
    }
    Ok(out)
}

/// Count, min, event-weighted mean and max of interval summaries; no percentiles (they do
/// not combine).
fn rough_latency<'a>(each: impl Iterator<Item = &'a LatencySummary>) -> LatencySummary {
    let mut m = LatencySummary {
        min_ms: f64::INFINITY,
        ..LatencySummary::default()
    };
    let mut weighted = 0.0;
    for l in each {
        m.count += l.count;
        weighted += l.avg_ms * l.count as f64;
        if l.count > 0 {
            m.min_ms = m.min_ms.min(l.min_ms);
        }
        m.max_ms = m.max_ms.max(l.max_ms);
    }
    if m.count > 0 {
        m.avg_ms = weighted / m.count as f64;
    } else {
        m.min_ms = 0.0;
    }
    m
}

/// Every reason against any shard, each kind once (the first shard's): a client-bound shard
/// makes the merged phase client-bound.
fn merge_stability(results: &[&PhaseResult]) -> Stability {
    let mut reasons: Vec<Instability> = Vec::new();
    for r in results {
        for reason in r.stability.iter().flat_map(|s| s.reasons.iter()) {
            let kind = std::mem::discriminant(reason);
            if !reasons.iter().any(|x| std::mem::discriminant(x) == kind) {
                reasons.push(reason.clone());
            }
        }
    }
    Stability { reasons }
}

/// Each shard's record, and the span from the first start to the last end.
fn members(each: &[(&StoredRun, &StoredPhase)]) -> ShardPhase {
    let members: Vec<ShardMember> = each
        .iter()
        .enumerate()
        .map(|(i, (run, p))| {
            let r = &p.result;
            let window = r.shard.as_ref();
            ShardMember {
                index: place(run).map_or(i as u32, |p| p.2),
                host: run.meta.host.hostname.clone(),
                run_uuid: run.meta.uuid.clone(),
                threads: r.threads,
                events: r.events,
                start_unix_s: window.map_or(0.0, |w| w.start_unix_s),
                end_unix_s: window.map_or(0.0, |w| w.end_unix_s),
                client_cpu_s: r.client_cpu.user_s + r.client_cpu.sys_s,
                stability: r.stability.clone(),
                client: r.client.clone(),
            }
        })
        .collect();
    ShardPhase {
        start_unix_s: members
            .iter()
            .map(|m| m.start_unix_s)
            .fold(f64::INFINITY, f64::min),
        end_unix_s: members.iter().map(|m| m.end_unix_s).fold(0.0, f64::max),
        members,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use qpslab_core::{RunPlan, WorkloadKind, WorkloadOptions};
    use qpslab_store::{RunId, RunStatus};

    /// Shard `index` of `count` of `group`: one phase, one interval, events of `us` µs.
    pub(crate) fn shard(index: u32, count: u32, group: &str, us: &[u64]) -> StoredRun {
        let mut plan = RunPlan::new(WorkloadOptions::new(WorkloadKind::OltpPointSelect));
        plan.shard = Some(ShardSpec {
            index: Some(index),
            count: Some(count),
            group: Some(group.into()),
            run_seed: Some(5),
            timeout_s: None,
        });
        let mut h = new_histogram();
        for v in us {
            h.record(*v).unwrap();
        }
        let sample = Sample {
            events: us.len() as u64,
            interval_s: 1.0,
            elapsed_s: 1.0,
            histogram: Some(blob("event", &h)),
            ..Sample::default()
        };
        let result = PhaseResult {
            threads: 2,
            duration_s: 1.0,
            events: us.len() as u64,
            histograms: vec![blob("event", &h), blob("point_selects", &h)],
            latency: summarize(&h, &[99.0]),
            samples: vec![sample],
            stability: Some(Stability {
                reasons: if index == 1 {
                    vec![Instability::ClientSaturated { share: 0.97 }]
                } else {
                    Vec::new()
                },
            }),
            shard: Some(ShardPhase {
                start_unix_s: 100.0 + f64::from(index) * 0.01,
                end_unix_s: 101.0,
                members: Vec::new(),
            }),
            ..PhaseResult::default()
        };
        let meta = RunMeta::new(
            plan,
            "t".into(),
            Default::default(),
            Default::default(),
            "c".into(),
        );
        StoredRun {
            id: RunId(1),
            meta,
            status: RunStatus::Completed,
            finished_at: None,
            phases: vec![StoredPhase {
                seq: 0,
                recorded_at: 0.0,
                result,
                telemetry: Vec::new(),
            }],
        }
    }

    #[test]
    fn counters_add_and_percentiles_come_from_the_summed_histograms() {
        let a = shard(0, 2, "g", &[100; 99]);
        let b = shard(1, 2, "g", &[10_000; 2]);
        // Alone, neither shard's p99 is the union's: 100 µs and 10 ms.
        let shards = one_group(vec![b, a], "x").unwrap();
        let (meta, phases) = merge(&shards, "qpslab merge".into()).unwrap();
        assert_eq!(meta.plan.workload.rand.seed, 5);
        assert_eq!(meta.plan.shard.as_ref().unwrap().index, None);
        let p = &phases[0].0;
        assert_eq!((p.events, p.threads), (101, 4));
        // 101 events, the 100th (99%) is a 10 ms one: the union's p99.
        let mut union = new_histogram();
        for v in [100; 99].iter().chain(&[10_000; 2]) {
            union.record(*v).unwrap();
        }
        let p99 = qpslab_core::latency::quantile_ms(&union, 99.0);
        assert!(p99 > 9.9, "{p99}");
        assert_eq!(p.latency.percentile(99.0), Some(p99));
        assert_eq!(p.samples[0].events, 101);
        assert_eq!(p.samples[0].latency.percentile(99.0), Some(p99));
        assert_eq!(p.statements[0].kind, "point_selects");
        let s = p.shard.as_ref().unwrap();
        assert_eq!(s.members.len(), 2);
        assert_eq!(s.start_unix_s, 100.0);
        assert!(p
            .stability
            .as_ref()
            .unwrap()
            .reasons
            .iter()
            .any(|r| matches!(r, Instability::ClientSaturated { .. })));
    }

    #[test]
    fn missing_shards_and_several_groups_are_named() {
        let e = one_group(vec![shard(0, 3, "g", &[1]), shard(2, 3, "g", &[1])], "x");
        assert_eq!(
            e.unwrap_err().to_string(),
            "group g: shard(s) 1 of 3 missing"
        );
        // A count read from a store is never allocated from: 1e9 claimed, one held.
        let e = one_group(vec![shard(0, 1_000_000_000, "g", &[1])], "x");
        assert_eq!(
            e.unwrap_err().to_string(),
            "group g: shard(s) 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 999999989 more of 1000000000 missing"
        );
        let e = one_group(vec![shard(5, 3, "g", &[1])], "x").unwrap_err();
        assert!(
            matches!(
                e,
                MergeError::Index {
                    index: 5,
                    count: 3,
                    ..
                }
            ),
            "{e}"
        );
        let e = one_group(vec![shard(0, 1, "g", &[1]), shard(0, 2, "h", &[1])], "x");
        assert!(matches!(e, Err(MergeError::Groups(g)) if g == ["g", "h"]));
        assert!(matches!(
            one_group(Vec::new(), "x"),
            Err(MergeError::NoShards(_))
        ));
    }
}
