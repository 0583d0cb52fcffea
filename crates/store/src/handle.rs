//! The store's handle: one SQLite connection and the file it is open on. Its methods live
//! beside what they do (`open.rs` opens it, `durable` writes as a phase is measured,
//! `read` loads runs, ...), each module adding its own `impl Store`.

use crate::db::Conn;
use std::path::PathBuf;

/// An open results store.
pub struct Store {
    pub(crate) conn: Conn,
    pub(crate) path: PathBuf,
}
