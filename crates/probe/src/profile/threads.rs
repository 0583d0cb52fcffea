//! CPU per thread of a process, from `/proc/PID/task/*/stat`.

use crate::error::Error;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// One thread's name (`comm`) and CPU clock ticks (user + system, `utime + stime`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ThreadTicks {
    /// The thread's name as the kernel knows it (15 characters at most).
    pub comm: String,
    /// Clock ticks (`sysconf(_SC_CLK_TCK)` per second, usually 100).
    pub ticks: u64,
}

/// The CPU each thread of process `pid` has used so far, by TID. Fails when the process
/// does not exist; a thread that ends while being read is left out.
pub fn thread_cpu(pid: u32) -> Result<BTreeMap<u32, ThreadTicks>, Error> {
    let dir = PathBuf::from(format!("/proc/{pid}/task"));
    let entries = std::fs::read_dir(&dir).map_err(|source| Error::Io {
        path: dir.clone(),
        source,
    })?;
    let mut out = BTreeMap::new();
    for e in entries.flatten() {
        let Some(tid) = e.file_name().to_str().and_then(|s| s.parse().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        if let Some(t) = parse_task_stat(&stat) {
            out.insert(tid, t);
        }
    }
    Ok(out)
}

/// What each thread used between two readings of [`thread_cpu`]; a thread born in between
/// counts from zero, one gone by the end is left out.
pub fn thread_cpu_between(
    before: &BTreeMap<u32, ThreadTicks>,
    after: &BTreeMap<u32, ThreadTicks>,
) -> BTreeMap<u32, ThreadTicks> {
    after
        .iter()
        .map(|(tid, a)| {
            let was = before.get(tid).map_or(0, |b| b.ticks);
            let t = ThreadTicks {
                comm: a.comm.clone(),
                ticks: a.ticks.saturating_sub(was),
            };
            (*tid, t)
        })
        .collect()
}

/// `comm` and `utime + stime` of a `/proc/PID/task/TID/stat` line. The name sits in
/// parentheses and may itself hold spaces and parentheses, so fields are counted after the
/// last `)`.
fn parse_task_stat(stat: &str) -> Option<ThreadTicks> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let comm = stat.get(open + 1..close)?.to_string();
    let rest: Vec<&str> = stat.get(close + 1..)?.split_whitespace().collect();
    // After the name: state(3) ... utime is field 14, stime 15 of the whole line.
    let utime: u64 = rest.get(11)?.parse().ok()?;
    let stime: u64 = rest.get(12)?.parse().ok()?;
    Some(ThreadTicks {
        comm,
        ticks: utime + stime,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_with_an_awkward_name_is_read() {
        let line = "4242 (my (odd) thr) S 1 2 3 4 5 6 7 8 9 10 250 31 0 0 20 0 1 0";
        let t = parse_task_stat(line).unwrap();
        assert_eq!(t.comm, "my (odd) thr");
        assert_eq!(t.ticks, 281);
        assert_eq!(parse_task_stat("12 (x) S 1"), None);
    }

    #[test]
    fn the_difference_counts_new_threads_from_zero_and_drops_gone_ones() {
        let tt = |comm: &str, ticks| ThreadTicks {
            comm: comm.into(),
            ticks,
        };
        let before = BTreeMap::from([(1, tt("main", 10)), (2, tt("gone", 5))]);
        let after = BTreeMap::from([(1, tt("main", 25)), (3, tt("new", 7))]);
        let d = thread_cpu_between(&before, &after);
        assert_eq!(d, BTreeMap::from([(1, tt("main", 15)), (3, tt("new", 7))]));
    }

    #[test]
    fn this_process_has_at_least_the_calling_thread() {
        let me = thread_cpu(std::process::id()).unwrap();
        assert!(!me.is_empty());
        assert!(thread_cpu(u32::MAX).is_err());
    }
}
