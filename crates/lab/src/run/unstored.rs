//! A phase the results store could not keep (a full disk, a store gone read-only) is not lost:
//! it is written in the run's JSON form ([`qpslab_store::RunDoc`]) beside the store, or where
//! the system keeps temporary files when the store's directory cannot take it either.

use crate::run::measured::Measured;
use qpslab_store::{RunDoc, RunMeta, RunStatus, StoredPhase, StoredRun};
use std::path::{Path, PathBuf};

/// Why a phase the store could not keep could not be written elsewhere either (a runtime
/// failure).
#[derive(Debug, thiserror::Error)]
pub enum UnstoredError {
    /// The run document could not be encoded.
    #[error("{0}")]
    Encode(#[from] serde_json::Error),
    /// Every place tried refused the file: `PATH: why` for each.
    #[error("{}", .0.join("; "))]
    Nowhere(Vec<String>),
}

/// Writes `measured`, a phase of the run `meta` that `store_path` could not keep, as a run
/// document; returns where it went, or why it could go nowhere.
pub fn keep(
    store_path: &Path,
    meta: &RunMeta,
    measured: &Measured,
) -> Result<PathBuf, UnstoredError> {
    let doc = RunDoc::new(
        StoredRun {
            id: measured.run_id,
            meta: meta.clone(),
            status: RunStatus::Failed,
            finished_at: None,
            phases: vec![StoredPhase {
                seq: measured.seq,
                recorded_at: qpslab_store::unix_now(),
                result: measured.phase.clone(),
                telemetry: measured.telemetry.clone(),
            }],
        },
        vec!["unstored".into()],
    );
    let mut text = serde_json::to_string_pretty(&doc)?;
    text.push('\n');
    // A server's store (a URL) has no directory of its own: the file goes where the system
    // keeps temporary files.
    let temp = std::env::temp_dir();
    let beside = match store_path.parent() {
        _ if is_url(store_path) => temp.as_path(),
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut failures = Vec::new();
    for dir in [beside, temp.as_path()] {
        // A name taken (another phase the store never numbered, an earlier try) is never
        // replaced: the next free one is used.
        for n in 1..=MAX_TRIES {
            let path = dir.join(file_name(store_path, meta, measured.seq, n));
            match write_new(&path, &text) {
                Ok(()) => return Ok(path),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < MAX_TRIES => {}
                Err(e) => {
                    failures.push(format!("{}: {e}", path.display()));
                    break;
                }
            }
        }
    }
    Err(UnstoredError::Nowhere(failures))
}

/// How many names `keep` tries in one directory.
const MAX_TRIES: u32 = 100;

/// `qpslab.db.unstored-1a2b3c4d-2.json`: the store's name, the run's uuid and the phase (0
/// for a phase the store never numbered), then `-N` from the `n`th try on.
fn file_name(store_path: &Path, meta: &RunMeta, seq: u32, n: u32) -> String {
    let store = match store_path.file_name() {
        _ if is_url(store_path) => "qpslab-store".into(),
        Some(n) => n.to_string_lossy().into_owned(),
        None => "qpslab.db".into(),
    };
    let uuid: String = meta
        .uuid
        .chars()
        .filter(char::is_ascii_hexdigit)
        .take(8)
        .collect();
    let again = if n > 1 {
        format!("-{n}")
    } else {
        String::new()
    };
    format!("{store}.unstored-{uuid}-{seq}{again}.json")
}

/// Whether the store is a server's (`mysql://...`), not a file.
fn is_url(store_path: &Path) -> bool {
    let s = store_path.to_string_lossy();
    s.starts_with("mysql://") || s.starts_with("mariadb://")
}

/// Writes `text` to a new file at `path` (mode 0600: the plan may name hosts and users), whole
/// or not at all: a half-written file is removed.
fn write_new(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    let written = f.write_all(text.as_bytes()).and_then(|()| f.sync_all());
    if written.is_err() {
        let _ = std::fs::remove_file(path);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;
    use qpslab_core::{PhaseResult, RunPlan, WorkloadKind, WorkloadOptions};
    use qpslab_store::RunId;

    fn measured() -> (RunMeta, Measured) {
        let plan = RunPlan::new(WorkloadOptions::new(WorkloadKind::OltpPointSelect));
        let meta = RunMeta::new(
            plan,
            "root@localhost/sbtest".into(),
            Default::default(),
            Default::default(),
            "qpslab run".into(),
        );
        let m = Measured {
            run_id: RunId(7),
            seq: 2,
            phase: PhaseResult {
                threads: 4,
                events: 1234,
                duration_s: 1.0,
                ..Default::default()
            },
            telemetry: Vec::new(),
        };
        (meta, m)
    }

    #[test]
    fn an_unstored_phase_goes_beside_the_store_as_a_run_document() {
        let dir = tempfile::tempdir().unwrap();
        let (meta, m) = measured();
        let path = keep(&dir.path().join("q.db"), &meta, &m).unwrap();
        assert_eq!(path.parent(), Some(dir.path()));
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(doc["format"], "qpslab-run");
        assert_eq!(doc["phases"][0]["events"], 1234);
        assert_eq!(doc["phases"][0]["status"], "unstored");
        // A second phase of the same run gets its own file; an existing file is never replaced.
        let again = keep(&dir.path().join("q.db"), &meta, &m).unwrap();
        assert_ne!(again, path);
        assert_eq!(again.parent(), Some(dir.path()));
        assert!(
            again.to_string_lossy().ends_with("-2-2.json"),
            "{}",
            again.display()
        );
    }

    #[test]
    fn a_server_stores_phase_goes_to_the_temporary_directory_under_a_plain_name() {
        let (meta, m) = measured();
        let url = Path::new("mysql://root@localhost/results?socket=/tmp/x/mysqld.sock");
        let path = keep(url, &meta, &m).unwrap();
        assert_eq!(path.parent(), Some(std::env::temp_dir().as_path()));
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with("qpslab-store.unstored-"), "{name}");
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn a_store_directory_that_cannot_take_it_sends_it_to_the_temporary_directory() {
        let (meta, m) = measured();
        let path = keep(Path::new("/proc/q.db"), &meta, &m).unwrap();
        assert!(path.starts_with(std::env::temp_dir()), "{}", path.display());
        std::fs::remove_file(path).unwrap();
    }
}
