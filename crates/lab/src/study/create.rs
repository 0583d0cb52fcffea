//! Creating a study: the one place studies are made (`lab run`'s specs, `tune`'s proof
//! studies), each with the environment it was created in.

use crate::error::StudyError;
use qpslab_core::Cell;
use qpslab_sandbox::SandboxHome;
use qpslab_store::{Factor, NewStudy, Store, StudyId};
use serde_json::json;

/// The environment of a study: host facts, storage of the lab, what can be measured here.
pub fn environment(home: &SandboxHome) -> serde_json::Value {
    let _ = std::fs::create_dir_all(home.path());
    json!({
        "host": qpslab_probe::host_facts(),
        "lab_storage": qpslab_probe::storage_facts(home.path()),
        "perf": match qpslab_probe::perf::perf_support() {
            Ok(()) => json!({"supported": true, "events": qpslab_probe::perf::EVENTS}),
            Err(reason) => json!({"supported": false, "reason": reason}),
        },
        "os_toggles": match qpslab_host::os::thp_support() {
            Ok(thp) => json!({"thp": {"supported": true, "initial": thp}}),
            Err(reason) => json!({"thp": {"supported": false, "reason": reason}}),
        },
        "servers": {},
        "tool_version": env!("CARGO_PKG_VERSION"),
    })
}

/// Creates study `name` (`spec`: its spec's text, `hash`: the normalized spec's hash) with its
/// `factors` and `cells`, its environment read in `home` now.
pub fn create<'c>(
    store: &mut Store,
    home: &SandboxHome,
    (name, spec, hash): (&str, &str, &str),
    factors: Vec<Factor>,
    cells: impl IntoIterator<Item = &'c Cell>,
) -> Result<StudyId, StudyError> {
    let new = NewStudy {
        name: name.to_string(),
        spec_toml: spec.to_string(),
        spec_hash: hash.to_string(),
        env: environment(home),
        factors,
    };
    Ok(store.create_study(&new, cells)?)
}
