//! A log's classes as [`Work`]: which classes are compared, which are skipped and why, and each
//! compared class's sample of statements spread over the log.

use super::{ClassWork, DiffOptions, Sampled, Work};
use crate::replay::{Kind, ReplayLog};
use qpslab_core::diff::SkippedClass;

/// Statements that commit on their own (DDL, account and table administration): never run,
/// even with `--allow-writes`, since a rollback cannot undo them.
const NON_TRANSACTIONAL: [&str; 14] = [
    "alter", "analyze", "create", "drop", "flush", "grant", "install", "load", "lock", "optimize",
    "rename", "repair", "revoke", "truncate",
];

/// The classes of `log` to compare, and those skipped. `Other` statements (SET, USE, BEGIN...)
/// are no class to compare and are not listed.
pub fn plan(log: &ReplayLog, o: &DiffOptions) -> (Work, Vec<SkippedClass>) {
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); log.classes.len()];
    for (i, s) in log.stmts.iter().enumerate() {
        members[s.class as usize].push(i);
    }
    let mut work = Work::default();
    let mut skipped = Vec::new();
    for (class, idx) in members.iter().enumerate() {
        let Some(&first) = idx.first() else { continue };
        let kind = log.stmts[first].kind;
        let fingerprint = log.classes[class].clone();
        let count = idx.len() as u64;
        if kind == Kind::Other {
            continue;
        }
        let write = kind == Kind::Write;
        if let Some(reason) = write.then(|| skip_reason(&fingerprint, o)).flatten() {
            skipped.push(SkippedClass {
                fingerprint,
                count,
                reason,
            });
            continue;
        }
        let sample = spread(idx, o.sample)
            .into_iter()
            .map(|i| Sampled {
                sql: log.stmts[i].sql.clone(),
                db: log.stmts[i].db.clone(),
            })
            .collect();
        work.classes.push(ClassWork {
            fingerprint,
            count,
            write,
            sample,
        });
    }
    (work, skipped)
}

/// Keeps the `n` classes of `work` with the most statements (in the log's order).
pub fn most_frequent(work: &mut Work, n: usize) {
    let mut counts: Vec<u64> = work.classes.iter().map(|c| c.count).collect();
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let Some(&floor) = counts.get(n.saturating_sub(1)) else {
        return;
    };
    let mut at_floor = n - counts.iter().filter(|&&c| c > floor).count();
    work.classes.retain(|c| {
        let keep = c.count > floor || (c.count == floor && at_floor > 0);
        if keep && c.count == floor {
            at_floor -= 1;
        }
        keep
    });
}

/// Why a write class is not run: always for statements a rollback cannot undo, otherwise
/// unless `--allow-writes`.
fn skip_reason(fingerprint: &str, o: &DiffOptions) -> Option<String> {
    let first = fingerprint
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    if NON_TRANSACTIONAL.contains(&first.as_str()) {
        return Some(format!(
            "{} commits on its own: never run",
            first.to_uppercase()
        ));
    }
    (!o.allow_writes).then(|| "write: run with --allow-writes (rolled back)".to_string())
}

/// Up to `k` of `idx`, evenly spread (first, ..., near the last).
fn spread(idx: &[usize], k: usize) -> Vec<usize> {
    let n = idx.len();
    let k = k.clamp(1, n.max(1));
    (0..k).map(|j| idx[j * n / k]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::Logged;

    fn logged(conn: u64, start_s: Option<i64>, _q: f64, sql: &str, kind: Kind) -> Logged {
        Logged {
            conn,
            start_us: start_s.map(|s| s * 1_000_000),
            query_s: 0.0,
            sql: sql.to_string(),
            fingerprint: sql.to_string(),
            kind,
            db: None,
        }
    }

    fn log() -> ReplayLog {
        let mut log = ReplayLog::default();
        for i in 0..10 {
            log.add_statement(logged(1, Some(i), 0.0, "select ?", Kind::Read));
        }
        log.add_statement(logged(1, Some(11), 0.0, "update t set a=?", Kind::Write));
        log.add_statement(logged(1, Some(12), 0.0, "create table t", Kind::Write));
        log.add_statement(logged(1, Some(13), 0.0, "set names ?", Kind::Other));
        log
    }

    #[test]
    fn samples_spread_over_the_log_and_writes_are_skipped_unless_allowed() {
        let o = DiffOptions {
            sample: 4,
            ..Default::default()
        };
        let (work, skipped) = plan(&log(), &o);
        assert_eq!(work.classes.len(), 1);
        assert_eq!(work.classes[0].count, 10);
        assert_eq!(work.classes[0].sample.len(), 4);
        assert_eq!(skipped.len(), 2);
        assert!(skipped[0].reason.contains("--allow-writes"), "{skipped:?}");
        assert!(skipped[1].reason.contains("CREATE"), "{skipped:?}");
        let o = DiffOptions {
            allow_writes: true,
            ..o
        };
        let (work, skipped) = plan(&log(), &o);
        assert_eq!(work.classes.len(), 2);
        assert!(work.classes[1].write);
        assert_eq!(skipped.len(), 1);
    }

    #[test]
    fn limit_keeps_the_most_frequent_classes_in_log_order() {
        let class = |fingerprint: &str, count| ClassWork {
            fingerprint: fingerprint.into(),
            count,
            write: false,
            sample: Vec::new(),
        };
        let mut work = Work {
            classes: vec![class("a", 3), class("b", 3), class("c", 5), class("d", 1)],
        };
        most_frequent(&mut work, 2);
        let names: Vec<&str> = work
            .classes
            .iter()
            .map(|c| c.fingerprint.as_str())
            .collect();
        assert_eq!(names, ["a", "c"]);
    }

    #[test]
    fn spread_takes_evenly_spaced_members() {
        assert_eq!(spread(&[0, 1, 2, 3, 4, 5, 6, 7], 4), [0, 2, 4, 6]);
        assert_eq!(spread(&[3, 9], 20), [3, 9]);
    }
}
