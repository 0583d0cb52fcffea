//! The shards of one group found among many runs (`qpslab merge --group`): in a store that
//! every shard wrote into (a server store shared by the hosts, or one file holding them all),
//! or among the runs read from the shards' own stores. What is there of every other group is
//! counted too, so that an unknown group is answered with the groups there are, and the runs
//! merged from shards are recognised by the shard runs they name, so that a group is never
//! merged twice into one store.
//!
//! Runs are looked at one at a time through the store's own reads ([`Store::list_runs`],
//! [`Store::load_run`]); only the wanted group's shards are kept whole.

use super::merge::{one_group, MergeError};
use qpslab_store::{RunId, RunStatus, RunSummary, Store, StoredRun};
use std::collections::{BTreeMap, BTreeSet};

/// Why a group's shards cannot be merged from where they were looked for.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GroupError {
    /// No run there is a shard of the group.
    #[error("no shards of group {group} in {store}; {}", held_words(.held))]
    Unknown {
        /// The group asked for.
        group: String,
        /// Where the shards were looked for.
        store: String,
        /// Every group there, in words (`g1 (3 of 3 shards)`).
        held: Vec<String>,
    },
    /// The store already holds a run merged from these very shards.
    #[error(
        "group {group} is already merged in {store} as run {} (qpslab show {}); a second merged run would count it twice",
        .run.0, .run.0
    )]
    Merged {
        /// The group.
        group: String,
        /// The store.
        store: String,
        /// The merged run already there.
        run: RunId,
    },
    /// The group is incomplete or inconsistent (see [`MergeError`]).
    #[error(transparent)]
    Merge(#[from] MergeError),
}

impl qpslab_core::fault::Blame for GroupError {
    /// A group that is not there, not whole or already merged is the user's to fix.
    fn fault(&self) -> qpslab_core::fault::Fault {
        match self {
            GroupError::Merge(e) => e.fault(),
            _ => qpslab_core::fault::user_if(true),
        }
    }
}

fn held_words(held: &[String]) -> String {
    if held.is_empty() {
        "it holds no shard runs (runs made with `qpslab run --shard I/N`)".into()
    } else {
        format!("it holds group(s) {}", held.join(", "))
    }
}

/// What the runs looked at hold of one group.
#[derive(Debug, Default)]
struct Seen {
    /// The largest shard count its shards claim.
    count: u32,
    /// The shard indexes held.
    indexes: BTreeSet<u32>,
    /// The runs merged from its shards, each with the uuids of the shard runs it merged.
    merged: Vec<(RunId, BTreeSet<String>)>,
}

/// The sharded runs among those looked at: the wanted group's shards whole, every group's
/// indexes and merged runs counted.
#[derive(Debug)]
pub struct Census {
    want: String,
    shards: Vec<StoredRun>,
    groups: BTreeMap<String, Seen>,
}

impl Census {
    /// An empty census looking for the shards of `group`.
    pub fn new(group: &str) -> Census {
        Census {
            want: group.to_string(),
            shards: Vec::new(),
            groups: BTreeMap::new(),
        }
    }

    /// Counts `run`: a shard of a group (kept when of the wanted one), a run merged from a
    /// group's shards, or neither (dropped).
    pub fn look(&mut self, run: StoredRun) {
        let Some(spec) = run.meta.plan.shard.as_ref() else {
            return;
        };
        let Some(group) = spec.group.clone() else {
            return;
        };
        let seen = self.groups.entry(group.clone()).or_default();
        match spec.resolved() {
            Some(place) => {
                seen.count = seen.count.max(place.count);
                seen.indexes.insert(place.index);
                if group == self.want {
                    self.shards.push(run);
                }
            }
            // A merged run keeps the group and count without an index (`merge`'s plan), and
            // names the shard runs it merged in each phase's members.
            None => {
                let uuids = run
                    .phases
                    .iter()
                    .filter_map(|p| p.result.shard.as_ref())
                    .flat_map(|s| s.members.iter().map(|m| m.run_uuid.clone()))
                    .collect();
                seen.merged.push((run.id, uuids));
            }
        }
    }

    /// The wanted group's shards, one per index in index order (of a shard measured twice,
    /// the later run), as [`one_group`] picks them; `source` names where they were looked
    /// for. A group with no shards here but a merged run is [`GroupError::Merged`].
    pub fn shards(&mut self, source: &str) -> Result<Vec<StoredRun>, GroupError> {
        let runs = std::mem::take(&mut self.shards);
        if runs.is_empty() {
            if let Some((run, _)) = self.groups.get(&self.want).and_then(|s| s.merged.first()) {
                return Err(GroupError::Merged {
                    group: self.want.clone(),
                    store: source.to_string(),
                    run: *run,
                });
            }
            return Err(GroupError::Unknown {
                group: self.want.clone(),
                store: source.to_string(),
                held: self.held(),
            });
        }
        Ok(one_group(runs, source)?)
    }

    /// The run already merged from exactly `shards` (same shard runs, by uuid), if one was
    /// looked at. A group name used again for a new run (the default `local-HASH` of the same
    /// plan run twice by hand) is not one: its shard runs are others.
    pub fn merged_from(&self, shards: &[StoredRun]) -> Option<RunId> {
        let uuids: BTreeSet<String> = shards.iter().map(|s| s.meta.uuid.clone()).collect();
        self.groups
            .get(&self.want)?
            .merged
            .iter()
            .find(|(_, of)| *of == uuids)
            .map(|(id, _)| *id)
    }

    /// Every group looked at, in words: its shards held of its count, its merged runs.
    fn held(&self) -> Vec<String> {
        self.groups
            .iter()
            .map(|(group, s)| {
                let mut words = Vec::new();
                if !s.indexes.is_empty() {
                    words.push(format!("{} of {} shards", s.indexes.len(), s.count));
                }
                for (id, _) in &s.merged {
                    words.push(format!("merged as run {}", id.0));
                }
                format!("{group} ({})", words.join(", "))
            })
            .collect()
    }
}

/// A census of `group` over the completed runs of `store` that `keep` accepts, loaded one at
/// a time.
pub fn census(
    store: &Store,
    group: &str,
    keep: impl Fn(&RunSummary) -> bool,
) -> Result<Census, qpslab_store::Error> {
    let mut c = Census::new(group);
    for summary in store.list_runs(usize::MAX)? {
        if summary.status == RunStatus::Completed && keep(&summary) {
            c.look(store.load_run(summary.id)?);
        }
    }
    Ok(c)
}

/// The shards of `group` in `store` (named `name` in messages), ready for
/// [`merge`](super::merge::merge): the group must be whole and not yet merged there.
pub fn in_store(
    store: &Store,
    name: &str,
    group: &str,
) -> Result<Result<Vec<StoredRun>, GroupError>, qpslab_store::Error> {
    let mut c = census(store, group, |_| true)?;
    Ok(c.shards(name)
        .and_then(|shards| match c.merged_from(&shards) {
            Some(run) => Err(GroupError::Merged {
                group: group.to_string(),
                store: name.to_string(),
                run,
            }),
            None => Ok(shards),
        }))
}

/// Whether `store` (named `name` in messages) is free of a run merged from `shards` (one
/// group, as [`one_group`] gives them): [`GroupError::Merged`] when it holds one. Only runs
/// of shard 0's workload and target are read: a merged run has shard 0's.
pub fn not_merged_in(
    store: &Store,
    name: &str,
    shards: &[StoredRun],
) -> Result<Result<(), GroupError>, qpslab_store::Error> {
    let Some(first) = shards.first() else {
        return Ok(Ok(()));
    };
    let Some(group) = first.meta.plan.shard.as_ref().and_then(|s| s.group.clone()) else {
        return Ok(Ok(()));
    };
    // As the store writes them: the summary's columns are what `insert_run` stored.
    let workload = first.meta.plan.workload_name();
    let target = qpslab_store::redact_url_passwords(&first.meta.target);
    let c = census(store, &group, |r| {
        r.target == target && r.workload == workload
    })?;
    Ok(match c.merged_from(shards) {
        Some(run) => Err(GroupError::Merged {
            group,
            store: name.to_string(),
            run,
        }),
        None => Ok(()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shard::merge::{merge, tests::shard};

    /// The run `merge` stores for `shards`, with an id.
    fn merged(shards: &[StoredRun], id: i64) -> StoredRun {
        let (meta, phases) = merge(shards, "m".into()).unwrap();
        let mut run = shards[0].clone();
        run.id = RunId(id);
        run.meta = meta;
        for (p, (result, _)) in run.phases.iter_mut().zip(phases) {
            p.result = result;
        }
        run
    }

    #[test]
    fn the_wanted_group_is_picked_among_others_and_merged_once() {
        let mut c = Census::new("g");
        for run in [
            shard(0, 2, "g", &[1]),
            shard(0, 3, "h", &[1]),
            shard(1, 2, "g", &[1]),
        ] {
            c.look(run);
        }
        let shards = c.shards("s").unwrap();
        assert_eq!(shards.len(), 2);
        assert_eq!(c.merged_from(&shards), None);
        c.look(merged(&shards, 9));
        assert_eq!(c.merged_from(&shards), Some(RunId(9)));
        // The same group name measured again: other shard runs, not merged yet.
        let again = [shard(0, 2, "g", &[1]), shard(1, 2, "g", &[1])];
        assert_eq!(c.merged_from(&again), None);
    }

    #[test]
    fn an_unknown_group_names_what_is_there() {
        let mut c = Census::new("x");
        c.look(shard(0, 3, "h", &[1]));
        c.look(shard(2, 3, "h", &[1]));
        let g = [shard(0, 1, "g", &[1]), shard(1, 2, "g", &[1])];
        c.look(merged(&g, 4));
        assert_eq!(
            c.shards("s.db").unwrap_err().to_string(),
            "no shards of group x in s.db; it holds group(s) g (merged as run 4), h (2 of 3 shards)"
        );
        let mut empty = Census::new("x");
        assert!(empty
            .shards("s.db")
            .unwrap_err()
            .to_string()
            .ends_with("it holds no shard runs (runs made with `qpslab run --shard I/N`)"));
        // Merged here, its shards elsewhere: already merged.
        let mut c = Census::new("g");
        c.look(merged(&g, 4));
        assert!(matches!(
            c.shards("s.db"),
            Err(GroupError::Merged { run: RunId(4), .. })
        ));
    }

    #[test]
    fn a_group_missing_shards_says_which() {
        let mut c = Census::new("g");
        c.look(shard(0, 3, "g", &[1]));
        c.look(shard(2, 3, "g", &[1]));
        assert_eq!(
            c.shards("s").unwrap_err().to_string(),
            "group g: shard(s) 1 of 3 missing"
        );
    }
}
