//! `run --profile DIR` (and a study's `perf_profile` key): what is checked before anything starts,
//! and the flame graph drawn from each phase's folded stacks as the phase ends.
//!
//! The recording itself belongs to the sampler (`qpslab_probe::profile`), which the lab starts
//! and stops around each measured phase; the drawing is `qpslab_report::flame`.

use crate::error::user;
use crate::target::Connected;
use anyhow::Result;
use qpslab_core::telemetry::ProfileFiles;
use qpslab_core::Endpoint;

/// Finds the process of a server of the user's reached through a Unix socket on this machine
/// (the socket's peer), so it can be profiled like a sandbox; its CPU is then sampled too.
pub fn find_server(target: &mut Connected) {
    if let (None, Endpoint::Unix { path }) = (target.server_pid, &target.options.endpoint) {
        target.server_pid = qpslab_probe::profile::socket_peer_pid(path);
    }
}

/// Refuses `--profile` before the run starts when it cannot work: the server's process must be
/// known (a sandbox, or a local server found by [`find_server`]) and perf must be installed.
pub fn check(dir: &std::path::Path, target: &Connected) -> Result<()> {
    if target.server_pid.is_none() {
        return Err(user(format!(
            "--profile {}: the server's process is not known for {} (only a server on this \
             machine reached through its Unix socket can be found): profile it through \
             --socket, or the embedded sandbox or --sandbox NAME",
            dir.display(),
            target.options.describe()
        )));
    }
    qpslab_probe::profile::perf_available().map_err(|e| user(format!("--profile: {e}")))
}

/// Draws the flame graph of a phase's profile next to its folded stacks and says where both
/// are. A graph that cannot be drawn is a warning: the folded stacks are kept either way.
pub fn draw(threads: u32, files: &ProfileFiles) {
    let title = format!("server on-CPU · {threads} thread(s)");
    let subtitle = format!(
        "{} · {} samples · {}",
        stem(&files.folded),
        files.samples,
        files.event_reason
    );
    let drawn = std::fs::read_to_string(&files.folded)
        .map_err(|e| format!("{}: {e}", files.folded.display()))
        .and_then(|folded| {
            qpslab_report::flame::flamegraph(&folded, &title, Some(&subtitle))
                .and_then(|svg| qpslab_report::flame::write_svg(&files.svg, &svg))
                .map_err(|e| e.to_string())
        });
    match drawn {
        Ok(()) => println!(
            "    profile ({}, {} samples): {}  flame graph: {}",
            files.event,
            files.samples,
            files.folded.display(),
            files.svg.display()
        ),
        Err(e) => eprintln!(
            "warning: no flame graph ({e}); the folded stacks are in {}",
            files.folded.display()
        ),
    }
}

fn stem(path: &std::path::Path) -> String {
    path.file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned())
}
