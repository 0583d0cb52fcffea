//! Where a test's store lives: an SQLite file, and a fresh schema on a real MariaDB server
//! (the test process's shared sandbox, started through qpslab's own sandbox code). Tests that
//! say nothing SQLite-specific run on both.

#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

/// One place for a store.
pub struct Place {
    /// What `--db` would be given: a file's path or a server URL.
    pub db: PathBuf,
    /// Keeps the file's directory alive.
    _dir: Option<tempfile::TempDir>,
    /// Which backend, for failure messages.
    pub kind: &'static str,
}

/// A new SQLite file's place.
pub fn file(name: &str) -> Place {
    let dir = tempfile::tempdir().unwrap();
    Place {
        db: dir.path().join(name),
        _dir: Some(dir),
        kind: "sqlite",
    }
}

/// A new, empty schema's place on the shared test server.
pub fn server(name: &str) -> Place {
    static N: AtomicUsize = AtomicUsize::new(0);
    let sandbox = qpslab_sandbox::testing::shared_server();
    let schema = format!(
        "st_{}_{}_{}",
        name.replace(|c: char| !c.is_ascii_alphanumeric(), "_"),
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    );
    Place {
        db: PathBuf::from(format!(
            "mysql://root@localhost/{schema}?socket={}",
            sandbox.socket().display()
        )),
        _dir: None,
        kind: "server",
    }
}

/// A new store's place on each backend.
pub fn both(name: &str) -> [Place; 2] {
    [file(name), server(name)]
}

/// A raw session on a server place's schema, to do what another host would have done.
pub fn raw(place: &Place) -> qpslab_wire::Conn {
    let dsn: qpslab_core::Dsn = place.db.to_str().unwrap().parse().unwrap();
    qpslab_wire::Conn::connect(dsn.options()).unwrap()
}

/// The first value of `sql`'s first row ("NULL" for none).
pub fn value(c: &mut qpslab_wire::Conn, sql: &str) -> String {
    c.query(sql)
        .unwrap()
        .first_value()
        .unwrap_or("NULL")
        .to_string()
}
