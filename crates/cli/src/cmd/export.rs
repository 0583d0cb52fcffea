//! `qpslab export --out NEW.db [RUN|STUDY...]`: runs and studies of this store (a file, or a
//! server's) copied into a new SQLite store file, as `qpslab import` would copy them there: to
//! take a server's results away on a laptop, or to hand them to someone as one file.

use super::import::{picks, table, Verb};
use crate::args::{ExportArgs, Format};
use crate::out::Output;
use anyhow::Result;
use qpslab_store::Store;

/// Runs `qpslab export`.
pub fn export(a: ExportArgs) -> Result<()> {
    let out = Output::new(&a.output, "export")?;
    crate::db::check(&a.db.db)?;
    Store::check_export(&a.out).map_err(crate::error::fail)?;
    let store = crate::db::open_to_read(&a.db.db)?;
    let done = store
        .export(&a.out, &picks(&a.picks))
        .map_err(crate::error::fail)?;
    out.emit(|f| match f {
        Format::Json => crate::out::json(&done),
        _ => Ok(table(&a.out.display().to_string(), &done, Verb::Export)),
    })
}
