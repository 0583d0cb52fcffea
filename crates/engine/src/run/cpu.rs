//! The client measuring itself (process CPU time and peak RSS from `getrusage`) and placing its
//! event loops on CPUs (`sched_setaffinity`).

use qpslab_core::result::CpuUsage;
use std::io;

/// Process CPU seconds and peak RSS at one instant.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CpuSnapshot {
    user_s: f64,
    sys_s: f64,
    max_rss_kib: u64,
}

impl CpuSnapshot {
    /// The calling process's usage so far (all threads).
    pub fn now() -> Self {
        // SAFETY: getrusage writes a plain C struct into the zeroed value we pass.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: a valid pointer to a rusage; RUSAGE_SELF cannot fail on Linux.
        let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
        if rc != 0 {
            return CpuSnapshot::default();
        }
        let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        CpuSnapshot {
            user_s: tv(ru.ru_utime),
            sys_s: tv(ru.ru_stime),
            // Linux reports ru_maxrss in KiB.
            max_rss_kib: u64::try_from(ru.ru_maxrss).unwrap_or(0),
        }
    }

    /// CPU spent between `earlier` and `self`, with the peak RSS as of `self`.
    pub fn since(&self, earlier: &CpuSnapshot) -> CpuUsage {
        CpuUsage {
            user_s: (self.user_s - earlier.user_s).max(0.0),
            sys_s: (self.sys_s - earlier.sys_s).max(0.0),
            max_rss_kib: self.max_rss_kib,
        }
    }
}

/// The calling thread's seconds on a CPU and seconds runnable but waiting for one, so far:
/// `/proc/thread-self/schedstat` (the scheduler's own account), else the thread's CPU clock
/// with no waiting known. Read at each report boundary by each event loop, none per query: a
/// loop that ran or waited to run for the whole interval had no moment to spare.
pub(crate) fn thread_sched_s() -> (f64, f64) {
    let parsed = std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| parse_schedstat(&s));
    parsed.unwrap_or_else(|| (thread_cpu_s(), 0.0))
}

/// `run_ns wait_ns slices` as seconds on a CPU and seconds waiting.
fn parse_schedstat(s: &str) -> Option<(f64, f64)> {
    let mut f = s.split_whitespace().map(|x| x.parse::<u64>().ok());
    let (run, wait) = (f.next()??, f.next()??);
    Some((run as f64 / 1e9, wait as f64 / 1e9))
}

/// The calling thread's CPU seconds so far (`CLOCK_THREAD_CPUTIME_ID`).
fn thread_cpu_s() -> f64 {
    // SAFETY: clock_gettime writes a plain timespec into the zeroed value we pass.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: a valid pointer to a timespec and a clock every Linux has.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

/// The CPUs the calling thread may run on (its affinity mask, as `taskset` or a container
/// set it), sorted; empty when the kernel will not say.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: cpu_set_t is a plain bit set, valid when zeroed.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: the size passed is the set's own; the kernel writes only inside it.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return Vec::new();
    }
    (0..libc::CPU_SETSIZE as usize)
        // SAFETY: every index is below the set's capacity.
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect()
}

/// Pins the calling thread to `cpu`.
pub(crate) fn pin_current_thread(cpu: usize) -> io::Result<()> {
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "CPU {cpu} is beyond the affinity mask's {} CPUs",
                libc::CPU_SETSIZE
            ),
        ));
    }
    // SAFETY: cpu_set_t is a plain bit set; CPU_ZERO/CPU_SET only write inside it (cpu was
    // checked against its capacity above).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_ZERO(&mut set);
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_grows_with_work_and_rss_is_known() {
        let a = CpuSnapshot::now();
        // Spin until the measured CPU time grows (capped at 10 s of wall time): on a loaded
        // machine a fixed wall-clock spin may get little CPU, but a broken reading never grows.
        let mut x = 0u64;
        let t = std::time::Instant::now();
        let mut d = CpuSnapshot::now().since(&a);
        while d.user_s + d.sys_s <= 0.02 && t.elapsed().as_secs() < 10 {
            for _ in 0..100_000 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
            }
            d = CpuSnapshot::now().since(&a);
        }
        assert!(d.user_s + d.sys_s > 0.02, "{d:?}");
        assert!(d.max_rss_kib > 0);
    }

    #[test]
    fn a_thread_knows_its_own_cpu_time_and_allowed_cpus() {
        assert_eq!(
            parse_schedstat("2500000000 500000000 17\n"),
            Some((2.5, 0.5))
        );
        assert_eq!(parse_schedstat("garbage"), None);
        let (a, _) = thread_sched_s();
        let mut x = 0u64;
        let t = std::time::Instant::now();
        while thread_sched_s().0 - a < 0.01 && t.elapsed().as_secs() < 10 {
            for _ in 0..100_000 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
            }
        }
        assert!(thread_sched_s().0 - a >= 0.01);
        assert!(thread_cpu_s() > 0.0);
        // A cgroup's CPU quota may lower available_parallelism below the mask, never above.
        let cpus = allowed_cpus();
        assert!(cpus.len() >= std::thread::available_parallelism().unwrap().get());
        std::thread::spawn(|| {
            let first = allowed_cpus()[0];
            pin_current_thread(first).unwrap();
            assert_eq!(allowed_cpus(), vec![first]);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn pinning_to_an_allowed_cpu_works_and_a_bogus_one_fails() {
        std::thread::spawn(|| {
            pin_current_thread(0).unwrap();
            assert!(pin_current_thread(1000).is_err());
            assert!(pin_current_thread(100_000).is_err());
        })
        .join()
        .unwrap();
    }
}
