//! CPU time and memory of a process, from `/proc/PID/stat` and `/proc/PID/status`.
//!
//! Readings are cumulative since the process started; callers subtract two readings to get the
//! CPU spent over an interval (the server's, or the client's own).

use crate::error::Error;
use qpslab_core::env::ProcessCpu;
pub use qpslab_core::telemetry::IoBytes;
use std::path::PathBuf;

/// CPU seconds and current RSS of process `pid`. Fails when the process does not exist (any
/// more) or `/proc` is not mounted.
pub fn process_cpu(pid: u32) -> Result<ProcessCpu, Error> {
    read_proc(&format!("/proc/{pid}"))
}

/// The same for the calling process.
pub fn self_cpu() -> Result<ProcessCpu, Error> {
    read_proc("/proc/self")
}

fn read_proc(dir: &str) -> Result<ProcessCpu, Error> {
    let read = |name: &str| {
        let path = PathBuf::from(format!("{dir}/{name}"));
        std::fs::read_to_string(&path).map_err(|source| Error::Io { path, source })
    };
    let stat = read("stat")?;
    let (utime, stime) = parse_stat_times(&stat).ok_or_else(|| Error::Format {
        what: format!("{dir}/stat"),
        detail: "no utime/stime fields".into(),
    })?;
    let ticks = clock_ticks_per_second();
    Ok(ProcessCpu {
        user_s: utime as f64 / ticks,
        sys_s: stime as f64 / ticks,
        // Kernel threads and zombies have no VmRSS line: they hold no user memory.
        rss_kib: parse_vm_rss_kib(&read("status")?).unwrap_or(0),
    })
}

/// `/proc/PID/io` of process `pid` (reading another user's process needs root).
pub fn process_io(pid: u32) -> Result<IoBytes, Error> {
    let path = PathBuf::from(format!("/proc/{pid}/io"));
    let text = std::fs::read_to_string(&path).map_err(|source| Error::Io {
        path: path.clone(),
        source,
    })?;
    Ok(parse_io(&text))
}

pub(crate) fn parse_io(text: &str) -> IoBytes {
    let mut io = IoBytes::default();
    for line in text.lines() {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        let v = v.trim().parse().unwrap_or(0);
        match k {
            "rchar" => io.rchar = v,
            "wchar" => io.wchar = v,
            "read_bytes" => io.read_bytes = v,
            "write_bytes" => io.write_bytes = v,
            _ => {}
        }
    }
    io
}

pub(crate) fn clock_ticks_per_second() -> f64 {
    // SAFETY: sysconf only reads a configuration value.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    // Linux has reported 100 on every architecture for decades; a failed call falls back to it.
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}

/// `utime` and `stime` (fields 14 and 15, in clock ticks) of a `/proc/PID/stat` line. The
/// command name (field 2) is in parentheses and may itself hold spaces and parentheses, so
/// fields are counted from the last `)`.
pub(crate) fn parse_stat_times(stat: &str) -> Option<(u64, u64)> {
    let after = &stat[stat.rfind(')')? + 1..];
    let mut fields = after.split_whitespace().skip(11); // field 3 (state) is index 0
    let utime = fields.next()?.parse().ok()?;
    let stime = fields.next()?.parse().ok()?;
    Some((utime, stime))
}

/// `VmRSS` of a `/proc/PID/status` file, in KiB.
pub(crate) fn parse_vm_rss_kib(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line["VmRSS:".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_io_is_parsed() {
        let text = "rchar: 2012\nwchar: 40\nsyscr: 7\nsyscw: 2\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n";
        let io = parse_io(text);
        assert_eq!(io.rchar, 2012);
        assert_eq!(io.write_bytes, 8192);
        let later = IoBytes { rchar: 3000, ..io };
        assert_eq!(later.since(&io).rchar, 988);
        assert_eq!(later.since(&io).read_bytes, 0);
        assert_eq!(later.plus(&io).rchar, 5012);
    }

    #[test]
    fn own_io_is_readable() {
        let io = process_io(std::process::id()).unwrap();
        assert!(io.rchar > 0, "{io:?}");
    }

    #[test]
    fn stat_fields_after_a_tricky_command_name() {
        let stat = "14395 (my (odd) cmd) R 14383 14383 5216 0 -1 4194304 102 0 0 0 \
                    731 42 0 0 20 0 1 0 64716 3133440 393 18446744073709551615";
        assert_eq!(parse_stat_times(stat), Some((731, 42)));
        assert_eq!(parse_stat_times("1 (x) R 1 2"), None);
        let status = "Name:\tmariadbd\nVmPeak:\t 1000 kB\nVmRSS:\t   86112 kB\nThreads:\t9\n";
        assert_eq!(parse_vm_rss_kib(status), Some(86_112));
        assert_eq!(parse_vm_rss_kib("Name:\tkthreadd\n"), None);
    }

    /// The CPU time this thread has used (CLOCK_THREAD_CPUTIME_ID: nanoseconds, not ticks).
    fn thread_cpu() -> std::time::Duration {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
        std::time::Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
    }

    #[test]
    fn own_cpu_grows_with_work() {
        let before = self_cpu().unwrap();
        assert!(before.rss_kib > 0);
        // Burn 100 ms of this thread's CPU time, measured by its own CPU clock: wall time is
        // no measure of CPU on a busy machine (200 ms of wall time gave 30 ms of CPU beside
        // other work). /proc counts whole ticks (10 ms), so at least 50 ms must show.
        let started = thread_cpu();
        let mut x = 0u64;
        while thread_cpu() - started < std::time::Duration::from_millis(100) {
            for _ in 0..10_000 {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            }
        }
        let after = self_cpu().unwrap();
        let spent = (after.user_s + after.sys_s) - (before.user_s + before.sys_s);
        assert!(spent >= 0.05, "only {spent} s of CPU seen");
        assert!(process_cpu(std::process::id()).unwrap().rss_kib > 0);
    }

    #[test]
    fn another_process_and_a_missing_one() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let c = process_cpu(child.id()).unwrap();
        assert!(c.rss_kib > 0 && c.user_s < 1.0, "{c:?}");
        child.kill().unwrap();
        child.wait().unwrap();
        // Reaped: its /proc entry is gone.
        let err = process_cpu(child.id()).unwrap_err();
        assert!(matches!(err, Error::Io { .. }), "{err}");
        assert!(
            err.to_string().contains(&format!("/proc/{}", child.id())),
            "{err}"
        );
    }
}
