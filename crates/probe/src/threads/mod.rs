//! A local server's threads: `performance_schema.threads` (class name, type, connection id)
//! joined by `THREAD_OS_ID` with `/proc/PID/task/TID` (CPU time, nice, allowed CPUs), and the
//! placement of thread classes on CPUs ([`apply`], [`Keeper`]).
//!
//! Every MariaDB thread is named `mariadbd` in `/proc`, so only performance_schema tells a page
//! cleaner from a connection; with it off, the threads are listed without classes.
//!
//! ```no_run
//! # fn demo(conn: &mut qpslab_wire::Conn, pid: u32) -> Result<(), qpslab_probe::Error> {
//! use qpslab_core::placement::Policy;
//! let policy = Policy::parse(&["thread/innodb/page_cleaner_thread=1"]).unwrap();
//! let applied = qpslab_probe::threads::apply(pid, conn, &policy)?;
//! assert!(applied.failed().next().is_none());
//! # Ok(()) }
//! ```

mod pid;
mod place;
mod resgroup;
mod task;

pub use pid::{check_local, local_pid, server_cpus};
pub use place::{apply, Keeper, Placer};
pub use resgroup::{resource_group_sql, PriorityError, ResourceGroupSql};
pub use task::{task, tasks, Task};

use crate::error::Error;
use qpslab_wire::Conn;
use serde::Serialize;
use std::collections::BTreeMap;

/// One server thread: its OS thread joined with its performance_schema row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Thread {
    /// What `/proc` says.
    #[serde(flatten)]
    pub task: Task,
    /// Its class (`thread/innodb/page_cleaner_thread`); none without performance_schema or for
    /// an OS thread it does not instrument.
    pub class: Option<String>,
    /// `BACKGROUND` or `FOREGROUND`.
    pub kind: Option<String>,
    /// The connection it serves, for a foreground thread.
    pub connection_id: Option<u64>,
}

/// A snapshot of a server's threads.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServerThreads {
    /// The server's pid.
    pub pid: u32,
    /// Whether performance_schema named the classes.
    pub classes_known: bool,
    /// Every OS thread, by thread id.
    pub threads: Vec<Thread>,
}

/// The performance_schema row of one OS thread.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PsThread {
    pub name: String,
    pub kind: String,
    pub os_id: u32,
    pub connection_id: Option<u64>,
}

/// Whether performance_schema is on.
pub fn performance_schema_on(conn: &mut Conn) -> Result<bool, Error> {
    let v = conn.query("SELECT @@performance_schema")?;
    Ok(matches!(v.first_value(), Some("1" | "ON")))
}

/// The instrumented threads with an OS id (performance_schema must be on).
pub(crate) fn ps_threads(conn: &mut Conn) -> Result<Vec<PsThread>, Error> {
    let r = conn.query(
        "SELECT NAME, TYPE, THREAD_OS_ID, PROCESSLIST_ID FROM performance_schema.threads \
         WHERE THREAD_OS_ID IS NOT NULL",
    )?;
    let rows = r.rows.into_iter().filter_map(|row| {
        let cell = |i: usize| row.get(i).cloned().flatten();
        Some(PsThread {
            name: cell(0)?,
            kind: cell(1).unwrap_or_default(),
            os_id: cell(2)?.parse().ok()?,
            connection_id: cell(3).and_then(|c| c.parse().ok()),
        })
    });
    Ok(rows.collect())
}

/// The threads of server `pid`, named by `conn`'s performance_schema when it is on.
pub fn server_threads(pid: u32, conn: &mut Conn) -> Result<ServerThreads, Error> {
    let classes_known = performance_schema_on(conn)?;
    let ps: BTreeMap<u32, PsThread> = if classes_known {
        ps_threads(conn)?
            .into_iter()
            .map(|t| (t.os_id, t))
            .collect()
    } else {
        BTreeMap::new()
    };
    let threads = tasks(pid)?
        .into_iter()
        .map(|task| {
            let row = ps.get(&task.tid);
            Thread {
                class: row.map(|r| r.name.clone()),
                kind: row.map(|r| r.kind.clone()),
                connection_id: row.and_then(|r| r.connection_id),
                task,
            }
        })
        .collect();
    Ok(ServerThreads {
        pid,
        classes_known,
        threads,
    })
}

/// The threads of one class, summed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClassSummary {
    /// The class; `(unnamed)` for threads performance_schema does not know.
    pub class: String,
    /// Their thread ids.
    pub tids: Vec<u32>,
    /// CPU seconds (cumulative) or CPU percent of one CPU (over an interval), summed.
    pub cpu: f64,
}

impl ServerThreads {
    /// Replaces each thread's cumulative CPU seconds by its CPU percent since `earlier`, over
    /// `secs` seconds (a thread new since then counts from zero).
    pub fn rate_since(&mut self, earlier: &ServerThreads, secs: f64) {
        let before: BTreeMap<u32, f64> = earlier
            .threads
            .iter()
            .map(|t| (t.task.tid, t.task.cpu_s))
            .collect();
        for t in &mut self.threads {
            let b = before.get(&t.task.tid).copied().unwrap_or(0.0);
            t.task.cpu_s = (t.task.cpu_s - b).max(0.0) / secs.max(1e-9) * 100.0;
        }
    }

    /// Per-class sums, busiest first.
    pub fn classes(&self) -> Vec<ClassSummary> {
        let mut by: BTreeMap<&str, ClassSummary> = BTreeMap::new();
        for t in &self.threads {
            let name = t.class.as_deref().unwrap_or("(unnamed)");
            let c = by.entry(name).or_insert_with(|| ClassSummary {
                class: name.to_string(),
                tids: Vec::new(),
                cpu: 0.0,
            });
            c.tids.push(t.task.tid);
            c.cpu += t.task.cpu_s;
        }
        let mut v: Vec<ClassSummary> = by.into_values().collect();
        v.sort_by(|a, b| b.cpu.total_cmp(&a.cpu).then_with(|| a.class.cmp(&b.class)));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thread(tid: u32, class: Option<&str>, cpu_s: f64) -> Thread {
        Thread {
            task: Task {
                tid,
                comm: "mariadbd".into(),
                cpu_s,
                nice: 0,
                cpus: vec![0],
            },
            class: class.map(String::from),
            kind: None,
            connection_id: None,
        }
    }

    #[test]
    fn classes_sum_their_threads_busiest_first() {
        let mut now = ServerThreads {
            pid: 1,
            classes_known: true,
            threads: vec![
                thread(1, None, 1.0),
                thread(2, Some("thread/sql/one_connection"), 3.0),
                thread(3, Some("thread/sql/one_connection"), 4.0),
            ],
        };
        let c = now.classes();
        assert_eq!(c[0].class, "thread/sql/one_connection");
        assert_eq!((c[0].tids.clone(), c[0].cpu), (vec![2, 3], 7.0));
        assert_eq!(c[1].class, "(unnamed)");
        let before = ServerThreads {
            threads: vec![thread(2, None, 2.0)],
            ..now.clone()
        };
        now.rate_since(&before, 2.0);
        assert_eq!(now.threads[1].task.cpu_s, 50.0);
        assert_eq!(now.threads[2].task.cpu_s, 200.0);
    }
}
