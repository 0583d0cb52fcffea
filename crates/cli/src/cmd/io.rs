//! `qpslab io MODE`: checks everything before anything runs (options, fio, the directory, free
//! space), lays the files out, runs fio, prints each interval as it comes and stores it as a
//! run (events are I/O operations), then removes the files. A signal kills fio, removes the
//! files and keeps what was measured as an interrupted run.
//!
//! sysbench's life cycle in three steps: `--prepare` lays the files out and leaves them,
//! `--prepared` measures them as they are, `--cleanup` removes them. Called as sysbench, the
//! lines on standard output are sysbench fileio's.

use crate::args::IoArgs;
use crate::error::{fail, user};
use crate::plan::resolve_flags;
use crate::render::io::{io_summary, live_line};
use crate::signals::INTERRUPTED;
use anyhow::{Context, Result};
use qpslab_core::env::ServerInfo;
use qpslab_core::fileio::FileIoOptions;
use qpslab_host::io::{job::Timing, Files, IoError, IoRun};
use qpslab_store::RunMeta;
use std::time::Duration;

/// The fileio options and timing of `a`, every value checked.
fn plan(a: &IoArgs) -> Result<(qpslab_core::RunPlan, FileIoOptions, Timing)> {
    crate::db::check(&a.db.db)?;
    crate::out::Output::new(&a.output, "io")?;
    if let Some(path) = &a.fio_json {
        crate::outfile::check("--fio-json", path, true)?;
    }
    let mut plan = resolve_flags(&a.options.0)?.plan;
    plan.report_interval_s = qpslab_host::io::job::status_interval(plan.report_interval_s);
    let io = plan.fileio.clone().context("io: no fileio options")?;
    let [threads] = plan.threads[..] else {
        return Err(user("--threads: io runs one thread count"));
    };
    let time_s = plan
        .stop
        .time_s
        .filter(|t| *t > 0.0)
        .ok_or_else(|| user("--time: io needs a time above 0"))?;
    let timing = Timing {
        threads,
        time_s,
        interval_s: plan.report_interval_s,
    };
    Ok((plan, io, timing))
}

/// The fileio options of `a` alone (`--prepare`, `--cleanup`).
fn options(a: &IoArgs) -> Result<FileIoOptions> {
    // The files do not depend on the test mode; one is named when none was, so that the
    // fileio options resolve.
    let mut given = a.options.0.clone();
    if !given.0.iter().any(|(name, _)| *name == "file_test_mode") {
        given.0.insert(0, ("file_test_mode", "seqwr".into()));
    }
    let plan = resolve_flags(&given)?.plan;
    plan.fileio.context("io: no fileio options")
}

/// `qpslab io --prepare`: the files laid out in `--dir` and left there.
fn prepare(a: &IoArgs) -> Result<()> {
    let o = options(a)?;
    let started = std::time::Instant::now();
    let before = qpslab_host::io::prepare(&o, &a.dir, &INTERRUPTED).map_err(fail)?;
    let seconds = started.elapsed().as_secs_f64();
    if crate::out::sysbench() {
        print!(
            "{}",
            crate::render::sysbench_fileio::prepare_text(&o, &before, seconds)
        );
        return Ok(());
    }
    println!(
        "laid out {} files, {} in {} in {seconds:.1}s (qpslab io MODE --prepared measures them, \
         qpslab io --cleanup removes them)",
        o.num,
        qpslab_core::units::size_text(o.total_size),
        a.dir.display()
    );
    Ok(())
}

/// `qpslab io --cleanup`: the files of `--file-num` removed from `--dir`.
fn cleanup(a: &IoArgs) -> Result<()> {
    let o = options(a)?;
    if crate::out::sysbench() {
        print!("{}", crate::render::sysbench_fileio::cleanup_text());
    }
    let n = qpslab_host::io::files::TestFiles::remove(&o, &a.dir).map_err(fail)?;
    own!("removed {n} test file(s) from {}", a.dir.display());
    Ok(())
}

/// Runs `qpslab io`.
pub fn io(a: IoArgs) -> Result<()> {
    if a.prepare {
        return prepare(&a);
    }
    if a.cleanup {
        return cleanup(&a);
    }
    let (plan, options, timing) = plan(&a)?;
    let dir = std::fs::canonicalize(&a.dir).unwrap_or_else(|_| a.dir.clone());
    let run = IoRun {
        options: &options,
        timing: timing.clone(),
        dir: &dir,
        files: match (a.prepared, a.keep_files) {
            (true, _) => Files::Prepared,
            (false, true) => Files::Kept,
            (false, false) => Files::Temporary,
        },
    };
    let version = qpslab_host::io::preflight(&run).map_err(fail)?;
    // The store is opened once the input is known to be valid, so rejected input writes nothing.
    let mut store = crate::db::open_to_write(&a.db.db)?;
    let meta = RunMeta::new(
        plan,
        format!("files in {}", dir.display()),
        ServerInfo::default(),
        qpslab_probe::host_facts(),
        std::env::args().collect::<Vec<_>>().join(" "),
    );
    let sysbench = crate::out::sysbench();
    if sysbench {
        let interval = (!a.no_live_lines).then_some(timing.interval_s);
        let lines = crate::render::sysbench_fileio::mode_lines(&options);
        let header = crate::render::sysbench::test_header(timing.threads, interval, None, &lines);
        print!("{header}");
    }
    own!(
        "== {} · {} thread(s) · {} s · {} files, {} in {} · {version} ==",
        options.label(),
        timing.threads,
        timing.time_s,
        options.num,
        qpslab_core::units::size_text(options.total_size),
        dir.display()
    );
    let mut printed = 0;
    let mut progress = crate::progress::Line::plain(std::time::Duration::from_secs(10));
    let stored =
        qpslab_host::io::stored::measure_stored(&mut store, &meta, &run, &INTERRUPTED, |s| {
            // fio's last report may close a short interval; sysbench's lines end at the time.
            let second = s.elapsed_s.round() as u64;
            if !sysbench {
                println!("{}", live_line(s, options.block_size));
            } else if !a.no_live_lines && second > printed {
                printed = second;
                let line = crate::render::sysbench_fileio::interval_line(s, options.block_size);
                println!("{line}");
            }
            progress.show(|| {
                let (at, of) = (s.elapsed_s, timing.time_s);
                let eta = crate::progress::eta_text(at, of, Duration::from_secs_f64(at));
                format!("io: {at:.0}s of {of:.0}s{eta}")
            });
        });
    let (id, m) = match stored {
        Ok(s) => (s.run_id, s.measured),
        Err(IoError::Store(e)) => return Err(e.into()),
        Err(e) => return Err(fail(e)).context(options.label()),
    };
    if sysbench {
        let histogram = a.histogram.as_deref() == Some("on");
        print!(
            "{}",
            crate::render::sysbench_fileio::summary(&m.phase, histogram)
        );
        eprint!("{}", crate::render::sysbench::own_lines(&m.phase));
    } else {
        println!();
        print!("{}", io_summary(&m.phase));
    }
    own!(
        "stored as run {} in {}  (qpslab show {})",
        id.0,
        store.path().display(),
        id.0
    );
    if let Some(path) = &a.fio_json {
        crate::outfile::write("--fio-json", path, &crate::out::json(&m.fio_report)?)?;
    }
    super::show::emit_run(&a.output, "io", &store, id)?;
    Ok(())
}
