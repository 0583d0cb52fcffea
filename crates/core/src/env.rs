//! Where a run happened: facts about the host and the server, and a process's CPU and memory.
//!
//! Plain data filled by `qpslab-probe` and stored with every run by `qpslab-store`, so that any
//! stored result says what machine and which server configuration produced it.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The machine a run was measured on. Text fields read `unknown` when the source was missing.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostFacts {
    /// The node name (`uname -n`).
    pub hostname: String,
    /// The CPU's model name from `/proc/cpuinfo`.
    pub cpu_model: String,
    /// Logical CPUs (hardware threads).
    pub cores: u32,
    /// Physical cores, when `/proc/cpuinfo` tells them apart.
    pub physical_cores: Option<u32>,
    /// Total memory in bytes (`MemTotal`).
    pub memory_bytes: u64,
    /// Kernel release (`uname -r`).
    pub kernel: String,
    /// `PRETTY_NAME` from `/etc/os-release`.
    pub os: String,
    /// Transparent huge pages policy: the selected value of
    /// `/sys/kernel/mm/transparent_hugepage/enabled` (`always`, `madvise` or `never`).
    pub thp: String,
    /// `vm.swappiness`.
    pub swappiness: String,
    /// The cpufreq governor of CPU 0, when the kernel exposes one (VMs often do not).
    pub cpu_governor: Option<String>,
    /// NUMA nodes, when the kernel exposes them.
    pub numa_nodes: Option<u32>,
}

/// The server a run was measured against: its version and every global variable that holds no
/// secret.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerInfo {
    /// `@@version`, e.g. `10.11.6-MariaDB-0+deb12u1`.
    pub version: String,
    /// `@@version_comment`, e.g. `Debian 12`.
    pub version_comment: String,
    /// `mariadb`, `mysql` or `percona`.
    pub flavor: String,
    /// `SHOW GLOBAL VARIABLES`, less anything that could hold a credential.
    pub variables: BTreeMap<String, String>,
    /// The CPUs the server's threads may run on (their affinity, `0-1`), read once its
    /// placement was made, for a server on this machine whose process is known: what a CPU set
    /// or a pin did to it. None where it cannot be seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<String>,
}

/// CPU time and resident memory of one process, as of one reading (not a delta).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcessCpu {
    /// User CPU seconds since the process started.
    pub user_s: f64,
    /// System CPU seconds since the process started.
    pub sys_s: f64,
    /// Current resident set size in KiB.
    pub rss_kib: u64,
}
