//! What a command that changes a server's settings leaves behind before its first change: the
//! server's identity, the owner, and every setting's original value, as one small JSON file.
//! Pure, apart from reading and writing that file.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// A server as it names itself, the same whichever way it is reached (socket or TCP).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerId {
    /// `@@hostname`.
    pub hostname: String,
    /// `@@datadir`.
    pub datadir: String,
    /// `@@port`.
    pub port: u16,
}

impl ServerId {
    /// The record's file name for this server: a hash of its host and datadir (no two servers
    /// share both; the port is left out, since a sandbox may get another one when restarted).
    pub fn key(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        h.update(format!("{}\0{}", self.hostname, self.datadir));
        h.finalize()[..8]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

/// One setting's value before the change.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Saved {
    /// The global variable.
    pub name: String,
    /// Its value as the server reported it (`None`: NULL).
    pub value: Option<String>,
    /// The same value as written in `SET GLOBAL` (numbers bare, text quoted).
    pub literal: String,
}

impl Saved {
    /// Whether the server's value `now` is this original setting again.
    pub fn matches(&self, now: Option<&str>) -> bool {
        match (self.value.as_deref(), now) {
            (Some(a), Some(b)) => same(a, b),
            (a, b) => a == b,
        }
    }
}

/// An account a command created on the server for its own use (a read-only replay's), to be
/// dropped when the command ends: `'user'@'host'`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Account {
    /// The user name (qpslab's own: letters, digits and `_` only).
    pub user: String,
    /// The host part.
    pub host: String,
}

impl Account {
    /// `'user'@'host'`, for `DROP USER`; `None` for a name qpslab would never have made (a
    /// record edited by hand is not turned into SQL).
    pub fn sql(&self) -> Option<String> {
        let plain = |s: &str, extra: &[char]| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || extra.contains(&c))
        };
        (plain(&self.user, &['_']) && plain(&self.host, &['.', ':', '%', '-', '_']))
            .then(|| format!("'{}'@'{}'", self.user, self.host))
    }
}

/// Who begins a change: the command's name, and whether it changes only how the server logs.
#[derive(Clone, Copy)]
pub(crate) struct Owner<'a> {
    pub command: &'a str,
    pub logging_only: bool,
}

impl<'a> Owner<'a> {
    /// A command whose settings change what runs measure (`tune`, `run --at`).
    pub fn changing(command: &'a str) -> Owner<'a> {
        Owner {
            command,
            logging_only: false,
        }
    }
}

/// The record of an unfinished change: written before the first change, removed once every
/// setting is back. Holds no password (the target is the redacted description).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// The server, as the user reached it (`user@host:port/db`, no password).
    pub target: String,
    /// The server's own identity.
    pub server: ServerId,
    /// When the server started (Unix seconds): a restart since drops every `SET GLOBAL`.
    pub server_started: u64,
    /// The command that changes the settings (`tune`, `run --at`, `capture`).
    pub command: String,
    /// Its process id (for messages; whether it lives is told by its lock).
    pub pid: u32,
    /// When the record was written (Unix seconds).
    pub written: u64,
    /// Every setting the command may change, with its original value, in the order changed.
    pub settings: Vec<Saved>,
    /// Accounts the command creates for its own use (recorded before they are created), to be
    /// dropped; a restart of the server does not drop them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accounts: Vec<Account>,
    /// Whether the command changes only how the server logs (`capture`): a run that changes
    /// no setting may measure the server meanwhile, and is logged with the rest.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub logging_only: bool,
}

impl Record {
    /// The statements putting the server back: the accounts dropped, then one statement
    /// restoring every setting, last changed first: `SET GLOBAL a=1, b='x';`.
    pub fn restore_line(&self) -> String {
        let mut parts: Vec<String> = self
            .accounts
            .iter()
            .filter_map(Account::sql)
            .map(|a| format!("DROP USER IF EXISTS {a};"))
            .collect();
        if !self.settings.is_empty() || parts.is_empty() {
            parts.push(restore_line(&self.settings));
        }
        parts.join(" ")
    }

    /// Reads a record; `None` when there is none (or it cannot be parsed: a half-written file
    /// cannot exist, since records are written through a rename).
    pub(crate) fn read(path: &Path) -> std::io::Result<Option<Record>> {
        match std::fs::read(path) {
            Ok(bytes) => Ok(serde_json::from_slice(&bytes).ok()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Writes the record whole and synced, then syncs its directory, so it survives a crash of
    /// the machine as well as of the process.
    pub(crate) fn write(&self, path: &Path) -> std::io::Result<()> {
        let bytes = serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?;
        qpslab_core::files::write_atomically(path, &bytes)?;
        if let Some(dir) = path.parent() {
            std::fs::File::open(dir)?.sync_all()?;
        }
        Ok(())
    }
}

/// One statement restoring `settings`, last first: `SET GLOBAL a=1, b='x';`.
pub fn restore_line(settings: &[Saved]) -> String {
    let sets: Vec<String> = settings
        .iter()
        .rev()
        .map(|s| format!("{}={}", s.name, s.literal))
        .collect();
    format!("SET GLOBAL {};", sets.join(", "))
}

/// Whether two values of a variable are the same setting (`10.000000` and `10`, `on` and `ON`;
/// a switch reads `OFF` in `SHOW VARIABLES` and `0` in `SELECT @@`).
pub fn same(a: &str, b: &str) -> bool {
    match (number(a), number(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a.eq_ignore_ascii_case(b),
    }
}

fn number(v: &str) -> Option<f64> {
    match v.to_ascii_uppercase().as_str() {
        "ON" | "TRUE" => Some(1.0),
        "OFF" | "FALSE" => Some(0.0),
        _ => v.parse().ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn saved(name: &str, value: &str, literal: &str) -> Saved {
        Saved {
            name: name.into(),
            value: Some(value.into()),
            literal: literal.into(),
        }
    }

    #[test]
    fn the_restore_line_puts_the_last_change_back_first() {
        let s = [
            saved("innodb_buffer_pool_size", "134217728", "134217728"),
            saved("log_slow_filter", "admin", "'admin'"),
        ];
        assert_eq!(
            restore_line(&s),
            "SET GLOBAL log_slow_filter='admin', innodb_buffer_pool_size=134217728;"
        );
    }

    #[test]
    fn values_match_in_any_spelling_and_null_only_null() {
        let s = saved("long_query_time", "10.000000", "10.000000");
        assert!(s.matches(Some("10")));
        assert!(!s.matches(Some("0")));
        assert!(!s.matches(None));
        assert!(saved("x", "on", "ON").matches(Some("ON")));
        assert!(saved("slow_query_log", "OFF", "'OFF'").matches(Some("0")));
        assert!(!saved("slow_query_log", "OFF", "'OFF'").matches(Some("1")));
    }

    #[test]
    fn the_restore_line_drops_recorded_accounts_and_refuses_odd_names() {
        let mut r = Record {
            target: "root@localhost".into(),
            server: ServerId {
                hostname: "h".into(),
                datadir: "/d/".into(),
                port: 3306,
            },
            server_started: 0,
            command: "replay".into(),
            pid: 1,
            written: 0,
            settings: Vec::new(),
            logging_only: false,
            accounts: vec![Account {
                user: "qpslab_ro_ab12".into(),
                host: "localhost".into(),
            }],
        };
        assert_eq!(
            r.restore_line(),
            "DROP USER IF EXISTS 'qpslab_ro_ab12'@'localhost';"
        );
        r.accounts.push(Account {
            user: "x'; DROP DATABASE d; --".into(),
            host: "%".into(),
        });
        r.settings.push(saved("long_query_time", "10", "10"));
        assert_eq!(
            r.restore_line(),
            "DROP USER IF EXISTS 'qpslab_ro_ab12'@'localhost'; SET GLOBAL long_query_time=10;"
        );
        // An older record, written before accounts were recorded, still reads.
        let mut json = serde_json::to_value(&r).unwrap();
        json.as_object_mut().unwrap().remove("accounts");
        let old: Record = serde_json::from_value(json).unwrap();
        assert!(old.accounts.is_empty());
    }

    #[test]
    fn the_key_is_the_host_and_datadir() {
        let a = ServerId {
            hostname: "h".into(),
            datadir: "/d/".into(),
            port: 3306,
        };
        let b = ServerId {
            datadir: "/e/".into(),
            ..a.clone()
        };
        let restarted = ServerId {
            port: 3307,
            ..a.clone()
        };
        assert_eq!(a.key().len(), 16);
        assert_ne!(a.key(), b.key());
        assert_eq!(a.key(), restarted.key());
    }
}
