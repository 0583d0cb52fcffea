//! `qpslab merge SOURCE...`: the shards of one run (`run --shard I/N`, each stored in its own
//! store, perhaps on its own host) read from their stores, checked complete, and stored as one
//! run (`qpslab_lab::shard::merge`), which `show`, `compare` and `report` read as any other.
//! `qpslab merge --group GROUP`: the shards of GROUP found in the store `--db` names, where
//! every shard stored its run (a server store the hosts share, or one file), merged there.
//! Either way a store never gets a second run merged from the same shard runs.

use crate::args::MergeArgs;
use crate::error::{fail, user};
use anyhow::Result;
use qpslab_lab::shard::group::{in_store, not_merged_in, Census};
use qpslab_lab::shard::merge::{merge as merge_shards, one_group};
use qpslab_store::{RunId, RunStatus, Store, StoredRun};
use std::path::Path;

/// Runs `qpslab merge`.
pub fn merge(a: MergeArgs) -> Result<()> {
    crate::db::check(&a.db.db)?;
    // A merge measures nothing: its run may go to a store on the server the shards measured
    // (the store's refusal is for runs writing there while they measure).
    qpslab_store::allow_store_on_target();
    let db = a.db.db.as_path();
    // A store this merge creates goes again when the merge fails, so a failed merge leaves no
    // store that was not there (a server's schema is the server's: it stays).
    let created = !is_server(db) && !db.exists();
    let (shards, store) = match &a.group {
        Some(group) if a.sources.is_empty() => in_db(db, group)?,
        group => {
            let shards = from_sources(&a.sources, group.as_deref())?;
            let store = checked_store(db, created, &shards)?;
            (shards, store)
        }
    };
    let (meta, phases) = merge_shards(&shards, crate::target::command_line()).map_err(fail)?;
    let stored = store
        .map_or_else(|| crate::db::open_to_write(db), Ok)
        .and_then(|mut store| {
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
                crate::db::remove(db);
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

/// `merge --group GROUP` alone: the group's shards in the store `db` names (which must exist),
/// with that store to write the merged run to.
fn in_db(db: &Path, group: &str) -> Result<(Vec<StoredRun>, Option<Store>)> {
    if !is_server(db) && !db.exists() {
        return Err(user(format!(
            "{}: no such store; `merge --group` reads the shards from the store --db names \
             (where each shard stored its run)",
            db.display()
        )));
    }
    // Opened as to read: a schema that is not there is not made (nothing is there to merge).
    let store = crate::db::open_to_read(db)?;
    let name = store.path().display().to_string();
    let shards = in_store(&store, &name, group)?.map_err(fail)?;
    Ok((shards, Some(store)))
}

/// The shards of one group in the stores `sources` names (of `group` when given).
fn from_sources(sources: &[String], group: Option<&str>) -> Result<Vec<StoredRun>> {
    let mut runs = Vec::new();
    for source in sources {
        runs.extend(read(source)?);
    }
    let named = sources.join(", ");
    let Some(group) = group else {
        return one_group(runs, &named).map_err(fail);
    };
    let mut census = Census::new(group);
    for run in runs {
        census.look(run);
    }
    census.shards(&named).map_err(fail)
}

/// The store `db` opened, when it holds something already, after checking it holds no run
/// merged from `shards`.
fn checked_store(db: &Path, created: bool, shards: &[StoredRun]) -> Result<Option<Store>> {
    if created {
        return Ok(None);
    }
    let store = crate::db::open_to_write(db)?;
    let name = store.path().display().to_string();
    not_merged_in(&store, &name, shards)?.map_err(fail)?;
    Ok(Some(store))
}

/// The completed runs of `source` (a store, a file's or a server's, or `FILE:RUN_ID` for one
/// run of a file).
fn read(source: &str) -> Result<Vec<StoredRun>> {
    let picked = source
        .rsplit_once(':')
        .filter(|(file, _)| {
            !is_server(Path::new(source))
                && Path::new(file).is_file()
                && !Path::new(source).exists()
        })
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
    if !Path::new(file).is_file() && !is_server(Path::new(file)) {
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

/// Whether `--db` names a store on a server (`mysql://`, `mariadb://`) rather than a file.
fn is_server(db: &Path) -> bool {
    db.to_str()
        .is_some_and(|s| s.starts_with("mysql://") || s.starts_with("mariadb://"))
}
