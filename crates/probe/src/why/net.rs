//! The network's cost over a TCP phase: the host's softirq time (`/proc/stat`) and TCP
//! segments sent and retransmitted (`/proc/net/snmp`), at begin and at finish.

use crate::process::clock_ticks_per_second;
use qpslab_core::limits::NetUse;

/// The host's counters at one instant.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Start {
    /// Clock ticks in softirq and in all (the `cpu` line).
    softirq: u64,
    total: u64,
    out_segs: u64,
    retrans: u64,
}

impl Start {
    /// The counters now; none when `/proc` cannot be read.
    pub fn take() -> Option<Start> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let snmp = std::fs::read_to_string("/proc/net/snmp").ok()?;
        let (softirq, total) = parse_cpu_line(&stat)?;
        let (out_segs, retrans) = parse_tcp(&snmp)?;
        Some(Start {
            softirq,
            total,
            out_segs,
            retrans,
        })
    }

    pub fn finish(self, elapsed_s: f64) -> Option<NetUse> {
        Some(self.until(Start::take()?, elapsed_s, clock_ticks_per_second()))
    }

    fn until(self, now: Start, elapsed_s: f64, hz: f64) -> NetUse {
        NetUse {
            elapsed_s,
            softirq_s: now.softirq.saturating_sub(self.softirq) as f64 / hz,
            cpu_s: now.total.saturating_sub(self.total) as f64 / hz,
            segments_out: now.out_segs.saturating_sub(self.out_segs),
            retransmits: now.retrans.saturating_sub(self.retrans),
        }
    }
}

/// Softirq ticks (the 7th value) and all ticks of the `cpu ` line; guest time is already in
/// user and nice, so it is not added again.
fn parse_cpu_line(stat: &str) -> Option<(u64, u64)> {
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    let softirq = *v.get(6)?;
    Some((softirq, v.iter().take(8).sum()))
}

/// `OutSegs` and `RetransSegs` of the `Tcp:` header and value lines.
fn parse_tcp(snmp: &str) -> Option<(u64, u64)> {
    let mut lines = snmp.lines().filter(|l| l.starts_with("Tcp:"));
    let names: Vec<&str> = lines.next()?.split_whitespace().collect();
    let values: Vec<&str> = lines.next()?.split_whitespace().collect();
    let get = |name: &str| -> Option<u64> {
        let i = names.iter().position(|n| *n == name)?;
        values.get(i)?.parse().ok()
    };
    Some((get("OutSegs")?, get("RetransSegs")?))
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  709902 315 192383 801678 26384 0 6570 322 40 0\n\
                        cpu0 354951 157 96191 400839 13192 0 3285 161 20 0\nintr 1 2 3\n";
    const SNMP: &str = "\
Ip: Forwarding DefaultTTL
Ip: 1 64
Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails EstabResets CurrEstab InSegs OutSegs RetransSegs InErrs OutRsts InCsumErrors
Tcp: 1 200 120000 -1 6644 6442 173 53 0 6143694 6140955 70 0 242 0
Udp: InDatagrams NoPorts
Udp: 5 6
";

    #[test]
    fn softirq_and_total_ticks_come_from_the_cpu_line() {
        let total = 709902 + 315 + 192383 + 801678 + 26384 + 6570 + 322;
        assert_eq!(parse_cpu_line(STAT), Some((6570, total)));
        assert_eq!(parse_cpu_line("cpu0 1 2\n"), None);
    }

    #[test]
    fn tcp_segments_come_from_snmp() {
        assert_eq!(parse_tcp(SNMP), Some((6140955, 70)));
        assert_eq!(parse_tcp("Ip: a\nIp: 1\n"), None);
    }

    #[test]
    fn the_change_is_in_seconds_and_segments() {
        let a = Start {
            softirq: 100,
            total: 1000,
            out_segs: 10,
            retrans: 1,
        };
        let b = Start {
            softirq: 150,
            total: 1400,
            out_segs: 510,
            retrans: 3,
        };
        let n = a.until(b, 2.0, 100.0);
        assert_eq!((n.softirq_s, n.cpu_s), (0.5, 4.0));
        assert_eq!((n.segments_out, n.retransmits), (500, 2));
        assert_eq!(n.softirq_share(), 0.125);
        assert!(Start::take().is_some());
    }
}
