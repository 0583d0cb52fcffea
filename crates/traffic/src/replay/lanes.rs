//! Planning a sessions-mode replay: which of our sessions (lanes) replays which original
//! connections, and when each statement is due.
//!
//! Connections are taken in order of their first appearance in the log's clock; each goes to a
//! lane that is free by then (its previous connection ended at or before this one's start),
//! else to a new lane, else (at the `--threads` cap) to the lane that frees first, where it
//! waits. That is interval scheduling: with no cap the lane count is the log's peak number of
//! connections open at once.

use super::ReplayLog;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

/// The statements (indices into [`ReplayLog::stmts`]) each lane replays, in order.
pub type Lanes = Vec<Vec<usize>>;

/// Gives the log's connections to lanes, at most `cap` of them (none: as many as needed).
pub fn plan(log: &ReplayLog, cap: Option<u32>) -> Lanes {
    let mut by_conn: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    for (i, s) in log.stmts.iter().enumerate() {
        by_conn.entry(s.conn).or_default().push(i);
    }
    let mut conns: Vec<(i64, i64, u64)> = by_conn
        .keys()
        .map(|c| {
            let (start, end) = log.spans.get(c).copied().unwrap_or((0, 0));
            (start, end, *c)
        })
        .collect();
    conns.sort_unstable();
    let cap = cap.map_or(usize::MAX, |c| c.max(1) as usize);
    let mut lanes: Lanes = Vec::new();
    // (when the lane is free, lane index), earliest first.
    let mut free: BinaryHeap<Reverse<(i64, usize)>> = BinaryHeap::new();
    for (start, end, conn) in conns {
        let lane = match free.peek() {
            Some(&Reverse((at, lane))) if at <= start || lanes.len() >= cap => {
                free.pop();
                // A connection that waits for its lane ends that much later.
                (lane, end + (at - start).max(0))
            }
            _ => {
                lanes.push(Vec::new());
                (lanes.len() - 1, end)
            }
        };
        lanes[lane.0].extend(&by_conn[&conn]);
        free.push(Reverse((lane.1, lane.0)));
    }
    lanes
}

/// When each statement is due, µs after the replay's start: its start in the log's clock minus
/// the log's first start, divided by `speed` (0: everything is due at once, so only the order
/// counts).
pub fn due_us(log: &ReplayLog, speed: f64) -> Vec<u64> {
    let first = log.stmts.iter().map(|s| s.start_us).min().unwrap_or(0);
    log.stmts
        .iter()
        .map(|s| {
            if speed > 0.0 {
                ((s.start_us - first) as f64 / speed) as u64
            } else {
                0
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::tests::logged;

    /// A log whose connections `(conn, first second, last second)` each run one statement at
    /// each end of their lifetime.
    fn log_of(conns: &[(u64, i64, i64)]) -> ReplayLog {
        let mut log = ReplayLog::default();
        let mut events: Vec<(i64, u64)> = Vec::new();
        for &(c, a, b) in conns {
            events.push((a, c));
            events.push((b, c));
        }
        events.sort();
        for (t, c) in events {
            log.add_statement(logged(c, Some(t), 0.0, "select 1"));
        }
        log
    }

    fn conns_of(log: &ReplayLog, lanes: &Lanes) -> Vec<Vec<u64>> {
        lanes
            .iter()
            .map(|l| {
                let mut c: Vec<u64> = l.iter().map(|&i| log.stmts[i].conn).collect();
                c.dedup();
                c
            })
            .collect()
    }

    #[test]
    fn connections_that_do_not_overlap_share_a_lane() {
        // 1: 0–2, 2: 1–3, 3: 3–5 (after 1 ended), 4: 4–6 (after 2 ended).
        let log = log_of(&[(1, 0, 2), (2, 1, 3), (3, 3, 5), (4, 4, 6)]);
        let lanes = plan(&log, None);
        assert_eq!(conns_of(&log, &lanes), [vec![1, 3], vec![2, 4]]);
        // Every statement once, each lane in log order.
        let mut all: Vec<usize> = lanes.concat();
        all.sort();
        assert_eq!(all, (0..log.stmts.len()).collect::<Vec<_>>());
        for l in &lanes {
            assert!(l.windows(2).all(|w| w[0] < w[1]), "{l:?}");
        }
    }

    #[test]
    fn peak_concurrency_is_the_lane_count_and_a_cap_makes_connections_wait() {
        let log = log_of(&[(1, 0, 9), (2, 1, 9), (3, 2, 9), (4, 10, 11)]);
        assert_eq!(plan(&log, None).len(), 3);
        let capped = plan(&log, Some(2));
        assert_eq!(capped.len(), 2);
        // 3 waits for the lane that frees first (1's, at 9); 4 then takes 2's lane (free at 9,
        // before 3's delayed end).
        assert_eq!(conns_of(&log, &capped), [vec![1, 3], vec![2, 4]]);
    }

    #[test]
    fn due_times_scale_with_speed() {
        let log = log_of(&[(1, 5, 8)]);
        assert_eq!(due_us(&log, 1.0), [0, 3_000_000]);
        assert_eq!(due_us(&log, 3.0), [0, 1_000_000]);
        assert_eq!(due_us(&log, 0.0), [0, 0]);
    }
}
