//! A log's classes as [`Work`]: which classes are compared, which are skipped and why, and each
//! compared class's sample of statements spread over the log.

use super::{ClassWork, DiffOptions, Sampled, Work};
use crate::replay::ReplayLog;
use qpslab_core::diff::SkippedClass;
use qpslab_sqllog::{Effect, Verdict};

/// The classes of `log` to compare, and those skipped, each with its reason: nothing is left
/// out silently. A class is judged by its most harmful statement (the replay's classifier).
pub fn plan(log: &ReplayLog, o: &DiffOptions) -> (Work, Vec<SkippedClass>) {
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); log.classes.len()];
    for (i, s) in log.stmts.iter().enumerate() {
        members[s.class as usize].push(i);
    }
    let mut work = Work::default();
    let mut skipped = Vec::new();
    for (class, idx) in members.iter().enumerate() {
        let Some(verdict) = idx
            .iter()
            .map(|&i| log.stmts[i].verdict)
            .max_by_key(|v| v.effect)
        else {
            continue;
        };
        let fingerprint = log.classes[class].clone();
        let count = idx.len() as u64;
        let write = verdict.effect == Effect::Write;
        if let Some(reason) = skip_reason(&verdict, o) {
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
                sql: AsRef::<[u8]>::as_ref(&log.stmts[i].sql).to_vec(),
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

/// Why a class of verdict `v` is not compared (none: it is): reads always are; writes with
/// `--allow-writes` (rolled back); what a rollback cannot undo and what acts on the server
/// never run; session statements are no class to compare.
fn skip_reason(v: &Verdict, o: &DiffOptions) -> Option<String> {
    let why = v.why;
    match v.effect {
        Effect::Read => None,
        Effect::Session => Some(format!("session statement ({why}): not compared")),
        Effect::Write if o.allow_writes => None,
        Effect::Write => Some(format!(
            "write ({why}): run with --allow-writes (rolled back)"
        )),
        Effect::Ddl => Some(format!("{why}: commits on its own, never run")),
        Effect::Destructive => Some(format!("destructive ({why}): never run")),
        Effect::Admin => Some(format!("server-level ({why}): never run")),
    }
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

    use crate::replay::tests::logged;

    fn log() -> ReplayLog {
        let mut log = ReplayLog::default();
        for i in 0..10 {
            log.add_statement(logged(1, Some(i), 0.0, "select ?"));
        }
        for sql in [
            "update t set a=?",
            "create table t",
            "set names ?",
            "shutdown",
            "drop database x",
        ] {
            log.add_statement(logged(1, Some(11), 0.0, sql));
        }
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
        // Every class not compared is listed with its reason, SHUTDOWN and SET included.
        assert_eq!(skipped.len(), 5, "{skipped:?}");
        assert!(skipped[0].reason.contains("--allow-writes"), "{skipped:?}");
        assert!(
            skipped[1].reason.contains("commits on its own"),
            "{skipped:?}"
        );
        assert!(skipped[2].reason.contains("session"), "{skipped:?}");
        assert!(skipped[3].reason.contains("server-level"), "{skipped:?}");
        assert!(skipped[4].reason.contains("destructive"), "{skipped:?}");
        let o = DiffOptions {
            allow_writes: true,
            ..o
        };
        let (work, skipped) = plan(&log(), &o);
        assert_eq!(work.classes.len(), 2);
        assert!(work.classes[1].write);
        assert_eq!(skipped.len(), 4);
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
