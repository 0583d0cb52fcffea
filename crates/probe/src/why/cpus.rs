//! How busy given CPUs were over a phase, from `/proc/stat`'s per-CPU lines (`cpuN user nice
//! system idle iowait irq softirq steal`): busy is everything but idle and iowait.

use std::collections::BTreeMap;

/// Each CPU's `(busy, total)` clock ticks at one instant.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct PerCpu(BTreeMap<usize, (u64, u64)>);

impl PerCpu {
    /// The counters now; empty when `/proc/stat` cannot be read.
    pub fn read() -> PerCpu {
        std::fs::read_to_string("/proc/stat").map_or_else(|_| PerCpu::default(), |s| parse(&s))
    }

    /// Share (0..1) of `cpus`' time busy between `self` and `now`; none without ticks.
    pub fn busy_share(&self, now: &PerCpu, cpus: &[usize]) -> Option<f64> {
        let (mut busy, mut total) = (0u64, 0u64);
        for c in cpus {
            let (Some(a), Some(b)) = (self.0.get(c), now.0.get(c)) else {
                continue;
            };
            busy += b.0.saturating_sub(a.0);
            total += b.1.saturating_sub(a.1);
        }
        (total > 0).then(|| (busy as f64 / total as f64).clamp(0.0, 1.0))
    }
}

fn parse(stat: &str) -> PerCpu {
    let mut out = BTreeMap::new();
    for line in stat.lines() {
        let Some(rest) = line.strip_prefix("cpu") else {
            continue;
        };
        let mut f = rest.split_whitespace();
        let Some(Ok(n)) = f.next().map(str::parse::<usize>) else {
            continue;
        };
        let v: Vec<u64> = f.take(8).filter_map(|x| x.parse().ok()).collect();
        if v.len() < 8 {
            continue;
        }
        let total: u64 = v.iter().sum();
        out.insert(n, (total - v[3] - v[4], total));
    }
    PerCpu(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_busy_share_is_taken_over_the_cpus_asked_for() {
        let a =
            parse("cpu  9 9 9 9 9 9 9 9\ncpu0 100 0 0 100 0 0 0 0 0 0\ncpu1 0 0 0 200 0 0 0 0\n");
        let b =
            parse("cpu  9 9 9 9 9 9 9 9\ncpu0 190 0 0 110 0 0 0 0 0 0\ncpu1 10 0 0 290 0 0 0 0\n");
        assert_eq!(a.busy_share(&b, &[0]), Some(0.9));
        assert_eq!(a.busy_share(&b, &[0, 1]), Some(0.5));
        assert_eq!(a.busy_share(&b, &[7]), None);
    }
}
