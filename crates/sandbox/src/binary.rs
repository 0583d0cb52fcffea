//! Finding the server: `mariadbd`/`mysqld` and the datadir installer, in a tarball's basedir or
//! among the installed binaries, its flavour and version; and the allocator library to preload.

use crate::error::{Error, Result};
use crate::spec::Malloc;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The server family, which decides how a datadir is initialised.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flavor {
    /// MariaDB: `mariadb-install-db`.
    MariaDb,
    /// MySQL or Percona Server: `mysqld --initialize-insecure`.
    MySql,
}

/// A located server installation: its binary, base directory, flavor and version.
#[derive(Clone, Debug)]
pub(crate) struct Installation {
    pub mysqld: PathBuf,
    pub basedir: Option<PathBuf>,
    pub flavor: Flavor,
    /// The version as the server prints it, e.g. `10.11.19-MariaDB-0+deb12u1`.
    pub version: String,
}

fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// Finds the server binary: in `basedir` (`bin/`, `sbin/`, `libexec/`) when given, else
/// `mariadbd`/`mysqld` on PATH or in /usr/sbin.
pub(crate) fn locate(basedir: Option<&Path>) -> Result<Installation> {
    let (mysqld, searched) = match basedir {
        Some(b) => {
            let cands: Vec<PathBuf> = ["bin", "sbin", "libexec"]
                .iter()
                .flat_map(|d| ["mariadbd", "mysqld"].map(|n| b.join(d).join(n)))
                .collect();
            let found = cands.iter().find(|p| is_executable(p)).cloned();
            (found, format!("bin/, sbin/, libexec/ of {}", b.display()))
        }
        None => {
            let found = on_path("mariadbd")
                .or_else(|| on_path("mysqld"))
                .or_else(|| {
                    ["/usr/sbin/mariadbd", "/usr/sbin/mysqld"]
                        .iter()
                        .map(PathBuf::from)
                        .find(|p| is_executable(p))
                });
            (
                found,
                "mariadbd/mysqld on PATH and in /usr/sbin".to_string(),
            )
        }
    };
    let mysqld = mysqld.ok_or(Error::NoServerBinary { searched })?;
    let out = Command::new(&mysqld)
        .arg("--no-defaults")
        .arg("--version")
        .output()
        .map_err(|e| Error::io(format!("running {} --version", mysqld.display()), e))?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let version = parse_version(&text).ok_or_else(|| Error::NoServerBinary {
        searched: format!(
            "{} (it printed no version: {})",
            mysqld.display(),
            text.trim()
        ),
    })?;
    Ok(Installation {
        flavor: flavor_of(&text),
        mysqld,
        basedir: basedir.map(Path::to_path_buf),
        version,
    })
}

/// `mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu` → `10.11.19-MariaDB-0+deb12u1`.
fn parse_version(text: &str) -> Option<String> {
    let mut words = text.split_whitespace();
    words.find(|w| *w == "Ver")?;
    words.next().map(str::to_string)
}

fn flavor_of(version_text: &str) -> Flavor {
    if version_text.contains("MariaDB") {
        Flavor::MariaDb
    } else {
        Flavor::MySql
    }
}

/// A server binary as a sandbox start would find it: its path and version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerBinary {
    /// `mariadbd` or `mysqld`.
    pub path: PathBuf,
    /// The version as the server prints it, e.g. `10.11.19-MariaDB-0+deb12u1`.
    pub version: String,
}

/// Finds the server a sandbox would start ([`locate`]) and, for MariaDB, the datadir
/// installer it needs; the error says what is missing and how to get it.
pub fn find_server(basedir: Option<&Path>) -> Result<ServerBinary> {
    let server = locate(basedir)?;
    if server.flavor == Flavor::MariaDb {
        mariadb_installer(&server)?;
    }
    Ok(ServerBinary {
        path: server.mysqld,
        version: server.version,
    })
}

/// The MariaDB datadir installer for this server.
pub(crate) fn mariadb_installer(server: &Installation) -> Result<PathBuf> {
    let names = ["mariadb-install-db", "mysql_install_db"];
    let found = match &server.basedir {
        Some(b) => ["scripts", "bin"]
            .iter()
            .flat_map(|d| names.map(|n| b.join(d).join(n)))
            .find(|p| is_executable(p)),
        None => names.iter().find_map(|n| on_path(n)).or_else(|| {
            names
                .iter()
                .map(|n| Path::new("/usr/bin").join(n))
                .find(|p| is_executable(p))
        }),
    };
    found.ok_or_else(|| Error::NoServerBinary {
        searched: "mariadb-install-db/mysql_install_db next to the server".into(),
    })
}

/// The shared library to preload for `malloc`; the error names the package to install.
pub fn malloc_library(malloc: &Malloc) -> Result<PathBuf> {
    let (lib, package) = match malloc {
        Malloc::Library(p) => {
            return if p.is_file() {
                Ok(p.clone())
            } else {
                Err(Error::NoMallocLibrary {
                    library: p.display().to_string(),
                    searched: "the given path".into(),
                    package: "the library's package".into(),
                })
            }
        }
        Malloc::Jemalloc => ("libjemalloc.so.2", "libjemalloc2"),
        Malloc::Tcmalloc => ("libtcmalloc_minimal.so.4", "libtcmalloc-minimal4"),
    };
    let multiarch = format!("/usr/lib/{}-linux-gnu", std::env::consts::ARCH);
    let dirs = [
        multiarch.as_str(),
        "/usr/lib64",
        "/usr/lib",
        "/usr/local/lib",
        "/lib64",
    ];
    dirs.iter()
        .map(|d| Path::new(d).join(lib))
        .find(|p| p.is_file())
        .ok_or_else(|| Error::NoMallocLibrary {
            library: lib.into(),
            searched: dirs.join(", "),
            package: package.into(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use qpslab_core::fault::Blame;

    #[test]
    fn versions_and_flavours() {
        let m = "/usr/sbin/mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)\n";
        assert_eq!(
            parse_version(m).as_deref(),
            Some("10.11.19-MariaDB-0+deb12u1")
        );
        assert_eq!(flavor_of(m), Flavor::MariaDb);
        let my =
            "/opt/mysql/bin/mysqld  Ver 8.0.36 for Linux on x86_64 (MySQL Community Server - GPL)";
        assert_eq!(parse_version(my).as_deref(), Some("8.0.36"));
        assert_eq!(flavor_of(my), Flavor::MySql);
        assert_eq!(parse_version("garbage"), None);
    }

    #[test]
    fn missing_basedir_is_a_user_error() {
        let e = locate(Some(Path::new("/nonexistent/basedir"))).unwrap_err();
        assert!(matches!(e, Error::NoServerBinary { .. }) && e.is_user_error());
        assert!(e.to_string().contains("--basedir"), "{e}");
    }

    #[test]
    fn missing_malloc_library_is_a_user_error() {
        let e = malloc_library(&Malloc::Library("/nonexistent.so".into())).unwrap_err();
        assert!(e.is_user_error());
    }
}
