//! `qpslab doctor`: every external part qpslab can use, found or not, each with what it is for
//! and, when missing, how to get it. Each part is looked for by the same finder the command
//! that uses it calls (the sandbox's server search, fio's version check, perf's checks, the
//! allocator search, the engine's io_uring setup, the storage factors' tool check), so doctor
//! and the commands can never disagree.

use serde::Serialize;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long one `TOOL --version` may take before the tool is counted as not working.
const VERSION_TIMEOUT: Duration = Duration::from_secs(10);

/// One external part and what was found of it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Its name, e.g. `server` or `fio`.
    pub part: &'static str,
    /// What in qpslab uses it.
    pub used_for: &'static str,
    /// Whether a default command (`run`, `prepare`, `server start`) needs it.
    pub required: bool,
    /// Whether it is there and works.
    pub found: bool,
    /// What was found (path, version), or why not and the fix.
    pub detail: String,
}

impl Finding {
    fn of<E: std::fmt::Display>(
        part: &'static str,
        used_for: &'static str,
        result: Result<String, E>,
    ) -> Finding {
        let (found, detail) = match result {
            Ok(d) => (true, d),
            Err(e) => (false, e.to_string()),
        };
        Finding {
            part,
            used_for,
            required: false,
            found,
            detail,
        }
    }
}

/// Looks for every part; `basedir` is the server installation `--basedir` would name.
pub fn examine(basedir: Option<&Path>) -> Vec<Finding> {
    let mut out = vec![Finding {
        required: true,
        ..Finding::of(
            "server",
            "every sandbox: run, prepare, server start, lab",
            qpslab_sandbox::find_server(basedir)
                .map(|s| format!("{} {}", s.path.display(), s.version)),
        )
    }];
    out.push(Finding::of(
        "fio",
        "qpslab io and fileio cells",
        qpslab_host::io::check::fio_version(),
    ));
    let perf = qpslab_probe::profile::perf_available()
        .map(|()| version_of("perf").unwrap_or_else(|| "perf".into()));
    let has_perf = perf.is_ok();
    out.push(Finding::of("perf", "run --profile, perf counters", perf));
    out.push(Finding::of(
        "perf permission",
        "recording the server with perf",
        needs_perf(has_perf).and_then(|()| perf_permission()),
    ));
    out.push(Finding::of(
        "hardware counters",
        "perf counters per phase; profiles sample cpu-clock without them",
        needs_perf(has_perf).and_then(|()| {
            qpslab_probe::perf::perf_support()
                .map(|()| "perf stat counts instructions".into())
                .map_err(|e| e.to_string())
        }),
    ));
    for (part, malloc) in [
        ("jemalloc", qpslab_sandbox::Malloc::Jemalloc),
        ("tcmalloc", qpslab_sandbox::Malloc::Tcmalloc),
    ] {
        out.push(Finding::of(
            part,
            "--malloc and malloc factors",
            qpslab_sandbox::malloc_library(&malloc).map(|p| p.display().to_string()),
        ));
    }
    out.push(Finding::of(
        "io_uring",
        "the event loops' batched sends, --io-uring",
        qpslab_engine::run::io_uring_available()
            .map(|()| "available".to_string())
            .map_err(|e| format!("not available ({e}): the event loops send with plain syscalls")),
    ));
    out.push(Finding::of(
        "loop devices",
        "storage factors of studies",
        qpslab_host::storage::loop_support()
            .map(|()| "root, losetup, mkfs.ext4, mount".to_string()),
    ));
    for (part, used_for, package) in [
        (
            "sysbench",
            "bench/ and tests: qpslab's figures against sysbench's",
            "sysbench",
        ),
        (
            "pt-query-digest",
            "tests: qpslab digest against pt-query-digest",
            "percona-toolkit",
        ),
        (
            "chromium",
            "tests: HTML reports rendered headless",
            "chromium",
        ),
        ("prometheus", "scraping live metrics", "prometheus"),
    ] {
        out.push(Finding::of(
            part,
            used_for,
            version_of(part)
                .ok_or_else(|| format!("{part} not found: apt-get install {package} (optional)")),
        ));
    }
    out
}

/// True when every part a default command needs was found.
pub fn ready(findings: &[Finding]) -> bool {
    findings.iter().all(|f| f.found || !f.required)
}

fn needs_perf(has_perf: bool) -> Result<(), String> {
    if has_perf {
        Ok(())
    } else {
        Err("needs perf (apt-get install linux-perf)".into())
    }
}

/// Whether perf may record another process (the server): root, or
/// `kernel.perf_event_paranoid` at most 1.
fn perf_permission() -> Result<String, String> {
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        return Ok("root".into());
    }
    let file = "/proc/sys/kernel/perf_event_paranoid";
    let level = std::fs::read_to_string(file).map_err(|e| format!("cannot read {file} ({e})"))?;
    match level.trim().parse::<i32>() {
        Ok(l) if l <= 1 => Ok(format!("kernel.perf_event_paranoid = {l}")),
        _ => Err(format!(
            "kernel.perf_event_paranoid = {}: perf may not record the server; run as root or \
             sysctl -w kernel.perf_event_paranoid=1",
            level.trim()
        )),
    }
}

/// The first line `TOOL --version` prints, or `None` when it is not on PATH, fails, or takes
/// longer than [`VERSION_TIMEOUT`].
fn version_of(tool: &str) -> Option<String> {
    let mut child = Command::new(tool)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if start.elapsed() < VERSION_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(20))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
    let out = child.wait_with_output().ok()?;
    if !out.status.success() {
        return None;
    }
    // Some tools (prometheus) print their version on stderr.
    [out.stdout, out.stderr]
        .iter()
        .flat_map(|b| {
            String::from_utf8_lossy(b)
                .lines()
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .map(|l| l.trim().to_string())
        .find(|l| !l.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_missing_required_part_makes_the_machine_unready() {
        let part = |required, found| Finding {
            part: "x",
            used_for: "",
            required,
            found,
            detail: String::new(),
        };
        assert!(ready(&[part(true, true), part(false, false)]));
        assert!(!ready(&[part(true, false), part(false, true)]));
    }

    #[test]
    fn a_tool_not_on_path_has_no_version() {
        assert_eq!(version_of("qpslab-no-such-tool"), None);
        assert!(version_of("sh").is_none_or(|v| !v.is_empty()));
    }
}
