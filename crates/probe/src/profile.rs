//! On-CPU profiles of a server process: `perf record -g` attached to its pid, folded into
//! stacks that flame graphs are drawn from ([`flame`]).
//!
//! [`Recording::start`] attaches `perf record -g -F 499 -p PID` (all the process's threads) and
//! writes `DIR/NAME.perf.data`; [`Recording::stop`] stops perf with SIGINT (bounded: SIGKILL
//! after [`STOP_WAIT`]), runs `perf script` and folds its stacks with inferno's perf collapser
//! into `DIR/NAME.folded`, one `frame;frame;frame count` line per distinct stack. The event is
//! `cycles` when the machine has hardware counters ([`crate::perf::perf_support`]), else the
//! software `cpu-clock` timer, and the [`Profile`] says which and why. A recording dropped
//! without [`Recording::stop`] (an error, Ctrl-C) stops perf too: perf never outlives it.
//!
//! The server's CPU per thread and class over a recording is the `threads` module's business
//! (snapshots before and after). A server reached through a Unix socket on this machine is
//! found with [`socket_peer_pid`].
//!
//! ```no_run
//! # fn demo(pid: u32) -> Result<(), qpslab_probe::profile::ProfileError> {
//! use qpslab_probe::profile::Recording;
//! let rec = Recording::start(pid, std::path::Path::new("profiles"), "side-a")?;
//! // ... the load whose server CPU is wanted ...
//! let profile = rec.stop()?;
//! println!("{} stacks sampled ({}) in {}", profile.files.samples, profile.files.event,
//!          profile.files.folded.display());
//! # Ok(()) }
//! ```

use qpslab_core::fault::{user_if, Blame, Fault};

pub mod flame;
mod fold;
mod peer;

pub use peer::{socket_peer_pid, socket_pid, PeerError};
use qpslab_core::telemetry::ProfileFiles;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Samples per second and thread. 499 (not 500) so sampling does not beat in step with
/// timers of the server; perf's cost at this rate is about 1-2% of one CPU per busy thread.
pub const FREQUENCY: u32 = 499;

/// How long perf gets to write its data after SIGINT before it is killed.
pub const STOP_WAIT: Duration = Duration::from_secs(30);

/// How long a starting perf is watched for an immediate failure (no such pid, no permission).
const START_WATCH: Duration = Duration::from_millis(300);

/// What can go wrong profiling.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// `perf` is not installed.
    #[error("perf is not available here ({0}): install it (Debian: apt-get install linux-perf)")]
    NoPerf(String),
    /// The kernel does not let us record that process.
    #[error(
        "perf may not record process {pid} ({detail}): run as root or lower \
         kernel.perf_event_paranoid (sysctl -w kernel.perf_event_paranoid=1)"
    )]
    Denied {
        /// The process.
        pid: u32,
        /// perf's own words.
        detail: String,
    },
    /// The process to record does not exist (any more).
    #[error("process {0} does not exist (has the server exited?)")]
    NoProcess(u32),
    /// The server's process is not known (an external server): nothing to attach to.
    #[error(
        "the server's process is not known (an external server): profiles need a server of \
         ours on this machine (the embedded sandbox or --sandbox NAME)"
    )]
    NoPid,
    /// perf failed otherwise.
    #[error("{0}")]
    Perf(String),
    /// A file of the profile could not be written or read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

impl Blame for ProfileError {
    /// True when the user has to act on the machine (install perf, allow perf): exit 2.
    fn fault(&self) -> Fault {
        user_if(matches!(
            self,
            ProfileError::NoPerf(_) | ProfileError::Denied { .. } | ProfileError::NoPid
        ))
    }
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> ProfileError + '_ {
    move |source| ProfileError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A profile taken: its files and the server's CPU per thread over it.
#[derive(Clone, Debug)]
pub struct Profile {
    /// The folded stacks (written), the flame graph's path (for the renderer), the event.
    pub files: ProfileFiles,
}

/// A running `perf record` of one process. See the module documentation.
pub struct Recording {
    child: Option<Child>,
    pid: u32,
    data: PathBuf,
    log: PathBuf,
    files: ProfileFiles,
}

/// Whether `perf` can be run here, so a caller can refuse before anything starts.
pub fn perf_available() -> Result<(), ProfileError> {
    match Command::new("perf").arg("--version").output() {
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => Err(ProfileError::NoPerf(format!(
            "perf --version: {}",
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .next()
                .unwrap_or("failed")
        ))),
        Err(e) => Err(ProfileError::NoPerf(e.to_string())),
    }
}

/// The event to sample and why: `cycles` with hardware counters, else `cpu-clock`.
pub fn choose_event() -> (&'static str, String) {
    match crate::perf::perf_support() {
        Ok(()) => ("cycles", "cycles: hardware counters available".into()),
        Err(why) => ("cpu-clock", format!("cpu-clock: {why}")),
    }
}

impl Recording {
    /// Starts recording process `pid` (all its threads) into `dir` (created if missing) as
    /// `NAME.perf.data`; the folded stacks will be `NAME.folded`, the flame graph `NAME.svg`.
    pub fn start(pid: u32, dir: &Path, name: &str) -> Result<Recording, ProfileError> {
        if !Path::new(&format!("/proc/{pid}")).exists() {
            return Err(ProfileError::NoProcess(pid));
        }
        std::fs::create_dir_all(dir).map_err(io_error(dir))?;
        let (event, event_reason) = choose_event();
        let data = dir.join(format!("{name}.perf.data"));
        let log = dir.join(format!("{name}.perf.log"));
        let log_file = std::fs::File::create(&log).map_err(io_error(&log))?;
        let child = Command::new("perf")
            .args(["record", "-g", "-N", "-e", event])
            .args(["-F", &FREQUENCY.to_string(), "-p", &pid.to_string(), "-o"])
            .arg(&data)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log_file)
            .spawn()
            .map_err(|e| {
                let _ = std::fs::remove_file(&log);
                match e.kind() {
                    std::io::ErrorKind::NotFound => ProfileError::NoPerf(e.to_string()),
                    _ => ProfileError::Perf(format!("cannot start perf record: {e}")),
                }
            })?;
        let mut rec = Recording {
            child: Some(child),
            pid,
            data,
            log,
            files: ProfileFiles {
                folded: dir.join(format!("{name}.folded")),
                svg: dir.join(format!("{name}.svg")),
                event: event.into(),
                event_reason,
                samples: 0,
                not_drawn: None,
            },
        };
        rec.watch_start()?;
        Ok(rec)
    }

    /// Fails when perf exits right away, with the reason it printed.
    fn watch_start(&mut self) -> Result<(), ProfileError> {
        let until = Instant::now() + START_WATCH;
        while Instant::now() < until {
            let exited = match self.child.as_mut() {
                Some(c) => c.try_wait().ok().flatten(),
                None => None,
            };
            if exited.is_some() {
                self.child = None;
                return Err(self.failure("perf record exited at once"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }

    /// The error perf's log describes, `context` when it says nothing.
    fn failure(&self, context: &str) -> ProfileError {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let line = text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with('['))
            .unwrap_or(context)
            .to_string();
        if text.contains("paranoid") || text.contains("ermission") {
            return ProfileError::Denied {
                pid: self.pid,
                detail: line,
            };
        }
        if !Path::new(&format!("/proc/{}", self.pid)).exists() {
            return ProfileError::NoProcess(self.pid);
        }
        ProfileError::Perf(format!("perf record: {line}"))
    }

    /// Stops perf, folds the stacks into the `.folded` file and returns the profile.
    pub fn stop(mut self) -> Result<Profile, ProfileError> {
        let status = self.child.take().map(halt);
        if status.is_some_and(|s| s.is_none()) || !self.data.exists() {
            return Err(self.failure("perf record wrote no data"));
        }
        let folded = fold::perf_script_folded(&self.data)?;
        self.files.samples = fold::count_samples(&folded);
        fold::write_atomically(&self.files.folded, folded.as_bytes())?;
        Ok(Profile {
            files: self.files.clone(),
        })
    }
}

impl Drop for Recording {
    /// Stops perf if it still runs; perf's log goes (perf.data stays for `perf report`).
    fn drop(&mut self) {
        if let Some(child) = self.child.take() {
            halt(child);
        }
        let _ = std::fs::remove_file(&self.log);
    }
}

/// Stops perf: SIGINT (it then writes its data), at most [`STOP_WAIT`], then SIGKILL.
/// The exit status, or `None` when it had to be killed.
fn halt(mut child: Child) -> Option<ExitStatus> {
    // SAFETY: kill only sends a signal to the child we spawned and have not reaped yet.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGINT);
    }
    let until = Instant::now() + STOP_WAIT;
    while Instant::now() < until {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(_) => break,
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}
