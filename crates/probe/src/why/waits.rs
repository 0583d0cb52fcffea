//! The sessions' waits over a phase: performance_schema's wait summary of the connected
//! accounts (picoseconds; background threads' waits left out) at begin and at finish, plus InnoDB's row lock time from the status counters; with
//! performance_schema off, the row lock time alone.

use super::first_value;
use qpslab_core::limits::{WaitKind, WaitTime, Waits};
use qpslab_wire::Conn;
use std::collections::BTreeMap;

/// The sessions' waits only: summed over the accounts that connected (background threads have
/// no user), kept by the server after a session disconnects.
const SUMMARY: &str = "SELECT EVENT_NAME, SUM(COUNT_STAR), SUM(SUM_TIMER_WAIT) \
     FROM performance_schema.events_waits_summary_by_user_by_event_name \
     WHERE USER IS NOT NULL AND COUNT_STAR > 0 GROUP BY EVENT_NAME";
const SYNCH_TIMED: &str = "SELECT COUNT(*) FROM performance_schema.setup_instruments \
     WHERE NAME LIKE 'wait/synch/%' AND ENABLED = 'YES' AND TIMED = 'YES'";
const SYNCH_OFF: &str = "the wait/synch instruments are disabled: latches are not timed; start \
     the server with performance_schema_instrument='wait/synch/%=ON'";
const PS_OFF: &str =
    "performance_schema is off: waits are read from the status counters (row lock time only)";

/// Event name → (waits, picoseconds waited).
type Summary = BTreeMap<String, (u64, u64)>;

/// The counters at the phase's begin.
pub(crate) struct Start {
    /// The wait summary, or why it could not be read; `None` with performance_schema off.
    summary: Option<Result<Summary, String>>,
    /// Why the summary is incomplete (latches untimed).
    partial: Option<String>,
    row_locks: Result<RowLocks, String>,
}

/// `Innodb_row_lock_waits` and `Innodb_row_lock_time` (milliseconds).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct RowLocks {
    waits: u64,
    ms: u64,
}

impl Start {
    /// `reachable`: whether the server answered at all; `ps`: whether performance_schema is on.
    pub fn take(conn: Option<&mut Conn>, reachable: bool, ps: bool) -> Start {
        let Some(conn) = conn.filter(|_| reachable) else {
            let why = "the server did not answer at the phase's begin".to_string();
            return Start {
                summary: None,
                partial: None,
                row_locks: Err(why),
            };
        };
        let (summary, partial) = if ps {
            let partial = match first_value(conn, SYNCH_TIMED) {
                Ok(Some(n)) if n == "0" => Some(SYNCH_OFF.to_string()),
                _ => None,
            };
            (Some(summary(conn)), partial)
        } else {
            (None, None)
        };
        Start {
            summary,
            partial,
            row_locks: row_locks(conn),
        }
    }

    /// The waits since [`Start::take`].
    pub fn finish(self, conn: Option<&mut Conn>) -> Waits {
        let mut conn = conn;
        let (source, mut events, mut reason) = match self.summary {
            None => ("status", Vec::new(), Some(PS_OFF.to_string())),
            Some(before) => {
                let after = match conn.as_deref_mut() {
                    Some(c) => summary(c),
                    None => Err("the server did not answer at the phase's end".into()),
                };
                match (before, after) {
                    (Ok(b), Ok(a)) => ("performance_schema", summary_delta(&b, &a), self.partial),
                    (Err(e), _) | (_, Err(e)) => (
                        "performance_schema",
                        Vec::new(),
                        Some(format!("performance_schema's wait summary: {e}")),
                    ),
                }
            }
        };
        let after = match conn {
            Some(c) => row_locks(c),
            None => Err("the server did not answer at the phase's end".into()),
        };
        match (self.row_locks, after) {
            (Ok(b), Ok(a)) => events.extend(row_lock_event(b, a)),
            (Err(e), _) | (_, Err(e)) => {
                let why = format!("row lock time: {e}");
                reason = Some(match reason {
                    Some(r) => format!("{r}; {why}"),
                    None => why,
                });
            }
        }
        events.sort_by(|a, b| b.seconds.total_cmp(&a.seconds).then(a.name.cmp(&b.name)));
        Waits {
            source: source.into(),
            events,
            reason,
        }
    }
}

fn summary(conn: &mut Conn) -> Result<Summary, String> {
    let r = conn.query(SUMMARY).map_err(|e| e.to_string())?;
    Ok(parse_summary(r.rows))
}

fn parse_summary(rows: Vec<Vec<Option<String>>>) -> Summary {
    rows.into_iter()
        .filter_map(|row| {
            let cell = |i: usize| row.get(i).cloned().flatten();
            let n = cell(1)?.parse().ok()?;
            let ps = cell(2).and_then(|s| s.parse().ok()).unwrap_or(0);
            Some((cell(0)?, (n, ps)))
        })
        .collect()
}

/// The events waited on between two summaries, those with time waited; `idle` (a session
/// waiting for its client's next statement) is not a wait in the server.
fn summary_delta(before: &Summary, after: &Summary) -> Vec<WaitTime> {
    after
        .iter()
        .filter(|(name, _)| name.as_str() != "idle")
        .filter_map(|(name, &(n, ps))| {
            let (n0, ps0) = before.get(name).copied().unwrap_or((0, 0));
            let ps = ps.checked_sub(ps0).filter(|d| *d > 0)?;
            Some(WaitTime {
                name: name.clone(),
                kind: WaitKind::of(name),
                seconds: ps as f64 / 1e12,
                count: n.saturating_sub(n0),
            })
        })
        .collect()
}

fn row_locks(conn: &mut Conn) -> Result<RowLocks, String> {
    let r = conn
        .query("SHOW GLOBAL STATUS LIKE 'Innodb_row_lock_%'")
        .map_err(|e| e.to_string())?;
    let mut out = RowLocks::default();
    let mut seen = false;
    for row in r.rows {
        let cell = |i: usize| row.get(i).cloned().flatten().unwrap_or_default();
        let v = cell(1).parse().unwrap_or(0);
        match cell(0).as_str() {
            "Innodb_row_lock_waits" => out.waits = v,
            "Innodb_row_lock_time" => (out.ms, seen) = (v, true),
            _ => {}
        }
    }
    seen.then_some(out)
        .ok_or_else(|| "the server has no Innodb_row_lock_time".into())
}

/// The row lock waits between two readings, when there were any.
fn row_lock_event(before: RowLocks, after: RowLocks) -> Option<WaitTime> {
    let ms = after.ms.saturating_sub(before.ms);
    let n = after.waits.saturating_sub(before.waits);
    (ms > 0 || n > 0).then(|| WaitTime {
        name: "row lock".into(),
        kind: WaitKind::RowLock,
        seconds: ms as f64 / 1000.0,
        count: n,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, n: u64, ps: u64) -> Vec<Option<String>> {
        vec![Some(name.into()), Some(n.to_string()), Some(ps.to_string())]
    }

    #[test]
    fn waits_are_the_summary_change_in_seconds() {
        let before = parse_summary(vec![
            row("wait/synch/mutex/innodb/lock_mutex", 10, 1_000_000),
            row("wait/io/file/innodb/innodb_log_file", 5, 2_000_000_000_000),
            row("idle", 1, 5),
            vec![Some("broken".into()), None, None],
        ]);
        assert_eq!(before.len(), 3);
        let after = parse_summary(vec![
            row("wait/synch/mutex/innodb/lock_mutex", 10, 1_000_000),
            row("wait/io/file/innodb/innodb_log_file", 15, 3_500_000_000_000),
            row("wait/lock/table/sql/handler", 4, 500_000_000_000),
            row("idle", 9, 9_000_000_000_000),
        ]);
        let mut d = summary_delta(&before, &after);
        d.sort_by(|a, b| b.seconds.total_cmp(&a.seconds));
        assert_eq!(d.len(), 2, "{d:?}");
        assert_eq!(d[0].name, "wait/io/file/innodb/innodb_log_file");
        assert_eq!(
            (d[0].kind, d[0].seconds, d[0].count),
            (WaitKind::LogIo, 1.5, 10)
        );
        assert_eq!(
            (d[1].kind, d[1].seconds, d[1].count),
            (WaitKind::TableLock, 0.5, 4)
        );
    }

    #[test]
    fn row_lock_time_is_milliseconds() {
        let b = RowLocks { waits: 2, ms: 100 };
        let a = RowLocks { waits: 7, ms: 2600 };
        let e = row_lock_event(b, a).unwrap();
        assert_eq!((e.kind, e.seconds, e.count), (WaitKind::RowLock, 2.5, 5));
        assert_eq!(row_lock_event(a, a), None);
        // Counters that went back (a restart) are no waits.
        assert_eq!(row_lock_event(a, b), None);
    }
}
