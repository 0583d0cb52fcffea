//! The datadir's block device over a phase: the device holding `@@datadir` (its `st_dev`,
//! named through `/sys/dev/block` or `/proc/diskstats`; a partition, dm, md or loop device
//! counts as itself) and its `/proc/diskstats` counters at begin and at finish.

use qpslab_core::limits::DiskUse;
use std::os::unix::fs::MetadataExt;

/// One device's `/proc/diskstats` counters.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Counters {
    reads: u64,
    read_ms: u64,
    writes: u64,
    write_ms: u64,
    busy_ms: u64,
    queue_ms: u64,
    flushes: u64,
    flush_ms: u64,
}

/// The device and its counters at the phase's begin, or why there are none.
pub(crate) struct Start(Result<(String, Counters), String>);

impl Start {
    /// `local`: whether the server runs on this machine; `datadir`: its `@@datadir`.
    pub fn take(local: bool, datadir: Option<&str>) -> Start {
        Start(begin(local, datadir))
    }

    pub fn finish(self, elapsed_s: f64) -> DiskUse {
        let (device, before) = match self.0 {
            Ok(d) => d,
            Err(reason) => {
                return DiskUse {
                    reason: Some(reason),
                    ..DiskUse::default()
                }
            }
        };
        let after = std::fs::read_to_string("/proc/diskstats")
            .ok()
            .and_then(|t| parse_diskstats(&t, &device));
        let Some(after) = after else {
            return DiskUse {
                device,
                reason: Some("the device's counters could not be read at the end".into()),
                ..DiskUse::default()
            };
        };
        delta(device, before, after, elapsed_s)
    }
}

fn begin(local: bool, datadir: Option<&str>) -> Result<(String, Counters), String> {
    if !local {
        return Err("the server is not on this machine: its disk is not ours to read".into());
    }
    let dir = datadir.ok_or("the server's datadir is not known")?;
    let meta =
        std::fs::metadata(dir).map_err(|e| format!("the datadir {dir} cannot be read: {e}"))?;
    let (major, minor) = major_minor(meta.dev());
    if major == 0 {
        let fs = crate::storage_facts(std::path::Path::new(dir))
            .fs_type
            .unwrap_or_else(|| "a file system".into());
        return Err(format!("the datadir is on {fs}, not a block device"));
    }
    let stats = std::fs::read_to_string("/proc/diskstats")
        .map_err(|e| format!("/proc/diskstats cannot be read: {e}"))?;
    let name = sys_name(major, minor)
        .or_else(|| name_in_diskstats(&stats, major, minor))
        .ok_or_else(|| format!("no block device {major}:{minor} holds the datadir"))?;
    let c = parse_diskstats(&stats, &name)
        .ok_or_else(|| format!("/proc/diskstats has no line for {name}"))?;
    Ok((name, c))
}

/// Linux's `major()` and `minor()` of a `dev_t`.
fn major_minor(dev: u64) -> (u64, u64) {
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    (major, minor)
}

/// `DEVNAME` of `/sys/dev/block/MAJ:MIN/uevent`.
fn sys_name(major: u64, minor: u64) -> Option<String> {
    let text = std::fs::read_to_string(format!("/sys/dev/block/{major}:{minor}/uevent")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("DEVNAME="))
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty())
}

fn name_in_diskstats(text: &str, major: u64, minor: u64) -> Option<String> {
    text.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        let same = f.len() >= 3 && f[0].parse() == Ok(major) && f[1].parse() == Ok(minor);
        same.then(|| f[2].to_string())
    })
}

/// The counters of `device` in a `/proc/diskstats` text: fields 4 (reads), 7 (ms reading),
/// 8 (writes), 11 (ms writing), 13 (ms doing I/O), 14 (weighted ms) and, on kernels that
/// have them, 19 and 20 (flushes and ms flushing).
pub(crate) fn parse_diskstats(text: &str, device: &str) -> Option<Counters> {
    let line = text
        .lines()
        .find(|l| l.split_whitespace().nth(2) == Some(device))?;
    let f: Vec<u64> = line
        .split_whitespace()
        .enumerate()
        .filter(|(i, _)| *i != 2)
        .map(|(_, v)| v.parse().unwrap_or(0))
        .collect();
    // `f` lacks the name: field n (1-based) is f[n - 2] from field 4 on.
    let at = |n: usize| f.get(n - 2).copied();
    Some(Counters {
        reads: at(4)?,
        read_ms: at(7)?,
        writes: at(8)?,
        write_ms: at(11)?,
        busy_ms: at(13)?,
        queue_ms: at(14)?,
        flushes: at(19).unwrap_or(0),
        flush_ms: at(20).unwrap_or(0),
    })
}

fn delta(device: String, b: Counters, a: Counters, elapsed_s: f64) -> DiskUse {
    DiskUse {
        device,
        elapsed_s,
        reads: a.reads.saturating_sub(b.reads),
        writes: a.writes.saturating_sub(b.writes),
        flushes: a.flushes.saturating_sub(b.flushes),
        read_ms: a.read_ms.saturating_sub(b.read_ms),
        write_ms: a.write_ms.saturating_sub(b.write_ms),
        flush_ms: a.flush_ms.saturating_sub(b.flush_ms),
        busy_ms: a.busy_ms.saturating_sub(b.busy_ms),
        queue_ms: a.queue_ms.saturating_sub(b.queue_ms),
        reason: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATS: &str = "\
   7       0 loop0 1258 6 308046 1493 2254 2368 1601052 9193 0 1628 10916 14 0 12845092 0 767 229
 254       0 vda 5000 10 80000 900 7000 300 90000 4000 2 6000 9000 0 0 0 0 120 60
 254       1 vda1 40 0 800 9 70 3 900 40 0 60 90 0 0 0 0 0 0
   8       0 sdb 100 1 2000 50 200 2 4000 80 1 110 130
";

    #[test]
    fn diskstats_lines_are_read_new_and_old() {
        let vda = parse_diskstats(STATS, "vda").unwrap();
        assert_eq!(
            (vda.reads, vda.read_ms, vda.writes, vda.write_ms),
            (5000, 900, 7000, 4000)
        );
        assert_eq!((vda.busy_ms, vda.queue_ms), (6000, 9000));
        assert_eq!((vda.flushes, vda.flush_ms), (120, 60));
        let lo = parse_diskstats(STATS, "loop0").unwrap();
        assert_eq!(
            (lo.reads, lo.writes, lo.flushes, lo.flush_ms),
            (1258, 2254, 767, 229)
        );
        // The 14-field format before kernel 4.18: no discards, no flushes.
        let old = parse_diskstats(STATS, "sdb").unwrap();
        assert_eq!(
            (old.reads, old.writes, old.busy_ms, old.queue_ms),
            (100, 200, 110, 130)
        );
        assert_eq!((old.flushes, old.flush_ms), (0, 0));
        assert_eq!(parse_diskstats(STATS, "vda1").unwrap().reads, 40);
        assert_eq!(parse_diskstats(STATS, "sda"), None);
        assert_eq!(name_in_diskstats(STATS, 254, 1).as_deref(), Some("vda1"));
        assert_eq!(name_in_diskstats(STATS, 9, 9), None);
    }

    #[test]
    fn the_change_is_taken_per_counter() {
        let b = parse_diskstats(STATS, "vda1").unwrap();
        let a = parse_diskstats(STATS, "vda").unwrap();
        let d = delta("vda".into(), b, a, 10.0);
        assert_eq!((d.reads, d.writes, d.busy_ms), (4960, 6930, 5940));
        assert_eq!(delta("x".into(), a, b, 1.0).reads, 0);
    }

    #[test]
    fn device_numbers_are_split_like_the_kernel() {
        assert_eq!(major_minor(0xfe00), (254, 0));
        assert_eq!(major_minor(0x0801), (8, 1));
        assert_eq!(major_minor(0x1_0301), (259, 1));
        assert_eq!(major_minor(0x10_082c), (8, 300));
    }

    #[test]
    fn a_remote_server_or_tmpfs_has_a_reason() {
        let r = Start::take(false, Some("/")).finish(1.0);
        assert!(r.reason.unwrap().contains("not on this machine"));
        let none = Start::take(true, None).finish(1.0);
        assert!(none.reason.is_some());
        if let Ok(m) = std::fs::metadata("/proc") {
            assert_eq!(major_minor(m.dev()).0, 0);
            let p = Start::take(true, Some("/proc")).finish(1.0);
            assert!(p.reason.unwrap().contains("not a block device"));
        }
    }
}
