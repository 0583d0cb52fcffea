//! The study spec file (TOML) and its checks.
//!
//! ```toml
//! name = "bp-vs-stock"
//! [defaults]                 # any run option
//! workload = "oltp_read_only"
//! duration = "5s"
//! repeats = 2
//! [[variant]]                # a server setup
//! name = "stock"
//! [[variant]]
//! name = "bp1g"
//! set = { innodb_buffer_pool_size = "1G" }
//! [sweep]                    # any run option over a list: cross product
//! threads = [2, 8]
//! [factors.malloc]           # named factors with named levels: full factorial
//! system = {}
//! jemalloc = { malloc = "jemalloc" }
//! ```
//!
//! Unknown keys are refused with their line and the nearest valid key; values of the wrong
//! type with their line.

use crate::error::SpecError;
use crate::options::{RunOptions, SweepOptions};
use indexmap::IndexMap;
use qpslab_core::input::{self, InputError};
use qpslab_core::{ConnectOptions, Dsn, Secret};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Why a study setup could not become a server to measure: the spec's mistakes (pin, password
/// file, settings) or the machine's failures (placing threads, mounting storage); each
/// becomes the failure of the setup's cells.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The setup's `pin` table is not a placement policy.
    #[error("{}", .0.to_string().replacen("--pin", "pin", 1))]
    Pin(#[source] qpslab_core::placement::PinError),
    /// The password file of its external target could not be read.
    #[error(transparent)]
    PasswordFile(#[from] crate::options::password::PasswordFileError),
    /// Its sandbox spec was refused (settings, CPUs, allocator, server binaries, placement).
    #[error(transparent)]
    Sandbox(#[from] qpslab_sandbox::Error),
    /// Its threads could not be placed on the running server.
    #[error("placing threads (pin): {0}")]
    Placing(#[source] qpslab_probe::Error),
    /// Its sandbox's mount point could not be made.
    #[error("storage: {0}")]
    MountDir(#[source] qpslab_sandbox::Error),
    /// Its storage could not be set up (see [`qpslab_host::storage::StorageError`] for whose
    /// fault).
    #[error(transparent)]
    Storage(#[from] qpslab_host::storage::StorageError),
}

/// A whole spec as written.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// The study's unique name in the store.
    pub name: String,
    /// Free text.
    #[serde(default)]
    pub description: Option<String>,
    /// Run options of every cell.
    #[serde(default)]
    pub defaults: RunOptions,
    /// Server setups; none means one sandbox with stock settings, named `default`.
    #[serde(default)]
    pub variant: Vec<Setup>,
    /// Run options swept as a cross product.
    #[serde(default)]
    pub sweep: SweepOptions,
    /// Named factors, each with named levels (partial setups), in spec order.
    #[serde(default)]
    pub factors: IndexMap<String, IndexMap<String, Setup>>,
    /// The half-width of the 95% interval each comparison runs rounds until (`"5%"`); with it
    /// or `budget` the study runs rounds until its comparisons are precise ([`crate::study::stop::StopRule`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<toml::Value>,
    /// The metric `precision` is about: `tps` (default), `qps`, `p50`, `p95` or `p99`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision_metric: Option<String>,
    /// Exactly N rounds (`repeats = N` here or in `[defaults]`): read into the defaults.
    #[serde(default, skip_serializing)]
    pub repeats: Option<serde_json::Value>,
    /// The wall time of the whole study, start-ups and loads included (`"10m"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<toml::Value>,
    /// Rounds every comparison runs before it may stop (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_repeats: Option<u32>,
    /// The most rounds (default 20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_repeats: Option<u32>,
    /// Decide only at planned looks, every this many paired rounds and at `max_repeats`
    /// (repeated confidence intervals, narrower than the sequence that holds after every round).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub look_every: Option<u32>,
    /// The order of a round's cells: `"points"` (each point's setups back to back, the
    /// default) or `"setups"` (each setup's points in one block); see [`crate::study::stop::CellOrder`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<String>,
}

/// A server setup: a `[[variant]]`, or one level of a factor (which has no `name`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Setup {
    /// The variant's name (variants only).
    #[serde(default)]
    pub name: Option<String>,
    /// Server settings, my.cnf names: `{ innodb_buffer_pool_size = "1G" }`.
    #[serde(default)]
    pub set: IndexMap<String, SettingValue>,
    /// CPUs of the sandbox server: `"0"`, `"0-3,6"`.
    #[serde(default)]
    pub cpus: Option<String>,
    /// Allocator preloaded: `jemalloc`, `tcmalloc`, `system`, or a library path.
    #[serde(default)]
    pub malloc: Option<String>,
    /// Time the sandbox's waits (`--instrument-waits`): performance_schema on and every
    /// `wait/%` instrument enabled and timed from its start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instrument_waits: Option<bool>,
    /// An unpacked server tarball to run instead of the installed server.
    #[serde(default)]
    pub basedir: Option<PathBuf>,
    /// A my.cnf fragment applied before `set` (`profile`, its old key, is still read).
    #[serde(default, alias = "profile")]
    pub my_cnf: Option<PathBuf>,
    /// An external server (`mysql://user@host:port/db`) instead of a sandbox. Its password,
    /// if the URL has one, is never stored or printed; better kept out of the spec with
    /// `password_file` or `MYSQL_PWD`.
    #[serde(default)]
    pub target: Option<Target>,
    /// A file whose first line is the password of `target`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_file: Option<PathBuf>,
    /// OS-level toggles applied while this setup runs.
    #[serde(default)]
    pub os: OsToggles,
    /// Thread placement of the sandbox: class (or glob) → `CPUS[,nice=N]`,
    /// `{ "thread/innodb/page_cleaner_thread" = "1" }` (see `qpslab_core::placement`).
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub pin: IndexMap<String, String>,
    /// The filesystem the sandbox's datadir lives on (see [`qpslab_host::storage`]):
    /// `{ fs = "xfs", size = "4G", mount_options = "noatime", read_ahead_kb = 128 }`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage: Option<qpslab_host::storage::Storage>,
    /// A replica started next to the sandbox (which then writes a binary log), with its own
    /// settings; every cell measures its lag: `replica = { set = { slave_parallel_threads = 4 } }`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica: Option<ReplicaSetup>,
}

/// A setup's replica (`replica = { set = { ... } }`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplicaSetup {
    /// The replica's server settings, my.cnf names.
    #[serde(default)]
    pub set: IndexMap<String, SettingValue>,
}

/// A spec's `target`: a `mysql://` URL, parsed when the spec is read. It serializes (the stored
/// spec, the study's environment, `lab show`) without its password, so a spec compared on
/// resume matches whether or not its file holds the password.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Target(pub Dsn);

impl<'de> Deserialize<'de> for Target {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Target, D::Error> {
        let url = String::deserialize(d)?;
        url.parse::<Dsn>()
            .map(Target)
            .map_err(|e| serde::de::Error::custom(format!("target: {e}")))
    }
}

impl Setup {
    /// The placement policy of `pin` (empty without one).
    pub fn pin_policy(&self) -> Result<qpslab_core::placement::Policy, SetupError> {
        qpslab_core::placement::Policy::from_table(
            self.pin.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        )
        .map_err(SetupError::Pin)
    }

    /// The connection options of an external target, the password taken from the URL, else
    /// `password_file` (its first line), else `MYSQL_PWD`; `None` for a sandbox setup.
    pub fn target_options(&self) -> Result<Option<ConnectOptions>, SetupError> {
        let Some(Target(dsn)) = &self.target else {
            return Ok(None);
        };
        let mut o = dsn.options().clone();
        if o.password.is_empty() {
            if let Some(path) = &self.password_file {
                o.password = Secret::new(crate::options::password::read_password_file(path)?);
            } else if let Ok(pw) = std::env::var("MYSQL_PWD") {
                o.password = Secret::new(pw);
            }
        }
        Ok(Some(o))
    }

    /// The target arguments of a `qpslab` command line that reaches this setup's server,
    /// without password; empty for a sandbox setup.
    pub fn command_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        if let Some(Target(dsn)) = &self.target {
            args.extend(["--target".to_string(), dsn.to_string()]);
            if let Some(p) = &self.password_file {
                args.extend(["--password-file".to_string(), p.display().to_string()]);
            }
        }
        args
    }
}

/// A setting's value: written as a string, a number or a boolean.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SettingValue {
    /// `"1G"`.
    Text(String),
    /// `2`.
    Int(i64),
    /// `0.5`.
    Float(f64),
    /// `true` (rendered ON) / `false` (OFF).
    Bool(bool),
}

impl SettingValue {
    /// The value as my.cnf would hold it.
    pub fn render(&self) -> String {
        match self {
            SettingValue::Text(s) => s.clone(),
            SettingValue::Int(n) => n.to_string(),
            SettingValue::Float(f) => f.to_string(),
            SettingValue::Bool(b) => if *b { "ON" } else { "OFF" }.into(),
        }
    }
}

/// OS-level toggles (host-wide; applied before the server starts, restored afterwards).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OsToggles {
    /// Transparent huge pages: `always`, `madvise` or `never`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thp: Option<String>,
}

impl Setup {
    /// This setup with `level` applied on top (settings merged, other fields replaced when set).
    pub fn with(&self, level: &Setup) -> Setup {
        let mut s = self.clone();
        for (k, v) in &level.set {
            s.set.insert(k.clone(), v.clone());
        }
        for (k, v) in &level.pin {
            s.pin.insert(k.clone(), v.clone());
        }
        macro_rules! replace {
            ($($f:ident),*) => { $(if level.$f.is_some() { s.$f = level.$f.clone(); })* };
        }
        replace!(
            cpus,
            malloc,
            instrument_waits,
            basedir,
            my_cnf,
            target,
            password_file,
            storage,
            replica
        );
        if level.os.thp.is_some() {
            s.os.thp = level.os.thp.clone();
        }
        s
    }
}

/// Parses and checks a spec's text; `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<Spec, SpecError> {
    let mut spec: Spec = toml::from_str(text).map_err(|e| toml_error(file, text, &e))?;
    // `repeats = N` reads the same beside `precision` as in `[defaults]`.
    if let Some(n) = spec.repeats.take() {
        let value = |message: String| SpecError::Value {
            file: file.to_string(),
            message,
        };
        if spec.defaults.get("repeats").is_some() {
            return Err(value(
                "repeats: given both at the top and in [defaults]; keep one".into(),
            ));
        }
        spec.defaults
            .set("repeats", n)
            .map_err(|e| value(e.to_string()))?;
    }
    check(file, &spec)?;
    Ok(spec)
}

/// Reads and parses a spec file; returns its text too, with every target's password removed
/// (that text is what the study stores).
pub fn load(path: &std::path::Path) -> Result<(Spec, String), SpecError> {
    let text = input::read_text(path, "a study spec", input::SPEC_LIMIT).map_err(|e| match e {
        InputError::Io { path, source } => SpecError::Read { path, source },
        e => SpecError::Input(e),
    })?;
    let file = path.display().to_string();
    // Script files named in the spec are found next to it.
    let dir = path.parent().unwrap_or(std::path::Path::new(""));
    let spec = crate::options::with_base_dir(dir, || parse(&file, &text))?;
    let text = redacted_text(&spec, &text);
    Ok((spec, text))
}

/// `text` with the password of every URL removed. Should a password survive that (written
/// with TOML escapes, say), the spec is stored re-serialized instead: comments lost, no secret.
fn redacted_text(spec: &Spec, text: &str) -> String {
    let redacted = qpslab_store::redact_url_passwords(text);
    let clean = |s: &Spec| {
        s.variant
            .iter()
            .chain(s.factors.values().flat_map(|l| l.values()))
            .all(|v| {
                v.target
                    .as_ref()
                    .is_none_or(|t| t.0.options().password.is_empty())
            })
    };
    match toml::from_str::<Spec>(&redacted) {
        Ok(s) if clean(&s) => redacted,
        _ => toml::to_string(spec).unwrap_or_default(),
    }
}

fn check(file: &str, spec: &Spec) -> Result<(), SpecError> {
    let value = |message: String| SpecError::Value {
        file: file.into(),
        message,
    };
    if spec.name.trim().is_empty() {
        return Err(value("name must not be empty".into()));
    }
    spec.stop_rule().map_err(|e| value(e.to_string()))?;
    if let Some(o) = spec
        .order
        .as_deref()
        .filter(|o| !["points", "setups"].contains(o))
    {
        return Err(value(format!(
            "order: expects \"points\" (each point's setups back to back) or \"setups\" (each setup's points in one block), not {o:?}"
        )));
    }
    let mut names = std::collections::HashSet::new();
    for (i, v) in spec.variant.iter().enumerate() {
        let Some(n) = v.name.as_deref().filter(|n| !n.trim().is_empty()) else {
            return Err(value(format!("[[variant]] number {} has no name", i + 1)));
        };
        if n.contains('/') || n.contains('+') {
            return Err(value(format!(
                "[[variant]] name '{n}': no '/' or '+' in names"
            )));
        }
        if !names.insert(n) {
            return Err(value(format!("[[variant]] name '{n}' is used twice")));
        }
        check_setup(&format!("[[variant]] {n}"), v).map_err(value)?;
    }
    for (f, levels) in &spec.factors {
        for (l, setup) in levels {
            if setup.name.is_some() {
                return Err(value(format!(
                    "[factors.{f}] level {l}: a level takes its name from its key; remove `name`"
                )));
            }
            check_setup(&format!("[factors.{f}] level {l}"), setup).map_err(value)?;
        }
    }
    Ok(())
}

fn check_setup(what: &str, s: &Setup) -> Result<(), String> {
    if let Some(c) = &s.cpus {
        qpslab_core::cpus::parse_cpu_list(c).map_err(|e| format!("{what}: {e}"))?;
    }
    if let Some(m) = &s.malloc {
        qpslab_sandbox::Malloc::parse_choice(m).map_err(|e| format!("{what}: {e}"))?;
    }
    s.pin_policy().map_err(|e| format!("{what}: {e}"))?;
    if let Some(t) = &s.os.thp {
        if !["always", "madvise", "never"].contains(&t.as_str()) {
            return Err(format!("{what}: os.thp '{t}': always, madvise or never"));
        }
    }
    if let Some(st) = &s.storage {
        qpslab_host::storage::check(what, st).map_err(|e| e.to_string())?;
    }
    if s.password_file.is_some() && s.target.is_none() {
        return Err(format!(
            "{what}: `password_file` is the password of an external `target`; sandboxes need none"
        ));
    }
    if s.target.is_some()
        && (!s.set.is_empty()
            || s.cpus.is_some()
            || s.malloc.is_some()
            || s.instrument_waits.is_some()
            || s.basedir.is_some()
            || s.storage.is_some()
            || !s.pin.is_empty()
            || s.replica.is_some())
    {
        return Err(format!(
            "{what}: `target` is an external server; set, cpus, malloc, instrument_waits, basedir, storage, pin and replica configure sandboxes"
        ));
    }
    Ok(())
}

/// Turns a TOML/serde error into one line with the line number, naming an unknown key's
/// nearest valid spelling.
fn toml_error(file: &str, text: &str, e: &toml::de::Error) -> SpecError {
    let line = e.span().map_or(0, |s| {
        text[..s.start.min(text.len())].matches('\n').count() + 1
    });
    let msg = e.message().trim().to_string();
    if let Some(rest) = msg.strip_prefix("unknown field `") {
        if let Some((key, tail)) = rest.split_once('`') {
            let candidates: Vec<&str> = tail.split('`').skip(1).step_by(2).collect();
            let suggestion = nearest(key, &candidates);
            return SpecError::UnknownKey {
                file: file.into(),
                line,
                key: key.into(),
                section: section_at(text, line),
                suggestion,
            };
        }
    }
    SpecError::Invalid {
        file: file.into(),
        line,
        message: msg.lines().next().unwrap_or("").to_string(),
    }
}

/// The valid key nearest to `key`, if one is close enough to be a typo.
pub fn nearest(key: &str, candidates: &[&str]) -> Option<String> {
    candidates
        .iter()
        .map(|c| (strsim::damerau_levenshtein(key, c), *c))
        .filter(|(d, c)| *d <= 3.max(c.len() / 3) || c.contains(key) || key.contains(c))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c.to_string())
}

/// The `[table]` header above `line`, if any.
fn section_at(text: &str, line: usize) -> Option<String> {
    text.lines()
        .take(line)
        .filter_map(|l| {
            let t = l.trim();
            t.starts_with('[')
                .then(|| t.split('#').next().unwrap_or(t).trim().to_string())
        })
        .last()
}

/// The spec as a canonical JSON tree: what `resume` compares.
pub fn normalized(spec: &Spec) -> serde_json::Value {
    serde_json::to_value(spec).unwrap_or_default()
}

/// SHA-256 of the normalized spec, hex.
pub fn spec_hash(spec: &Spec) -> String {
    use sha2::Digest;
    let d = sha2::Sha256::digest(normalized(spec).to_string().as_bytes());
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// The paths where two normalized specs differ, e.g. `sweep.threads`, `variant[1]`.
pub fn differences(old: &serde_json::Value, new: &serde_json::Value) -> Vec<String> {
    fn walk(path: String, a: &serde_json::Value, b: &serde_json::Value, out: &mut Vec<String>) {
        use serde_json::Value::{Array, Object};
        match (a, b) {
            (Object(x), Object(y)) => {
                let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
                for k in keys {
                    let p = if path.is_empty() {
                        k.clone()
                    } else {
                        format!("{path}.{k}")
                    };
                    let null = serde_json::Value::Null;
                    walk(p, x.get(k).unwrap_or(&null), y.get(k).unwrap_or(&null), out);
                }
            }
            (Array(x), Array(y)) if x.len() == y.len() && path.ends_with("variant") => {
                for (i, (p, q)) in x.iter().zip(y).enumerate() {
                    walk(format!("{path}[{}]", i + 1), p, q, out);
                }
            }
            _ if a != b => out.push(path),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(String::new(), old, new, &mut out);
    out
}

/// Factor names and their level names, in spec order.
pub fn factor_list(spec: &Spec) -> Vec<(String, Vec<String>)> {
    spec.factors
        .iter()
        .map(|(f, l)| (f.clone(), l.keys().cloned().collect()))
        .collect()
}

/// `{"factor": "level"}` for one combination.
pub type Levels = BTreeMap<String, String>;

#[cfg(test)]
#[path = "spec_tests.rs"]
mod tests;
