//! One OS thread of a process as `/proc/PID/task/TID` shows it: CPU time, nice value and the
//! CPUs it may run on (`Cpus_allowed_list`).

use crate::error::Error;
use crate::process::{clock_ticks_per_second, parse_stat_times};
use serde::Serialize;
use std::path::PathBuf;

/// An OS thread of the server.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Task {
    /// The thread id (`THREAD_OS_ID` in performance_schema).
    pub tid: u32,
    /// Its kernel name (`comm`; every MariaDB thread is `mariadbd` unless it renamed itself).
    pub comm: String,
    /// User plus system CPU seconds since the thread started.
    pub cpu_s: f64,
    /// Its nice value.
    pub nice: i32,
    /// The CPUs it may run on.
    pub cpus: Vec<usize>,
}

/// Every thread of process `pid`; a thread that exits while it is read is left out.
pub fn tasks(pid: u32) -> Result<Vec<Task>, Error> {
    let dir = PathBuf::from(format!("/proc/{pid}/task"));
    let entries = std::fs::read_dir(&dir).map_err(|source| Error::Io { path: dir, source })?;
    let mut tids: Vec<u32> = entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    tids.sort_unstable();
    Ok(tids.into_iter().filter_map(|t| task(pid, t).ok()).collect())
}

/// One thread of process `pid`.
pub fn task(pid: u32, tid: u32) -> Result<Task, Error> {
    let dir = format!("/proc/{pid}/task/{tid}");
    let read = |name: &str| {
        let path = PathBuf::from(format!("{dir}/{name}"));
        std::fs::read_to_string(&path).map_err(|source| Error::Io { path, source })
    };
    let bad = |what: &str, detail: &str| Error::Format {
        what: format!("{dir}/{what}"),
        detail: detail.into(),
    };
    let stat = read("stat")?;
    let (utime, stime) = parse_stat_times(&stat).ok_or_else(|| bad("stat", "no utime/stime"))?;
    let nice = parse_stat_nice(&stat).ok_or_else(|| bad("stat", "no nice field"))?;
    let status = read("status")?;
    let cpus = parse_allowed_list(&status).ok_or_else(|| bad("status", "no Cpus_allowed_list"))?;
    Ok(Task {
        tid,
        comm: parse_comm(&stat).unwrap_or_default(),
        cpu_s: (utime + stime) as f64 / clock_ticks_per_second(),
        nice,
        cpus,
    })
}

/// Field 19 (nice) of a stat line, counted from the last `)` like the CPU times.
fn parse_stat_nice(stat: &str) -> Option<i32> {
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(16)?.parse().ok()
}

/// Field 2 (the command name, in parentheses).
fn parse_comm(stat: &str) -> Option<String> {
    let (open, close) = (stat.find('(')?, stat.rfind(')')?);
    Some(stat.get(open + 1..close)?.to_string())
}

/// `Cpus_allowed_list` of a status file (`0-1,3`).
pub(crate) fn parse_allowed_list(status: &str) -> Option<Vec<usize>> {
    let line = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?;
    let mut cpus = Vec::new();
    for part in line.trim().split(',') {
        match part.split_once('-') {
            Some((a, b)) => cpus.extend(a.parse::<usize>().ok()?..=b.parse().ok()?),
            None => cpus.push(part.parse().ok()?),
        }
    }
    Some(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str =
        "4242 (my (odd) name) S 1 4242 4242 0 -1 4194624 100 0 0 0 250 50 0 0 20 5 30 0 1000 0 0";

    #[test]
    fn stat_fields_are_counted_from_the_last_parenthesis() {
        assert_eq!(parse_stat_nice(STAT), Some(5));
        assert_eq!(parse_comm(STAT).as_deref(), Some("my (odd) name"));
        assert_eq!(parse_stat_times(STAT), Some((250, 50)));
    }

    #[test]
    fn allowed_lists_are_expanded() {
        let status = "Name:\tmariadbd\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1,3\n";
        assert_eq!(parse_allowed_list(status), Some(vec![0, 1, 3]));
        assert_eq!(parse_allowed_list("Name:\tx\n"), None);
    }

    #[test]
    fn this_process_has_a_task() {
        let me = std::process::id();
        let all = tasks(me).unwrap();
        assert!(all.iter().any(|t| t.tid == me && !t.cpus.is_empty()));
    }
}
