//! What the replay tests share: a MariaDB 10.11 slow log written from statements' bytes, a
//! private sandbox with a database of 3 rows and the functions a test asks for, and a child
//! waited for with a limit.

use super::{stderr, stdout, Scratch};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::Duration;

/// A MariaDB 10.11 slow log of `(thread, second, sql)` entries in database `db`, each
/// statement's bytes as they are (`use` once per thread).
pub fn slow_log(dir: &Path, name: &str, db: &str, entries: &[(u64, i64, &[u8])]) -> PathBuf {
    let mut out = b"/usr/sbin/mariadbd, Version: 10.11.19-MariaDB-0+deb12u1 (Debian 12). \
        started with:\nTcp port: 3306  Unix socket: /run/mysqld/mysqld.sock\n\
        Time\t\t    Id Command\tArgument\n"
        .to_vec();
    let mut seen = std::collections::BTreeSet::new();
    for (thread, second, sql) in entries {
        out.extend_from_slice(
            format!(
                "# Time: 261123  4:25:{:02}\n# User@Host: root[root] @ localhost []\n\
                 # Thread_id: {thread}  Schema: {db}  QC_hit: No\n\
                 # Query_time: 0.000100  Lock_time: 0.000000  Rows_sent: 0  Rows_examined: 0\n\
                 # Rows_affected: 0  Bytes_sent: 11\n",
                10 + second
            )
            .as_bytes(),
        );
        if seen.insert(*thread) {
            out.extend_from_slice(format!("use `{db}`;\n").as_bytes());
        }
        out.extend_from_slice(format!("SET timestamp={};\n", 1_795_407_949 + second).as_bytes());
        out.extend_from_slice(sql);
        out.extend_from_slice(b";\n");
    }
    let path = dir.join(name);
    std::fs::write(&path, out).unwrap();
    path
}

/// `entries` of text, as [`slow_log`] takes them.
pub fn text_entries<'a>(entries: &[(u64, i64, &'a str)]) -> Vec<(u64, i64, &'a [u8])> {
    entries
        .iter()
        .map(|(t, s, q)| (*t, *s, q.as_bytes()))
        .collect()
}

/// A private sandbox of a scratch's lab, reached by its socket as root.
pub struct Private {
    pub socket: String,
}

impl Private {
    /// Starts sandbox `name` with database `db` holding table `t (id, v)` of 3 rows, and
    /// creates each of `routines` (compound bodies: the client's delimiter is `//`).
    pub fn start(s: &Scratch, name: &str, db: &str, routines: &[&str]) -> Private {
        let o = s.run(&["server", "start", name, "--json"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let info: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        let p = Private {
            socket: info["socket"].as_str().unwrap().to_string(),
        };
        p.sql(&format!(
            "CREATE DATABASE {db}; CREATE TABLE {db}.t (id INT PRIMARY KEY, v INT); \
             INSERT INTO {db}.t VALUES (1, 0), (2, 0), (3, 0)"
        ));
        for body in routines {
            let o = Command::new("mariadb")
                .args(["--socket", &p.socket, "-uroot", "--delimiter=//", "-e"])
                .arg(body)
                .output()
                .expect("mariadb client");
            assert!(o.status.success(), "{}", stderr(&o));
        }
        p
    }

    /// `query`'s output through the mariadb client, as root.
    pub fn sql(&self, query: &str) -> String {
        let o = Command::new("mariadb")
            .args(["--socket", &self.socket, "-uroot", "-N", "-B", "-e", query])
            .output()
            .expect("mariadb client");
        assert!(o.status.success(), "{query}: {}", stderr(&o));
        stdout(&o)
    }

    /// How many of replay's read-only accounts exist.
    pub fn replay_accounts(&self) -> String {
        self.sql("SELECT count(*) FROM mysql.user WHERE User LIKE 'qpslab\\_ro\\_%'")
            .trim()
            .to_string()
    }
}

/// `child`'s output, or a failed test when it still runs after `limit`.
pub fn output_within(child: Child, limit: Duration) -> Output {
    let pid = child.id() as i32;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output()));
    match rx.recv_timeout(limit) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            // SAFETY: kill(2) takes plain integers; the pid is this test's own child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("still running after {limit:?}");
        }
    }
}
