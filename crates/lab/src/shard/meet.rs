//! The shards' meetings through the server under test, so no coordinator of our own is needed:
//! a table in a schema qpslab owns there ([`SCHEMA`].`meeting`), one row per group, meeting and
//! shard.
//!
//! - The dataset: shard 0 makes it present, then writes the meeting `dataset`'s row; the
//!   others wait for it before they look at the dataset ([`dataset_ready`], [`wait_dataset`]).
//! - Each phase: every shard, its sessions open, writes its arrival; shard 0, once all N have
//!   arrived, writes a start instant a little ahead (the server's clock); every shard sleeps
//!   until it and starts its warm-up then, so all measure from one start to one end (the
//!   phase's `--time` after it). A shard missing after the timeout fails the run, named.
//! - What the table says is checked before it is used: arrivals with an index outside the
//!   group, a start set before all arrived, a start not between now and the end of the wait
//!   fail the shard with the reason. Every wait, the sleep until the start included, is
//!   bounded by the timeout and ends at the first signal.
//!
//! Times are the server's (`UNIX_TIMESTAMP(NOW(6))`): shards on hosts whose clocks disagree
//! still start together, each turning the server's instant into its own clock by the offset
//! it measured. Rows are removed when the phase ends.

use qpslab_core::shard::Shard;
use qpslab_core::ConnectOptions;
use qpslab_engine::RunError;
use qpslab_wire::Conn;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The schema qpslab owns on the server for the meetings.
pub const SCHEMA: &str = "qpslab_shards";
/// How far ahead of the last arrival shard 0 sets the start: time for every shard to read it
/// (they poll every [`POLL`]) on a busy machine.
const START_AHEAD_S: f64 = 1.0;
/// How often a waiting shard looks again.
const POLL: Duration = Duration::from_millis(20);
/// What the meeting leaves of the wait for the start to the engine, which cannot be
/// interrupted: short enough that a signal ends the meeting at once, long enough that the
/// engine, not a 20 ms poll, sets the instant.
const FINAL_WAIT: Duration = Duration::from_millis(30);
/// The meeting row that carries the start (or the dataset's readiness), beside the shards'.
const LEAD: i64 = -1;
/// The wait for the other shards when `--shard-timeout` is not given, besides settling and an
/// auto warm-up (each shard does both before it arrives): connecting, and launchers that
/// start their tasks a few seconds apart.
pub const BASE_TIMEOUT_S: f64 = 60.0;

/// One shard's side of its group's meetings.
pub struct Meeting<'a> {
    target: ConnectOptions,
    shard: Shard,
    timeout: Duration,
    stop: &'a AtomicBool,
}

/// A wait the shard could not finish.
fn failed(what: impl std::fmt::Display) -> RunError {
    RunError::Meeting(what.to_string())
}

impl<'a> Meeting<'a> {
    /// The meetings of `shard` on the server of `target` (its database is not used), each
    /// wait at most `timeout_s`; `stop` (Ctrl-C) ends a wait.
    pub fn new(
        target: &ConnectOptions,
        shard: Shard,
        timeout_s: f64,
        stop: &'a AtomicBool,
    ) -> Meeting<'a> {
        Meeting {
            target: ConnectOptions {
                database: None,
                ..target.clone()
            },
            shard,
            timeout: Duration::from_secs_f64(timeout_s),
            stop,
        }
    }

    fn connect(&self) -> Result<Conn, RunError> {
        let conn = Conn::connect_timeout(&self.target, crate::server::control::REPLY_TIMEOUT)
            .map_err(|e| failed(format!("cannot reach {}: {e}", self.target.describe())))?;
        Ok(conn)
    }

    fn sql(conn: &mut Conn, sql: &str) -> Result<qpslab_wire::QueryResult, RunError> {
        conn.query(sql)
            .map_err(|e| failed(format!("the meeting table {SCHEMA}.meeting: {e}")))
    }

    /// Creates the meeting table when missing.
    fn table(conn: &mut Conn) -> Result<(), RunError> {
        Self::sql(conn, &format!("CREATE DATABASE IF NOT EXISTS {SCHEMA}"))?;
        Self::sql(
            conn,
            &format!(
                "CREATE TABLE IF NOT EXISTS {SCHEMA}.meeting (
                   grp VARCHAR(64) NOT NULL, meeting VARCHAR(64) NOT NULL, idx INT NOT NULL,
                   arrived DOUBLE NOT NULL, start_at DOUBLE, host VARCHAR(255) NOT NULL,
                   PRIMARY KEY (grp, meeting, idx)) ENGINE=InnoDB"
            ),
        )?;
        Ok(())
    }

    /// The server's clock, Unix seconds, and how far ahead of ours it is.
    fn offset(conn: &mut Conn) -> Result<(f64, f64), RunError> {
        let before = unix_now();
        let r = Self::sql(conn, "SELECT UNIX_TIMESTAMP(NOW(6))")?;
        let after = unix_now();
        let server: f64 = r
            .first_value()
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| failed("the server did not say its time"))?;
        Ok((server, server - (before + after) / 2.0))
    }

    fn key(&self, meeting: &str) -> (String, String) {
        (quote(&self.shard.group), quote(meeting))
    }

    /// Shard 0: the dataset is present; the others may use it.
    pub fn dataset_ready(&self) -> Result<(), RunError> {
        let mut conn = self.connect()?;
        Self::table(&mut conn)?;
        let (g, m) = self.key("dataset");
        Self::sql(
            &mut conn,
            &format!(
                "REPLACE INTO {SCHEMA}.meeting VALUES ({g}, {m}, {LEAD},
                   UNIX_TIMESTAMP(NOW(6)), UNIX_TIMESTAMP(NOW(6)), {})",
                quote(&host())
            ),
        )?;
        Ok(())
    }

    /// Another shard: waits until shard 0 says the dataset is present.
    pub fn wait_dataset(&self) -> Result<(), RunError> {
        let mut conn = self.connect()?;
        Self::table(&mut conn)?;
        let (g, m) = self.key("dataset");
        let sql = format!(
            "SELECT count(*) FROM {SCHEMA}.meeting WHERE grp = {g} AND meeting = {m} AND idx = {LEAD}"
        );
        if self.poll(|| Ok(Self::sql(&mut conn, &sql)?.first_value() == Some("1")))? {
            return Ok(());
        }
        Err(failed(format!(
            "shard 0 of {} (group {}) did not make the dataset ready within {:.0} s",
            self.shard.count,
            self.shard.group,
            self.timeout.as_secs_f64()
        )))
    }

    /// Arrives at meeting `phase` and waits for the others and for the agreed start, all
    /// within the timeout: returns the start in this host's clock (a few milliseconds ahead at
    /// most, see [`FINAL_WAIT`]), and the offset of the server's clock from ours. What the
    /// table says is checked first: every arrival's index within 0..N-1, all N of them, a
    /// finite start that lies between now and the end of the timeout.
    pub fn start(&self, phase: &str) -> Result<(SystemTime, f64), RunError> {
        let mut conn = self.connect()?;
        Self::table(&mut conn)?;
        let (g, m) = self.key(phase);
        let (arrived, offset) = Self::offset(&mut conn)?;
        Self::sql(
            &mut conn,
            &format!(
                "REPLACE INTO {SCHEMA}.meeting VALUES ({g}, {m}, {}, {arrived}, NULL, {})",
                self.shard.index,
                quote(&host())
            ),
        )?;
        // An arrival older than one wait is a stale one, of an earlier run of the group.
        let arrivals = format!(
            "SELECT idx FROM {SCHEMA}.meeting WHERE grp = {g} AND meeting = {m} AND idx >= 0
               AND arrived > {}",
            arrived - self.timeout.as_secs_f64()
        );
        let until = Instant::now() + self.timeout;
        let at = if self.shard.index == 0 {
            let mut all = false;
            if !self.poll(|| {
                all = self.arrivals(&mut conn, &arrivals)?;
                Ok(all)
            })? {
                return Err(self.missing(&mut conn, &arrivals));
            }
            let (now, _) = Self::offset(&mut conn)?;
            let at = now + START_AHEAD_S;
            Self::sql(
                &mut conn,
                &format!(
                    "REPLACE INTO {SCHEMA}.meeting VALUES ({g}, {m}, {LEAD}, {now}, {at}, {})",
                    quote(&host())
                ),
            )?;
            at
        } else {
            // A start written before this shard arrived is a stale one, of an earlier run of
            // the group that failed.
            let sql = format!(
                "SELECT start_at FROM {SCHEMA}.meeting
                  WHERE grp = {g} AND meeting = {m} AND idx = {LEAD} AND start_at > {arrived}"
            );
            let mut read = None;
            let found = self.poll(|| {
                read = Self::sql(&mut conn, &sql)?
                    .first_value()
                    .map(|v| v.parse::<f64>().unwrap_or(f64::NAN));
                Ok(read.is_some())
            })?;
            match read {
                Some(at) if found => {
                    if !self.arrivals(&mut conn, &arrivals)? {
                        return Err(self.refused(format!(
                            "a start was set before all {} shards arrived",
                            self.shard.count
                        )));
                    }
                    at
                }
                _ => return Err(self.missing(&mut conn, &arrivals)),
            }
        };
        let server_now = unix_now() + offset;
        let latest = server_now
            + until
                .saturating_duration_since(Instant::now())
                .as_secs_f64();
        let local = match start_within(at, server_now, latest) {
            Ok(()) => at - offset,
            Err(why) => return Err(self.refused(why)),
        };
        self.sleep_until(local)?;
        Ok((UNIX_EPOCH + Duration::from_secs_f64(local), offset))
    }

    /// Whether every shard of the group has arrived (the `arrivals` query's indexes are
    /// exactly 0..N-1); an index outside them fails the meeting at once: it is another
    /// group's shard or a row nobody of this group wrote, and counting it would let a shard
    /// start without one of its own.
    fn arrivals(&self, conn: &mut Conn, arrivals: &str) -> Result<bool, RunError> {
        let rows = Self::sql(conn, arrivals)?.rows;
        let mut here = vec![false; self.shard.count as usize];
        for row in &rows {
            let cell = row.first().and_then(|c| c.as_deref()).unwrap_or("NULL");
            match cell.parse::<usize>().ok().filter(|&i| i < here.len()) {
                Some(i) => here[i] = true,
                None => {
                    return Err(self.refused(format!(
                        "an arrival with index {cell} (the group has shards 0 to {})",
                        self.shard.count - 1
                    )))
                }
            }
        }
        Ok(here.iter().all(|&h| h))
    }

    /// The meeting refused for what its table says.
    fn refused(&self, why: String) -> RunError {
        failed(format!(
            "the meeting of group {} ({} shards) in {SCHEMA}.meeting is not one this shard \
             can trust: {why}; start the group again, under a new --shard-group",
            self.shard.group, self.shard.count
        ))
    }

    /// Sleeps until [`FINAL_WAIT`] before `local` (Unix seconds, this host's clock), looking
    /// at the stop flag every [`POLL`].
    fn sleep_until(&self, local: f64) -> Result<(), RunError> {
        let interrupts = qpslab_wire::interrupts();
        loop {
            if self.stop.load(Ordering::SeqCst) || qpslab_wire::interrupts() != interrupts {
                return Err(RunError::Interrupted);
            }
            let left = local - FINAL_WAIT.as_secs_f64() - unix_now();
            if left <= 0.0 {
                return Ok(());
            }
            std::thread::sleep(POLL.min(Duration::from_secs_f64(left)));
        }
    }

    /// The shards that did not arrive, named in the error.
    fn missing(&self, conn: &mut Conn, arrivals: &str) -> RunError {
        let here: Vec<u32> = Self::sql(conn, arrivals)
            .map(|r| {
                r.rows
                    .iter()
                    .filter_map(|row| row.first()?.as_deref()?.parse().ok())
                    .collect()
            })
            .unwrap_or_default();
        let missing: Vec<String> = (0..self.shard.count)
            .filter(|i| !here.contains(i))
            .map(|i| i.to_string())
            .collect();
        let who = match missing.len() {
            0 => "shard 0 did not set the start".to_string(),
            1 => format!("shard {} did not arrive", missing[0]),
            _ => format!("shards {} did not arrive", missing.join(", ")),
        };
        failed(format!(
            "{who} within {:.0} s (group {}, {} shards); nobody measures alone: start every \
             shard, or give --shard-timeout",
            self.timeout.as_secs_f64(),
            self.shard.group,
            self.shard.count
        ))
    }

    /// Removes this shard's rows of meeting `phase` (shard 0: the start and the dataset's too).
    /// Best effort: a row left behind is ignored by a later run (see [`Meeting::start`]).
    pub fn leave(&self, phase: &str) {
        let Ok(mut conn) = self.connect() else {
            return;
        };
        let (g, m) = self.key(phase);
        let mut sql = format!(
            "DELETE FROM {SCHEMA}.meeting WHERE grp = {g} AND meeting = {m} AND idx = {}",
            self.shard.index
        );
        if self.shard.index == 0 {
            sql = format!(
                "DELETE FROM {SCHEMA}.meeting WHERE grp = {g}
                   AND (meeting = {m} AND idx IN (0, {LEAD}) OR meeting = 'dataset')"
            );
        }
        let _ = conn.query(&sql);
    }

    /// Calls `done` every [`POLL`] until it says yes (true) or the timeout passes (false);
    /// [`RunError::Interrupted`] once `stop` is raised or a signal arrives.
    fn poll(&self, mut done: impl FnMut() -> Result<bool, RunError>) -> Result<bool, RunError> {
        let until = Instant::now() + self.timeout;
        let interrupts = qpslab_wire::interrupts();
        loop {
            if done()? {
                return Ok(true);
            }
            if self.stop.load(Ordering::SeqCst) || qpslab_wire::interrupts() != interrupts {
                return Err(RunError::Interrupted);
            }
            if Instant::now() >= until {
                return Ok(false);
            }
            std::thread::sleep(POLL);
        }
    }
}

/// Why a start `at` (the server's Unix seconds) read from the table cannot be met, when the
/// server's clock says `now` and the meeting's wait ends at `latest`: a start not finite
/// (`Duration` would panic on it), already past (this shard would measure a window the others
/// do not), or beyond the wait (a sleep no timeout bounds).
fn start_within(at: f64, now: f64, latest: f64) -> Result<(), String> {
    if !at.is_finite() {
        return Err(format!("its start {at} is not a time"));
    }
    if at < now {
        return Err(format!(
            "its start passed {:.3} s before this shard read it",
            now - at
        ));
    }
    if at > latest {
        // A forged start may be any double: its distance said in a few digits.
        let ahead = at - now;
        let ahead = if ahead < 1e9 {
            format!("{ahead:.0}")
        } else {
            format!("{ahead:.1e}")
        };
        return Err(format!(
            "its start is {ahead} s ahead, past the end of the wait ({:.0} s ahead; \
             --shard-timeout)",
            latest - now
        ));
    }
    Ok(())
}

/// The wait for the other shards of `plan`: `--shard-timeout`, else [`BASE_TIMEOUT_S`] plus
/// the longest settle and auto warm-up (every shard does both before it arrives).
pub fn timeout_s(plan: &qpslab_core::RunPlan) -> f64 {
    if let Some(t) = plan.shard.as_ref().and_then(|s| s.timeout_s) {
        return t;
    }
    BASE_TIMEOUT_S
        + plan.settle.as_ref().map_or(0.0, |s| s.max_s)
        + plan.warmup_auto.as_ref().map_or(0.0, |a| a.max_s)
}

/// This host's name.
pub fn host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// `s` as an SQL string literal.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_and_the_derived_timeout() {
        assert_eq!(quote("a'b\\"), "'a''b\\\\'");
        let mut p = qpslab_core::RunPlan::new(qpslab_core::WorkloadOptions::new(
            qpslab_core::WorkloadKind::OltpPointSelect,
        ));
        p.settle = None;
        assert_eq!(timeout_s(&p), BASE_TIMEOUT_S);
        p.settle = Some(qpslab_core::plan::SettleSpec {
            max_s: 120.0,
            report: None,
        });
        assert_eq!(timeout_s(&p), BASE_TIMEOUT_S + 120.0);
        p.shard = Some(qpslab_core::shard::ShardSpec {
            timeout_s: Some(5.0),
            ..Default::default()
        });
        assert_eq!(timeout_s(&p), 5.0);
    }

    #[test]
    fn a_start_is_met_only_between_now_and_the_end_of_the_wait() {
        assert_eq!(start_within(1001.0, 1000.0, 1010.0), Ok(()));
        assert_eq!(start_within(1000.0, 1000.0, 1010.0), Ok(()));
        let past = start_within(999.5, 1000.0, 1010.0).unwrap_err();
        assert!(past.contains("passed 0.500 s before"), "{past}");
        let ahead = start_within(4600.0, 1000.0, 1010.0).unwrap_err();
        assert!(
            ahead.contains("3600 s ahead, past the end of the wait (10 s"),
            "{ahead}"
        );
        for at in [1e300, f64::INFINITY, f64::NAN] {
            assert!(start_within(at, 1000.0, 1010.0).is_err(), "{at}");
        }
        assert!(start_within(1e300, 1000.0, 1010.0)
            .unwrap_err()
            .contains("its start is 1.0e300 s ahead"));
        assert!(start_within(f64::NAN, 1000.0, 1010.0)
            .unwrap_err()
            .contains("not a time"));
    }
}
