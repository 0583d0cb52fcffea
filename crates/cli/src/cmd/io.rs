//! `qpslab io MODE`: checks everything before anything runs (options, fio, the directory, free
//! space), lays the files out, runs fio, prints each interval as it comes and stores it as a
//! run (events are I/O operations), then removes the files. A signal kills fio, removes the
//! files and keeps what was measured as an interrupted run.

use crate::args::IoArgs;
use crate::error::{fail, user};
use crate::plan::resolve_flags;
use crate::render::io::{io_summary, live_line};
use crate::signals::INTERRUPTED;
use anyhow::{Context, Result};
use qpslab_core::env::ServerInfo;
use qpslab_core::fileio::FileIoOptions;
use qpslab_host::io::{job::Timing, IoError, IoRun};
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

/// Runs `qpslab io`.
pub fn io(a: IoArgs) -> Result<()> {
    let (plan, options, timing) = plan(&a)?;
    let dir = std::fs::canonicalize(&a.dir).unwrap_or_else(|_| a.dir.clone());
    let run = IoRun {
        options: &options,
        timing: timing.clone(),
        dir: &dir,
        keep_files: a.keep_files,
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
    println!(
        "== {} · {} thread(s) · {} s · {} files, {} in {} · {version} ==",
        options.label(),
        timing.threads,
        timing.time_s,
        options.num,
        qpslab_core::units::size_text(options.total_size),
        dir.display()
    );
    let mut progress = crate::progress::Line::plain(std::time::Duration::from_secs(10));
    let stored =
        qpslab_host::io::stored::measure_stored(&mut store, &meta, &run, &INTERRUPTED, |s| {
            println!("{}", live_line(s, options.block_size));
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
    println!();
    print!("{}", io_summary(&m.phase));
    println!(
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
