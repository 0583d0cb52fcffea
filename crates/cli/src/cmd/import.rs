//! `qpslab import OTHER.db [RUN|STUDY...]`: runs and studies of another store (a file, or a
//! server's) copied into this one (new ids; the original ids, uuid and host kept; what is here
//! already recognised), so that results measured on several hosts can be compared side by side.

use crate::args::{Format, ImportArgs};
use crate::error::user;
use crate::out::Output;
use anyhow::Result;
use qpslab_store::{Imported, Pick};
use std::fmt::Write as _;

/// Runs `qpslab import`.
pub fn import(a: ImportArgs) -> Result<()> {
    let out = Output::new(&a.output, "import")?;
    let picks = picks(&a.picks);
    crate::db::check(&a.db.db)?;
    // Before this store is opened (and created, when missing): a failed import leaves nothing.
    // A server's store (`mysql://`) is checked when the import opens it.
    if !is_url(&a.from) && !a.from.is_file() {
        return Err(user(format!(
            "{} is not a file; name the qpslab store to import from",
            a.from.display()
        )));
    }
    // A store this import creates goes again when the import is refused: a failed import
    // leaves the target as it was, absent included.
    let created = !a.db.db.exists();
    let imported = crate::db::open_to_write(&a.db.db)
        .and_then(|mut store| store.import(&a.from, &picks).map_err(crate::error::fail));
    let done = match imported {
        Ok(done) => done,
        Err(e) => {
            if created {
                crate::db::remove(&a.db.db);
            }
            return Err(e);
        }
    };
    out.emit(|f| match f {
        Format::Json => crate::out::json(&done),
        _ => Ok(table(
            &qpslab_store::redact_url_passwords(&a.from.display().to_string()),
            &done,
            Verb::Import,
        )),
    })
}

/// Whether `from` names a server's store (`mysql://`, `mariadb://`) rather than a file.
fn is_url(from: &std::path::Path) -> bool {
    from.to_str()
        .is_some_and(|s| s.starts_with("mysql://") || s.starts_with("mariadb://"))
}

/// Runs (by id) and studies (by name) as the user named them.
pub(super) fn picks(named: &[String]) -> Vec<Pick> {
    named
        .iter()
        .map(|p| match p.parse::<i64>() {
            Ok(id) => Pick::Run(id),
            Err(_) => Pick::Study(p.clone()),
        })
        .collect()
}

/// What a copy did, as its lines say it.
#[derive(Clone, Copy)]
pub(super) enum Verb {
    /// `import`: copied into this store.
    Import,
    /// `export`: copied into a new file.
    Export,
}

/// A line per run and per study: what it became in the store written.
pub(super) fn table(from: &str, done: &Imported, verb: Verb) -> String {
    let (did, already, summary) = match verb {
        Verb::Import => ("imported", "already here", format!("imported from {from}")),
        Verb::Export => ("exported", "already there", format!("exported to {from}")),
    };
    let mut t = String::new();
    if done.runs.is_empty() && done.studies.is_empty() && done.still_running.is_empty() {
        let _ = match verb {
            Verb::Import => writeln!(t, "{from} holds no runs or studies: nothing imported"),
            Verb::Export => writeln!(t, "nothing to export: no runs or studies"),
        };
        return t;
    }
    for r in &done.runs {
        let what = format!(
            "run {} ({}, measured on {})",
            r.original, r.workload, r.host
        );
        let _ = if r.already {
            writeln!(t, "{what}: {already} as run {}", r.id.0)
        } else {
            writeln!(t, "{what}: {did} as run {}", r.id.0)
        };
    }
    for s in &done.studies {
        let _ = match (s.already, s.name == s.original_name) {
            (true, _) => writeln!(t, "study {}: {already} as '{}'", s.original_name, s.name),
            (false, true) => writeln!(t, "study {}: {did}", s.name),
            (false, false) => writeln!(
                t,
                "study {}: {did} as '{}' (a study there has its name)",
                s.original_name, s.name
            ),
        };
    }
    for id in &done.still_running {
        let _ = match verb {
            Verb::Import => writeln!(
                t,
                "run {id}: still running in {from} (or its process died: `qpslab show --db \
                 {from}` closes it), not imported"
            ),
            Verb::Export => writeln!(t, "run {id}: still running here, not exported"),
        };
    }
    let new = done.runs.iter().filter(|r| !r.already).count();
    let _ = writeln!(t, "{new} of {} runs {summary}", done.runs.len());
    t
}
