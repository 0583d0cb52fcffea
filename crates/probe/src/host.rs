//! Facts about the machine, from `/proc`, `/sys`, `/etc/os-release` and `uname(2)`.
//!
//! Every source is optional: a container or an exotic kernel may lack any of them, and a
//! missing fact must never stop a benchmark, so it reads `unknown` (or `None`) instead.

use qpslab_core::env::HostFacts;
use std::collections::BTreeSet;
use std::ffi::CStr;

const UNKNOWN: &str = "unknown";

/// Reads the facts of this machine. Never fails: what cannot be read is `unknown`.
pub fn host_facts() -> HostFacts {
    let read = |p: &str| std::fs::read_to_string(p).ok();
    let cpu = read("/proc/cpuinfo")
        .map(|t| parse_cpuinfo(&t))
        .unwrap_or_default();
    let (hostname, kernel) = uname();
    HostFacts {
        hostname,
        cpu_model: cpu.model.unwrap_or_else(|| UNKNOWN.into()),
        cores: match cpu.logical {
            0 => online_cpus(),
            n => n,
        },
        physical_cores: cpu.physical,
        memory_bytes: read("/proc/meminfo")
            .and_then(|t| parse_mem_total(&t))
            .unwrap_or(0),
        kernel,
        os: read("/etc/os-release")
            .and_then(|t| parse_os_release(&t))
            .unwrap_or_else(|| UNKNOWN.into()),
        thp: read("/sys/kernel/mm/transparent_hugepage/enabled")
            .map(|t| selected_choice(&t))
            .unwrap_or_else(|| UNKNOWN.into()),
        swappiness: read("/proc/sys/vm/swappiness")
            .map(|t| t.trim().to_string())
            .unwrap_or_else(|| UNKNOWN.into()),
        cpu_governor: read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
            .map(|t| t.trim().to_string()),
        numa_nodes: numa_nodes(),
    }
}

/// What `/proc/cpuinfo` tells.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct CpuInfo {
    pub model: Option<String>,
    pub logical: u32,
    pub physical: Option<u32>,
}

/// Parses `/proc/cpuinfo`: the model of the first CPU, the number of `processor` entries and,
/// where the kernel reports topology, distinct (physical id, core id) pairs.
pub(crate) fn parse_cpuinfo(text: &str) -> CpuInfo {
    let mut info = CpuInfo::default();
    let mut cores = BTreeSet::new();
    let mut physical_id = None;
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        match key {
            "processor" => {
                info.logical += 1;
                physical_id = None;
            }
            // x86 says "model name"; some ARM kernels only "Hardware" or "Processor".
            "model name" | "Hardware" | "Processor" | "cpu model" if info.model.is_none() => {
                info.model = Some(value.to_string())
            }
            "physical id" => physical_id = Some(value.to_string()),
            "core id" => {
                cores.insert((physical_id.clone().unwrap_or_default(), value.to_string()));
            }
            _ => {}
        }
    }
    info.physical = (!cores.is_empty()).then_some(cores.len() as u32);
    info
}

/// `MemTotal` of `/proc/meminfo` in bytes.
pub(crate) fn parse_mem_total(text: &str) -> Option<u64> {
    meminfo_field(text, "MemTotal:")
}

/// The memory the kernel says can be taken now without swapping (`MemAvailable`), when it
/// says.
pub fn memory_available() -> Option<u64> {
    meminfo_field(
        &std::fs::read_to_string("/proc/meminfo").ok()?,
        "MemAvailable:",
    )
}

/// Bytes this process may still allocate, read now: the least of the memory the kernel calls
/// available, the room left under the address-space limit (`ulimit -v`), and the room left in
/// its cgroup's `memory.max`. Only what can be read counts; none readable: 1 GiB.
pub fn memory_left() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let mut left = vec![memory_available()];
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit into the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut lim) } == 0
        && lim.rlim_cur != libc::RLIM_INFINITY
    {
        let used = meminfo_field(&status, "VmSize:").unwrap_or(0);
        left.push(Some(lim.rlim_cur.saturating_sub(used)));
    }
    left.push(cgroup_left());
    left.into_iter().flatten().min().unwrap_or(1 << 30)
}

/// Room left under this process's cgroup v2 `memory.max` (none when unlimited or unread).
fn cgroup_left() -> Option<u64> {
    let cgroup = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = cgroup.lines().find_map(|l| l.strip_prefix("0::"))?;
    let dir = std::path::Path::new("/sys/fs/cgroup").join(path.trim_start_matches('/'));
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).ok();
    let max: u64 = read("memory.max")?.trim().parse().ok()?;
    let current: u64 = read("memory.current")?.trim().parse().ok()?;
    Some(max.saturating_sub(current))
}

/// One `Name: N kB` field of `/proc/meminfo` (or `/proc/PID/status`), in bytes.
fn meminfo_field(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    let mut words = line[name.len()..].split_whitespace();
    let n: u64 = words.next()?.parse().ok()?;
    let unit = match words.next() {
        Some("kB") => 1024,
        None => 1,
        Some(_) => return None,
    };
    n.checked_mul(unit)
}

/// `PRETTY_NAME` of an os-release file, unquoted.
pub(crate) fn parse_os_release(text: &str) -> Option<String> {
    let v = text.lines().find_map(|l| l.strip_prefix("PRETTY_NAME="))?;
    let v = v.trim();
    let v = v
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .or_else(|| v.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')))
        .unwrap_or(v);
    Some(v.replace("\\\"", "\"")).filter(|s| !s.is_empty())
}

/// The bracketed choice of a sysfs "always [madvise] never" file, or the whole text when
/// nothing is bracketed.
pub(crate) fn selected_choice(text: &str) -> String {
    text.split_whitespace()
        .find_map(|w| w.strip_prefix('[').and_then(|w| w.strip_suffix(']')))
        .unwrap_or_else(|| text.trim())
        .to_string()
}

fn online_cpus() -> u32 {
    // SAFETY: sysconf only reads a configuration value.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    u32::try_from(n).unwrap_or(0)
}

fn numa_nodes() -> Option<u32> {
    let dir = std::fs::read_dir("/sys/devices/system/node").ok()?;
    let n = dir
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_prefix("node"))
                .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
        })
        .count();
    (n > 0).then_some(n as u32)
}

/// (node name, kernel release) from `uname(2)`.
fn uname() -> (String, String) {
    // SAFETY: utsname is plain bytes, valid when zeroed; uname fills it with NUL-terminated
    // strings on success, and we read it only then.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: see above; uname writes only into the struct we pass.
    if unsafe { libc::uname(&mut u) } != 0 {
        return (UNKNOWN.into(), UNKNOWN.into());
    }
    let field = |f: &[libc::c_char]| {
        // SAFETY: uname NUL-terminates every field within its array.
        unsafe { CStr::from_ptr(f.as_ptr()) }
            .to_string_lossy()
            .into_owned()
    };
    (field(&u.nodename), field(&u.release))
}

#[cfg(test)]
mod tests {
    use super::*;

    // Two sockets, two cores each, two threads per core (abridged to the fields read).
    const HT_CPUINFO: &str = "\
processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz\nphysical id\t: 0\ncore id\t\t: 0\n\n\
processor\t: 1\nmodel name\t: Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz\nphysical id\t: 0\ncore id\t\t: 1\n\n\
processor\t: 2\nmodel name\t: Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz\nphysical id\t: 1\ncore id\t\t: 0\n\n\
processor\t: 3\nmodel name\t: Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz\nphysical id\t: 1\ncore id\t\t: 1\n\n\
processor\t: 4\nmodel name\t: Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz\nphysical id\t: 0\ncore id\t\t: 0\n\n\
processor\t: 5\nmodel name\t: Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz\nphysical id\t: 0\ncore id\t\t: 1\n\n\
processor\t: 6\nmodel name\t: Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz\nphysical id\t: 1\ncore id\t\t: 0\n\n\
processor\t: 7\nmodel name\t: Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz\nphysical id\t: 1\ncore id\t\t: 1\n";

    #[test]
    fn cpuinfo_counts_threads_and_cores() {
        let c = parse_cpuinfo(HT_CPUINFO);
        assert_eq!(c.logical, 8);
        assert_eq!(c.physical, Some(4));
        assert_eq!(
            c.model.as_deref(),
            Some("Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz")
        );
        // An ARM kernel without topology lines.
        let arm = "processor\t: 0\nBogoMIPS\t: 50.00\nprocessor\t: 1\nBogoMIPS\t: 50.00\n";
        let c = parse_cpuinfo(arm);
        assert_eq!((c.logical, c.physical, c.model), (2, None, None));
    }

    #[test]
    fn meminfo_os_release_and_sysfs_choices() {
        let mem = "MemTotal:       24684092 kB\nMemFree:        22080752 kB\n";
        assert_eq!(parse_mem_total(mem), Some(24_684_092 * 1024));
        assert_eq!(parse_mem_total("MemFree: 1 kB\n"), None);
        let os = "NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\n";
        assert_eq!(
            parse_os_release(os).as_deref(),
            Some("Debian GNU/Linux 12 (bookworm)")
        );
        assert_eq!(
            parse_os_release("PRETTY_NAME=Alpine\n").as_deref(),
            Some("Alpine")
        );
        assert_eq!(parse_os_release("ID=x\n"), None);
        assert_eq!(selected_choice("always [madvise] never\n"), "madvise");
        assert_eq!(selected_choice("[always] madvise never"), "always");
        assert_eq!(selected_choice("performance\n"), "performance");
    }

    #[test]
    fn this_machine() {
        let h = host_facts();
        // Compare with sources the probe does not read.
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
        assert_eq!(h.kernel, release.trim());
        let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
        assert_eq!(h.hostname, hostname.trim());
        let online = std::thread::available_parallelism().unwrap().get() as u32;
        assert!(h.cores >= online, "{} < {online}", h.cores);
        assert!(h.memory_bytes > 64 << 20, "{}", h.memory_bytes);
        assert!(
            ["always", "madvise", "never", UNKNOWN].contains(&h.thp.as_str()),
            "{}",
            h.thp
        );
        assert!(h.swappiness == UNKNOWN || h.swappiness.parse::<u32>().is_ok());
        assert_ne!(h.cpu_model, "");
    }
}
