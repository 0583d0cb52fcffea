//! The sandbox of a study setup: its name, its spec, where its dataset may go, and the
//! filesystem its datadir lives on when the setup has `storage`.

use crate::dataset::check::DatasetPolicy;
use crate::study::expand::Expanded;
use crate::study::spec::Setup;
use crate::study::spec::SetupError;
use qpslab_host::storage::{self, Mounted, StorageGuard};
use qpslab_sandbox::{MyCnf, SandboxHome, SandboxSpec};
use std::path::{Path, PathBuf};

/// The sandbox name of a setup: unique per study and setup, at most 32 characters.
pub fn sandbox_name(study: &str, setup: &str) -> String {
    use sha2::Digest;
    let h = sha2::Sha256::digest(format!("{study}\0{setup}").as_bytes());
    let clean: String = setup
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .take(22)
        .collect();
    format!("s{:02x}{:02x}{:02x}-{clean}", h[0], h[1], h[2])
}

/// A study's sandboxes are ours and get their dataset built; an external `target` is only
/// checked, and a cell fails with the commands that would prepare it.
pub fn dataset_policy(setup: &Setup, plan: &qpslab_core::RunPlan, space: &Path) -> DatasetPolicy {
    if setup.target.is_none() {
        return DatasetPolicy::Prepare {
            space: Some(space.to_path_buf()),
        };
    }
    crate::dataset::check::check_only(&plan.workload, &setup.command_args())
}

/// The sandbox spec of a setup.
pub fn sandbox_spec(study: &str, setup_name: &str, s: &Setup) -> Result<SandboxSpec, SetupError> {
    let settings: Vec<_> = s.set.iter().map(|(k, v)| (k.clone(), v.render())).collect();
    let mut spec = SandboxSpec::build(
        &sandbox_name(study, setup_name),
        &settings,
        s.cpus.as_deref(),
        s.malloc.as_deref(),
        s.basedir.as_deref(),
    )?;
    spec.my_cnf = s.my_cnf.clone().map_or(MyCnf::Default, MyCnf::File);
    if s.instrument_waits == Some(true) {
        spec.instrument_waits()?;
    }
    crate::server::replica::configure(&mut spec, s.replica.is_some());
    // The policy, and performance_schema, which the policy needs.
    spec.set_pin(s.pin_policy()?)?;
    Ok(spec)
}

/// Where the loop images of `s` go: its `image_dir`, else `LAB/storage`.
fn image_dir(home: &SandboxHome, s: &storage::Storage) -> PathBuf {
    s.image_dir
        .clone()
        .unwrap_or_else(|| home.path().join("storage"))
}

/// Cleans what a killed qpslab left of study `study`'s storage: first the sandboxes of its
/// storage setups still running (their files keep the mounts busy), then the mounts, loop
/// devices and images ([`storage::clean_stale`]); one line per thing cleaned.
pub fn clean_stale_storage(home: &SandboxHome, study: &str, expanded: &Expanded) -> Vec<String> {
    let mut said = Vec::new();
    for s in expanded.setups.iter().filter(|s| s.setup.storage.is_some()) {
        let name = sandbox_name(study, &s.name);
        if qpslab_sandbox::find(home, &name).is_ok_and(|i| i.alive)
            && qpslab_sandbox::stop_by_name(home, &name).is_ok()
        {
            said.push(format!("stopped sandbox '{name}' left running"));
        }
    }
    said.extend(storage::clean_stale(&image_dirs(home, expanded)));
    said
}

/// The directories where the setups of a study keep loop images (to find stale ones).
fn image_dirs(home: &SandboxHome, expanded: &Expanded) -> Vec<PathBuf> {
    let mut dirs = vec![home.path().join("storage")];
    for s in expanded
        .setups
        .iter()
        .filter_map(|s| s.setup.storage.as_ref())
    {
        let d = image_dir(home, s);
        if !dirs.contains(&d) {
            dirs.push(d);
        }
    }
    dirs
}

/// Why the storage of a setup cannot be applied on this host (no root, a missing tool, a
/// scratch device that is in use), checked before anything runs.
pub fn storage_unsupported(expanded: &Expanded) -> Option<String> {
    expanded.setups.iter().find_map(|s| {
        let st = s.setup.storage.as_ref()?;
        storage::check_host(st)
            .err()
            .map(|e| format!("{}: {e}", s.name))
    })
}

/// Mounts the storage of setup `setup_name` (a sandbox named `sandbox`), recording the changes
/// in `guard`; what to undo by hand after a `kill -9` is in [`StorageGuard::pending`].
pub fn mount_storage(
    guard: &mut StorageGuard,
    home: &SandboxHome,
    sandbox: &str,
    s: &storage::Storage,
) -> Result<Mounted, SetupError> {
    let dir = qpslab_sandbox::mount_dir(home, sandbox).map_err(SetupError::MountDir)?;
    let image = storage::image_path(&image_dir(home, s), sandbox);
    Ok(guard.apply(s, &image, &dir)?)
}

/// What the study's environment keeps of a mounted setup: its facts, mount point, device and
/// the commands that undo it by hand.
pub fn storage_record(m: &Mounted, guard: &StorageGuard) -> serde_json::Value {
    serde_json::json!({
        "facts": m.facts,
        "mount_point": m.dir,
        "device": m.device,
        "undo_by_hand": guard.pending(),
    })
}

/// One line saying what a setup's storage is and how to undo it by hand.
pub fn describe_storage(setup: &str, m: &Mounted, guard: &StorageGuard) -> String {
    let f = |k: &str| m.facts.get(k).map_or("", String::as_str);
    format!(
        "storage of {setup}: {} on {} at {} ({}; scheduler {}, read_ahead_kb {}); if qpslab is killed, undo with: {}",
        f("fs"),
        f("device"),
        m.dir.display(),
        f("mount_options"),
        f("scheduler"),
        f("read_ahead_kb"),
        guard.pending().join("; ")
    )
}

/// Starts the sandbox `spec` describes, first stopping one of that name left running by a
/// killed qpslab (the caller holds the sandbox alone, so no live process uses it).
pub(crate) fn start_afresh(
    home: &SandboxHome,
    spec: &SandboxSpec,
) -> Result<qpslab_sandbox::Sandbox, qpslab_sandbox::Error> {
    if qpslab_sandbox::find(home, &spec.name).is_ok_and(|i| i.alive) {
        let _ = qpslab_sandbox::stop_by_name(home, &spec.name);
    }
    qpslab_sandbox::start(home, spec)
}

/// A sandbox's start failure as one line and the tail of its error log, when there is one.
pub(crate) fn start_failure(e: &qpslab_sandbox::Error) -> (String, Option<String>) {
    use qpslab_sandbox::Error as E;
    let tail = match e {
        E::StartFailed { log_tail, .. }
        | E::UnknownSetting { log_tail, .. }
        | E::InitFailed { log_tail, .. } => Some(log_tail.clone()),
        _ => None,
    };
    let line = e.to_string().lines().next().unwrap_or("").to_string();
    (line, tail)
}

/// What a study's environment records of the server of a setup.
pub(crate) fn server_record(
    server: &qpslab_core::ServerInfo,
    sb: Option<&qpslab_sandbox::Sandbox>,
    setup: &Setup,
) -> serde_json::Value {
    serde_json::json!({
        "version": server.version,
        "version_comment": server.version_comment,
        "flavor": server.flavor,
        "variables": server.variables,
        "setup": setup,
        "sandbox": sb.map(|s| s.name()),
        "datadir_storage": sb.map(|s| qpslab_probe::storage_facts(s.datadir())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sandbox_names_are_valid_and_distinct() {
        let a = sandbox_name("study", "tuned+jemalloc+never");
        let b = sandbox_name("other", "tuned+jemalloc+never");
        assert_ne!(a, b);
        assert!(a.len() <= 32, "{a}");
        qpslab_sandbox::validate_name(&a).unwrap();
        qpslab_sandbox::validate_name(&sandbox_name("s", &"x".repeat(80))).unwrap();
    }

    #[test]
    fn instrument_waits_times_the_sandbox_waits() {
        let spec = crate::study::spec::parse(
            "s.toml",
            "name = \"s\"\n[[variant]]\nname = \"w\"\ninstrument_waits = true\n[[variant]]\nname = \"off\"\nset = { performance_schema = \"OFF\" }\ninstrument_waits = true\n",
        )
        .unwrap();
        let w = sandbox_spec("s", "w", &spec.variant[0]).unwrap();
        assert!(w
            .settings
            .contains(&("performance_schema_instrument".into(), "wait/%=ON".into())));
        assert!(w
            .settings
            .contains(&("performance_schema".into(), "ON".into())));
        assert!(sandbox_spec("s", "off", &spec.variant[1]).is_err());
    }
}
