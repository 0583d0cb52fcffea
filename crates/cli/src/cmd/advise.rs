//! `qpslab advise`: reads a server's facts (and its host's, when it runs here), prints what to
//! change with the figures behind each finding, and with `--cnf` writes the recommended server
//! settings as a my.cnf section. The rules are `qpslab_advise`; this module checks the
//! arguments, connects, and prints. Nothing is changed on the server.

mod render;

use crate::args::{AdviseArgs, DurabilityArg, Format};
use crate::error::user;
use crate::target::{connect, explicit, sandbox_home};
use anyhow::Result;
use qpslab_advise::{advise as findings, read_facts, Facts, FactsError};
use qpslab_core::advise::{Durability, Finding};
use serde::Serialize;

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
    let out = crate::out::Output::new(&a.output, "advise")?;
    if let Some(cnf) = &a.cnf {
        crate::outfile::check("--cnf", cnf, true)?;
    }
    let home = sandbox_home(&a.home);
    let connected = connect(t, None, &home)?;
    let options = connected.server_options();
    let target = options.describe();
    // Settings a killed tune left behind are not the server's own: say so before advising.
    super::restore::warn_leftovers(&home, &options, t);
    let facts = read_facts(&options).map_err(|e| match e {
        FactsError::Connect { target, source } => {
            anyhow::Error::new(source).context(format!("connecting to {target}"))
        }
        FactsError::Read { target, source } => {
            anyhow::Error::new(source).context(format!("reading the facts of {target}"))
        }
    })?;
    let durability = match a.durability {
        DurabilityArg::Strict => Durability::Strict,
        DurabilityArg::Relaxed => Durability::Relaxed,
    };
    let doc = AdviseDoc::new(target, &facts, durability);
    out.emit(|f| match f {
        Format::Json => crate::out::json(&doc),
        Format::Md => Ok(render::markdown(&doc)),
        _ => Ok(render::table(&doc)),
    })?;
    if let Some(cnf) = &a.cnf {
        crate::outfile::write("--cnf", cnf, &render::cnf(&doc))?;
        eprintln!("recommended server settings written to {}", cnf.display());
    }
    Ok(())
}
