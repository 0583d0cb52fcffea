//! What the lab sees of a phase beyond throughput, for its limiter verdict: the server's CPU by
//! thread class, its waits, the datadir's device and the network. Each is one telemetry
//! reading taken over the whole phase (begin to finish), stored with the phase, and says why
//! it is missing where it could not be read.

use serde::{Deserialize, Serialize};

/// The server's CPU over a phase by thread class (`Reading::Threads`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ThreadCpu {
    /// How the classes were named: `performance_schema` (its `threads.NAME`), `name` (the OS
    /// thread names, as MySQL 8 sets them) or `none` (every thread in [`Class::Other`]).
    pub named_by: String,
    /// The CPUs the server may run on (its affinity), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_cpus: Option<u32>,
    /// Share (0..1) of those CPUs' time that was busy (the server, the client or anyone else
    /// on them), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_busy: Option<f64>,
    /// CPU seconds per class, largest first; threads that ended during the phase count up to
    /// their last reading.
    pub classes: Vec<ClassCpu>,
    /// Why the classes are not named, or the reading is missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// One thread class's CPU over a phase.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassCpu {
    pub class: Class,
    /// Threads of the class seen.
    pub threads: u32,
    /// User and system CPU seconds.
    pub cpu_s: f64,
    /// The busiest thread's CPU seconds (one thread at 100% of a CPU is a limit of its own).
    pub busiest_s: f64,
}

/// The thread classes the verdict speaks of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// Threads serving connections (one per connection, or thread-pool workers).
    Connection,
    /// MySQL 8's log writer, flusher and notifiers.
    LogWriter,
    /// The page cleaners (MariaDB's page cleaner also writes and flushes the log).
    PageCleaner,
    /// Purge coordinator and workers.
    Purge,
    /// InnoDB's I/O threads (read, write, log, ibuf) and MariaDB's InnoDB task pool, which also
    /// runs purge and I/O completions.
    Io,
    /// Every other thread (the main thread, timers, signal handler, unnamed threads).
    Other,
}

impl Class {
    /// The class of a performance_schema thread name (`thread/innodb/page_cleaner_thread`,
    /// `thread/sql/one_connection`) or an OS thread name (`ib_pg_flush_co`, `connection`).
    pub fn of(name: &str) -> Class {
        let n = name.to_ascii_lowercase();
        let has = |parts: &[&str]| parts.iter().any(|p| n.contains(p));
        // MariaDB's `thread/innodb/thread_pool_thread` is InnoDB's task pool (I/O completion,
        // purge, flushing work), not the connections' thread pool (`thread/threadpool/...`).
        if n.contains("innodb/thread_pool") {
            Class::Io
        } else if has(&[
            "one_connection",
            "thread/sql/connection",
            "thread/threadpool/",
        ]) || n == "connection"
        {
            Class::Connection
        } else if has(&[
            "log_writer",
            "log_flusher",
            "log_write_notifier",
            "log_flush_notifier",
            "log_checkpointer",
            "ib_log_",
        ]) {
            Class::LogWriter
        } else if has(&["page_cleaner", "page_flush", "pg_flush"]) {
            Class::PageCleaner
        } else if has(&["purge", "srv_worker", "ib_srv_wkr"]) {
            Class::Purge
        } else if has(&["io_", "_io", "io_handler", "ib_io", "aio"]) {
            Class::Io
        } else {
            Class::Other
        }
    }

    /// How reports name it.
    pub fn label(self) -> &'static str {
        match self {
            Class::Connection => "connections",
            Class::LogWriter => "log writer",
            Class::PageCleaner => "page cleaner",
            Class::Purge => "purge",
            Class::Io => "InnoDB I/O and tasks",
            Class::Other => "other",
        }
    }
}

/// Where the sessions' time went while they waited in the server (`Reading::Waits`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Waits {
    /// `performance_schema` (its wait summaries) or `status` (status counters only: row lock
    /// time, log waits, pending fsyncs).
    pub source: String,
    /// Wait time by event: every event that waited during the phase.
    pub events: Vec<WaitTime>,
    /// Why the wait summaries are missing, when they are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Time spent in one wait event over a phase.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WaitTime {
    /// The event (`wait/synch/rwlock/innodb/lock_latch`, `wait/io/file/innodb/innodb_log_file`,
    /// `wait/lock/table/sql/handler`, `row lock`...).
    pub name: String,
    pub kind: WaitKind,
    /// Seconds waited, all sessions together.
    pub seconds: f64,
    /// Waits counted.
    pub count: u64,
}

/// What a wait waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WaitKind {
    /// A mutex, rwlock or condition: a latch.
    Latch,
    /// A row lock (InnoDB's lock waits).
    RowLock,
    /// A metadata or table lock.
    TableLock,
    /// File I/O on the redo log (writes and fsyncs).
    LogIo,
    /// File I/O on data files.
    DataIo,
    /// Anything else (sockets, other files).
    Other,
}

impl WaitKind {
    /// The kind of a performance_schema wait event name.
    pub fn of(name: &str) -> WaitKind {
        let n = name.to_ascii_lowercase();
        if n.starts_with("wait/synch/") {
            WaitKind::Latch
        } else if n.starts_with("wait/lock/metadata") || n.starts_with("wait/lock/table") {
            WaitKind::TableLock
        } else if n.starts_with("wait/io/file/") {
            if n.contains("log") && n.contains("innodb") {
                WaitKind::LogIo
            } else {
                WaitKind::DataIo
            }
        } else if n.contains("row lock") || n.contains("row_lock") {
            WaitKind::RowLock
        } else {
            WaitKind::Other
        }
    }
}

/// The datadir's block device over a phase (`Reading::Disk`), from `/proc/diskstats`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DiskUse {
    /// The device (`sda`, `loop3`, `dm-0`), or empty when not found.
    pub device: String,
    /// Seconds the counters cover.
    pub elapsed_s: f64,
    pub reads: u64,
    pub writes: u64,
    /// Flushes (fsyncs reaching the device; 0 on kernels and devices that do not count them).
    #[serde(default)]
    pub flushes: u64,
    /// Milliseconds spent reading, writing and flushing (all requests together).
    pub read_ms: u64,
    pub write_ms: u64,
    #[serde(default)]
    pub flush_ms: u64,
    /// Milliseconds the device had requests in flight (utilization's numerator).
    pub busy_ms: u64,
    /// Requests in flight × milliseconds (the mean queue's numerator).
    pub queue_ms: u64,
    /// Why there are no figures (an external server, a datadir on tmpfs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl DiskUse {
    /// Share (0..1) of the phase the device was busy.
    pub fn utilization(&self) -> f64 {
        if self.elapsed_s <= 0.0 {
            return 0.0;
        }
        (self.busy_ms as f64 / 1000.0 / self.elapsed_s).clamp(0.0, 1.0)
    }

    /// Mean requests in flight.
    pub fn queue(&self) -> f64 {
        if self.elapsed_s <= 0.0 {
            return 0.0;
        }
        self.queue_ms as f64 / 1000.0 / self.elapsed_s
    }

    /// Mean milliseconds per request (reads, writes and flushes).
    pub fn await_ms(&self) -> f64 {
        let n = self.reads + self.writes + self.flushes;
        if n == 0 {
            return 0.0;
        }
        (self.read_ms + self.write_ms + self.flush_ms) as f64 / n as f64
    }

    /// Requests per second.
    pub fn iops(&self) -> f64 {
        if self.elapsed_s <= 0.0 {
            return 0.0;
        }
        (self.reads + self.writes) as f64 / self.elapsed_s
    }
}

/// The network's cost over a TCP phase (`Reading::Net`): the host's softirq time and TCP
/// retransmits.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NetUse {
    /// Seconds the counters cover.
    pub elapsed_s: f64,
    /// CPU seconds the host spent in softirq (network receive and transmit, mostly).
    pub softirq_s: f64,
    /// CPU seconds the host had (elapsed × CPUs).
    pub cpu_s: f64,
    /// TCP segments sent and retransmitted.
    pub segments_out: u64,
    pub retransmits: u64,
}

impl NetUse {
    /// Share (0..1) of the machine in softirq.
    pub fn softirq_share(&self) -> f64 {
        if self.cpu_s <= 0.0 {
            return 0.0;
        }
        (self.softirq_s / self.cpu_s).clamp(0.0, 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_are_named_from_performance_schema_and_os_thread_names() {
        for (name, class) in [
            ("thread/sql/one_connection", Class::Connection),
            ("connection", Class::Connection),
            ("thread/innodb/log_writer_thread", Class::LogWriter),
            ("ib_log_writer", Class::LogWriter),
            ("thread/innodb/page_cleaner_thread", Class::PageCleaner),
            ("ib_pg_flush_co", Class::PageCleaner),
            ("thread/innodb/thread_pool_thread", Class::Io),
            ("thread/threadpool/worker_thread", Class::Connection),
            ("thread/threadpool/timer_thread", Class::Connection),
            ("thread/innodb/srv_purge_thread", Class::Purge),
            ("thread/innodb/io_write_thread", Class::Io),
            ("thread/sql/main", Class::Other),
            ("mariadbd", Class::Other),
        ] {
            assert_eq!(Class::of(name), class, "{name}");
        }
    }

    /// MySQL 8.0's threads as its performance_schema.threads lists them, and the OS thread
    /// names it sets (its reference manual's thread lists): the redo log's own threads are a
    /// class of their own.
    #[test]
    fn mysql_8_threads_are_classed_by_their_names() {
        for (name, class) in [
            ("thread/innodb/log_writer_thread", Class::LogWriter),
            ("thread/innodb/log_flusher_thread", Class::LogWriter),
            ("thread/innodb/log_write_notifier_thread", Class::LogWriter),
            ("thread/innodb/log_flush_notifier_thread", Class::LogWriter),
            ("thread/innodb/log_checkpointer_thread", Class::LogWriter),
            (
                "thread/innodb/page_flush_coordinator_thread",
                Class::PageCleaner,
            ),
            ("thread/innodb/page_flush_thread", Class::PageCleaner),
            ("thread/innodb/srv_purge_thread", Class::Purge),
            ("thread/innodb/srv_worker_thread", Class::Purge),
            ("thread/innodb/io_read_thread", Class::Io),
            ("thread/innodb/io_log_thread", Class::Io),
            ("thread/sql/one_connection", Class::Connection),
            ("thread/sql/compress_gtid_table", Class::Other),
            ("ib_log_writer", Class::LogWriter),
            ("ib_log_flush", Class::LogWriter),
            ("ib_log_checkpt", Class::LogWriter),
            ("ib_pg_flush_co", Class::PageCleaner),
            ("ib_pg_flush-1", Class::PageCleaner),
            ("ib_srv_purge", Class::Purge),
            ("ib_srv_wkr-1", Class::Purge),
            ("ib_io_rd-1", Class::Io),
            ("ib_io_wr-2", Class::Io),
            ("connection", Class::Connection),
        ] {
            assert_eq!(Class::of(name), class, "{name}");
        }
    }

    #[test]
    fn wait_events_are_sorted_into_kinds() {
        assert_eq!(
            WaitKind::of("wait/synch/rwlock/innodb/lock_latch"),
            WaitKind::Latch
        );
        assert_eq!(
            WaitKind::of("wait/io/file/innodb/innodb_log_file"),
            WaitKind::LogIo
        );
        assert_eq!(
            WaitKind::of("wait/io/file/innodb/innodb_data_file"),
            WaitKind::DataIo
        );
        assert_eq!(
            WaitKind::of("wait/lock/metadata/sql/mdl"),
            WaitKind::TableLock
        );
        assert_eq!(WaitKind::of("row lock"), WaitKind::RowLock);
        assert_eq!(
            WaitKind::of("wait/io/socket/sql/client_connection"),
            WaitKind::Other
        );
    }

    #[test]
    fn disk_figures_follow_iostat() {
        let d = DiskUse {
            device: "sda".into(),
            elapsed_s: 10.0,
            reads: 300,
            writes: 700,
            read_ms: 600,
            write_ms: 1400,
            busy_ms: 5000,
            queue_ms: 20_000,
            ..DiskUse::default()
        };
        assert_eq!(d.utilization(), 0.5);
        assert_eq!(d.queue(), 2.0);
        assert_eq!(d.await_ms(), 2.0);
        assert_eq!(d.iops(), 100.0);
    }
}
