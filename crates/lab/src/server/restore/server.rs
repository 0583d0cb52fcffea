//! A control connection to a server the ledger keeps a record for: the server's identity, the
//! global values it saves and compares, and the accounts it drops.

use super::{end_sessions, Account, Record, RestoreError, Saved, ServerId};
use crate::server::control::{self, ControlError};
use qpslab_core::ConnectOptions;
use qpslab_wire::Conn;

/// A control connection to a server, with the server's identity.
pub(super) struct Server {
    pub(super) conn: Conn,
    pub(super) id: ServerId,
    /// When the server started, Unix seconds.
    pub(super) started: u64,
}

impl Server {
    pub(super) fn connect(target: &ConnectOptions) -> Result<Server, RestoreError> {
        let mut conn = control::connect(target)?;
        let sql = "SELECT @@hostname, @@datadir, @@port, UNIX_TIMESTAMP()";
        let row = query(&mut conn, sql)?.rows.into_iter().next();
        let field = |i: usize| row.as_ref().and_then(|r| r.get(i).cloned().flatten());
        let id = ServerId {
            hostname: field(0).unwrap_or_default(),
            datadir: field(1).unwrap_or_default(),
            port: field(2).and_then(|p| p.parse().ok()).unwrap_or(0),
        };
        let now: u64 = field(3).and_then(|t| t.parse().ok()).unwrap_or(0);
        let uptime = query(&mut conn, "SHOW GLOBAL STATUS LIKE 'Uptime'")?
            .rows
            .first()
            .and_then(|r| r.get(1).cloned().flatten())
            .and_then(|u| u.parse::<u64>().ok())
            .unwrap_or(0);
        Ok(Server {
            conn,
            id,
            started: now.saturating_sub(uptime),
        })
    }

    /// The current value of each of `names` the server has (an unknown or badly spelt name is
    /// left out: it cannot be changed either).
    pub(super) fn values(&mut self, names: &[String]) -> Result<Vec<Saved>, RestoreError> {
        let mut out: Vec<Saved> = Vec::new();
        for name in names {
            if out.iter().any(|s| s.name == *name) {
                continue;
            }
            if let Some(value) = self.value(name)? {
                let literal = value
                    .as_deref()
                    .map_or_else(|| "NULL".into(), qpslab_core::live::sql_literal);
                out.push(Saved {
                    name: name.clone(),
                    value,
                    literal,
                });
            }
        }
        Ok(out)
    }

    /// `Some(value)` of a global variable, `None` when there is no such variable.
    pub(super) fn value(&mut self, name: &str) -> Result<Option<Option<String>>, RestoreError> {
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Ok(None);
        }
        let sql = format!("SELECT @@GLOBAL.{name}");
        match self.conn.query(&sql) {
            Ok(r) => Ok(Some(
                r.rows
                    .into_iter()
                    .next()
                    .and_then(|r| r.into_iter().next().flatten()),
            )),
            // Unknown variable, or one with no global value.
            Err(e) if matches!(e.server_code(), Some(1193 | 1238)) => Ok(None),
            Err(source) => Err(ControlError::Query { sql, source }.into()),
        }
    }

    /// Drops `r`'s accounts, their sessions killed first; each one that could not be
    /// dropped, with why.
    pub(super) fn drop_accounts(&mut self, r: &Record) -> Vec<String> {
        let mut failed = Vec::new();
        for a in &r.accounts {
            let Some(account) = a.sql() else { continue };
            if let Err(e) = end_sessions(&mut self.conn, a) {
                failed.push(format!("{account} (ending its sessions: {e})"));
                continue;
            }
            if let Err(e) = self.conn.query(&format!("DROP USER IF EXISTS {account}")) {
                failed.push(format!("{account} ({e})"));
            }
        }
        failed
    }

    /// What `r` says is still to put back: its settings that differ, its accounts that exist.
    pub(super) fn left(&mut self, r: &Record) -> Result<Vec<String>, RestoreError> {
        let mut left = self.existing(&r.accounts)?;
        left.extend(self.differing(&r.settings)?);
        Ok(left)
    }

    /// Those of `accounts` that exist on the server, as `'user'@'host'`.
    pub(super) fn existing(&mut self, accounts: &[Account]) -> Result<Vec<String>, RestoreError> {
        let mut out = Vec::new();
        for a in accounts {
            let Some(account) = a.sql() else { continue };
            let sql = format!(
                "SELECT count(*) FROM mysql.user WHERE User = '{}' AND Host = '{}'",
                a.user, a.host
            );
            if query(&mut self.conn, &sql)?.first_value() != Some("0") {
                out.push(account);
            }
        }
        Ok(out)
    }

    /// The names of the settings whose value on the server is not the saved one.
    pub(super) fn differing(&mut self, settings: &[Saved]) -> Result<Vec<String>, RestoreError> {
        let mut out = Vec::new();
        for s in settings {
            match self.value(&s.name)? {
                Some(now) if s.matches(now.as_deref()) => {}
                None => {}
                Some(_) => out.push(s.name.clone()),
            }
        }
        Ok(out)
    }

    pub(super) fn record(
        &self,
        target: &ConnectOptions,
        command: &str,
        settings: Vec<Saved>,
    ) -> Record {
        Record {
            target: target.describe(),
            server: self.id.clone(),
            server_started: self.started,
            command: command.to_string(),
            pid: std::process::id(),
            written: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            settings,
            accounts: Vec::new(),
            logging_only: false,
        }
    }
}

fn query(conn: &mut Conn, sql: &str) -> Result<qpslab_wire::QueryResult, RestoreError> {
    Ok(control::query(conn, sql)?)
}
