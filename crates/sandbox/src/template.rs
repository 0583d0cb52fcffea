//! Initialised datadirs, made once per server (version, binary, and the few settings fixed at
//! initialisation such as innodb_page_size) and copied for each new sandbox: a copy takes a
//! fraction of what the installer takes.
//!
//! A template keeps only `root@localhost` (and the installer's locked system accounts): no
//! anonymous users, no test database, no root for other hosts. Each start then gives root the
//! sandbox's own password (see `secure`), before the server accepts its first connection.
//! Templates made as root are owned by root (0700) and chowned to the server's account when
//! copied.

use crate::binary::{self, Flavor, Installation};
use crate::error::{Error, Result};
use crate::process;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Settings that shape the files of a new datadir: a template made without them cannot serve a
/// sandbox that sets them.
const INIT_SETTINGS: &[&str] = &[
    "innodb_page_size",
    "innodb_data_file_path",
    "innodb_undo_tablespaces",
    "lower_case_table_names",
];

/// The settings among `settings` that must be given to the installer.
pub(crate) fn init_settings(settings: &[(String, String)]) -> Vec<(String, String)> {
    settings
        .iter()
        .filter(|(n, _)| INIT_SETTINGS.contains(&n.to_ascii_lowercase().replace('-', "_").as_str()))
        .cloned()
        .collect()
}

/// What the installer's extra SQL does to the accounts; part of the key, so a template made by
/// an older qpslab (with a passwordless root@127.0.0.1) is never reused.
const ACCOUNTS_VERSION: &str = "accounts-v2";

/// FNV-1a: a stable short hash for directory names (std's hasher is not stable across releases).
fn fnv(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in parts.iter().flat_map(|p| p.bytes().chain([0])) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

/// The template's directory name: readable version plus a hash of what else defines it.
pub(crate) fn template_key(server: &Installation, init: &[(String, String)]) -> String {
    let version: String = server
        .version
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut parts = vec![
        server.mysqld.to_string_lossy().into_owned(),
        ACCOUNTS_VERSION.to_string(),
    ];
    parts.extend(init.iter().map(|(n, v)| format!("{n}={v}")));
    let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
    format!("{version}-{:08x}", fnv(&refs) as u32)
}

/// Returns the template datadir for this server, initialising it first if needed, and how long
/// the initialisation took (`None` when the template already existed).
pub(crate) fn ensure(
    templates: &Path,
    server: &Installation,
    init: &[(String, String)],
) -> Result<(PathBuf, Option<Duration>)> {
    let key = template_key(server, init);
    let dir = templates.join(&key);
    if dir.is_dir() {
        return Ok((dir, None));
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(templates)
        .map_err(|e| Error::io(format!("creating {}", templates.display()), e))?;
    // Another process (a parallel test binary) may be initialising the same template.
    let _lock = process::lock(&templates.join(format!("{key}.lock")))?;
    if dir.is_dir() {
        return Ok((dir, None));
    }
    let work = templates.join(format!("{key}.tmp"));
    let _ = std::fs::remove_dir_all(&work);
    let t0 = Instant::now();
    initialise(server, &work, init)?;
    std::fs::rename(&work, &dir)
        .map_err(|e| Error::io(format!("renaming {} into place", work.display()), e))?;
    Ok((dir, Some(t0.elapsed())))
}

fn initialise(server: &Installation, datadir: &Path, init: &[(String, String)]) -> Result<()> {
    let sql_path = datadir.with_extension("sql");
    // A private tmpdir: the bootstrap's temporary tables must not live in a /tmp that other
    // processes clean or share.
    let tmpdir = datadir.with_extension("tmpdir");
    std::fs::create_dir_all(&tmpdir)
        .map_err(|e| Error::io(format!("creating {}", tmpdir.display()), e))?;
    let mut cmd = match server.flavor {
        Flavor::MariaDb => {
            write_sql(
                &sql_path,
                "DELETE FROM mysql.global_priv WHERE User = '' OR (User = 'root' AND Host <> 'localhost');\n",
            )?;
            let mut c = Command::new(binary::mariadb_installer(server)?);
            c.arg("--no-defaults")
                .arg(format!("--datadir={}", datadir.display()))
                .arg("--auth-root-authentication-method=normal")
                .arg("--skip-test-db")
                .arg(format!("--extra-file={}", sql_path.display()));
            c
        }
        Flavor::MySql => {
            write_sql(&sql_path, "")?;
            let mut c = Command::new(&server.mysqld);
            c.arg("--no-defaults")
                .arg("--initialize-insecure")
                .arg(format!("--datadir={}", datadir.display()))
                .arg(format!("--init-file={}", sql_path.display()));
            c
        }
    };
    if let Some(b) = &server.basedir {
        cmd.arg(format!("--basedir={}", b.display()));
    }
    if process::running_as_root() {
        // The one-off bootstrap (no networking) runs as root so that the template can live in
        // a root-only directory; copies are chowned to the server's account.
        cmd.arg("--user=root");
    }
    for (n, v) in init {
        cmd.arg(format!("--{n}={v}"));
    }
    cmd.arg(format!("--tmpdir={}", tmpdir.display()));
    let out = cmd
        .output()
        .map_err(|e| Error::io("running the datadir installer", e))?;
    let _ = std::fs::remove_file(&sql_path);
    let _ = std::fs::remove_dir_all(&tmpdir);
    if !out.status.success() || !datadir.join("mysql").is_dir() {
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let lines: Vec<&str> = text.lines().collect();
        let _ = std::fs::remove_dir_all(datadir);
        return Err(Error::InitFailed {
            datadir: datadir.to_path_buf(),
            log_tail: lines[lines.len().saturating_sub(30)..].join("\n"),
        });
    }
    Ok(())
}

fn write_sql(path: &Path, sql: &str) -> Result<()> {
    std::fs::write(path, sql).map_err(|e| Error::io(format!("writing {}", path.display()), e))
}

/// Copies a directory tree (the template datadir) to `to`, which must not exist, owned by
/// `owner` (uid, gid) when given.
pub(crate) fn copy_tree(from: &Path, to: &Path, owner: Option<(u32, u32)>) -> Result<()> {
    let ctx = |p: &Path| format!("copying the template into {}", p.display());
    let chown = |p: &Path| match owner {
        Some((uid, gid)) => {
            std::os::unix::fs::chown(p, Some(uid), Some(gid)).map_err(|e| Error::io(ctx(p), e))
        }
        None => Ok(()),
    };
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(to)
        .map_err(|e| Error::io(ctx(to), e))?;
    chown(to)?;
    for entry in std::fs::read_dir(from).map_err(|e| Error::io(ctx(to), e))? {
        let entry = entry.map_err(|e| Error::io(ctx(to), e))?;
        let target = to.join(entry.file_name());
        let ty = entry.file_type().map_err(|e| Error::io(ctx(to), e))?;
        if ty.is_dir() {
            copy_tree(&entry.path(), &target, owner)?;
        } else if ty.is_file() {
            // std::fs::copy uses copy_file_range: in-kernel, and a reflink where the fs can.
            std::fs::copy(entry.path(), &target).map_err(|e| Error::io(ctx(&target), e))?;
            chown(&target)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(v: &str) -> Installation {
        Installation {
            mysqld: "/usr/sbin/mariadbd".into(),
            basedir: None,
            flavor: Flavor::MariaDb,
            version: v.into(),
        }
    }

    #[test]
    fn keys_separate_versions_and_init_settings() {
        let a = template_key(&server("10.11.19-MariaDB-0+deb12u1"), &[]);
        assert!(a.starts_with("10.11.19-MariaDB-0_deb12u1-"), "{a}");
        assert_ne!(a, template_key(&server("11.4.2-MariaDB"), &[]));
        let ps = init_settings(&[
            ("innodb-page-size".into(), "4k".into()),
            ("max_connections".into(), "10".into()),
        ]);
        assert_eq!(ps.len(), 1);
        assert_ne!(a, template_key(&server("10.11.19-MariaDB-0+deb12u1"), &ps));
        assert_eq!(a, template_key(&server("10.11.19-MariaDB-0+deb12u1"), &[]));
    }

    #[test]
    fn copies_a_tree() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("a/sub")).unwrap();
        std::fs::write(d.path().join("a/sub/f"), b"xyz").unwrap();
        copy_tree(&d.path().join("a"), &d.path().join("b"), None).unwrap();
        assert_eq!(std::fs::read(d.path().join("b/sub/f")).unwrap(), b"xyz");
    }
}
