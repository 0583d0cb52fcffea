//! Ending an account's sessions before the account is dropped: `DROP USER` leaves the
//! sessions of the account running (and what they run), so a command that created an account
//! for its own use (a read-only replay's or diff's) kills them first, and so does `qpslab
//! restore` after that command was killed.

use super::record::Account;
use qpslab_wire::{Conn, Error};

/// `ER_NO_SUCH_THREAD`: the thread ended before its kill.
const NO_SUCH_THREAD: u16 = 1094;

/// Kills every session of `account`'s user (`information_schema.PROCESSLIST` by `USER`, every
/// host: qpslab's accounts differ only by host) on the server reached by `conn`, with what it
/// runs. Returns how many were killed; a name qpslab would never have made kills nothing.
pub fn end_sessions(conn: &mut Conn, account: &Account) -> Result<usize, Error> {
    if account.sql().is_none() {
        return Ok(0);
    }
    let own = conn.connection_id().to_string();
    let ids: Vec<String> = conn
        .query(&format!(
            "SELECT ID FROM information_schema.PROCESSLIST WHERE USER = '{}'",
            account.user
        ))?
        .rows
        .into_iter()
        .filter_map(|r| r.into_iter().next().flatten())
        .filter(|id| *id != own && id.bytes().all(|b| b.is_ascii_digit()))
        .collect();
    let mut killed = 0;
    for id in ids {
        match conn.execute(&format!("KILL CONNECTION {id}")) {
            Ok(_) => killed += 1,
            Err(e) if e.server_code() == Some(NO_SUCH_THREAD) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(killed)
}
