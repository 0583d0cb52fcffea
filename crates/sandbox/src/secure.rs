//! The credentials of a sandbox: a root password generated from the OS RNG and kept in the
//! sandbox directory (`password`, 0600), a client option file for the mariadb client
//! (`client.cnf`, 0600), and the SQL the server runs at each start (`--init-file`) to give root
//! that password and to drop every account the datadir should not have.
//!
//! The password never reaches the server's command line or environment, nor its init file: the
//! init file carries only the `mysql_native_password` hash (MariaDB), and it is deleted as soon
//! as the server is up.

use crate::error::{Error, Result};
use qpslab_core::literal::quote;
use qpslab_core::Secret;
use sha1::{Digest, Sha1};
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The root password of a sandbox, in its directory.
pub(crate) const PASSWORD_FILE: &str = "password";
/// The mysql-client option file of a sandbox, in its directory.
pub const CLIENT_FILE: &str = "client.cnf";
/// The SQL run at start, in the sandbox's runtime directory (deleted once the server is up).
pub(crate) const INIT_FILE: &str = "init.sql";

/// The sandbox's root password, generated (and saved 0600) when it has none yet.
pub(crate) fn ensure_password(dir: &Path) -> Result<Secret> {
    if let Some(pw) = read_password(dir) {
        return Ok(pw);
    }
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| Error::io("reading /dev/urandom", e))?;
    let pw: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    write_private(&dir.join(PASSWORD_FILE), pw.as_bytes(), None)?;
    Ok(Secret::new(pw))
}

/// The saved root password of the sandbox in `dir`, if any.
pub(crate) fn read_password(dir: &Path) -> Option<Secret> {
    let text = std::fs::read_to_string(dir.join(PASSWORD_FILE)).ok()?;
    let pw = text.trim();
    (!pw.is_empty()).then(|| Secret::new(pw))
}

/// Writes `bytes` to `path` as a 0600 file (atomically: a reader never sees half of it), owned
/// by `owner` (uid, gid) when given.
pub(crate) fn write_private(path: &Path, bytes: &[u8], owner: Option<(u32, u32)>) -> Result<()> {
    let ctx = || format!("writing {}", path.display());
    let tmp = PathBuf::from(format!("{}.tmp", path.display()));
    let _ = std::fs::remove_file(&tmp);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(|e| Error::io(ctx(), e))?;
    f.write_all(bytes).map_err(|e| Error::io(ctx(), e))?;
    if let Some((uid, gid)) = owner {
        std::os::unix::fs::fchown(&f, Some(uid), Some(gid)).map_err(|e| Error::io(ctx(), e))?;
    }
    drop(f);
    std::fs::rename(&tmp, path).map_err(|e| Error::io(ctx(), e))
}

/// The `[client]` option file: `mariadb --defaults-file=<sandbox>/client.cnf` logs in as root.
pub(crate) fn client_cnf(password: &Secret, socket: &Path, port: u16) -> String {
    format!(
        "# Client options of this qpslab sandbox: mariadb --defaults-file=THIS_FILE\n\
         [client]\nuser = root\npassword = {}\nsocket = {}\nport = {port}\n",
        password.expose(),
        socket.display()
    )
}

/// `mysql_native_password`'s stored form: `*` and the upper-case hex of SHA1(SHA1(password)).
fn native_hash(password: &Secret) -> String {
    let twice = Sha1::digest(Sha1::digest(password.expose().as_bytes()));
    let hex: String = twice.iter().map(|b| format!("{b:02X}")).collect();
    format!("*{hex}")
}

/// The accounts are each sandbox's own: kept out of a primary's binary log, a replica never
/// gets its primary's root password.
const NO_BINLOG: &str = "SET SESSION sql_log_bin = 0;\n";

/// The accounts a MariaDB sandbox has after each start: root over the socket by password or as
/// OS user root (unix_socket), root over TCP by password only, the lab's owner by unix_socket,
/// and nothing else (no anonymous users, no passwordless root for other hosts).
pub(crate) fn init_sql_mariadb(password: &Secret, owner: &str) -> String {
    let hash = quote(&native_hash(password));
    let mut sql = format!(
        "{NO_BINLOG}DELETE FROM mysql.global_priv WHERE User = '' OR (User = 'root' AND Host NOT IN ('localhost', '127.0.0.1'));\n\
         FLUSH PRIVILEGES;\n\
         CREATE USER IF NOT EXISTS 'root'@'localhost' IDENTIFIED VIA mysql_native_password USING {hash};\n\
         ALTER USER 'root'@'localhost' IDENTIFIED VIA mysql_native_password USING {hash} OR unix_socket;\n\
         GRANT ALL PRIVILEGES ON *.* TO 'root'@'localhost' WITH GRANT OPTION;\n\
         CREATE USER IF NOT EXISTS 'root'@'127.0.0.1' IDENTIFIED VIA mysql_native_password USING {hash};\n\
         ALTER USER 'root'@'127.0.0.1' IDENTIFIED VIA mysql_native_password USING {hash};\n\
         GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;\n"
    );
    if owner != "root" && !owner.is_empty() {
        let o = quote(owner);
        sql.push_str(&format!(
            "CREATE USER IF NOT EXISTS {o}@'localhost' IDENTIFIED VIA unix_socket;\n\
             GRANT ALL PRIVILEGES ON *.* TO {o}@'localhost' WITH GRANT OPTION;\n"
        ));
    }
    sql
}

/// MySQL/Percona: root by password on the socket and on 127.0.0.1 (their default plugin hashes
/// it; the file is deleted once the server is up).
pub(crate) fn init_sql_mysql(password: &Secret) -> String {
    let pw = quote(password.expose());
    format!(
        "{NO_BINLOG}ALTER USER 'root'@'localhost' IDENTIFIED BY {pw};\n\
         CREATE USER IF NOT EXISTS 'root'@'127.0.0.1' IDENTIFIED BY {pw};\n\
         ALTER USER 'root'@'127.0.0.1' IDENTIFIED BY {pw};\n\
         GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn password_is_generated_once_and_private() {
        let d = tempfile::tempdir().unwrap();
        let a = ensure_password(d.path()).unwrap();
        assert_eq!(a.expose().len(), 32);
        assert_eq!(ensure_password(d.path()).unwrap(), a);
        let mode = std::fs::metadata(d.path().join(PASSWORD_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let other = tempfile::tempdir().unwrap();
        assert_ne!(ensure_password(other.path()).unwrap(), a);
    }

    #[test]
    fn native_hash_matches_the_server() {
        // SELECT PASSWORD('secret') on MariaDB 10.11.
        let h = native_hash(&Secret::new("secret"));
        assert_eq!(h, "*14E65567ABDB5135D0CFD9A70B3032C179A49EE7");
    }

    #[test]
    fn init_sql_carries_no_password_and_quotes_the_owner() {
        let pw = Secret::new("0123456789abcdef");
        let sql = init_sql_mariadb(&pw, "o'k");
        assert!(!sql.contains("0123456789abcdef"), "{sql}");
        assert!(sql.starts_with(NO_BINLOG) && init_sql_mysql(&pw).starts_with(NO_BINLOG));
        assert!(
            sql.contains("'o\\'k'@'localhost' IDENTIFIED VIA unix_socket"),
            "{sql}"
        );
        assert!(!init_sql_mariadb(&pw, "root")
            .contains("'root'@'localhost' IDENTIFIED VIA unix_socket;"));
        let cnf = client_cnf(&pw, Path::new("/s/mysqld.sock"), 3307);
        assert!(cnf.contains("password = 0123456789abcdef\n") && cnf.contains("port = 3307"));
    }
}
