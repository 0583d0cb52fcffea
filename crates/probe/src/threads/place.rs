//! Placing thread classes on CPUs: `sched_setaffinity` and `setpriority` on each thread's
//! `THREAD_OS_ID`, checked in `/proc` afterwards. [`Placer`] remembers what it changed, so
//! connection threads go back to the server's own CPUs and nice value once their connection
//! ends (else a pinned thread waits in the thread cache and serves an unrelated connection).
//! [`Keeper`] re-applies a policy every second from a thread of its own.

use super::resgroup::{resource_group_sql, ResourceGroupSql};
use super::{performance_schema_on, ps_threads, task::task, PsThread};
use crate::error::Error;
use qpslab_core::placement::MAX_RECORDED;
use qpslab_core::placement::{Applied, Placed, PlacementRecord, Policy, CONNECTION_CLASS};
use qpslab_core::ConnectOptions;
use qpslab_wire::Conn;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Applies `policy` once to the threads of server `pid` (the caller's connection reads
/// performance_schema) and returns what each thread took. It can be called at any moment; a
/// [`Placer`] kept between calls also unpins connection threads whose connection ended.
pub fn apply(pid: u32, conn: &mut Conn, policy: &Policy) -> Result<Applied, Error> {
    Placer::new(pid, conn, policy.clone())?.tick(conn)
}

/// A thread this placer changed, and what it was serving then.
#[derive(Debug, Clone, PartialEq)]
struct Changed {
    class: String,
    connection_id: Option<u64>,
}

/// A policy applied to one server, with the memory of which threads it changed.
#[derive(Debug)]
pub struct Placer {
    pid: u32,
    policy: Policy,
    /// The server's own CPUs and nice value (its main thread's), restored on threads let go.
    original: (Vec<usize>, i32),
    changed: BTreeMap<u32, Changed>,
    /// On MySQL 8 the policy's resource groups (created by [`Placer::new`]): threads are moved
    /// with `SET RESOURCE GROUP` and the result is read back in `/proc` as on MariaDB.
    groups: Option<Vec<ResourceGroupSql>>,
}

impl Placer {
    /// Checks that the server can take `policy`: performance_schema on (it names the classes),
    /// and no connection-thread rule under `thread_handling=pool-of-threads`.
    pub fn new(pid: u32, conn: &mut Conn, policy: Policy) -> Result<Placer, Error> {
        if !performance_schema_on(conn)? {
            return Err(Error::Refused(
                "performance_schema is OFF on this server, and a placement policy needs it to \
                 find each thread class's OS id: restart the server with performance_schema=ON \
                 (sandboxes started with --pin have it)"
                    .into(),
            ));
        }
        if policy.covers_connections() && pool_of_threads(conn)? {
            return Err(Error::Refused(format!(
                "cannot pin {CONNECTION_CLASS} under thread_handling=pool-of-threads: a \
                 connection's statements run on whichever pool thread is free, so its OS thread \
                 changes; pin thread/threadpool/worker_thread or restart with \
                 thread_handling=one-thread-per-connection"
            )));
        }
        let main = task(pid, pid)?;
        let groups = resource_groups(conn, &policy)?;
        Ok(Placer {
            pid,
            policy,
            original: (main.cpus, main.nice),
            changed: BTreeMap::new(),
            groups,
        })
    }

    /// Places every thread of a class the policy names that is new since the last call, and
    /// lets go of connection threads whose connection ended.
    pub fn tick(&mut self, conn: &mut Conn) -> Result<Applied, Error> {
        let rows = ps_threads(conn)?;
        // Our own connection's thread ends with it: placing it would leave it pinned in the
        // thread cache.
        let own = u64::from(conn.connection_id());
        let mut applied = Applied::default();
        let mut moved = Vec::new();
        for row in rows.iter().filter(|r| r.connection_id != Some(own)) {
            let Some(rule) = self.policy.rule_for(&row.name) else {
                continue;
            };
            let now = Changed {
                class: row.name.clone(),
                connection_id: row.connection_id,
            };
            if self.changed.get(&row.os_id) == Some(&now) {
                continue;
            }
            self.changed.insert(row.os_id, now);
            match self.groups {
                None => applied
                    .placed
                    .push(place(self.pid, row, &rule.cpus, rule.nice)),
                Some(_) => moved.push((row, rule.cpus.clone(), rule.nice)),
            }
        }
        if let (Some(groups), false) = (&self.groups, moved.is_empty()) {
            assign_groups(conn, groups, own)?;
            for (row, cpus, nice) in moved {
                applied
                    .placed
                    .push(verify(self.pid, row, &cpus, nice, None));
            }
        }
        self.release_ended(&rows);
        Ok(applied)
    }

    /// Connection threads no longer serving the connection they were placed for.
    fn release_ended(&mut self, rows: &[PsThread]) {
        let live: BTreeMap<u32, Option<u64>> =
            rows.iter().map(|r| (r.os_id, r.connection_id)).collect();
        let ended: Vec<u32> = self
            .changed
            .iter()
            .filter(|(tid, c)| {
                c.class == CONNECTION_CLASS && live.get(tid) != Some(&c.connection_id)
            })
            .map(|(tid, _)| *tid)
            .collect();
        for tid in ended {
            self.release(tid);
        }
    }

    /// Gives a thread back the server's own CPUs and nice value (a thread gone is fine).
    fn release(&mut self, tid: u32) {
        self.changed.remove(&tid);
        let _ = set_affinity(tid, &self.original.0);
        let _ = set_nice(tid, self.original.1);
    }

    /// Lets go of connection threads only (the others keep the policy), or of every thread.
    pub fn restore(&mut self, all: bool) {
        let tids: Vec<u32> = self
            .changed
            .iter()
            .filter(|(_, c)| all || c.class == CONNECTION_CLASS)
            .map(|(tid, _)| *tid)
            .collect();
        for tid in tids {
            self.release(tid);
        }
    }
}

fn pool_of_threads(conn: &mut Conn) -> Result<bool, Error> {
    let v = conn.query("SELECT @@thread_handling")?;
    Ok(v.first_value() == Some("pool-of-threads"))
}

/// Sets one thread's CPUs and nice value, then reads them back.
fn place(pid: u32, row: &PsThread, cpus: &[usize], nice: Option<i32>) -> Placed {
    let mut error = set_affinity(row.os_id, cpus).err();
    if let (None, Some(n)) = (&error, nice) {
        error = set_nice(row.os_id, n).err();
    }
    verify(pid, row, cpus, nice, error)
}

/// Whether this server places threads through resource groups: MySQL 8 and later (MariaDB
/// has none).
pub fn uses_resource_groups(mariadb: bool, version: &str) -> bool {
    let major = version
        .split('.')
        .next()
        .and_then(|m| m.parse::<u32>().ok());
    !mariadb && major.is_some_and(|m| m >= 8)
}

/// MySQL 8: creates the policy's resource groups (one already there is reused); none elsewhere.
fn resource_groups(
    conn: &mut Conn,
    policy: &Policy,
) -> Result<Option<Vec<ResourceGroupSql>>, Error> {
    if !uses_resource_groups(conn.is_mariadb(), conn.server_version()) {
        return Ok(None);
    }
    let groups = resource_group_sql(policy).map_err(|e| Error::Refused(e.to_string()))?;
    for g in &groups {
        match conn.execute(&g.create) {
            // ER_RESOURCE_GROUP_EXISTS: created by an earlier placement of the same policy.
            Err(e) if e.server_code() == Some(3650) => {}
            r => {
                r?;
            }
        }
    }
    Ok(Some(groups))
}

/// Moves every thread of each group's class into it (not our own connection's thread).
fn assign_groups(conn: &mut Conn, groups: &[ResourceGroupSql], own: u64) -> Result<(), Error> {
    let own_thread = conn
        .query(&format!(
            "SELECT THREAD_ID FROM performance_schema.threads WHERE PROCESSLIST_ID = {own}"
        ))?
        .first_value()
        .and_then(|v| v.parse::<u64>().ok());
    for g in groups {
        let ids: Vec<u64> = conn
            .query(&g.find_threads)?
            .rows
            .iter()
            .filter_map(|r| r.first().cloned().flatten()?.parse().ok())
            .filter(|id| Some(*id) != own_thread)
            .collect();
        if let Some(sql) = g.assign(&ids) {
            conn.execute(&sql)?;
        }
    }
    Ok(())
}

/// Reads one thread's CPUs and nice value back from `/proc` after it was placed.
fn verify(
    pid: u32,
    row: &PsThread,
    cpus: &[usize],
    nice: Option<i32>,
    error: Option<String>,
) -> Placed {
    let mut error = error;
    let read = task(pid, row.os_id);
    let actual = read.as_ref().map(|t| t.cpus.clone()).unwrap_or_default();
    let took = error.is_none()
        && actual == cpus
        && read
            .as_ref()
            .is_ok_and(|t| nice.is_none_or(|n| t.nice == n));
    if !took && error.is_none() {
        error = Some(match read {
            Ok(t) => format!("/proc shows CPUs {:?}, nice {}", t.cpus, t.nice),
            Err(e) => e.to_string(),
        });
    }
    Placed {
        class: row.name.clone(),
        tid: row.os_id,
        cpus: cpus.to_vec(),
        nice,
        took,
        actual,
        error,
    }
}

fn set_affinity(tid: u32, cpus: &[usize]) -> Result<(), String> {
    if let Some(c) = cpus.iter().find(|c| **c >= libc::CPU_SETSIZE as usize) {
        return Err(format!("CPU {c} is beyond CPU_SETSIZE"));
    }
    // SAFETY: cpu_set_t is plain data and all zeroes is the empty set; every CPU was checked to
    // be below CPU_SETSIZE, so CPU_SET stays inside the set.
    let rc = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for c in cpus {
            libc::CPU_SET(*c, &mut set);
        }
        libc::sched_setaffinity(tid as libc::pid_t, std::mem::size_of_val(&set), &set)
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(format!(
            "sched_setaffinity: {}",
            std::io::Error::last_os_error()
        ))
    }
}

fn set_nice(tid: u32, nice: i32) -> Result<(), String> {
    // SAFETY: setpriority takes plain integers; on Linux PRIO_PROCESS with a thread id changes
    // that one thread.
    let rc = unsafe { libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, nice) };
    if rc == 0 {
        Ok(())
    } else {
        Err(format!("setpriority: {}", std::io::Error::last_os_error()))
    }
}

/// A policy kept on a server while a run lasts: applied every second to new threads of its
/// classes from a thread with its own connection. [`Keeper::stop`] (or dropping it, on an
/// error or an interrupt) stops that thread and lets go of connection threads.
#[derive(Debug)]
pub struct Keeper {
    stop: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<(Placer, PlacementRecord)>>,
    initial: PlacementRecord,
}

impl Keeper {
    /// Checks the policy, applies it once (so the run starts placed) and starts re-applying it.
    pub fn start(pid: u32, opts: &ConnectOptions, policy: &Policy) -> Result<Keeper, Error> {
        let mut conn = Conn::connect(opts)?;
        let mut placer = Placer::new(pid, &mut conn, policy.clone())?;
        let mut record = PlacementRecord {
            policy: policy.clone(),
            ..PlacementRecord::default()
        };
        add(&mut record, placer.tick(&mut conn)?);
        let initial = record.clone();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::Builder::new()
            .name("qpslab-pin".into())
            .spawn(move || keep(placer, conn, record, &flag))
            .map_err(|e| Error::Refused(format!("cannot start the placement thread: {e}")))?;
        Ok(Keeper {
            stop,
            handle: Some(handle),
            initial,
        })
    }

    /// The policy and the threads placed when it started.
    pub fn initial(&self) -> &PlacementRecord {
        &self.initial
    }

    /// Stops re-applying, lets go of connection threads (or of every thread placed, with
    /// `restore_all`) and returns every thread placed meanwhile.
    pub fn stop(mut self, restore_all: bool) -> PlacementRecord {
        self.finish(restore_all)
    }

    fn finish(&mut self, restore_all: bool) -> PlacementRecord {
        self.stop.store(true, Ordering::Release);
        match self.handle.take().map(|h| h.join()) {
            Some(Ok((mut placer, record))) => {
                placer.restore(restore_all);
                record
            }
            Some(Err(_)) => PlacementRecord {
                errors: vec!["the placement thread panicked".into()],
                ..self.initial.clone()
            },
            None => self.initial.clone(),
        }
    }
}

impl Drop for Keeper {
    fn drop(&mut self) {
        if self.handle.is_some() {
            self.finish(false);
        }
    }
}

fn add(record: &mut PlacementRecord, applied: Applied) {
    for p in applied.placed {
        if record.applied.placed.len() < MAX_RECORDED {
            record.applied.placed.push(p);
        } else {
            record.more += 1;
        }
    }
}

fn keep(
    mut placer: Placer,
    mut conn: Conn,
    mut record: PlacementRecord,
    stop: &AtomicBool,
) -> (Placer, PlacementRecord) {
    let tick = Duration::from_millis(100);
    let mut waited = Duration::ZERO;
    while !stop.load(Ordering::Acquire) {
        std::thread::sleep(tick);
        waited += tick;
        if waited < Duration::from_secs(1) {
            continue;
        }
        waited = Duration::ZERO;
        match placer.tick(&mut conn) {
            Ok(a) => add(&mut record, a),
            Err(e) if !record.errors.contains(&e.to_string()) => record.errors.push(e.to_string()),
            Err(_) => {}
        }
    }
    (placer, record)
}

#[cfg(test)]
mod tests {
    use super::uses_resource_groups;

    #[test]
    fn only_mysql_8_and_later_places_through_resource_groups() {
        assert!(uses_resource_groups(false, "8.0.36"));
        assert!(uses_resource_groups(false, "8.4.2-log"));
        assert!(uses_resource_groups(false, "9.1.0"));
        assert!(!uses_resource_groups(false, "5.7.44"));
        assert!(!uses_resource_groups(true, "10.11.19-MariaDB-0+deb12u1"));
        assert!(!uses_resource_groups(true, "11.4.2-MariaDB"));
        assert!(!uses_resource_groups(false, "garbage"));
    }
}
