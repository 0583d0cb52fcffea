//! MariaDB's thread pool (`thread_handling=pool-of-threads`) over a phase: its size and the
//! connections queued in its groups, read on each report tick and averaged.

use super::first_value;
use qpslab_core::limits::ThreadPool;
use qpslab_wire::Conn;

const QUEUED: &str = "SELECT SUM(QUEUE_LENGTH) FROM information_schema.THREAD_POOL_GROUPS";

/// Whether `@@thread_handling` names the thread pool.
pub(crate) fn is_pool(thread_handling: &str) -> bool {
    thread_handling.eq_ignore_ascii_case("pool-of-threads")
}

/// The pool's size and the queue lengths seen so far.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Pool {
    size: u32,
    queued_sum: f64,
    readings: u32,
}

impl Pool {
    /// A pool of `size` groups (`@@thread_pool_size`), no queue seen yet.
    pub fn new(size: u32) -> Pool {
        Pool {
            size,
            ..Pool::default()
        }
    }

    /// One tick's queue; a failed read is skipped.
    pub fn tick(&mut self, conn: &mut Conn) {
        if let Ok(v) = first_value(conn, QUEUED) {
            self.add(v.as_deref());
        }
    }

    fn add(&mut self, sum: Option<&str>) {
        // SUM over no groups is NULL: nothing queued.
        let q = sum.and_then(|s| s.parse::<f64>().ok()).unwrap_or(0.0);
        self.queued_sum += q;
        self.readings += 1;
    }

    /// The mean queue over the ticks; a phase without ticks reads it once now.
    pub fn finish(mut self, conn: Option<&mut Conn>) -> ThreadPool {
        if self.readings == 0 {
            if let Some(c) = conn {
                self.tick(c);
            }
        }
        ThreadPool {
            size: self.size,
            queued: self.mean(),
        }
    }

    fn mean(&self) -> f64 {
        if self.readings == 0 {
            return 0.0;
        }
        self.queued_sum / f64::from(self.readings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_queue_is_the_mean_over_ticks() {
        let mut p = Pool {
            size: 2,
            ..Pool::default()
        };
        assert_eq!(p.mean(), 0.0);
        for s in [Some("3"), Some("0"), None, Some("5")] {
            p.add(s);
        }
        assert_eq!(p.mean(), 2.0);
        let t = p.finish(None);
        assert_eq!((t.size, t.queued), (2, 2.0));
        assert!(is_pool("pool-of-threads") && !is_pool("one-thread-per-connection"));
    }
}
