//! The option-file rule told, not guessed: the mysql client's option files are read only once a
//! command names a server, so a server they name is not used by a command left to its embedded
//! sandbox, or given `--sandbox NAME`. One line says which file names it and why it is not used.

use qpslab_core::optfile::{default_client_files, read_client_options};
use std::path::{Path, PathBuf};

/// Why the option files' server is not used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Unused {
    /// No server option was given: the command starts its embedded sandbox.
    Embedded,
    /// `--sandbox NAME` names the server.
    Sandbox,
}

/// The line for the first default option file that names a server (a host or port, or a
/// socket outside /etc: the distributions' own files name the local server's socket on every
/// system), `None` when none does.
pub(crate) fn note(why: Unused, home: Option<&Path>, mysql_home: Option<&Path>) -> Option<String> {
    let files: Vec<PathBuf> = default_client_files(home, mysql_home, None)
        .into_iter()
        .map(|(path, _)| path)
        .filter(|path| path.exists())
        .collect();
    files.iter().find_map(|path| {
        let options = read_client_options(path).ok()?;
        let server = names_server(path, &options)?;
        let because = match why {
            Unused::Embedded => {
                "no server option was given (--host, -P, -S, -u, -p, --target or an option-file \
                 flag), so this command uses its embedded sandbox"
            }
            Unused::Sandbox => "--sandbox names the server",
        };
        Some(format!(
            "note: {} names a server ({server}) that is not used: {because}",
            path.display()
        ))
    })
}

/// What in `options` names a server: `host=db1`, `port=3307`, or a socket outside /etc.
fn names_server(
    path: &Path,
    options: &std::collections::BTreeMap<String, String>,
) -> Option<String> {
    let named: Vec<String> = ["host", "port", "socket"]
        .iter()
        .filter_map(|k| options.get(*k).map(|v| (k, v)))
        .filter(|(k, v)| match **k {
            "host" => v.as_str() != "localhost",
            "socket" => !path.starts_with("/etc"),
            _ => true,
        })
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    (!named.is_empty()).then(|| named.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_in_my_cnf_is_named_with_the_file_and_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(".my.cnf"),
            "[client]\nhost = db1\nuser = bench\n",
        )
        .unwrap();
        let line = note(Unused::Embedded, Some(dir.path()), None).unwrap();
        let file = dir.path().join(".my.cnf");
        assert!(line.contains(&file.display().to_string()), "{line}");
        assert!(
            line.contains("host=db1") && line.contains("embedded sandbox"),
            "{line}"
        );
        let line = note(Unused::Sandbox, Some(dir.path()), None).unwrap();
        assert!(line.contains("--sandbox"), "{line}");
    }

    #[test]
    fn localhost_and_a_system_socket_name_no_other_server() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(".my.cnf"),
            "[client]\nhost=localhost\nuser=u\n",
        )
        .unwrap();
        assert_eq!(note(Unused::Embedded, Some(dir.path()), None), None);
        let mut o = std::collections::BTreeMap::new();
        o.insert("socket".to_string(), "/run/mysqld/mysqld.sock".to_string());
        assert_eq!(names_server(Path::new("/etc/mysql/my.cnf"), &o), None);
        assert!(names_server(Path::new("/home/u/.my.cnf"), &o).is_some());
    }
}
