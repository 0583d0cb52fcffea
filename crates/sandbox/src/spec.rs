//! What the caller asks for: the lab directory that holds every sandbox, and the
//! [`SandboxSpec`] of one sandbox (name, binaries, my.cnf fragment, overrides, placement, allocator).

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The directory holding sandboxes (`sandboxes/<name>/`) and initialised datadir templates
/// (`templates/<version>/`).
#[derive(Clone, Debug)]
pub struct SandboxHome {
    root: PathBuf,
    templates: Option<PathBuf>,
    /// Whether the user named this lab (`--lab`, `QPSLAB_LAB`) rather than taking the default
    /// `~/.qpslab`: only a named lab is expected to hold its sandboxes' data, so only then does
    /// a start say why the data went elsewhere.
    named: bool,
}

/// Two homes are the same lab when their directories and templates are: how it was chosen
/// does not matter.
impl PartialEq for SandboxHome {
    fn eq(&self, other: &Self) -> bool {
        self.root == other.root && self.templates == other.templates
    }
}

impl Eq for SandboxHome {}

impl SandboxHome {
    /// A lab directory at `path` (created on first use). A relative path is made absolute
    /// now: the server resolves paths against its own working directory, and a sandbox is
    /// recognised later by the datadir on its command line.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        SandboxHome {
            root: std::path::absolute(&path).unwrap_or(path),
            templates: None,
            named: true,
        }
    }

    /// `$QPSLAB_LAB` if set, else `~/.qpslab`, else `/tmp/qpslab-<uid>` when there is no home.
    pub fn default_location() -> SandboxHome {
        if let Some(p) = std::env::var_os("QPSLAB_LAB").filter(|p| !p.is_empty()) {
            return SandboxHome::new(p);
        }
        let home = match std::env::var_os("HOME").filter(|h| !h.is_empty()) {
            Some(home) => SandboxHome::new(Path::new(&home).join(".qpslab")),
            // SAFETY: getuid has no preconditions and cannot fail.
            None => SandboxHome::new(format!("/tmp/qpslab-{}", unsafe { libc::getuid() })),
        };
        SandboxHome {
            named: false,
            ..home
        }
    }

    /// Whether the user named this lab (`new`, or `QPSLAB_LAB`) rather than taking the default.
    pub fn is_named(&self) -> bool {
        self.named
    }

    /// Keeps datadir templates in `dir` instead of `<lab>/templates`, so that several labs (e.g.
    /// one temporary lab per test process) share one initialisation per server version.
    pub fn with_templates(mut self, dir: impl Into<PathBuf>) -> Self {
        let dir = dir.into();
        self.templates = Some(std::path::absolute(&dir).unwrap_or(dir));
        self
    }

    /// The lab root.
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// Where initialised datadir templates live.
    pub fn templates_dir(&self) -> PathBuf {
        self.templates
            .clone()
            .unwrap_or_else(|| self.root.join("templates"))
    }

    /// The directory of sandbox `name`.
    pub fn sandbox_dir(&self, name: &str) -> PathBuf {
        self.root.join("sandboxes").join(name)
    }

    /// The parent of every sandbox directory.
    pub(crate) fn sandboxes_dir(&self) -> PathBuf {
        self.root.join("sandboxes")
    }
}

/// The user's my.cnf fragment on top of the lab's own settings (`server start --my-cnf`, a
/// study setup's `my_cnf`). Not a perf profile: those are `qpslab_probe::profile`'s.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MyCnf {
    /// None: the server's stock settings plus only what the lab needs.
    #[default]
    Default,
    /// A my.cnf fragment: `name = value` lines of its `[mysqld]`, `[mariadb]`, `[server]` and
    /// `[mariadbd]` groups (lines before any group count too) and of the files it includes
    /// (`!include`, `!includedir`), read as `qpslab_core::optfile` reads them, applied before
    /// `--set` overrides.
    File(PathBuf),
}

/// An allocator preloaded into the server with `LD_PRELOAD`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Malloc {
    /// The system's `libjemalloc.so.2` (Debian package `libjemalloc2`).
    Jemalloc,
    /// The system's `libtcmalloc_minimal.so.4` (Debian package `libtcmalloc-minimal4`).
    Tcmalloc,
    /// Any shared library given by path.
    Library(PathBuf),
}

/// What an unknown allocator name is told.
const MALLOC_CHOICES: &str = "jemalloc, tcmalloc, system, or the path of a shared library";

impl std::str::FromStr for Malloc {
    type Err = Error;

    /// `jemalloc`, `tcmalloc`, or a library path (any value with a `/` or a `.`, so a misspelt
    /// name is an error here rather than a missing file at start).
    fn from_str(s: &str) -> Result<Malloc> {
        match s {
            "jemalloc" => Ok(Malloc::Jemalloc),
            "tcmalloc" => Ok(Malloc::Tcmalloc),
            p if p.contains(['/', '.']) => Ok(Malloc::Library(p.into())),
            _ => Err(Error::InvalidSetting {
                setting: format!("malloc={s}"),
                reason: format!("unknown allocator; use {MALLOC_CHOICES}"),
            }),
        }
    }
}

impl Malloc {
    /// Reads an allocator choice as the CLI's `--malloc` and a study's `malloc` take it: what
    /// [`Malloc::from_str`](std::str::FromStr) accepts, or `system` (also `glibc`) for the C
    /// library's own allocator, which preloads nothing.
    pub fn parse_choice(s: &str) -> Result<Option<Malloc>> {
        match s {
            "system" | "glibc" => Ok(None),
            _ => s.parse().map(Some),
        }
    }
}

/// A sandbox's part in replication.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// No replication.
    #[default]
    Standalone,
    /// Writes a binary log (row format) that replicas read (`server start --primary`).
    Primary,
    /// Replicates from the sandbox `of` of the same lab (`server start --replica-of`).
    Replica {
        /// The primary's sandbox name.
        of: String,
    },
}

impl Role {
    /// Neither primary nor replica.
    pub fn is_standalone(&self) -> bool {
        *self == Role::Standalone
    }

    /// The settings the role needs, before the my.cnf fragment and `--set` (which may change them).
    /// A primary logs in row format, so what a replica applies does not depend on its own
    /// settings; a replica needs nothing beyond its own server_id (every sandbox has one).
    pub(crate) fn settings(&self) -> Vec<(String, String)> {
        match self {
            Role::Primary => vec![
                ("log_bin".into(), "binlog".into()),
                ("binlog_format".into(), "ROW".into()),
            ],
            Role::Standalone | Role::Replica { .. } => Vec::new(),
        }
    }

    /// `primary`, `replica of NAME`, or `-`.
    pub fn describe(&self) -> String {
        match self {
            Role::Standalone => "-".into(),
            Role::Primary => "primary".into(),
            Role::Replica { of } => format!("replica of {of}"),
        }
    }
}

/// Everything that defines one sandbox. Build it with [`SandboxSpec::new`] and set fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SandboxSpec {
    /// `[A-Za-z0-9_-]{1,32}`; names the directory, state file and socket.
    pub name: String,
    /// An unpacked MariaDB/MySQL/Percona tarball; `None` uses the installed binaries
    /// (`mariadbd`/`mysqld` on PATH or in /usr/sbin).
    pub basedir: Option<PathBuf>,
    /// The my.cnf fragment applied before `settings`.
    pub my_cnf: MyCnf,
    /// `--set name=value` overrides with my.cnf names (dashes and underscores both accepted); an
    /// empty value renders a bare flag (`skip-log-bin`). Later entries win.
    pub settings: Vec<(String, String)>,
    /// CPUs the server may run on (set before exec, so every server thread inherits it).
    pub cpus: Option<Vec<usize>>,
    /// An allocator to preload.
    pub malloc: Option<Malloc>,
    /// The TCP port; `None` picks a free one.
    pub port: Option<u16>,
    /// How long to wait for the server to accept connections.
    pub start_timeout: std::time::Duration,
    /// The thread placement policy kept with the sandbox (`server start --pin`); the caller
    /// applies it, and runs against the sandbox keep re-applying it.
    pub pin: qpslab_core::placement::Policy,
    /// A directory to keep the datadir in instead of the runtime directory (a filesystem
    /// mounted for the study, say): the datadir is `<root>/<name>`. The socket, pid file, logs
    /// and tmpdir stay in the runtime directory, so their paths keep their length. The server's
    /// account must be able to reach it (see [`mount_dir`](crate::mount_dir)).
    pub datadir_root: Option<PathBuf>,
    /// Its part in replication; the caller sets a replica's replication up once it runs.
    pub role: Role,
}

impl SandboxSpec {
    /// A spec with no my.cnf fragment, installed binaries, a free port and a 60 s start timeout.
    pub fn new(name: impl Into<String>) -> Self {
        SandboxSpec {
            name: name.into(),
            basedir: None,
            my_cnf: MyCnf::Default,
            settings: Vec::new(),
            cpus: None,
            malloc: None,
            port: None,
            start_timeout: std::time::Duration::from_secs(60),
            pin: Default::default(),
            datadir_root: None,
            role: Role::Standalone,
        }
    }

    /// The spec of what a user asked for, checked: `settings` as `name=value` pairs (each
    /// checked like a my.cnf line, kept as given), `cpus` in taskset's format (the rules of
    /// [`qpslab_core::cpus`]), `malloc` as [`Malloc::parse_choice`] reads it, and an unpacked
    /// server tarball. The my.cnf fragment and port stay at their defaults for the caller to set.
    pub fn build(
        name: &str,
        settings: &[(String, String)],
        cpus: Option<&str>,
        malloc: Option<&str>,
        basedir: Option<&Path>,
    ) -> Result<SandboxSpec> {
        for (n, v) in settings {
            crate::config::check_setting(n, v)?;
        }
        let cpus = cpus
            .map(qpslab_core::cpus::parse_cpu_list)
            .transpose()
            .map_err(|e| Error::InvalidSetting {
                setting: "cpus".into(),
                reason: e.to_string(),
            })?;
        Ok(SandboxSpec {
            basedir: basedir.map(Path::to_path_buf),
            settings: settings.to_vec(),
            cpus,
            malloc: malloc.map(Malloc::parse_choice).transpose()?.flatten(),
            ..SandboxSpec::new(name)
        })
    }
}

impl SandboxSpec {
    /// Keeps a placement policy with the sandbox and turns performance_schema on, which the
    /// policy needs to find each class's OS threads (see [`pin_setting`]).
    pub fn set_pin(&mut self, policy: qpslab_core::placement::Policy) -> Result<()> {
        if let Some(s) = pin_setting(&self.settings, &policy)? {
            self.settings.push(s);
        }
        self.pin = policy;
        Ok(())
    }
}

impl SandboxSpec {
    /// Times the server's waits from its start (`--instrument-waits`, a study's
    /// `instrument_waits = true`): adds [`instrument_waits_settings`] to its settings.
    pub fn instrument_waits(&mut self) -> Result<()> {
        let extra = instrument_waits_settings(&self.settings)?;
        self.settings.extend(extra);
        Ok(())
    }
}

/// Whether `settings` turn performance_schema off.
fn performance_schema_off(settings: &[(String, String)]) -> bool {
    settings.iter().any(|(n, v)| {
        n.trim().replace('-', "_") == "performance_schema"
            && matches!(
                v.trim().to_ascii_lowercase().as_str(),
                "off" | "0" | "false"
            )
    })
}

/// The settings that time a server's waits, on top of `settings`: performance_schema on and
/// every `wait/%` instrument enabled and timed from startup (MariaDB leaves the wait/synch
/// latches untimed by default). Refused when `settings` turn performance_schema off.
pub fn instrument_waits_settings(settings: &[(String, String)]) -> Result<Vec<(String, String)>> {
    if performance_schema_off(settings) {
        return Err(Error::InvalidSetting {
            setting: "performance_schema=OFF".into(),
            reason: "timing waits (--instrument-waits, instrument_waits) needs performance_schema \
                     ON; drop one of the two"
                .into(),
        });
    }
    Ok(vec![
        ("performance_schema".into(), "ON".into()),
        ("performance_schema_instrument".into(), "wait/%=ON".into()),
    ])
}

/// The setting a sandbox with `policy` needs on top of `settings` (`performance_schema=ON`),
/// none without a policy; a policy with performance_schema turned off is refused.
pub fn pin_setting(
    settings: &[(String, String)],
    policy: &qpslab_core::placement::Policy,
) -> Result<Option<(String, String)>> {
    if policy.is_empty() {
        return Ok(None);
    }
    if performance_schema_off(settings) {
        return Err(Error::InvalidSetting {
            setting: "performance_schema=OFF".into(),
            reason: "a thread placement policy (pin) needs performance_schema to map thread \
                     classes to OS threads"
                .into(),
        });
    }
    Ok(Some(("performance_schema".into(), "ON".into())))
}

/// Checks a sandbox name: `[A-Za-z0-9_-]{1,32}`, not starting with '-' (no command could name
/// it: its name would read as an option).
pub fn validate_name(name: &str) -> Result<()> {
    let reason = if name.is_empty() {
        Some("it is empty")
    } else if name.starts_with('-') {
        Some("it starts with '-', which reads as an option")
    } else if name.len() > 32 {
        Some("it is longer than 32 characters")
    } else if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        Some("only letters, digits, '_' and '-' are allowed")
    } else {
        None
    };
    match reason {
        Some(r) => Err(Error::InvalidName {
            name: name.to_string(),
            reason: r.to_string(),
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use qpslab_core::fault::Blame;

    #[test]
    fn names() {
        for ok in ["a", "bench_1", "A-b-9", &"x".repeat(32)] {
            assert!(validate_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", "a b", "../x", "a/b", "é", "-x", "--rm", &"x".repeat(33)] {
            let e = validate_name(bad).unwrap_err();
            assert!(e.is_user_error(), "{bad}");
        }
    }

    #[test]
    fn build_checks_what_the_user_typed() {
        let set = vec![("innodb_buffer_pool_size".to_string(), "1G".to_string())];
        let s = SandboxSpec::build("b", &set, Some("0"), Some("tcmalloc"), None).unwrap();
        assert_eq!(
            (s.settings, s.cpus, s.malloc),
            (set, Some(vec![0]), Some(Malloc::Tcmalloc))
        );
        let s = SandboxSpec::build("b", &[], None, Some("system"), Some(Path::new("/b"))).unwrap();
        assert_eq!((s.malloc, s.basedir), (None, Some(PathBuf::from("/b"))));
        let reserved = vec![("datadir".to_string(), "/x".to_string())];
        for e in [
            SandboxSpec::build("b", &reserved, None, None, None).unwrap_err(),
            SandboxSpec::build("b", &[], Some("1-0"), None, None).unwrap_err(),
            SandboxSpec::build("b", &[], None, Some("jemaloc"), None).unwrap_err(),
        ] {
            assert!(e.is_user_error(), "{e}");
        }
    }

    #[test]
    fn instrumented_waits_turn_performance_schema_on_and_refuse_it_off() {
        let mut s = SandboxSpec::new("w");
        s.instrument_waits().unwrap();
        assert_eq!(
            s.settings,
            vec![
                ("performance_schema".to_string(), "ON".to_string()),
                (
                    "performance_schema_instrument".to_string(),
                    "wait/%=ON".to_string()
                ),
            ]
        );
        let off = vec![("performance-schema".to_string(), "OFF".to_string())];
        let mut s = SandboxSpec::build("w", &off, None, None, None).unwrap();
        let e = s.instrument_waits().unwrap_err();
        assert!(e.is_user_error(), "{e}");
        assert!(e.to_string().contains("performance_schema"), "{e}");
    }

    #[test]
    fn allocators() {
        assert_eq!("jemalloc".parse::<Malloc>().unwrap(), Malloc::Jemalloc);
        assert_eq!("tcmalloc".parse::<Malloc>().unwrap(), Malloc::Tcmalloc);
        assert_eq!(
            "./libmimalloc.so".parse::<Malloc>().unwrap(),
            Malloc::Library("./libmimalloc.so".into())
        );
        assert_eq!(Malloc::parse_choice("glibc").unwrap(), None);
        let e = "mimalloc".parse::<Malloc>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid setting 'malloc=mimalloc': unknown allocator; use jemalloc, tcmalloc, \
             system, or the path of a shared library"
        );
    }

    #[test]
    fn lab_layout() {
        let home = SandboxHome::new("/l");
        assert_eq!(home.sandbox_dir("s"), PathBuf::from("/l/sandboxes/s"));
        assert_eq!(home.templates_dir(), PathBuf::from("/l/templates"));
        let home = home.with_templates("/t");
        assert_eq!(home.templates_dir(), PathBuf::from("/t"));
        assert!(SandboxHome::new("rel").path().is_absolute());
    }
}
