//! Making sure a run's dataset is there before it is measured: built on a sandbox of ours
//! (when the filesystem has room for it), only checked on the user's server, whose missing or
//! different dataset names the commands that would build it. `qpslab run` and studies share
//! this check.

use crate::run::observer::Observer;
use crate::run::ExecError;
use qpslab_core::{ConnectOptions, WorkloadOptions};
use qpslab_engine::prepare::{self, DatasetStatus, PrepareProgress, PrepareReport};
use qpslab_engine::workload::script::run_init;
use qpslab_engine::workload::WorkloadError;
use qpslab_wire::Conn;
use std::path::{Path, PathBuf};

use crate::dataset::commands::{cleanup_command, prepare_command};

/// What [`ensure_dataset`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DatasetOutcome {
    /// The dataset was there.
    Present,
    /// sbtest tables made by another tool (sysbench) fit and are used as they are.
    Foreign,
    /// It was missing, or differed, and was built now.
    Prepared,
}

/// Whose server the dataset is on, which decides what [`ensure_dataset`] may change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DatasetPolicy {
    /// A sandbox of ours: a missing or different dataset (or database) is built now, when the
    /// filesystem holding `space` (the sandbox's directory, if known) has room for it.
    Prepare {
        /// A directory on the sandbox's filesystem.
        space: Option<PathBuf>,
    },
    /// The user's server: nothing is created, dropped or rewritten; a missing or different
    /// dataset is [`ExecError::Unprepared`], naming the commands that would build it.
    CheckOnly {
        /// `qpslab prepare ...` with the same dataset and target (no password).
        prepare: String,
        /// `qpslab cleanup ...` for the same target.
        cleanup: String,
    },
}

/// Makes sure the dataset `w` describes is present on `target` (database set). Under
/// [`DatasetPolicy::Prepare`] it is built with `loaders` connections when it is missing or was
/// built by qpslab with another shape; under [`DatasetPolicy::CheckOnly`] it is only checked. A
/// dataset built by another tool is used as it is when its shape fits, and never dropped.
/// A script workload has no sbtest dataset (see [`script_database`]). Then the init SQL
/// (`--init-sql`), if any, runs once, on any server: the user asked for it.
pub fn ensure_dataset(
    target: &ConnectOptions,
    w: &WorkloadOptions,
    loaders: u32,
    policy: &DatasetPolicy,
    obs: &mut dyn Observer,
) -> Result<DatasetOutcome, ExecError> {
    let outcome = if w.scripts.is_empty() {
        ensure_sbtest(target, w, loaders, policy, obs)?
    } else {
        script_database(target, policy)?
    };
    let Some(init) = &w.init_sql else {
        return Ok(outcome);
    };
    let mut conn = Conn::connect(target).map_err(|source| ExecError::Connect {
        target: target.describe(),
        source,
    })?;
    let n = run_init(&mut conn, init).map_err(WorkloadError::from)?;
    obs.message(&format!("{}: {n} statement(s) ran", init.name));
    Ok(outcome)
}

fn ensure_sbtest(
    target: &ConnectOptions,
    w: &WorkloadOptions,
    loaders: u32,
    policy: &DatasetPolicy,
    obs: &mut dyn Observer,
) -> Result<DatasetOutcome, ExecError> {
    let status = match sbtest_status(target, w)? {
        Some(status) => status,
        // The schema itself is missing.
        None => {
            if let DatasetPolicy::CheckOnly { prepare, .. } = policy {
                return Err(ExecError::Unprepared(format!(
                    "database {} does not exist on {}; `run` never creates anything on an \
                     external server: create it and the tables with: {prepare} --create-db",
                    target
                        .database
                        .as_deref()
                        .unwrap_or(prepare::DEFAULT_DATABASE),
                    target.describe()
                )));
            }
            DatasetStatus::Missing
        }
    };
    match (status, policy) {
        (DatasetStatus::Matches, _) => Ok(DatasetOutcome::Present),
        (DatasetStatus::Foreign, _) => {
            obs.message("using existing sbtest tables (not created by qpslab)");
            Ok(DatasetOutcome::Foreign)
        }
        (DatasetStatus::Missing, DatasetPolicy::CheckOnly { prepare, .. }) => {
            Err(ExecError::Unprepared(format!(
                "the dataset ({}) is missing on {}; `run` never changes an external server: \
                 prepare it with: {prepare}",
                dataset(w),
                target.describe()
            )))
        }
        (DatasetStatus::Different(why), DatasetPolicy::CheckOnly { prepare, cleanup }) => {
            Err(ExecError::Unprepared(format!(
                "the dataset on {} differs ({why}); `run` never changes an external server: \
                 rebuild it with: {cleanup} && {prepare}",
                target.describe()
            )))
        }
        (DatasetStatus::Missing, DatasetPolicy::Prepare { space }) => {
            obs.message(&format!("dataset missing: preparing {}", dataset(w)));
            load_dataset(target, w, loaders, true, space.as_deref(), obs)?;
            Ok(DatasetOutcome::Prepared)
        }
        (DatasetStatus::Different(why), DatasetPolicy::Prepare { space }) => {
            if w.kind == qpslab_core::WorkloadKind::Tpcc {
                // A TPC-C load resumes: only the warehouses not recorded are loaded.
                obs.message(&format!("dataset differs ({why}): loading what is missing"));
            } else {
                obs.message(&format!("dataset differs ({why}): rebuilding it"));
                prepare::cleanup(target, None)?;
            }
            load_dataset(target, w, loaders, true, space.as_deref(), obs)?;
            Ok(DatasetOutcome::Prepared)
        }
    }
}

/// The dataset `w` asks for, in words: `4 × 10000 rows`, `TPC-C warehouses 1-2`.
fn dataset(w: &WorkloadOptions) -> String {
    if w.kind == qpslab_core::WorkloadKind::Tpcc {
        let ws = w.warehouses;
        match ws.count() {
            1 => format!("TPC-C warehouse {}", ws.first),
            _ => format!("TPC-C warehouses {}-{}", ws.first, ws.last),
        }
    } else {
        format!("{} × {} rows", w.tables, w.table_size)
    }
}

/// A failure of the dataset check, saying so (loading and cleaning name their own steps).
fn checking(e: prepare::PrepareError) -> prepare::PrepareError {
    match e {
        prepare::PrepareError::Server { context, source } => prepare::PrepareError::Server {
            context: format!("checking the dataset: {context}"),
            source,
        },
        other => other,
    }
}

/// The sbtest dataset's status on `target`; `None` when its database does not exist.
fn sbtest_status(
    target: &ConnectOptions,
    w: &WorkloadOptions,
) -> Result<Option<DatasetStatus>, ExecError> {
    match Conn::connect(target) {
        Ok(mut conn) => Ok(Some(
            prepare::dataset_status(&mut conn, w).map_err(checking)?,
        )),
        Err(e) if e.server_code() == Some(1049) => Ok(None),
        Err(e) => Err(ExecError::Connect {
            target: target.describe(),
            source: e,
        }),
    }
}

/// Whether [`ensure_dataset`] under [`DatasetPolicy::Prepare`] would change anything on
/// `target`: the sbtest dataset is missing or differs (it would be built or rebuilt), or the
/// workload's init SQL would run. A caller sharing a sandbox with other runs asks before
/// holding it alone.
pub fn dataset_changes(target: &ConnectOptions, w: &WorkloadOptions) -> Result<bool, ExecError> {
    if w.init_sql.is_some() {
        return Ok(true);
    }
    if !w.scripts.is_empty() {
        return Ok(false);
    }
    Ok(!matches!(
        sbtest_status(target, w)?,
        Some(DatasetStatus::Matches | DatasetStatus::Foreign)
    ))
}

/// A script workload's database: created on a sandbox of ours when missing (the scripts and
/// their init SQL make the tables); on the user's server it must exist.
fn script_database(
    target: &ConnectOptions,
    policy: &DatasetPolicy,
) -> Result<DatasetOutcome, ExecError> {
    let DatasetPolicy::Prepare { .. } = policy else {
        return Ok(DatasetOutcome::Present);
    };
    let db = target
        .database
        .as_deref()
        .unwrap_or(prepare::DEFAULT_DATABASE);
    let server = ConnectOptions {
        database: None,
        ..target.clone()
    };
    let sql = format!("CREATE DATABASE IF NOT EXISTS `{}`", db.replace('`', "``"));
    Conn::connect(&server)
        .and_then(|mut c| c.execute(&sql))
        .map_err(|source| ExecError::Connect {
            target: server.describe(),
            source,
        })?;
    Ok(DatasetOutcome::Present)
}

/// Loads the dataset with `loaders` connections, reporting progress to `obs`; the database is
/// created when missing only if `create_database`. With `space`, a dataset that is not there
/// yet must fit in the free space of that directory's filesystem.
pub fn load_dataset(
    target: &ConnectOptions,
    w: &WorkloadOptions,
    loaders: u32,
    create_database: bool,
    space: Option<&Path>,
    obs: &mut dyn Observer,
) -> Result<PrepareReport, ExecError> {
    if let Some(dir) = space {
        let present = Conn::connect(target)
            .ok()
            .and_then(|mut c| prepare::dataset_status(&mut c, w).ok())
            == Some(DatasetStatus::Matches);
        if !present {
            check_space(dir, w)?;
        }
    }
    let cfg = prepare::PrepareConfig {
        create_database,
        ..prepare::PrepareConfig::new(loaders)
    };
    let report = {
        let mut progress = |p: PrepareProgress| obs.prepare_progress(&p);
        prepare::prepare_with(target, w, &cfg, &mut progress)?
    };
    obs.prepared(w, &report, loaders);
    Ok(report)
}

/// Bytes an sbtest row takes in InnoDB, its share of the k_N index included (sysbench's
/// 1M-row table is about 240 MB on disk).
const BYTES_PER_ROW: u64 = 250;

/// Bytes a TPC-C warehouse takes in InnoDB (about 100 MB, as sysbench-tpcc's and go-tpc's
/// documentation say).
const BYTES_PER_WAREHOUSE: u64 = 100 << 20;

/// Refuses a dataset larger than the free space of the filesystem holding `dir`.
pub fn check_space(dir: &Path, w: &WorkloadOptions) -> Result<(), ExecError> {
    let rows = u64::from(w.tables).saturating_mul(w.table_size);
    let need = if w.kind == qpslab_core::WorkloadKind::Tpcc {
        u64::from(w.warehouses.count()) * BYTES_PER_WAREHOUSE
    } else {
        rows.saturating_mul(BYTES_PER_ROW)
    };
    let Some(free) = free_bytes(dir) else {
        return Ok(());
    };
    if need <= free {
        return Ok(());
    }
    let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
    if w.kind == qpslab_core::WorkloadKind::Tpcc {
        return Err(ExecError::NoSpace(format!(
            "the dataset ({} TPC-C warehouses) needs about {:.1} GiB but {} has {:.1} GiB free: \
             load fewer --warehouses",
            w.warehouses.count(),
            gib(need),
            dir.display(),
            gib(free)
        )));
    }
    Err(ExecError::NoSpace(format!(
        "the dataset ({} × {} rows) needs about {:.1} GiB but {} has {:.1} GiB free: use \
         fewer --tables or a smaller --table-size",
        w.tables,
        w.table_size,
        gib(need),
        dir.display(),
        gib(free)
    )))
}

/// Bytes available to us on the filesystem holding `dir` (or its nearest existing parent).
fn free_bytes(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let existing = dir.ancestors().find(|p| p.exists())?;
    let c = std::ffi::CString::new(existing.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs is plain integers, valid when zeroed.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: statvfs writes into the struct we pass; the path is a valid C string.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some((st.f_bavail as u64).saturating_mul(st.f_frsize as u64))
}

/// The policy for the user's server reached with `target_args`: check only, naming the
/// commands that would prepare `w` there.
pub fn check_only(w: &WorkloadOptions, target_args: &[String]) -> DatasetPolicy {
    DatasetPolicy::CheckOnly {
        prepare: prepare_command(w, target_args),
        cleanup: cleanup_command(target_args),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use qpslab_core::fault::Blame;
    use qpslab_core::WorkloadKind;

    #[test]
    fn space_is_checked_against_the_filesystem() {
        let mut w = WorkloadOptions::new(WorkloadKind::OltpReadOnly);
        w.tables = 1;
        w.table_size = 10;
        assert!(check_space(Path::new("/tmp/no/such/dir"), &w).is_ok());
        w.tables = 10_000;
        w.table_size = 2_000_000_000;
        let e = check_space(Path::new("/tmp"), &w).unwrap_err();
        assert!(
            e.is_user_error() && e.to_string().contains("GiB free"),
            "{e}"
        );
    }
}
