//! `qpslab advise`: reads a server's facts (and its host's, when it runs here), prints what to
//! change with the figures behind each finding, and with `--cnf` writes the recommended server
//! settings as a my.cnf section. The rules are `qpslab_lab::advise`; this module checks the
//! arguments, connects, and prints. Nothing is changed on the server.

mod render;

use crate::args::{AdviseArgs, AdviseFormat, DurabilityArg};
use crate::error::user;
use crate::target::{connect, explicit, sandbox_home};
use anyhow::{Context, Result};
use qpslab_core::advise::{Durability, Finding};
use qpslab_core::Endpoint;
use qpslab_lab::advise::{advise as findings, gather, Facts};
use serde::Serialize;
use std::io::Write;
use std::path::Path;

/// What every format shows: which server, the facts the findings rest on, the findings.
#[derive(Serialize)]
pub(crate) struct AdviseDoc {
    target: String,
    version: String,
    flavor: String,
    uptime_s: u64,
    innodb_data_bytes: u64,
    /// The host's facts were read (a server on this host).
    local: bool,
    /// RAM of the host, when local.
    memory_bytes: Option<u64>,
    cores: Option<u32>,
    durability: Durability,
    findings: Vec<Finding>,
}

impl AdviseDoc {
    fn new(target: String, facts: &Facts, durability: Durability) -> AdviseDoc {
        let host = facts.local.as_ref().map(|l| &l.host);
        AdviseDoc {
            target,
            version: facts.server.version.clone(),
            flavor: facts.server.flavor.clone(),
            uptime_s: facts.uptime_s(),
            innodb_data_bytes: facts.innodb_bytes,
            local: facts.local.is_some(),
            memory_bytes: host.map(|h| h.memory_bytes),
            cores: host.map(|h| h.cores),
            durability,
            findings: findings(facts, durability),
        }
    }
}

/// Runs `qpslab advise`.
pub fn advise(a: AdviseArgs) -> Result<()> {
    let t = &a.target;
    if !explicit(t) {
        return Err(user(
            "advise needs a server to look at: --target DSN, --socket PATH or --sandbox NAME",
        ));
    }
    if let Some(cnf) = &a.cnf {
        check_cnf(cnf)?;
    }
    let connected = connect(t, None, &sandbox_home(&a.home))?;
    let options = connected.server_options();
    let target = options.describe();
    let mut conn =
        qpslab_wire::Conn::connect(&options).with_context(|| format!("connecting to {target}"))?;
    let facts = gather(&mut conn, is_local(&options.endpoint))
        .with_context(|| format!("reading the facts of {target}"))?;
    let durability = match a.durability {
        DurabilityArg::Strict => Durability::Strict,
        DurabilityArg::Relaxed => Durability::Relaxed,
    };
    let doc = AdviseDoc::new(target, &facts, durability);
    match a.format {
        AdviseFormat::Table => print!("{}", render::table(&doc)),
        AdviseFormat::Md => print!("{}", render::markdown(&doc)),
        AdviseFormat::Json => println!("{}", serde_json::to_string_pretty(&doc)?),
    }
    if let Some(cnf) = &a.cnf {
        write_atomically(cnf, &render::cnf(&doc))
            .with_context(|| format!("writing {}", cnf.display()))?;
        eprintln!("recommended server settings written to {}", cnf.display());
    }
    Ok(())
}

/// A server on this host: a socket, or TCP to a loopback name.
fn is_local(endpoint: &Endpoint) -> bool {
    match endpoint {
        Endpoint::Unix { .. } => true,
        Endpoint::Tcp { host, .. } => ["localhost", "127.0.0.1", "::1"].contains(&host.as_str()),
    }
}

/// `--cnf FILE` must be a file in a directory that exists, checked before connecting.
fn check_cnf(path: &Path) -> Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(user(format!(
            "--cnf {}: directory {} does not exist",
            path.display(),
            dir.display()
        )));
    }
    if path.is_dir() {
        return Err(user(format!("--cnf {}: is a directory", path.display())));
    }
    Ok(())
}

/// Writes `text` to a temporary file next to `path`, then renames it over `path`.
fn write_atomically(path: &Path, text: &str) -> Result<()> {
    let name = path
        .file_name()
        .map_or_else(|| "advise.cnf".into(), |n| n.to_string_lossy().into_owned());
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        e.into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_servers_and_cnf_paths() {
        assert!(is_local(&Endpoint::Unix {
            path: "/tmp/s".into()
        }));
        let tcp = |h: &str| Endpoint::Tcp {
            host: h.into(),
            port: 3306,
        };
        assert!(is_local(&tcp("127.0.0.1")));
        assert!(!is_local(&tcp("db.example.com")));
        let dir = tempfile::tempdir().unwrap();
        assert!(check_cnf(&dir.path().join("a.cnf")).is_ok());
        assert!(check_cnf(dir.path()).is_err());
        assert!(check_cnf(&dir.path().join("no/a.cnf")).is_err());
        let f = dir.path().join("a.cnf");
        write_atomically(&f, "[mysqld]\n").unwrap();
        write_atomically(&f, "[mysqld]\nx = 1\n").unwrap();
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "[mysqld]\nx = 1\n");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
