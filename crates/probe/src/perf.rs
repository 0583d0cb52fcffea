//! `perf stat` counters of a process over a phase, when the machine supports them.
//!
//! Virtual machines often expose no hardware counters: `perf stat` then prints
//! `<not supported>` for every event. Support is detected once per process with
//! `perf stat -e instructions true`; without it the phase records why, never an error.

use qpslab_core::telemetry::Perf;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;

/// The counters asked for: the micro-architecture comparison of the source studies (cycles,
/// instructions, branches, iTLB/dTLB, L1 and last-level cache misses; perf has no generic L2
/// event, so the last-level cache stands in for it).
pub const EVENTS: &str = "cycles,instructions,branches,branch-misses,iTLB-load-misses,\
dTLB-load-misses,L1-dcache-load-misses,L1-icache-load-misses,LLC-load-misses";

/// Why `perf stat` cannot count here (a fact about the machine, recorded with the phase, never
/// a failure of it).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PerfError {
    /// `perf` could not be run (the reason from the OS).
    #[error("perf not available here ({0}); install linux-perf")]
    Missing(String),
    /// `perf stat` ran and failed (the first line it printed).
    #[error("perf stat failed here: {0}")]
    Failed(String),
    /// The machine has no hardware counters (a VM without a virtual PMU).
    #[error("hardware counters not supported here (perf stat: instructions <not supported>; a VM without a virtual PMU)")]
    NoCounters,
    /// `perf stat` could not be started for a process.
    #[error("cannot start perf stat: {0}")]
    Spawn(String),
}

/// A study's environment records the reason as its message.
impl serde::Serialize for PerfError {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Whether `perf stat` can count hardware events here; the error says why not.
pub fn perf_support() -> Result<(), PerfError> {
    static SUPPORT: OnceLock<Result<(), PerfError>> = OnceLock::new();
    SUPPORT
        .get_or_init(|| {
            let out = Command::new("perf")
                .args(["stat", "-x,", "-e", "instructions", "true"])
                .stdout(Stdio::null())
                .output()
                .map_err(|e| PerfError::Missing(e.to_string()))?;
            let text = String::from_utf8_lossy(&out.stderr);
            if !out.status.success() {
                return Err(PerfError::Failed(
                    text.lines().next().unwrap_or("").trim().to_string(),
                ));
            }
            if text.contains("<not supported>") || text.contains("<not counted>") {
                return Err(PerfError::NoCounters);
            }
            Ok(())
        })
        .clone()
}

/// A running `perf stat` attached to a process.
pub struct PerfStat {
    child: Child,
    out: PathBuf,
}

impl PerfStat {
    /// Attaches `perf stat` to `pid`, or says why it cannot.
    pub fn start(pid: u32) -> Result<PerfStat, PerfError> {
        perf_support()?;
        let out = std::env::temp_dir().join(format!(
            "qpslab-perf-{}-{pid}-{}.csv",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        ));
        let child = Command::new("perf")
            .args(["stat", "-x,", "-e", EVENTS, "-p", &pid.to_string(), "-o"])
            .arg(&out)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| PerfError::Spawn(e.to_string()))?;
        Ok(PerfStat { child, out })
    }

    /// Stops counting (SIGINT makes perf print its totals) and returns the counters as JSON:
    /// `{"supported": true, "counters": {"instructions": N, ...}}`.
    pub fn stop(mut self) -> Perf {
        // SAFETY: kill only sends a signal to the child we spawned and still own.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGINT);
        }
        let _ = self.child.wait();
        let text = std::fs::read_to_string(&self.out).unwrap_or_default();
        let _ = std::fs::remove_file(&self.out);
        let counters = parse_perf_csv(&text);
        if counters.is_empty() {
            return Perf::unsupported("perf stat reported no counters");
        }
        Perf {
            supported: true,
            counters,
            ..Perf::default()
        }
    }
}

/// Counters from `perf stat -x,` output (`value,unit,event,...`); unsupported events are left out.
pub(crate) fn parse_perf_csv(text: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let f: Vec<&str> = line.split(',').collect();
        if f.len() < 3 {
            continue;
        }
        if let Ok(v) = f[0].trim().parse::<u64>() {
            out.insert(f[2].trim().to_string(), v);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_lines_are_read_and_unsupported_ones_skipped() {
        let text = "# started on x\n\n1234,,instructions,1000,100.00,,\n<not supported>,,cycles,0,100.00,,\n";
        let m = parse_perf_csv(text);
        assert_eq!(m["instructions"], 1234);
        assert!(!m.contains_key("cycles"));
    }

    #[test]
    fn a_reason_is_recorded_as_its_message() {
        let e = PerfError::Failed("no access".into());
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            serde_json::json!("perf stat failed here: no access")
        );
    }

    #[test]
    fn support_is_detected_either_way() {
        // Either answer is legitimate on some machine; the reason must say what to know.
        if let Err(why) = perf_support() {
            let why = why.to_string();
            assert!(why.contains("perf") || why.contains("counters"), "{why}");
        }
    }
}
