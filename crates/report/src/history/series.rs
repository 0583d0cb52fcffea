//! Which runs form one series: the same benchmark identity on one client host.
//!
//! A benchmark identity is what fixes the work a phase measured: the workload (its kind,
//! scripts or replayed log, dataset shape, access pattern and every other option of the
//! work), the sessions of the phase, the run options that change the work (rate, prepared
//! statements, pipelining, isolation, retried errors, live actions, a shard's place), the
//! target's role (a primary, or a read-only replica), and the study variant for a study's
//! runs. A run's `--series NAME` replaces all of that but the sessions. Everything else may
//! change along a series, and is what a history looks for: the server's version, settings and
//! build, the run's length, warm-up and settling, the client's levers (event loops, CPUs,
//! io_uring), labels. The client host splits series (a different machine measures a different
//! thing); runs imported from another host's store or merged from shards carry their host and
//! plan, and so join the series they were measured in.

use crate::setup::flatten;
use qpslab_store::RunMeta;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// The plan's fields that do not change the work measured (flattened names, `plan.` first):
/// a name equal to one of these, or under one followed by `.`, is left out of the identity.
const NOT_THE_WORK: &[&str] = &[
    // The sessions come from the phase; a sweep's list does not name one phase's work.
    "plan.threads",
    "plan.labels",
    "plan.series",
    // Each run draws its own seed unless one is given.
    "plan.workload.rand.seed",
    // How long, after what warm-up and settling, at what report interval.
    "plan.stop",
    "plan.warmup_s",
    "plan.warmup_auto",
    "plan.settle",
    "plan.report_interval_s",
    "plan.percentiles",
    // The client's levers and the server's placement and storage: changes to look for.
    "plan.client_cpus",
    "plan.event_loops",
    "plan.engine",
    "plan.placement",
    "plan.storage",
    // A shard run's group and seed differ from run to run; its index and count do not.
    "plan.shard.group",
    "plan.shard.run_seed",
    "plan.shard.timeout_s",
    // A replayed log is known by its content (sha256), not where the file lay.
    "plan.replay.log",
];

/// One series' identity: what its runs share.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Identity {
    /// `--series NAME`, when the runs were given one.
    pub named: Option<String>,
    /// The workload's name (`oltp_point_select`, `tpcc`, `replay`, a fileio mode).
    pub workload: String,
    /// Sessions of the phase.
    pub sessions: u32,
    /// The client host's name (`uname -n`).
    pub host: String,
    /// The fields of the work, flattened (`plan.workload.table_size` → `100000`), with the
    /// target's `role` and a study's `study` (id and variant); empty for a named series.
    pub work: BTreeMap<String, String>,
}

impl Identity {
    /// The identity of the phase of `sessions` of the run `meta` describes.
    pub fn of(meta: &RunMeta, sessions: u32) -> Identity {
        let host = meta.host.hostname.clone();
        let workload = meta.plan.workload_name();
        if let Some(name) = &meta.plan.series {
            return Identity {
                named: Some(name.clone()),
                workload,
                sessions,
                host,
                work: BTreeMap::new(),
            };
        }
        let mut flat = BTreeMap::new();
        let plan = serde_json::to_value(&meta.plan).unwrap_or(Value::Null);
        flatten("plan", &plan, &mut flat);
        flat.retain(|k, _| !NOT_THE_WORK.iter().any(|n| under(k, n)));
        flat.insert("role".into(), role(meta).into());
        if let Some(study) = &meta.study_id {
            let variant = meta.cell_label.as_deref().unwrap_or("");
            let variant = variant.split('/').next().unwrap_or(variant);
            flat.insert("study".into(), format!("{study}/{variant}"));
        }
        Identity {
            named: None,
            workload,
            sessions,
            host,
            work: flat,
        }
    }

    /// A short stable name of the identity: 8 hex digits of a hash of all of it, for
    /// `qpslab history KEY`.
    pub fn key(&self) -> String {
        let text = serde_json::to_string(self).unwrap_or_default();
        format!("{:08x}", fnv1a(text.as_bytes()) as u32)
    }

    /// How the series is named to the user: `NAME` or the workload, with its sessions and
    /// host: `oltp_point_select · 4 sessions · db-client-1`.
    pub fn title(&self) -> String {
        let name = self.named.as_deref().unwrap_or(&self.workload);
        let s = if self.sessions == 1 { "" } else { "s" };
        format!("{name} · {} session{s} · {}", self.sessions, self.host)
    }

    /// Whether `word` picks this series: its key, its name, or its workload.
    pub fn matches(&self, word: &str) -> bool {
        self.key() == word || self.named.as_deref() == Some(word) || self.workload == word
    }
}

/// `name` is `prefix` or lies under it.
fn under(name: &str, prefix: &str) -> bool {
    name == prefix
        || name
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('.'))
}

/// The target's role: a server that is read-only is measured as a replica.
fn role(meta: &RunMeta) -> &'static str {
    let on = |v: &str| {
        meta.server
            .variables
            .get(v)
            .is_some_and(|x| x.eq_ignore_ascii_case("ON") || x == "1")
    };
    if on("read_only") || on("super_read_only") {
        "replica"
    } else {
        "primary"
    }
}

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use qpslab_core::{RunPlan, WorkloadKind, WorkloadOptions};

    fn meta() -> RunMeta {
        let mut plan = RunPlan::new(WorkloadOptions::new(WorkloadKind::OltpPointSelect));
        plan.threads = vec![4];
        let mut meta = crate::test_runs::run(1, WorkloadKind::OltpPointSelect, 100.0, 0.0).meta;
        meta.plan = plan;
        meta.host.hostname = "c1".into();
        meta.server.version = "10.11.6-MariaDB".into();
        meta
    }

    fn same(a: &RunMeta, b: &RunMeta) -> bool {
        Identity::of(a, 4) == Identity::of(b, 4)
    }

    #[test]
    fn what_changes_along_a_series_keeps_it() {
        let a = meta();
        let mut b = meta();
        b.server.version = "11.4.2-MariaDB".into();
        b.server
            .variables
            .insert("innodb_buffer_pool_size".into(), "8388608".into());
        b.plan.labels.insert("build".into(), "13".into());
        b.plan.stop.time_s = Some(60.0);
        b.plan.warmup_s = 5.0;
        b.plan.workload.rand.seed = 77;
        b.plan.engine.linger_us = 0;
        b.plan.client_cpus = Some(vec![1]);
        b.target = "mysql://bench@other/sbtest".into();
        b.started_at = 1e9;
        assert!(same(&a, &b), "{:?}", Identity::of(&b, 4));
        assert_eq!(Identity::of(&a, 4).key(), Identity::of(&b, 4).key());
    }

    #[test]
    fn what_changes_the_work_makes_another_series() {
        let a = meta();
        let edits: [fn(&mut RunMeta); 7] = [
            |m| m.plan.workload.table_size = 5,
            |m| m.plan.workload.tables = 9,
            |m| m.plan.prepared_statements = !m.plan.prepared_statements,
            |m| m.plan.pipeline = true,
            |m| {
                m.server.variables.insert("read_only".into(), "ON".into());
            },
            |m| m.study_id = Some("nightly".into()),
            |m| m.plan.workload = WorkloadOptions::new(WorkloadKind::OltpReadOnly),
        ];
        for (i, edit) in edits.iter().enumerate() {
            let mut b = meta();
            edit(&mut b);
            assert!(!same(&a, &b), "edit {i} kept the series");
        }
        // Another session count of the same run is another series.
        assert_ne!(Identity::of(&a, 4), Identity::of(&a, 8));
    }

    #[test]
    fn the_host_splits_a_series_and_a_name_joins_runs() {
        let a = meta();
        let mut b = meta();
        b.host.hostname = "c2".into();
        assert!(!same(&a, &b));
        // Named alike, different work joins (the user said so); the host still splits.
        let mut x = meta();
        let mut y = meta();
        y.plan.workload.table_size = 5;
        x.plan.series = Some("nightly".into());
        y.plan.series = Some("nightly".into());
        assert!(same(&x, &y));
        y.host.hostname = "c2".into();
        assert!(!same(&x, &y));
        assert!(Identity::of(&x, 4).matches("nightly"));
        assert!(Identity::of(&a, 4).matches("oltp_point_select"));
        assert!(Identity::of(&a, 4).matches(&Identity::of(&a, 4).key()));
        assert_eq!(
            Identity::of(&a, 1).title(),
            "oltp_point_select · 1 session · c1"
        );
    }

    #[test]
    fn imported_and_merged_runs_join_their_series() {
        let a = meta();
        // An import keeps the plan and host; only its id and origin differ (not in the meta).
        let imported = a.clone();
        assert!(same(&a, &imported));
        // Runs merged from shards: each merged run carries its group and seed, never its index.
        let shard = |group: &str, seed: u64| {
            let mut m = meta();
            m.plan.shard = Some(qpslab_core::shard::ShardSpec {
                index: None,
                count: Some(3),
                group: Some(group.into()),
                run_seed: Some(seed),
                timeout_s: None,
            });
            m
        };
        assert!(same(&shard("g1", 1), &shard("g2", 2)));
        // A shard's own run is a part of a run, not the run.
        let mut part = shard("g1", 1);
        part.plan.shard.as_mut().unwrap().index = Some(0);
        assert!(!same(&part, &shard("g1", 1)));
    }
}
