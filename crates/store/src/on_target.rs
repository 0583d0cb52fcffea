//! A store on the server under test is refused: writing results (an interval a second, the
//! lease's heartbeats) to the server being measured disturbs the measurement. The store's
//! server is recognised by what it says of itself (`@@hostname`, `@@port`, `@@datadir`),
//! compared with the target's variables in the run's facts. A process may accept it instead
//! ([`allow_store_on_target`], `--db-on-target`), and is then told once per store.

use crate::db::server::Identity;
use crate::error::Error;
use crate::handle::Store;
use qpslab_core::ServerInfo;
use std::sync::atomic::{AtomicBool, Ordering};

static ALLOWED: AtomicBool = AtomicBool::new(false);

/// This process accepts a results store on the server it measures (with a warning).
pub fn allow_store_on_target() {
    ALLOWED.store(true, Ordering::Relaxed);
}

impl Identity {
    /// The identity in a target's variables, when they hold it.
    fn of(server: &ServerInfo) -> Option<Identity> {
        let v = |k: &str| server.variables.get(k).cloned();
        Some(Identity {
            hostname: v("hostname")?,
            port: v("port")?,
            datadir: v("datadir")?,
        })
    }
}

impl Store {
    /// Refuses a run measured on this store's own server (or notes it, where the
    /// process accepts that): `server` is the measured server's facts.
    pub fn guard_target(&mut self, server: &ServerInfo) -> Result<(), Error> {
        let Some(mine) = &self.identity else {
            return Ok(());
        };
        if Identity::of(server).as_ref() != Some(mine) {
            return Ok(());
        }
        let what = format!(
            "the results store {} is on the server under test ({}:{}, {})",
            self.path.display(),
            mine.hostname,
            mine.port,
            mine.datadir
        );
        if ALLOWED.load(Ordering::Relaxed) {
            self.on_target.get_or_insert(format!(
                "{what}: its writes share the server with the measurement"
            ));
            return Ok(());
        }
        Err(Error::OnTarget(what))
    }

    /// The warning for a store accepted on the server under test, once it was written to.
    pub fn on_target_warning(&self) -> Option<&str> {
        self.on_target.as_deref()
    }
}
