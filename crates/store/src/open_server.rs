//! Opening a store on a MariaDB or MySQL server (`--db mysql://user@host:port/schema`):
//! the URL checked, a session through qpslab's own client (TLS options and password rules as
//! for a target's), the schema created when missing, the store's tables checked or created,
//! and runs whose process died on this host closed as `interrupted`.

use crate::db::{server::Session, Conn};
use crate::error::Error;
use crate::handle::Store;
use crate::{durable, server_schema};
use qpslab_core::Dsn;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long one statement of the store's session may wait for the server.
const READ_WAIT: Duration = Duration::from_secs(120);

/// The server URL `path` spells, if it is one (`mysql://` or `mariadb://`).
pub(crate) fn url(path: &Path) -> Option<&str> {
    let s = path.to_str()?;
    (s.starts_with("mysql://") || s.starts_with("mariadb://")).then_some(s)
}

/// The URL as a store is named in messages: without its password.
fn shown(dsn: &Dsn) -> PathBuf {
    PathBuf::from(dsn.to_string())
}

/// Parses a store URL, which must name its schema.
pub(crate) fn parse(url: &str) -> Result<Dsn, Error> {
    let dsn: Dsn = url
        .parse()
        .map_err(|e: qpslab_core::dsn::DsnError| Error::BadPath {
            path: PathBuf::from(redacted(url)),
            why: e.to_string(),
        })?;
    match dsn.options().database.as_deref() {
        Some(db) if !db.is_empty() => Ok(dsn),
        _ => Err(Error::BadPath {
            path: shown(&dsn),
            why: "the URL names no schema (mysql://user@host:port/SCHEMA)".into(),
        }),
    }
}

/// `url` with any password replaced, for a message about a URL that did not parse.
fn redacted(url: &str) -> String {
    crate::model::redact_url_passwords(url)
}

impl Store {
    /// Opens (creating its tables if the schema is empty) the store on the server `url`
    /// names.
    /// A reading command (`create` false) never creates one: a missing or empty schema is
    /// [`Error::Missing`].
    pub(crate) fn open_server(url: &str, create: bool) -> Result<Store, Error> {
        let dsn = parse(url)?;
        let mut opts = dsn.options().clone();
        opts.timeouts.read = Some(READ_WAIT);
        let path = shown(&dsn);
        let mut conn = Conn::Server(Box::new(Session::connect(&opts, &path, create)?));
        server_schema::check_and_create(&mut conn, &path, create)?;
        durable::close_dead_runs(&mut conn)?;
        let identity = conn.query_row("SELECT @@hostname, @@port, @@datadir", [], |r| {
            Ok(crate::db::server::Identity {
                hostname: r.get(0)?,
                port: r.get::<_, i64>(1)?.to_string(),
                datadir: r.get(2)?,
            })
        })?;
        Ok(Store {
            conn,
            path,
            server: Some(opts),
            keepalive: None,
            identity: Some(identity),
            on_target: None,
        })
    }
}
