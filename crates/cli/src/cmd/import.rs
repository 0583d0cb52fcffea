//! `qpslab import OTHER.db [RUN|STUDY...]`: runs and studies of another store copied into this
//! one (new ids; the original ids, uuid and host kept; what is here already recognised), so
//! that results measured on several hosts can be compared side by side.

use crate::args::{Format, ImportArgs};
use crate::error::user;
use crate::out::Output;
use anyhow::Result;
use qpslab_store::{Imported, Pick};
use std::fmt::Write as _;

/// Runs `qpslab import`.
pub fn import(a: ImportArgs) -> Result<()> {
    let out = Output::new(&a.output, "import")?;
    let picks: Vec<Pick> = a
        .picks
        .iter()
        .map(|p| match p.parse::<i64>() {
            Ok(id) => Pick::Run(id),
            Err(_) => Pick::Study(p.clone()),
        })
        .collect();
    crate::db::check(&a.db.db)?;
    // Before this store is opened (and created, when missing): a failed import leaves nothing.
    if !a.from.is_file() {
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
        _ => Ok(table(&a.from.display().to_string(), &done)),
    })
}

/// A line per run and per study: what it became here.
fn table(from: &str, done: &Imported) -> String {
    let mut t = String::new();
    if done.runs.is_empty() && done.studies.is_empty() && done.still_running.is_empty() {
        let _ = writeln!(t, "{from} holds no runs or studies: nothing imported");
        return t;
    }
    for r in &done.runs {
        let what = format!(
            "run {} ({}, measured on {})",
            r.original, r.workload, r.host
        );
        let _ = if r.already {
            writeln!(t, "{what}: already here as run {}", r.id.0)
        } else {
            writeln!(t, "{what}: imported as run {}", r.id.0)
        };
    }
    for s in &done.studies {
        let _ = match (s.already, s.name == s.original_name) {
            (true, _) => writeln!(t, "study {}: already here as '{}'", s.original_name, s.name),
            (false, true) => writeln!(t, "study {}: imported", s.name),
            (false, false) => writeln!(
                t,
                "study {}: imported as '{}' (a study here has its name)",
                s.original_name, s.name
            ),
        };
    }
    for id in &done.still_running {
        let _ = writeln!(
            t,
            "run {id}: still running in {from} (or its process died: `qpslab show --db {from}` \
             closes it), not imported"
        );
    }
    let new = done.runs.iter().filter(|r| !r.already).count();
    let _ = writeln!(t, "{new} of {} runs imported from {from}", done.runs.len());
    t
}
