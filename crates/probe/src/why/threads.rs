//! The server's CPU over a phase by thread class: every OS thread's CPU time at begin and at
//! finish (`/proc/PID/task/TID/stat`), each thread's class from performance_schema's
//! `threads` (a connection served by a thread-pool worker is one OS thread listed twice:
//! it keeps one class) or else from the OS thread names (MySQL 8 names its threads; MariaDB
//! names them all after the program).

use crate::threads::{ps_threads, tasks, Task};
use qpslab_core::limits::{Class, ClassCpu, ThreadCpu};
use qpslab_wire::Conn;
use std::collections::{BTreeMap, BTreeSet};

const NOT_NAMED: &str = "performance_schema is off and the server does not name its threads";

/// The threads at the phase's begin.
pub(crate) struct Start {
    pid: u32,
    cpu: BTreeMap<u32, f64>,
    classes: BTreeMap<u32, Class>,
    ps: bool,
    /// Every CPU's ticks, for how busy the server's CPUs were.
    per_cpu: super::cpus::PerCpu,
}

impl Start {
    pub fn take(pid: u32, conn: Option<&mut Conn>, ps: bool) -> Start {
        let list = tasks(pid).unwrap_or_default();
        let (classes, _) = classes_of(&list, if ps { conn } else { None });
        Start {
            pid,
            cpu: cpu_of(&list),
            classes,
            ps,
            per_cpu: super::cpus::PerCpu::read(),
        }
    }

    /// Reads the classes again while the phase runs: its sessions connect after begin and
    /// may be gone by finish (their threads then wait in the thread cache, unnamed).
    pub fn observe(&mut self, conn: Option<&mut Conn>) {
        if !self.ps {
            return;
        }
        if let Ok(list) = tasks(self.pid) {
            let (now, _) = classes_of(&list, conn);
            merge(&mut self.classes, now);
        }
    }

    /// The CPU by class since [`Start::take`]; the classes are read again (connections open
    /// after begin).
    pub fn finish(self, server_pid: Option<u32>, conn: Option<&mut Conn>) -> ThreadCpu {
        let missing = |reason: String| ThreadCpu {
            named_by: "none".into(),
            reason: Some(reason),
            ..ThreadCpu::default()
        };
        if server_pid != Some(self.pid) {
            return missing("the server's process changed during the phase (a restart)".into());
        }
        let list = match tasks(self.pid) {
            Ok(l) if !l.is_empty() => l,
            Ok(_) => return missing("the server's threads could not be read".into()),
            Err(e) => return missing(format!("the server's threads could not be read: {e}")),
        };
        let (now, named_by) = classes_of(&list, if self.ps { conn } else { None });
        // A thread keeps the class it was last seen with; a named class is not taken back
        // by a later `other` (a connection's thread idle in the thread cache).
        let mut classes = self.classes;
        merge(&mut classes, now);
        let cpus: BTreeSet<usize> = list.iter().flat_map(|t| t.cpus.iter().copied()).collect();
        let allowed: Vec<usize> = cpus.iter().copied().collect();
        ThreadCpu {
            named_by: named_by.into(),
            allowed_cpus: (!cpus.is_empty()).then_some(cpus.len() as u32),
            allowed_busy: self
                .per_cpu
                .busy_share(&super::cpus::PerCpu::read(), &allowed),
            classes: by_class(&self.cpu, &cpu_of(&list), &classes),
            reason: (named_by == "none").then(|| NOT_NAMED.to_string()),
        }
    }
}

/// `now`'s classes over `classes`, except an `other` over a named class.
fn merge(classes: &mut BTreeMap<u32, Class>, now: BTreeMap<u32, Class>) {
    for (tid, c) in now {
        let e = classes.entry(tid).or_insert(c);
        if c != Class::Other {
            *e = c;
        }
    }
}

fn cpu_of(list: &[Task]) -> BTreeMap<u32, f64> {
    list.iter().map(|t| (t.tid, t.cpu_s)).collect()
}

/// Each thread's class and how they were named: `performance_schema` (when `conn` is given
/// and answers), `name` (the threads bear more than one name) or `none`.
fn classes_of(list: &[Task], conn: Option<&mut Conn>) -> (BTreeMap<u32, Class>, &'static str) {
    if let Some(rows) = conn.and_then(|c| ps_threads(c).ok()) {
        let named = rows.into_iter().map(|r| (r.os_id, r.name));
        let mut classes = one_class_each(named);
        // Threads performance_schema does not instrument are named by the OS, if at all.
        for t in list {
            classes.entry(t.tid).or_insert_with(|| os_class(&t.comm));
        }
        return (classes, "performance_schema");
    }
    // The kernel's own io_uring workers bear names in any server; they name nothing else.
    if list.iter().any(|t| Class::of(&t.comm) != Class::Other) {
        let classes = list.iter().map(|t| (t.tid, os_class(&t.comm))).collect();
        return (classes, "name");
    }
    let classes = list.iter().map(|t| (t.tid, os_class(&t.comm))).collect();
    (classes, "none")
}

/// The class of an OS thread name; the kernel's io_uring workers (`iou-wrk-TID`) do the
/// server's asynchronous I/O.
fn os_class(comm: &str) -> Class {
    if comm.starts_with("iou-") {
        Class::Io
    } else {
        Class::of(comm)
    }
}

/// One class per OS thread: where a thread has several names (a thread-pool worker and the
/// connection it serves), a named class wins over [`Class::Other`].
fn one_class_each(rows: impl IntoIterator<Item = (u32, String)>) -> BTreeMap<u32, Class> {
    let mut classes = BTreeMap::new();
    for (tid, name) in rows {
        let c = Class::of(&name);
        let e = classes.entry(tid).or_insert(c);
        if *e == Class::Other {
            *e = c;
        }
    }
    classes
}

/// CPU seconds per class between two snapshots (tid → seconds): a thread new since `before`
/// counts from zero, one gone by `after` adds nothing but is counted; largest first.
fn by_class(
    before: &BTreeMap<u32, f64>,
    after: &BTreeMap<u32, f64>,
    classes: &BTreeMap<u32, Class>,
) -> Vec<ClassCpu> {
    let tids: BTreeSet<u32> = before.keys().chain(after.keys()).copied().collect();
    let mut by: BTreeMap<Class, ClassCpu> = BTreeMap::new();
    for tid in tids {
        let class = classes.get(&tid).copied().unwrap_or(Class::Other);
        let s = match (before.get(&tid), after.get(&tid)) {
            (b, Some(a)) => (a - b.copied().unwrap_or(0.0)).max(0.0),
            (_, None) => 0.0,
        };
        let c = by.entry(class).or_insert(ClassCpu {
            class,
            threads: 0,
            cpu_s: 0.0,
            busiest_s: 0.0,
        });
        c.threads += 1;
        c.cpu_s += s;
        c.busiest_s = c.busiest_s.max(s);
    }
    // Clock ticks summed: kept to the millisecond, without the sum's float noise.
    let ms = |x: f64| (x * 1000.0).round() / 1000.0;
    let mut v: Vec<ClassCpu> = by
        .into_values()
        .map(|c| ClassCpu {
            cpu_s: ms(c.cpu_s),
            busiest_s: ms(c.busiest_s),
            ..c
        })
        .collect();
    v.sort_by(|a, b| b.cpu_s.total_cmp(&a.cpu_s).then(a.class.cmp(&b.class)));
    v
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_connection_idle_in_the_thread_cache_stays_a_connection() {
        let mut classes: BTreeMap<u32, Class> = [(1, Class::Connection), (2, Class::Other)]
            .into_iter()
            .collect();
        merge(
            &mut classes,
            [
                (1, Class::Other),
                (2, Class::PageCleaner),
                (3, Class::Other),
            ]
            .into_iter()
            .collect(),
        );
        assert_eq!(classes[&1], Class::Connection);
        assert_eq!(classes[&2], Class::PageCleaner);
        assert_eq!(classes[&3], Class::Other);
    }

    use super::*;

    fn task(tid: u32, comm: &str) -> Task {
        Task {
            tid,
            comm: comm.into(),
            cpu_s: 0.0,
            nice: 0,
            cpus: vec![0],
        }
    }

    #[test]
    fn cpu_is_summed_by_class_new_threads_from_zero() {
        let before = BTreeMap::from([(1, 1.0), (2, 2.0), (3, 5.0)]);
        let after = BTreeMap::from([(1, 1.5), (2, 4.0), (4, 0.75)]);
        let classes = BTreeMap::from([
            (1, Class::Other),
            (2, Class::Connection),
            (3, Class::Connection),
            (4, Class::Connection),
        ]);
        let v = by_class(&before, &after, &classes);
        assert_eq!(v[0].class, Class::Connection);
        assert_eq!((v[0].threads, v[0].cpu_s, v[0].busiest_s), (3, 2.75, 2.0));
        assert_eq!(v[1].class, Class::Other);
        assert_eq!((v[1].threads, v[1].cpu_s), (1, 0.5));
        // A counter that went back (a reused thread id) adds nothing.
        let v = by_class(&after, &before, &classes);
        assert!(v.iter().all(|c| c.cpu_s >= 0.0));
    }

    #[test]
    fn a_pool_worker_serving_a_connection_is_one_thread() {
        let rows = [
            (7, "thread/threadpool/worker_thread".to_string()),
            (7, "thread/sql/one_connection".to_string()),
            (8, "thread/sql/main".to_string()),
            (9, "thread/innodb/page_cleaner_thread".to_string()),
        ];
        let c = one_class_each(rows);
        assert_eq!(c.len(), 3);
        assert_eq!(c[&7], Class::Connection);
        assert_eq!(c[&9], Class::PageCleaner);
    }

    #[test]
    fn os_names_class_threads_only_when_they_differ() {
        let named = [
            task(1, "mysqld"),
            task(2, "connection"),
            task(3, "ib_pg_flush_co"),
        ];
        let (c, by) = classes_of(&named, None);
        assert_eq!(by, "name");
        assert_eq!((c[&2], c[&3]), (Class::Connection, Class::PageCleaner));
        let same = [
            task(1, "mariadbd"),
            task(2, "mariadbd"),
            task(3, "iou-wrk-1"),
        ];
        let (c, by) = classes_of(&same, None);
        assert_eq!(by, "none");
        assert_eq!(
            (c[&1], c[&2], c[&3]),
            (Class::Other, Class::Other, Class::Io)
        );
    }
}
