//! Leases on a store shared by hosts (a server's): what a process owns there (its running
//! runs, the study it drives, the records of the restore trail it holds: `trail.rs`) carries a
//! heartbeat, renewed every [`RENEW`] by a thread on its own session while the store is open
//! for writing. Another host cannot see whether a process lives; it sees the heartbeat, and
//! takes an owner whose heartbeat is older than [`LEASE`] for gone: its runs are closed as
//! `interrupted`, its study may be resumed, its restore record is a leftover. Times are the
//! server's clock (`UNIX_TIMESTAMP(NOW(6))`), never a client's, so hosts whose clocks disagree
//! still agree on an age.

use crate::db::{server::Session, Conn};
use crate::error::Error;
use crate::owner::Owner;
use std::sync::mpsc::{channel, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

/// How often a writer renews its heartbeat.
pub const RENEW: Duration = Duration::from_secs(5);

/// How old a heartbeat may be before its owner counts as gone.
pub const LEASE: Duration = Duration::from_secs(30);

/// The store's clock now, Unix seconds: the server's for a server's store, this host's for a
/// file's.
pub(crate) fn now(conn: &Conn) -> Result<f64, Error> {
    if conn.is_server() {
        conn.query_row("SELECT UNIX_TIMESTAMP(NOW(6))", [], |r| r.get(0))
    } else {
        Ok(crate::model::unix_now())
    }
}

/// Whether `owner`, whose heartbeat is `beat` (store clock), counts as alive seen from here
/// at store time `now`: on this host by its process; on another host (a shared store only) by
/// its lease, and as alive where it never beat.
pub(crate) fn alive(owner: &Owner, shared: bool, beat: Option<f64>, now: f64) -> bool {
    if shared && !owner.on_this_host() {
        return beat.is_none_or(|b| now - b < LEASE.as_secs_f64());
    }
    owner.alive()
}

/// The thread renewing this process's heartbeats; stopped when dropped.
pub(crate) struct Keepalive {
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Keepalive {
    /// Starts renewing, every [`RENEW`] through `session` (its own, so a long statement of the
    /// store's session never delays a beat), the heartbeat of every run left running and every
    /// study driven by this process.
    pub fn start(session: Session) -> Keepalive {
        let (tx, rx) = channel::<()>();
        let me = Owner::me();
        let thread = std::thread::Builder::new()
            .name("qpslab-lease".into())
            .spawn(move || {
                let conn = Conn::Server(Box::new(session));
                loop {
                    // A failed beat is retried at the next: the lease is several beats long.
                    let _ = beat(&conn, &me);
                    match rx.recv_timeout(RENEW) {
                        Err(RecvTimeoutError::Timeout) => continue,
                        _ => return,
                    }
                }
            })
            .ok();
        Keepalive {
            stop: Some(tx),
            thread,
        }
    }
}

impl Drop for Keepalive {
    /// Stops the thread: at once when it waits for its next beat; a beat held up by a stalled
    /// server is left to end by itself (its session's own timeout) after a second, so closing
    /// the store never waits on the server.
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let until = std::time::Instant::now() + Duration::from_secs(1);
            while !t.is_finished() && std::time::Instant::now() < until {
                std::thread::sleep(Duration::from_millis(5));
            }
            if t.is_finished() {
                let _ = t.join();
            }
        }
    }
}

/// Marks what this process has just come to own as alive now (a server's store; nothing on a
/// file's): called in the transaction that made it the owner.
pub(crate) fn own(conn: &Conn) -> Result<(), Error> {
    if conn.is_server() {
        beat(conn, &Owner::me())?;
    }
    Ok(())
}

/// Renews the heartbeat of what `me` owns: its running runs, the study it drives, and the
/// records of the restore trail it holds (`trail.rs`: a command changing a target server's
/// settings or accounts), so another host takes none of them over while this process lives.
pub(crate) fn beat(conn: &Conn, me: &Owner) -> Result<(), Error> {
    for table in ["runs", "studies", "restore_trail"] {
        conn.execute(
            &format!(
                "UPDATE {table} SET heartbeat_at = UNIX_TIMESTAMP(NOW(6))
                 WHERE owner_pid = ?1 AND owner_boot_id = ?2{}",
                if table == "runs" {
                    " AND status = 'running'"
                } else {
                    ""
                }
            ),
            crate::db::params![me.pid, me.boot_id],
        )?;
    }
    Ok(())
}
