//! `qpslab merge SOURCE...`: the shards of one run (`run --shard I/N`, each stored in its own
//! store, perhaps on its own host) read from their stores, checked complete, and stored as one
//! run (`qpslab_lab::shard::merge`), which `show`, `compare` and `report` read as any other.

use crate::args::MergeArgs;
use crate::error::{fail, user};
use anyhow::Result;
use qpslab_lab::shard::merge::{merge as merge_shards, one_group};
use qpslab_store::{RunId, RunStatus, StoredRun};
use std::path::Path;

/// Runs `qpslab merge`.
pub fn merge(a: MergeArgs) -> Result<()> {
    crate::db::check(&a.db.db)?;
    let mut runs = Vec::new();
    for source in &a.sources {
        runs.extend(read(source)?);
    }
    let shards = one_group(runs, &a.sources.join(", ")).map_err(fail)?;
    let (meta, phases) = merge_shards(&shards, crate::target::command_line()).map_err(fail)?;
    // Everything was read and checked above; a store this merge creates goes again when the
    // write fails, so a failed merge leaves no store that was not there.
    let created = !a.db.db.exists();
    let stored = crate::db::open_to_write(&a.db.db).and_then(|mut store| {
        let mut id = None;
        for (phase, telemetry) in &phases {
            id = Some(store.record_phase(&meta, phase, telemetry)?);
        }
        store.finish_run(&meta.uuid, RunStatus::Completed)?;
        Ok((store, id))
    });
    let (store, id) = match stored {
        Ok(done) => done,
        Err(e) => {
            if created {
                crate::db::remove(&a.db.db);
            }
            return Err(e);
        }
    };
    let hosts: Vec<String> = shards
        .iter()
        .map(|s| s.meta.host.hostname.clone())
        .collect();
    let group = meta
        .plan
        .shard
        .as_ref()
        .and_then(|s| s.group.clone())
        .unwrap_or_default();
    println!(
        "merged {} shards of group {group} (hosts {}), {} phase(s)",
        shards.len(),
        hosts.join(", "),
        phases.len()
    );
    if let Some(id) = id {
        println!(
            "stored as run {} in {}  (qpslab show {})",
            id.0,
            store.path().display(),
            id.0
        );
    }
    Ok(())
}

/// The completed runs of `source` (a store, or `FILE:RUN_ID` for one run of it).
fn read(source: &str) -> Result<Vec<StoredRun>> {
    let picked = source
        .rsplit_once(':')
        .filter(|(file, _)| Path::new(file).is_file() && !Path::new(source).exists())
        .map(|(file, id)| {
            id.parse::<i64>()
                .map(|id| (file, id))
                .map_err(|_| user(format!("{source}: expected FILE or FILE:RUN_ID")))
        })
        .transpose()?;
    let (file, pick) = match picked {
        Some((file, id)) => (file, Some(RunId(id))),
        None => (source, None),
    };
    if !Path::new(file).is_file() {
        return Err(user(format!("{file}: no such store")));
    }
    let store = crate::db::open_to_read(Path::new(file))?;
    let ids: Vec<RunId> = match pick {
        Some(id) => vec![id],
        None => store
            .list_runs(usize::MAX)?
            .into_iter()
            .filter(|r| r.status == RunStatus::Completed)
            .map(|r| r.id)
            .collect(),
    };
    let mut runs = Vec::new();
    for id in ids {
        runs.push(store.load_run(id).map_err(|e| match e {
            qpslab_store::Error::RunNotFound(_) => user(format!("{file}: no run {}", id.0)),
            e => e.into(),
        })?);
    }
    Ok(runs)
}
