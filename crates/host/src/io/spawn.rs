//! Running fio: the process this run started, killed (by its own pid, through `Child`) when
//! the run is stopped or fails, and by the kernel when qpslab itself dies (`kill -9`: fio is
//! started with a parent-death signal), and its `json+` reports read from its output as they
//! come.

use super::IoError;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

/// How often a wait looks at the stop flag.
const POLL: Duration = Duration::from_millis(50);

/// fio while it runs; dropping it kills and reaps it.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
        }
        let _ = self.0.wait();
    }
}

fn start(args: &[String], stdout: Stdio) -> Result<Running, IoError> {
    let parent = std::process::id() as libc::pid_t;
    let mut cmd = Command::new("fio");
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::piped());
    // SAFETY: the hook only calls prctl, getppid and _exit, async-signal-safe system calls
    // that touch no memory shared with the parent. The signal fires when the thread that
    // started fio ends; that thread waits for fio (every caller here does) or drops it.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // qpslab died between the fork and the prctl: nobody will stop this fio.
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
    cmd.spawn().map(Running).map_err(|_| IoError::FioMissing)
}

/// Reads fio's stderr to its end on a thread (so fio never blocks on a full pipe).
fn collect_stderr(r: &mut Running) -> std::thread::JoinHandle<String> {
    let mut err = r.0.stderr.take();
    std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(e) = err.as_mut() {
            let _ = e.read_to_string(&mut s);
        }
        s
    })
}

/// Waits for fio to exit; an exit with an error becomes [`IoError::Fio`] with its message.
fn finish(mut r: Running, stderr: std::thread::JoinHandle<String>) -> Result<(), IoError> {
    let status = r.0.wait().map_err(|e| IoError::Fio(e.to_string()))?;
    let text = stderr.join().unwrap_or_default();
    if status.success() {
        return Ok(());
    }
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("no message")
        .to_string();
    Err(IoError::Fio(format!("fio exited with {status}: {line}")))
}

/// Runs fio with `args` to its end, its output discarded; `stop` kills it.
pub fn run_quiet(args: &[String], stop: &AtomicBool) -> Result<(), IoError> {
    let mut r = start(args, Stdio::null())?;
    let stderr = collect_stderr(&mut r);
    loop {
        if stop.load(Ordering::SeqCst) {
            return Err(IoError::Interrupted);
        }
        match r.0.try_wait() {
            Ok(Some(_)) => return finish(r, stderr),
            Ok(None) => std::thread::sleep(POLL),
            Err(e) => return Err(IoError::Fio(e.to_string())),
        }
    }
}

/// Cuts fio's output into its top-level JSON documents: fio writes each report's braces on
/// lines of their own; anything else between reports (notes, warnings) is skipped.
pub fn documents(out: impl Read, mut each: impl FnMut(Value) -> bool) {
    let mut doc: Option<String> = None;
    for line in BufReader::new(out).lines() {
        let Ok(line) = line else { return };
        match (&mut doc, line.as_str()) {
            (None, "{") => doc = Some(line),
            (None, _) => {}
            (Some(d), l) => {
                d.push('\n');
                d.push_str(l);
                if l == "}" {
                    let text = doc.take().unwrap_or_default();
                    if let Ok(v) = serde_json::from_str(&text) {
                        if !each(v) {
                            return;
                        }
                    }
                }
            }
        }
    }
}

/// Runs fio with `args`, handing each report to `on_report` as it is written; `stop` (or an
/// error from `on_report`) kills it.
pub fn run_reporting(
    args: &[String],
    stop: &AtomicBool,
    mut on_report: impl FnMut(Value) -> Result<(), IoError>,
) -> Result<(), IoError> {
    let mut r = start(args, Stdio::piped())?;
    let stderr = collect_stderr(&mut r);
    let out = r.0.stdout.take();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        if let Some(out) = out {
            documents(out, |v| tx.send(v).is_ok());
        }
    });
    loop {
        if stop.load(Ordering::SeqCst) {
            return Err(IoError::Interrupted);
        }
        match rx.recv_timeout(POLL) {
            Ok(v) => on_report(v)?,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return finish(r, stderr),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_skip_what_is_not_a_report() {
        let out = "fio: note\n{\n  \"a\" : 1\n}\ngarbage }\n{\n  \"b\" : [\n}\n{\n\"c\": 2\n}\n";
        let mut seen = Vec::new();
        documents(out.as_bytes(), |v| {
            seen.push(v);
            true
        });
        assert_eq!(
            seen,
            vec![serde_json::json!({"a": 1}), serde_json::json!({"c": 2})]
        );
    }
}
