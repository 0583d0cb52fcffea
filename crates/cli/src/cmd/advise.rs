//! `qpslab advise`: reads a server's facts (and its host's, when it runs here), prints what to
//! change with the figures behind each finding, and with `--cnf` writes the recommended server
//! settings as a my.cnf section. The rules are `qpslab_advise`; this module checks the
//! arguments, connects, and prints. Nothing is changed on the server.

use crate::args::{AdviseArgs, DurabilityArg, Format};
use crate::error::user;
use crate::render::advise::{self as render, AdviseDoc};
use crate::target::{connect, explicit, sandbox_home};
use anyhow::Result;
use qpslab_advise::{read_facts, FactsError};
use qpslab_core::advise::Durability;

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
        crate::outfile::write("--cnf", cnf, render::cnf(&doc))?;
        crate::outfile::tell("recommended server settings", cnf);
    }
    Ok(())
}
