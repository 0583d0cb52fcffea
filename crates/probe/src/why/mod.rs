//! What a phase's limiter verdict is decided from, beyond throughput: the server's CPU by
//! thread class ([`threads`]), the sessions' waits ([`waits`]), the datadir's device
//! ([`disk`]), the network's cost ([`net`]) and MariaDB's thread pool ([`pool`]).
//!
//! Each is read at the phase's begin and finish only (the thread pool's queue also on each
//! report tick, when the pool is on; the thread classes once more on the first tick, with the
//! sessions connected) through the sampler's control connection, and becomes
//! one whole-phase reading. A source that cannot be read gives a reading that says why, never
//! an error of the phase.

mod cpus;
mod disk;
mod net;
mod pool;
mod threads;
mod waits;

use qpslab_core::telemetry::Reading;
use qpslab_core::Endpoint;
use qpslab_wire::Conn;
use std::time::Instant;

/// The server facts the readings depend on, read once at begin (through SHOW, which the
/// server does not count as the sessions' `Com_select`).
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Facts {
    pub performance_schema: bool,
    pub datadir: Option<String>,
    pub thread_handling: Option<String>,
    pub thread_pool_size: Option<u32>,
}

impl Facts {
    fn read(conn: &mut Conn) -> Option<Facts> {
        let r = conn
            .query(
                "SHOW GLOBAL VARIABLES WHERE Variable_name IN \
                 ('performance_schema', 'datadir', 'thread_handling', 'thread_pool_size')",
            )
            .ok()?;
        Some(Facts::from_rows(r.rows))
    }

    fn from_rows(rows: Vec<Vec<Option<String>>>) -> Facts {
        let mut f = Facts::default();
        for row in rows {
            let (Some(Some(name)), Some(Some(value))) = (row.first(), row.get(1)) else {
                continue;
            };
            let value = (!value.is_empty()).then(|| value.clone());
            match name.to_ascii_lowercase().as_str() {
                "performance_schema" => {
                    f.performance_schema = matches!(value.as_deref(), Some("1" | "ON"))
                }
                "datadir" => f.datadir = value,
                "thread_handling" => f.thread_handling = value,
                "thread_pool_size" => f.thread_pool_size = value.and_then(|v| v.parse().ok()),
                _ => {}
            }
        }
        f
    }
}

/// The phase's state for these readings, between [`Why::begin`] and [`Why::finish`].
#[derive(Default)]
pub(crate) struct Why {
    /// Whether the sessions reach the server over TCP (a network reading), and whether the
    /// server runs on this machine; `None` until known.
    tcp: Option<bool>,
    local: Option<bool>,
    started: Option<Instant>,
    threads: Option<threads::Start>,
    waits: Option<waits::Start>,
    disk: Option<disk::Start>,
    net: Option<net::Start>,
    pool: Option<pool::Pool>,
    /// Whether a report tick came since begin.
    ticked: bool,
}

impl Why {
    /// The sessions' endpoint: TCP phases get a network reading, a remote server no disk.
    pub fn set_endpoint(&mut self, endpoint: &Endpoint) {
        self.tcp = Some(matches!(endpoint, Endpoint::Tcp { .. }));
        self.local = Some(endpoint.is_local());
    }

    pub fn set_tcp(&mut self, tcp: bool) {
        self.tcp = Some(tcp);
    }

    /// Takes the readings the phase is compared against.
    pub fn begin(&mut self, mut conn: Option<&mut Conn>, server_pid: Option<u32>) {
        *self = Why {
            tcp: self.tcp,
            local: self.local,
            ..Why::default()
        };
        self.started = Some(Instant::now());
        let facts = conn.as_deref_mut().and_then(Facts::read);
        let ps = facts.as_ref().is_some_and(|f| f.performance_schema);
        if let Some(pid) = server_pid {
            self.threads = Some(threads::Start::take(pid, conn.as_deref_mut(), ps));
        }
        self.waits = Some(waits::Start::take(conn, facts.is_some(), ps));
        let local = server_pid.is_some() || self.local.unwrap_or(false);
        let datadir = facts.as_ref().and_then(|f| f.datadir.as_deref());
        self.disk = Some(disk::Start::take(local, datadir));
        if self.tcp == Some(true) {
            self.net = net::Start::take();
        }
        let pooled = facts
            .as_ref()
            .and_then(|f| f.thread_handling.as_deref())
            .is_some_and(pool::is_pool);
        if pooled {
            self.pool = facts
                .as_ref()
                .and_then(|f| f.thread_pool_size)
                .map(pool::Pool::new);
        }
    }

    /// One report tick: the thread pool's queue, when the pool is on; on the first tick, the
    /// thread classes once more, with the sessions connected.
    pub fn tick(&mut self, mut conn: Option<&mut Conn>) {
        if !self.ticked {
            self.ticked = true;
            if let Some(t) = self.threads.as_mut() {
                t.observe(conn.as_deref_mut());
            }
        }
        if let (Some(p), Some(c)) = (self.pool.as_mut(), conn) {
            p.tick(c);
        }
    }

    /// The whole-phase readings since [`Why::begin`] (none before it).
    pub fn finish(&mut self, mut conn: Option<&mut Conn>, server_pid: Option<u32>) -> Vec<Reading> {
        let Some(started) = self.started.take() else {
            return Vec::new();
        };
        let elapsed_s = started.elapsed().as_secs_f64();
        let mut out = Vec::new();
        if let Some(t) = self.threads.take() {
            out.push(Reading::Threads(t.finish(server_pid, conn.as_deref_mut())));
        }
        if let Some(w) = self.waits.take() {
            out.push(Reading::Waits(w.finish(conn.as_deref_mut())));
        }
        if let Some(d) = self.disk.take() {
            out.push(Reading::Disk(d.finish(elapsed_s)));
        }
        if let Some(n) = self.net.take().and_then(|n| n.finish(elapsed_s)) {
            out.push(Reading::Net(n));
        }
        if let Some(p) = self.pool.take() {
            out.push(Reading::Pool(p.finish(conn)));
        }
        out
    }
}

/// The first value of `sql`'s first row, or why there is none.
pub(crate) fn first_value(conn: &mut Conn, sql: &str) -> Result<Option<String>, String> {
    match conn.query(sql) {
        Ok(r) => Ok(r.first_value().map(str::to_owned)),
        Err(e) => Err(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_are_read_from_show_variables_rows() {
        let row = |k: &str, v: &str| vec![Some(k.to_string()), Some(v.to_string())];
        let f = Facts::from_rows(vec![
            row("datadir", "/var/lib/mysql/"),
            row("performance_schema", "ON"),
            row("thread_handling", "pool-of-threads"),
            row("thread_pool_size", "4"),
        ]);
        assert!(f.performance_schema);
        assert_eq!(f.datadir.as_deref(), Some("/var/lib/mysql/"));
        assert_eq!(f.thread_handling.as_deref(), Some("pool-of-threads"));
        assert_eq!(f.thread_pool_size, Some(4));
        // MySQL without the pool, and an empty datadir.
        let f = Facts::from_rows(vec![row("datadir", ""), row("performance_schema", "OFF")]);
        assert!(!f.performance_schema);
        assert_eq!((f.datadir, f.thread_pool_size), (None, None));
    }
}
