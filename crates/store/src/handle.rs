//! The store's handle: one session on its database (an SQLite file or a server's schema) and
//! where it lives. Its methods live beside what they do (`open.rs` opens it, `durable` writes
//! as a phase is measured, `read` loads runs, ...), each module adding its own `impl Store`.

use crate::db::Conn;
use crate::lease::Keepalive;
use std::path::PathBuf;

/// An open results store.
pub struct Store {
    pub(crate) conn: Conn,
    /// The file, or the server's URL without its password.
    pub(crate) path: PathBuf,
    /// A server's store: how to open another session on it, for the lease's heartbeats.
    pub(crate) server: Option<qpslab_core::ConnectOptions>,
    /// The heartbeat of what this process owns in a server's store, once it owns something.
    pub(crate) keepalive: Option<Keepalive>,
    /// A server's store: the server it is on (`on_target.rs`).
    pub(crate) identity: Option<crate::db::server::Identity>,
    /// Set once a run measured on the store's own server was written to it, as accepted.
    pub(crate) on_target: Option<String>,
}

impl Store {
    /// Starts renewing this process's leases on a server's store (once; nothing on a file's):
    /// called by everything that makes this process the owner of a run or a study.
    pub(crate) fn keep_alive(&mut self) -> Result<(), crate::Error> {
        if self.keepalive.is_some() {
            return Ok(());
        }
        if let Some(opts) = &self.server {
            // A beat that waits longer than a few renewals on a stalled server has missed its
            // purpose: its session gives up sooner than the store's own.
            let mut opts = opts.clone();
            opts.timeouts.read = Some(crate::lease::RENEW * 2);
            let session = crate::db::server::Session::connect(&opts, &self.path, false)?;
            self.keepalive = Some(Keepalive::start(session));
        }
        Ok(())
    }
}
