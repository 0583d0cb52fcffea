//! The profiling pass of `diff --profile DIR`: after the measured rounds, each side in turn
//! runs its classes' samples alone for a while ([`session::run_side`], the function the rounds
//! use) with its server recorded by `perf record -g` ([`qpslab_probe::profile::Recording`]),
//! and its server's threads read before and after ([`qpslab_probe::threads`]) for the CPU of
//! each thread class.
//!
//! A separate pass, not the rounds themselves: perf's sampling would tax the measured latencies,
//! and two sides on one server (two databases of one sandbox) are told apart only when they
//! run at different times.

use super::session::run_side;
use super::{DiffSide, Work};
use qpslab_core::diff::{ClassCpu, SideProfile};
use qpslab_lab::ExecError;
use qpslab_probe::profile::Recording;
use qpslab_probe::threads::{server_threads, ServerThreads};
use qpslab_wire::Conn;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// A class using less than this much of one CPU (percent) over the pass is left out.
const MIN_CPU_PCT: f64 = 0.5;

/// Runs `work` on `side` for `time` while recording its server (process `pid`) into
/// `dir/NAME.folded`, and reads the CPU of each of the server's thread classes over the pass.
pub fn profile_side(
    side: &DiffSide,
    pid: u32,
    work: &Work,
    (dir, name): (&Path, &str),
    time: Duration,
    stop: &AtomicBool,
) -> Result<SideProfile, ExecError> {
    let mut control = Conn::connect(&side.options).map_err(|e| ExecError::Connect {
        target: side.label.clone(),
        source: e,
    })?;
    let before = server_threads(pid, &mut control)?;
    let started = Instant::now();
    let recording = Recording::start(pid, dir, name).map_err(qpslab_probe::Error::from)?;
    // On an error the recording is dropped, which stops perf.
    let statements = run_side(side, work, started + time, stop)?;
    let profile = recording.stop().map_err(qpslab_probe::Error::from)?;
    let seconds = started.elapsed().as_secs_f64();
    let mut after = server_threads(pid, &mut control)?;
    after.rate_since(&before, seconds);
    Ok(SideProfile {
        side: side.label.clone(),
        files: profile.files,
        seconds,
        statements,
        cpu: cpu_by_class(&after),
    })
}

/// CPU by thread class, busiest first; without performance_schema (no classes) by thread.
fn cpu_by_class(t: &ServerThreads) -> Vec<ClassCpu> {
    let cpu: Vec<ClassCpu> = if t.classes_known {
        t.classes()
            .into_iter()
            .map(|c| ClassCpu {
                threads: c.tids.len(),
                class: c.class,
                cpu_pct: c.cpu,
            })
            .collect()
    } else {
        let mut by_thread: Vec<ClassCpu> = t
            .threads
            .iter()
            .map(|th| ClassCpu {
                class: format!("thread {} (performance_schema off)", th.task.tid),
                threads: 1,
                cpu_pct: th.task.cpu_s,
            })
            .collect();
        by_thread.sort_by(|a, b| b.cpu_pct.total_cmp(&a.cpu_pct));
        by_thread
    };
    cpu.into_iter()
        .filter(|c| c.cpu_pct >= MIN_CPU_PCT)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use qpslab_probe::threads::{Task, Thread};

    fn thread(tid: u32, class: Option<&str>, cpu_s: f64) -> Thread {
        Thread {
            task: Task {
                tid,
                comm: "mariadbd".into(),
                cpu_s,
                nice: 0,
                cpus: vec![0],
            },
            class: class.map(String::from),
            kind: None,
            connection_id: None,
        }
    }

    #[test]
    fn threads_stand_in_for_classes_without_performance_schema() {
        let mut t = ServerThreads {
            pid: 1,
            classes_known: true,
            threads: vec![
                thread(10, Some("thread/sql/one_connection"), 40.0),
                thread(11, Some("thread/sql/one_connection"), 20.0),
                thread(12, Some("thread/innodb/page_cleaner_thread"), 0.1),
            ],
        };
        let c = cpu_by_class(&t);
        assert_eq!(c.len(), 1, "idle classes are left out: {c:?}");
        assert_eq!((c[0].threads, c[0].cpu_pct), (2, 60.0));
        t.classes_known = false;
        t.threads.iter_mut().for_each(|th| th.class = None);
        let c = cpu_by_class(&t);
        assert_eq!(c.len(), 2);
        assert!(
            c[0].class.starts_with("thread 10 ") && c[0].cpu_pct == 40.0,
            "{c:?}"
        );
    }
}
