//! The sandbox's my.cnf: the lab's own settings (paths, limits sized for thousands of sessions),
//! then the user's my.cnf fragment, then `--set` overrides, later entries winning. Everything not named here
//! stays the server's stock setting: the file is passed with `--defaults-file`, so no system
//! option file is read.

use crate::error::{Error, Result};
use qpslab_core::optfile;
use std::path::{Path, PathBuf};

/// Settings the lab owns; a my.cnf fragment or override must not move them (the sandbox would lose
/// track of its own files).
const RESERVED: &[&str] = &[
    "datadir",
    "socket",
    "port",
    "pid_file",
    "log_error",
    "basedir",
    "user",
    "init_file",
];

/// The files and port of one sandbox.
#[derive(Clone, Debug)]
pub(crate) struct Paths {
    pub datadir: PathBuf,
    pub socket: PathBuf,
    pub port: u16,
    pub pid_file: PathBuf,
    pub log_error: PathBuf,
    pub tmpdir: PathBuf,
    /// `secure_file_priv`: the only directory `SELECT ... INTO OUTFILE` and `LOAD DATA` (not
    /// LOCAL) may touch.
    pub files: PathBuf,
    /// The SQL run at start (accounts and password).
    pub init_file: PathBuf,
}

/// A setting's identity for "later wins" and the reserved check: case-insensitive, dashes and
/// underscores alike, `loose-` (which only silences the server about an unknown name) dropped.
fn key_of(name: &str) -> String {
    let key = name.to_ascii_lowercase().replace('-', "_");
    match key.strip_prefix("loose_") {
        Some(rest) => rest.to_string(),
        None => key,
    }
}

/// Checks one override and returns it cleaned (`--` prefix dropped, spaces trimmed).
pub fn check_setting(name: &str, value: &str) -> Result<(String, String)> {
    let bad = |reason: &str| Error::InvalidSetting {
        setting: format!("{name}={value}"),
        reason: reason.to_string(),
    };
    let name = name.trim().trim_start_matches("--");
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
    {
        return Err(bad(
            "a setting name has only letters, digits, '_', '-' and '.'",
        ));
    }
    if value.contains(['\n', '\r']) {
        return Err(bad("a value cannot span lines"));
    }
    if RESERVED.contains(&key_of(name).as_str()) {
        return Err(bad(
            "the lab manages this setting itself (use the sandbox's port option for the port)",
        ));
    }
    Ok((name.to_string(), value.trim().to_string()))
}

/// Parses a `name=value` override as typed on the command line.
pub fn parse_override(s: &str) -> Result<(String, String)> {
    match s.split_once('=') {
        Some((n, v)) => check_setting(n, v),
        None => check_setting(s, ""),
    }
}

/// Reads the server groups of a my.cnf fragment and of the files it includes ([`optfile`]), each
/// setting checked like an override; a rejected one names its file and line.
pub(crate) fn read_my_cnf(path: &Path) -> Result<Vec<(String, String)>> {
    let lines = optfile::read(path, optfile::Groups::SERVER).map_err(Error::MyCnf)?;
    lines
        .iter()
        .map(|l| {
            check_setting(&l.name, &l.value).map_err(|e| match e {
                Error::InvalidSetting { setting, reason } => Error::InvalidSetting {
                    setting,
                    reason: format!("{reason} ({}:{})", l.file.display(), l.line),
                },
                other => other,
            })
        })
        .collect()
}

/// The lab's own settings, before the my.cnf fragment and overrides.
/// `run_as` is the account the server switches to after reading this file (qpslab is root).
pub(crate) fn lab_settings(
    paths: &Paths,
    mysql: bool,
    run_as: Option<&str>,
) -> Vec<(String, String)> {
    let p = |p: &Path| p.display().to_string();
    let mut s: Vec<(String, String)> = vec![
        ("datadir".into(), p(&paths.datadir)),
        ("socket".into(), p(&paths.socket)),
        ("port".into(), paths.port.to_string()),
        ("pid-file".into(), p(&paths.pid_file)),
        ("log-error".into(), p(&paths.log_error)),
        ("tmpdir".into(), p(&paths.tmpdir)),
        ("secure_file_priv".into(), p(&paths.files)),
        ("init-file".into(), p(&paths.init_file)),
        ("bind-address".into(), "127.0.0.1".into()),
        // Room for 4096 benchmark sessions plus monitoring.
        ("max_connections".into(), "5000".into()),
        // Each session opens each table it touches: 4 tables per session for 4096 sessions.
        // The server lowers these itself (with a warning) when the fd limit is lower.
        ("table_open_cache".into(), "16384".into()),
        ("open_files_limit".into(), "65535".into()),
        // The engine prepares its statements per session and table.
        ("max_prepared_stmt_count".into(), "1048576".into()),
        // prepare loads data with LOAD DATA LOCAL INFILE.
        ("local_infile".into(), "ON".into()),
        // Replication needs a server_id of its own on every member; the port is unique among
        // the sandboxes running on this machine.
        ("server_id".into(), paths.port.to_string()),
    ];
    if mysql {
        // MySQL 8's X plugin listens on 33060 by default: two sandboxes would collide.
        s.push(("loose-mysqlx".into(), "OFF".into()));
    }
    if let Some(user) = run_as {
        s.insert(0, ("user".into(), user.into()));
    }
    s
}

/// Merges layers of settings: a later entry replaces an earlier one with the same name, and
/// takes its position at the end so the file reads in precedence order.
pub(crate) fn merge(layers: &[&[(String, String)]]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for (name, value) in layers.iter().flat_map(|l| l.iter()) {
        out.retain(|(n, _)| key_of(n) != key_of(name));
        out.push((name.clone(), value.clone()));
    }
    out
}

/// Renders the `[mysqld]` group.
pub(crate) fn render(sandbox: &str, settings: &[(String, String)]) -> String {
    let mut s = format!(
        "# my.cnf of qpslab sandbox '{sandbox}', rewritten at each start.\n\
         # Lab settings first, then the my.cnf fragment, then --set overrides.\n[mysqld]\n"
    );
    for (name, value) in settings {
        if value.is_empty() {
            s.push_str(name);
        } else if value.contains(['#', ';', '"', '\'', '\\']) {
            let v = value.replace('\\', "\\\\").replace('"', "\\\"");
            s.push_str(&format!("{name} = \"{v}\""));
        } else {
            s.push_str(&format!("{name} = {value}"));
        }
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use qpslab_core::fault::Blame;

    fn paths() -> Paths {
        Paths {
            datadir: "/l/s/data".into(),
            socket: "/l/s/mysqld.sock".into(),
            port: 3400,
            pid_file: "/l/s/mysqld.pid".into(),
            log_error: "/l/s/error.log".into(),
            tmpdir: "/l/s/tmp".into(),
            files: "/l/s/files".into(),
            init_file: "/l/s/init.sql".into(),
        }
    }

    #[test]
    fn later_wins_across_dash_and_underscore() {
        let home = lab_settings(&paths(), false, None);
        let fragment = my_cnf(
            "[client]\nport=1\n[mysqld]\nmax-connections = 100\ninnodb_buffer_pool_size=1G # big\n",
        )
        .unwrap();
        let sets = vec![parse_override("innodb-buffer-pool-size=2G").unwrap()];
        let merged = merge(&[&home, &fragment, &sets]);
        let text = render("s", &merged);
        assert!(text.contains("max-connections = 100\n"), "{text}");
        assert!(!text.contains("max_connections = 5000"), "{text}");
        assert!(text.contains("innodb-buffer-pool-size = 2G\n"), "{text}");
        assert!(!text.contains("1G"), "{text}");
        assert!(
            text.contains("port = 3400\n") && !text.contains("port=1"),
            "{text}"
        );
        assert!(text.contains("local_infile = ON\n"));
        assert!(!text.contains("skip-name-resolve") && !text.contains("user ="));
        // Overrides come after the lab's settings.
        assert!(text.find("datadir").unwrap() < text.find("innodb-buffer").unwrap());
    }

    #[test]
    fn flavour_and_root() {
        let t = render("s", &lab_settings(&paths(), true, Some("mysql")));
        assert!(
            t.contains("loose-mysqlx = OFF") && t.contains("user = mysql"),
            "{t}"
        );
        assert!(t.contains("secure_file_priv = /l/s/files\n"), "{t}");
        assert!(t.contains("bind-address = 127.0.0.1\n"), "{t}");
        assert!(t.contains("server_id = 3400\n"), "{t}");
    }

    #[test]
    fn rejects_reserved_and_malformed() {
        for bad in [
            "datadir=/x",
            "pid-file=/x",
            "PORT=1",
            "init-file=/x",
            "a b=1",
            "=1",
            "x=a\nb",
        ] {
            let e = parse_override(bad).unwrap_err();
            assert!(e.is_user_error(), "{bad}");
        }
        assert!(parse_override("loose-port=1").is_err());
        assert_eq!(
            parse_override("--skip-log-bin").unwrap(),
            ("skip-log-bin".to_string(), String::new())
        );
    }

    /// Reads my.cnf fragment text written to a temporary file.
    fn my_cnf(text: &str) -> Result<Vec<(String, String)>> {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("my.cnf");
        std::fs::write(&p, text).unwrap();
        read_my_cnf(&p)
    }

    #[test]
    fn my_cnf_fragments_include_files_and_name_the_line_at_fault() {
        let d = tempfile::tempdir().unwrap();
        let inc = d.path().join("inc.cnf");
        std::fs::write(&inc, "[mariadbd]\nb = 2\n").unwrap();
        let text = format!("a=1\n[server]\n!include {}\nc='x y'\n", inc.display());
        let got = my_cnf(&text).unwrap();
        let want = [("a", "1"), ("b", "2"), ("c", "x y")];
        assert_eq!(got, want.map(|(n, v)| (n.to_string(), v.to_string())));
        std::fs::write(&inc, "[mysqld]\n\nloose_datadir=/x\n").unwrap();
        let e = my_cnf(&text).unwrap_err();
        assert!(e.is_user_error(), "{e}");
        assert!(
            e.to_string().contains(&format!("{}:3", inc.display())),
            "{e}"
        );
        let e = my_cnf("[mysqld]\n!include /nonexistent/x.cnf\n").unwrap_err();
        assert!(matches!(e, Error::MyCnf(_)) && e.is_user_error(), "{e}");
        assert!(e.to_string().contains("/nonexistent/x.cnf"), "{e}");
    }

    #[test]
    fn quotes_values_with_comment_chars() {
        let t = render("s", &[("init_connect".into(), "SET @a='#x'".into())]);
        assert!(t.contains("init_connect = \"SET @a='#x'\"\n"), "{t}");
        let t = render("s", &[("skip-log-bin".into(), String::new())]);
        assert!(t.ends_with("\nskip-log-bin\n"), "{t}");
    }
}
