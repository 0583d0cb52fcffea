//! How much of the machine other processes took while a phase ran: the host's busy CPU time
//! (`/proc/stat`, steal included) minus the server's and the client's own, over the same span.
//! A neighbour that takes the CPUs slows a phase evenly, which its samples alone cannot show.

use qpslab_core::telemetry::ProcUsage;
use qpslab_core::TelemetrySample;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The host's CPU time so far, in clock ticks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostCpu {
    busy: u64,
    total: u64,
}

impl HostCpu {
    /// Reads `/proc/stat` (none where there is none).
    pub fn read() -> Option<HostCpu> {
        parse(&std::fs::read_to_string("/proc/stat").ok()?)
    }
}

/// The aggregate `cpu` line: user nice system idle iowait irq softirq steal.
fn parse(stat: &str) -> Option<HostCpu> {
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .take(8)
        .map(|x| x.parse().ok())
        .collect::<Option<_>>()?;
    if v.len() < 8 {
        return None;
    }
    let idle = v[3] + v[4];
    let total: u64 = v.iter().sum();
    Some(HostCpu {
        busy: total - idle,
        total,
    })
}

/// Share (0..1) of the machine used by others between `before` and now, given the phase's
/// telemetry (`server_proc` and `client_proc` since the sampler began, just before `before`
/// was read). None without the server's CPU (an external server) or a clock tick's worth.
pub fn others_share(before: Option<HostCpu>, telemetry: &[TelemetrySample]) -> Option<f64> {
    let (a, b) = (before?, HostCpu::read()?);
    others_between(a, b, telemetry)
}

/// Waits, up to `max`, until other processes use less than
/// [`qpslab_core::stability::OTHERS_SHARE`] of the machine over one second (`server_pid`'s CPU
/// and this process's count as ours). Returns the share last seen, and whether it was quiet;
/// `None` when it cannot be measured (no server pid, no `/proc`). Stops early when `stop` is set.
pub fn wait_quiet(
    server_pid: Option<u32>,
    max: Duration,
    stop: &AtomicBool,
) -> Option<(f64, bool)> {
    let deadline = Instant::now() + max;
    loop {
        let ours = || {
            let s = qpslab_probe::process_cpu(server_pid?).ok()?;
            let c = qpslab_probe::self_cpu().ok()?;
            Some(s.user_s + s.sys_s + c.user_s + c.sys_s)
        };
        let (a, ours_a) = (HostCpu::read()?, ours()?);
        std::thread::sleep(Duration::from_secs(1));
        let (b, ours_b) = (HostCpu::read()?, ours()?);
        let share = others_of(a, b, ours_b - ours_a)?;
        let quiet = share < qpslab_core::stability::OTHERS_SHARE;
        if quiet || Instant::now() >= deadline || stop.load(Ordering::Relaxed) {
            return Some((share, quiet));
        }
    }
}

fn others_between(a: HostCpu, b: HostCpu, telemetry: &[TelemetrySample]) -> Option<f64> {
    let server = telemetry.iter().find_map(TelemetrySample::server_proc)?;
    let client = telemetry.iter().find_map(TelemetrySample::client_proc);
    // A replica under test is part of the measured system, not a neighbour.
    let replica = telemetry.iter().find_map(|t| match &t.reading {
        qpslab_core::telemetry::Reading::ReplicaProc(p) => Some(p.cpu_s()),
        _ => None,
    });
    let ours = server.cpu_s() + client.map_or(0.0, ProcUsage::cpu_s) + replica.unwrap_or(0.0);
    others_of(a, b, ours)
}

/// Share of the machine busy between `a` and `b` beyond `ours` CPU seconds.
fn others_of(a: HostCpu, b: HostCpu, ours: f64) -> Option<f64> {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let total = b.total.checked_sub(a.total)? as f64 / hz;
    let busy = b.busy.checked_sub(a.busy)? as f64 / hz;
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    // `total` counts every CPU's ticks; a span under 0.1 s per CPU says too little.
    (total >= 0.1 * cpus).then(|| ((busy - ours) / total).clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use qpslab_core::telemetry::Reading;

    #[test]
    fn others_are_the_busy_time_that_is_not_ours() {
        let a = parse("cpu  100 0 50 1000 10 0 0 0 0 0\ncpu0 1 2 3\n").unwrap();
        assert_eq!(
            a,
            HostCpu {
                busy: 150,
                total: 1160
            }
        );
        // SAFETY: sysconf has no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as u64;
        // 4 s of wall on 2 CPUs' worth of ticks: 8 s in all, 6 s busy, 2 s of it ours.
        let b = HostCpu {
            busy: a.busy + 6 * hz,
            total: a.total + 8 * hz,
        };
        let usage = |user_s: f64| ProcUsage {
            user_s,
            ..ProcUsage::default()
        };
        let t = |reading| TelemetrySample {
            elapsed_s: 4.0,
            reading,
        };
        let tel = [
            t(Reading::ServerProc(usage(1.5))),
            t(Reading::ClientProc(usage(0.5))),
        ];
        let share = others_between(a, b, &tel).unwrap();
        assert!((share - 0.5).abs() < 1e-9, "{share}");
        assert_eq!(others_between(a, b, &tel[1..]), None);
    }
}
