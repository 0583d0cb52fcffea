//! The restore trail in a store shared by hosts (a server's): what a command changed on a
//! target server (`run --at`'s and `tune`'s settings, `replay`'s and `capture`'s accounts),
//! recorded before the change, and the process holding that record while it works. In the
//! lab directory the record is a file and the holder a `flock`; here both are one row of
//! `restore_trail`, so a command on any host sharing the store sees a change another host
//! left behind.
//!
//! A row is keyed by the target server (the lab's hash of its `@@hostname` and `@@datadir`)
//! and an account (`""` for the server's settings). Its holder is judged as a run's owner is
//! (`lease.rs`): on this host by its process, on another host by its heartbeat, which this
//! process's lease thread renews while it holds the row. A holder that is gone (killed with
//! -9 here, or its lease run out there) holds nothing: its record is a leftover for the next
//! command to find, exactly as a file whose lock nobody holds.
//!
//! The records themselves are the lab's JSON, kept as text: the store never reads them.
//!
//! ```no_run
//! # fn demo(store: &mut qpslab_store::Store) -> Result<(), qpslab_store::Error> {
//! if store.trail_hold("0123456789abcdef", "")? {
//!     store.trail_write("0123456789abcdef", "", "{\"settings\": []}")?;
//!     // ... change the server, put it back ...
//!     store.trail_clear("0123456789abcdef", "")?;
//!     store.trail_let_go("0123456789abcdef", "")?;
//! }
//! # Ok(()) }
//! ```

use crate::db::{params, Behavior, OptionalExtension, Tx};
use crate::error::Error;
use crate::handle::Store;
use crate::owner::Owner;
use std::path::Path;

/// One record of the trail: the server it is about, the account (`""`: its settings), and
/// the lab's JSON.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrailRecord {
    /// The target server's key.
    pub server: String,
    /// The account the record is named after; `""` for the server's settings.
    pub account: String,
    /// The record, as the lab wrote it.
    pub json: String,
}

impl Store {
    /// Whether `db` (a `--db` value) names a store on a server (`mysql://`, `mariadb://`)
    /// rather than a file: the stores whose restore trail is kept in the store.
    pub fn names_server(db: &Path) -> bool {
        crate::open_server::url(db).is_some()
    }

    /// Makes this process the holder of the record `server`/`account` (creating its row),
    /// unless a living process holds it: `false` then. A holder that is gone (its process
    /// dead on this host, its lease run out on another) is replaced; its record stays, for the
    /// caller to read as a leftover. A row this process holds already counts as held, as a
    /// second `flock` of one file would.
    pub fn trail_hold(&mut self, server: &str, account: &str) -> Result<bool, Error> {
        let tx = self.conn.transaction_with_behavior(Behavior::Immediate)?;
        let found = holder(&tx, server, account)?;
        if let Some((owner, beat)) = &found {
            let (shared, now) = (tx.is_server(), crate::lease::now(&tx)?);
            if crate::lease::alive(owner, shared, *beat, now) {
                return Ok(false);
            }
        }
        let me = Owner::me();
        let values = params![
            me.pid,
            me.boot_id,
            me.started.map(|t| t as i64),
            server,
            account
        ];
        if found.is_some() || exists(&tx, server, account)? {
            tx.execute(
                "UPDATE restore_trail SET owner_pid = ?1, owner_boot_id = ?2, owner_started = ?3
                 WHERE server_key = ?4 AND account = ?5",
                values,
            )?;
        } else {
            tx.execute(
                "INSERT INTO restore_trail (owner_pid, owner_boot_id, owner_started, server_key,
                                            account)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                values,
            )?;
        }
        crate::lease::own(&tx)?;
        tx.commit()?;
        self.keep_alive()?;
        Ok(true)
    }

    /// Ends this process's hold on the record `server`/`account`; the row goes once it holds
    /// no record either.
    pub fn trail_let_go(&mut self, server: &str, account: &str) -> Result<(), Error> {
        let me = Owner::me();
        self.conn.execute(
            "UPDATE restore_trail
                SET owner_pid = NULL, owner_boot_id = NULL, owner_started = NULL,
                    heartbeat_at = NULL
              WHERE server_key = ?1 AND account = ?2 AND owner_pid = ?3 AND owner_boot_id = ?4",
            params![server, account, me.pid, me.boot_id],
        )?;
        self.drop_empty(server, account)
    }

    /// The record `server`/`account`, if one is kept.
    pub fn trail_read(&self, server: &str, account: &str) -> Result<Option<String>, Error> {
        let json: Option<Option<String>> = self
            .conn
            .query_row(
                "SELECT record_json FROM restore_trail WHERE server_key = ?1 AND account = ?2",
                params![server, account],
                |r| r.get(0),
            )
            .optional()?;
        Ok(json.flatten())
    }

    /// Keeps `json` as the record `server`/`account` (its holder's: called after
    /// [`Store::trail_hold`]), written before the change it records is made.
    pub fn trail_write(&mut self, server: &str, account: &str, json: &str) -> Result<(), Error> {
        let changed = self.conn.execute(
            "UPDATE restore_trail SET record_json = ?1 WHERE server_key = ?2 AND account = ?3",
            params![json, server, account],
        )?;
        if changed == 0 {
            self.conn.execute(
                "INSERT INTO restore_trail (server_key, account, record_json) VALUES (?1, ?2, ?3)",
                params![server, account, json],
            )?;
        }
        Ok(())
    }

    /// Removes the record `server`/`account` (the change is undone, or no longer matters);
    /// its holder, if any, still holds the row until it lets go.
    pub fn trail_clear(&mut self, server: &str, account: &str) -> Result<(), Error> {
        self.conn.execute(
            "UPDATE restore_trail SET record_json = NULL WHERE server_key = ?1 AND account = ?2",
            params![server, account],
        )?;
        self.drop_empty(server, account)
    }

    /// Every record kept, in key order; with `server`, only that server's.
    pub fn trail_records(&self, server: Option<&str>) -> Result<Vec<TrailRecord>, Error> {
        let sql = |only: &str| {
            format!(
                "SELECT server_key, account, record_json FROM restore_trail
                  WHERE record_json IS NOT NULL{only} ORDER BY server_key, account"
            )
        };
        let row = |r: &crate::db::Row<'_>| {
            Ok(TrailRecord {
                server: r.get(0)?,
                account: r.get(1)?,
                json: r.get(2)?,
            })
        };
        match server {
            Some(key) => self
                .conn
                .prepare(&sql(" AND server_key = ?1"))?
                .query_map([key], row)?
                .collect(),
            None => self.conn.prepare(&sql(""))?.query_map([], row)?.collect(),
        }
    }

    fn drop_empty(&mut self, server: &str, account: &str) -> Result<(), Error> {
        self.conn.execute(
            "DELETE FROM restore_trail WHERE server_key = ?1 AND account = ?2
                AND record_json IS NULL AND owner_pid IS NULL",
            params![server, account],
        )?;
        Ok(())
    }
}

/// The holder of a row and its heartbeat, when the row has one.
fn holder(tx: &Tx<'_>, server: &str, account: &str) -> Result<Option<(Owner, Option<f64>)>, Error> {
    let row: Option<Option<(Owner, Option<f64>)>> = tx
        .query_row(
            "SELECT owner_pid, owner_boot_id, owner_started, heartbeat_at FROM restore_trail
              WHERE server_key = ?1 AND account = ?2",
            params![server, account],
            |r| {
                let pid: Option<u32> = r.get(0)?;
                let started: Option<i64> = r.get(2)?;
                let (boot_id, beat) = (r.get(1)?, r.get(3)?);
                Ok(pid.map(|pid| {
                    let owner = Owner {
                        pid,
                        boot_id,
                        started: started.map(|t| t as u64),
                    };
                    (owner, beat)
                }))
            },
        )
        .optional()?;
    Ok(row.flatten())
}

fn exists(tx: &Tx<'_>, server: &str, account: &str) -> Result<bool, Error> {
    let n: i64 = tx.query_row(
        "SELECT count(*) FROM restore_trail WHERE server_key = ?1 AND account = ?2",
        params![server, account],
        |r| r.get(0),
    )?;
    Ok(n > 0)
}
