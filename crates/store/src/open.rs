//! Opening a store: the path checked, the file created private, the schema checked and
//! migrated, WAL switched on, and runs whose process died closed as `interrupted`; or, for a
//! store that cannot be written, opened to read only.

use crate::db::Conn;
use crate::durable;
use crate::error::Error;
use crate::handle::Store;
use crate::schema;
use rusqlite::Connection;
use std::path::Path;
use std::time::Duration;

/// How long opening a store waits for other processes (as `busy_timeout`).
const BUSY_WAIT: Duration = Duration::from_secs(10);

/// Switches the store to WAL. The switch needs the file to itself for a moment, and SQLite
/// answers "database is locked" at once, without its busy handler, while another process
/// opening the same new store holds it: retried, with short sleeps, for [`BUSY_WAIT`]. Once
/// one process has switched, the mode is in the file and the pragma only reads it.
fn use_wal(conn: &Connection) -> Result<(), Error> {
    let deadline = std::time::Instant::now() + BUSY_WAIT;
    let mut pause = Duration::from_millis(2);
    loop {
        match conn.pragma_update_and_check(None, "journal_mode", "wal", |r| r.get::<_, String>(0)) {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            other => return other.map(|_| ()).map_err(Error::from),
        }
    }
}

impl Store {
    /// Opens the store at `path`, creating it if missing and migrating it to
    /// [`SCHEMA_VERSION`](schema::SCHEMA_VERSION). Fails with a clear error when the file is not SQLite, is another
    /// program's SQLite database, or was written by a newer qpslab.
    ///
    /// A new file is created readable by its owner only (0600; SQLite gives its `-wal` and
    /// `-shm` files the same mode); an existing one keeps its mode. Runs left `running` by a
    /// process that no longer exists are marked `interrupted` here.
    ///
    /// A `mysql://user@host:port/schema` URL opens the store on that server instead
    /// (`open_server.rs`).
    pub fn open(path: &Path) -> Result<Store, Error> {
        if let Some(url) = crate::open_server::url(path) {
            return Store::open_server(url, true);
        }
        check_path(path)?;
        companions_writable(path)?;
        // Any failure here (no permission) is reported by the open below.
        let _ = create_private(path);
        let mut conn = Connection::open(path).map_err(|source| Error::Open {
            path: path.to_path_buf(),
            source,
        })?;
        // SQLite falls back to reading a file it may not write; a writer must know now, not
        // after a phase was measured.
        if conn.is_readonly(rusqlite::DatabaseName::Main)? {
            return Err(Error::ReadOnly {
                path: path.to_path_buf(),
                why: "the file cannot be opened for writing".into(),
            });
        }
        // Studies may run several qpslab processes on one store: wait for a writer rather
        // than fail at once.
        conn.busy_timeout(BUSY_WAIT)?;
        schema::check_and_migrate(&mut conn, path)?;
        // WAL only after the file is known to be ours: it changes the file format on disk.
        // On file systems without shared memory SQLite keeps its rollback journal: still correct.
        use_wal(&conn)?;
        conn.pragma_update(None, "foreign_keys", true)?;
        conn.pragma_update(None, "synchronous", "normal")?;
        let mut conn = Conn::Lite(conn);
        durable::close_dead_runs(&mut conn)?;
        Ok(Store {
            conn,
            path: path.to_path_buf(),
            server: None,
            keepalive: None,
            identity: None,
            on_target: None,
        })
    }

    /// Opens an existing store to read it (`show`, `report`, `compare`, `lab show`): never
    /// creates one, and reads a store that cannot be written (a full disk, a read-only file or
    /// mount) through [`Store::open_read_only`]. Where it can write, it opens as [`Store::open`]
    /// does, so runs whose process died are closed as `interrupted` first.
    pub fn open_to_read(path: &Path) -> Result<Store, Error> {
        if let Some(url) = crate::open_server::url(path) {
            return Store::open_server(url, false);
        }
        check_path(path)?;
        if !path.exists() {
            return Err(Error::Missing {
                path: path.to_path_buf(),
            });
        }
        match Store::open(path) {
            Err(e) if e.is_write_failure() => Store::open_read_only(path),
            other => other,
        }
    }

    /// Opens an existing store for reading only: no write is attempted, so a store on a full
    /// or read-only file system still reads (runs whose process died still show `running`). A
    /// store of an older schema is migrated first, which needs [`Store::open`]'s write access.
    pub fn open_read_only(path: &Path) -> Result<Store, Error> {
        if let Some(url) = crate::open_server::url(path) {
            return Store::open_server(url, false);
        }
        check_path(path)?;
        if !path.exists() {
            return Err(Error::Missing {
                path: path.to_path_buf(),
            });
        }
        let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY
            | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX
            | rusqlite::OpenFlags::SQLITE_OPEN_URI;
        let open = |p: &str| Connection::open_with_flags(p, flags);
        let plain = path
            .to_string_lossy()
            .replace('%', "%25")
            .replace('?', "%3f")
            .replace('#', "%23");
        // A WAL store on a read-only mount has no shared-memory file to open: read it as the
        // unchangeable file it is there (`immutable`, no locks, no wal-index).
        let conn = open(&format!("file:{plain}"))
            .and_then(|c| {
                c.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(()))
                    .map(|()| c)
            })
            .or_else(|_| open(&format!("file:{plain}?immutable=1")))
            .map_err(|source| Error::Open {
                path: path.to_path_buf(),
                source,
            })?;
        conn.busy_timeout(BUSY_WAIT)?;
        if schema::version(&conn, path)? < schema::SCHEMA_VERSION {
            drop(conn);
            return Store::open(path);
        }
        Ok(Store {
            conn: Conn::Lite(conn),
            path: path.to_path_buf(),
            server: None,
            keepalive: None,
            identity: None,
            on_target: None,
        })
    }

    /// The file this store lives in, or its server's URL without the password.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether this store lives on a server (`--db mysql://...`) rather than in a file.
    pub fn is_server(&self) -> bool {
        self.conn.is_server()
    }
}

impl Store {
    /// Refuses a path that cannot hold a store (a directory, a device, a FIFO, a socket, or a
    /// file in a missing directory) before anything is measured for it, and before anything is
    /// created: SQLite would put its `-journal`, `-wal` and `-shm` files beside whatever it
    /// is given (`/dev/zero-journal`).
    pub fn check_path(path: &Path) -> Result<(), Error> {
        check_path(path)
    }
}

/// See [`Store::check_path`]; a server URL is checked for its form only.
fn check_path(path: &Path) -> Result<(), Error> {
    if let Some(url) = crate::open_server::url(path) {
        return crate::open_server::parse(url).map(|_| ());
    }
    let bad = |why: String| {
        Err(Error::BadPath {
            path: path.to_path_buf(),
            why,
        })
    };
    if let Some(kind) = std::fs::metadata(path)
        .ok()
        .and_then(|m| qpslab_core::input::not_a_file(&m))
    {
        return bad(match kind {
            "a directory" => "is a directory".into(),
            _ => format!("is {kind}, not a file"),
        });
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return bad(format!("directory {} does not exist", dir.display()));
    }
    Ok(())
}

/// Refuses a store whose WAL files, left by a process that has it open (or had it when it
/// died), this process may not write: SQLite maps the `-shm` file into memory, and one it
/// cannot write or grow ends the process with SIGBUS once a write needs it, after a phase
/// was measured. A file without its owner's write bit counts as read-only even for root:
/// someone made it so.
fn companions_writable(path: &Path) -> Result<(), Error> {
    use std::os::unix::fs::PermissionsExt;
    for suffix in ["-shm", "-wal"] {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        let file = Path::new(&name);
        let Ok(meta) = std::fs::metadata(file) else {
            continue;
        };
        let why = if !meta.is_file() {
            Some("is not a regular file".to_string())
        } else if meta.permissions().mode() & 0o200 == 0 {
            Some("is read-only (mode without write permission)".to_string())
        } else {
            std::fs::OpenOptions::new()
                .write(true)
                .open(file)
                .err()
                .map(|e| format!("cannot be written: {e}"))
        };
        if let Some(why) = why {
            return Err(Error::ReadOnly {
                path: path.to_path_buf(),
                why: format!("{} {why}", file.display()),
            });
        }
    }
    Ok(())
}

/// Creates `path` empty with mode 0600 when it does not exist; leaves an existing file alone.
fn create_private(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}
