//! Per-execution session counters of a class on one side: `SHOW SESSION STATUS` before and
//! after running the class's sample on a dedicated connection, minus what the `SHOW` itself
//! adds (measured back to back), divided by the executions. Only session-scoped counters
//! (`Handler_*`) are read; MariaDB's `Innodb_*` status is global and would count other sessions.

use super::session::SideConn;
use super::ClassWork;
use std::collections::BTreeMap;

/// Times the sample runs for the counters, so per-execution values are averages.
const PASSES: usize = 3;

type Counters = BTreeMap<String, f64>;

fn status(conn: &mut SideConn) -> Result<Counters, qpslab_wire::Error> {
    let r = conn.guard(|c| c.query("SHOW SESSION STATUS LIKE 'Handler%'"))?;
    Ok(r.rows
        .iter()
        .filter_map(|row| {
            let name = row.first()?.as_ref()?;
            let value = row.get(1)?.as_ref()?.parse().ok()?;
            Some((name.clone(), value))
        })
        .collect())
}

/// `after − before` per counter.
pub fn delta(before: &Counters, after: &Counters) -> Counters {
    after
        .iter()
        .map(|(k, v)| (k.clone(), v - before.get(k).copied().unwrap_or(0.0)))
        .collect()
}

/// The per-execution counter deltas of running `c`'s sample on `conn` (a connection used for
/// nothing else meanwhile).
pub fn measure(conn: &mut SideConn, c: &ClassWork) -> Result<Counters, qpslab_wire::Error> {
    let s0 = status(conn)?;
    let s1 = status(conn)?;
    let show = delta(&s0, &s1);
    let mut lat = Vec::new();
    for _ in 0..PASSES {
        conn.run_class(c, &mut lat)?;
    }
    let s2 = status(conn)?;
    let executions = lat.len().max(1) as f64;
    Ok(delta(&s1, &s2)
        .into_iter()
        .map(|(k, v)| {
            let own = show.get(&k).copied().unwrap_or(0.0);
            (k, ((v - own) / executions).max(0.0))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_delta_is_after_minus_before_and_new_counters_start_at_zero() {
        let before = [("a".to_string(), 5.0)].into_iter().collect();
        let after = [("a".to_string(), 8.0), ("b".to_string(), 2.0)]
            .into_iter()
            .collect();
        let d = super::delta(&before, &after);
        assert_eq!(d["a"], 3.0);
        assert_eq!(d["b"], 2.0);
    }
}
