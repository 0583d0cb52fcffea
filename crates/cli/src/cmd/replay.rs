//! `qpslab replay LOG`: read a captured log, replay it on the target (the library's
//! `replay::measure`: one phase, telemetry on every tick, stored as it is measured, the run
//! closed however it ended), print a live line per second and the summary with each class's
//! counts.

use crate::args::{ReplayArgs, ReplayModeArg};
use crate::error::{exec_error, user};
use crate::printer::closed_note;
use crate::render::replay::LivePrinter;
use crate::signals::INTERRUPTED;
use crate::target::{connect, explicit, sandbox_home, Connected};
use anyhow::Result;
use qpslab_core::replay::{ReplayMode, ReplayPlan};
use qpslab_core::ConnectOptions;
use qpslab_core::{RunPlan, WorkloadKind, WorkloadOptions};
use qpslab_lab::run::sweep::Closed;
use qpslab_lab::server::restore::Ledger;
use qpslab_sqllog::Policy;
use qpslab_store::{RunMeta, Store};
use qpslab_traffic::replay::account::{self, AccessOptions};
use qpslab_traffic::replay::source::{load, Loaded};
use qpslab_traffic::replay::{class_id, refused, Ended, ReplayOptions};

/// Runs `qpslab replay`.
pub fn replay(a: ReplayArgs) -> Result<()> {
    crate::db::accept(&a.on_target);
    let opts = options(&a)?;
    crate::out::Output::new(&a.output, "replay")?;
    if !explicit(&a.target) {
        return Err(user(
            "replay needs the server that holds the log's tables: give --target, --socket, \
             --sandbox or --defaults-file",
        ));
    }
    let exporter = crate::metrics::start(a.metrics_addr.as_deref())?;
    let kind = crate::cmd::digest::log_type(a.log_type);
    let mut loaded = load(&a.log, kind).map_err(exec_error)?;
    eprintln!(
        "log: {} ({} log, {} bytes): {} statement(s) of {} class(es) from {} connection(s); \
         {} admin command(s) and {} unreadable entr(ies) skipped",
        a.log.display(),
        loaded.flavor,
        loaded.bytes,
        loaded.log.stmts.len(),
        loaded.log.classes.len(),
        loaded.log.connections(),
        loaded.log.skipped_admin,
        loaded.log.skipped_unparsed
    );
    if opts.mode == ReplayMode::Sessions && opts.speed > 0.0 && loaded.flavor == "MariaDB" {
        eprintln!(
            "note: MariaDB logs whole-second times: the statements of one second \
             start together, in order per connection"
        );
    }
    let home = sandbox_home(&a.home);
    let mut connected = connect(&a.target, None, &home)?;
    // Statements run in their logged databases unless --database names one.
    connected.options.database.clone_from(&a.target.database);
    // Each logged connection's statements read as the target reads them: its version for
    // executable comments, its sql_mode and the log's SET sql_mode for strings.
    let sessions = qpslab_traffic::replay::Sessions::of(opts.mode);
    if let Err(e) =
        qpslab_traffic::replay::classify_on(&[&connected.options], &mut loaded.log, sessions)
    {
        let _ = connected.finish();
        return Err(exec_error(e));
    }
    for r in refused(&loaded.log, &opts.policy) {
        eprintln!(
            "skipping {} ({} statement(s), {}): {}",
            class_id(r.class as usize),
            r.count,
            loaded.log.classes[r.class as usize],
            r.reason
        );
    }
    // Read-only: the server refuses writes (an account that only reads), the classifier is
    // the second line.
    let access = if opts.policy.read_only {
        let o = AccessOptions {
            trust_account: a.trust_account,
            grant_execute: a.grant_execute,
        };
        // The account is recorded where every host sharing the store looks for it.
        let ledger = match Ledger::for_store(home.path(), &a.db.db) {
            Ok(ledger) => ledger,
            Err(e) => {
                let _ = connected.finish();
                return Err(super::restore::error(e, &a.target));
            }
        };
        let access = account::prepare(
            &connected.options,
            &ledger,
            &loaded.log,
            opts.database.as_deref(),
            o,
        );
        match access {
            Ok(access) => {
                eprintln!("{}", access.note);
                Some(access)
            }
            Err(e) => {
                let _ = connected.finish();
                return Err(exec_error(e));
            }
        }
    } else {
        None
    };
    let session = access
        .as_ref()
        .map_or_else(|| connected.options.clone(), |x| x.session.clone());
    let outcome = crate::db::open_to_write(&a.db.db).and_then(|mut store| {
        let printer = LivePrinter::new(loaded.log.stmts.len() as u64, exporter.as_ref());
        measure(
            &a, &opts, &loaded, &mut store, &connected, &session, printer,
        )
    });
    let dropped = access.map_or(Ok(()), |x| x.finish());
    let stopped = connected.finish();
    outcome?;
    dropped.map_err(exec_error)?;
    stopped
}

/// The replay's options from its flags; bad values are the user's mistake.
fn options(a: &ReplayArgs) -> Result<ReplayOptions> {
    if !a.speed.is_finite() || a.speed < 0.0 {
        return Err(user(format!(
            "--speed {}: must be 0 (no waiting) or a positive factor (1 = the log's pace)",
            a.speed
        )));
    }
    let threads = match a.threads {
        None => None,
        Some(n) if (1..=10_000).contains(&n) => Some(n as u32),
        Some(n) => return Err(user(format!("--threads {n}: must be between 1 and 10000"))),
    };
    Ok(ReplayOptions {
        mode: match a.mode {
            ReplayModeArg::Sessions => ReplayMode::Sessions,
            ReplayModeArg::Max => ReplayMode::Max,
        },
        speed: a.speed,
        threads,
        database: a.target.database.clone(),
        policy: Policy {
            read_only: a.read_only,
            allow_admin: a.allow_admin,
            allow_destructive: a.allow_destructive,
        },
        report_interval_s: 1.0,
        percentiles: vec![95.0, 99.0],
    })
}

/// What the stored run says it ran.
fn plan(a: &ReplayArgs, o: &ReplayOptions, l: &Loaded) -> RunPlan {
    let mut plan = RunPlan::new(WorkloadOptions::new(WorkloadKind::OltpReadOnly));
    let sessions = qpslab_traffic::replay::sessions(&l.log, o);
    plan.threads = vec![sessions];
    plan.stop.time_s = None;
    plan.percentiles.clone_from(&o.percentiles);
    plan.replay = Some(ReplayPlan {
        log: a.log.display().to_string(),
        log_type: format!("{:?}", a.log_type).to_lowercase(),
        bytes: l.bytes,
        sha256: l.sha256.clone(),
        mode: o.mode,
        speed: o.speed,
        threads: o.threads,
        database: o.database.clone(),
        read_only: o.policy.read_only,
        allow_admin: o.policy.allow_admin,
        allow_destructive: o.policy.allow_destructive,
        statements: l.log.stmts.len() as u64,
    });
    plan
}

fn measure(
    a: &ReplayArgs,
    o: &ReplayOptions,
    l: &Loaded,
    store: &mut Store,
    target: &Connected,
    session: &ConnectOptions,
    mut printer: LivePrinter,
) -> Result<()> {
    let (mut sampler, server) = qpslab_traffic::replay::ready(
        &target.options,
        target.server_pid,
        &l.log,
        o,
        &mut crate::printer::Printer::new(),
    )
    // Readying fails as it does for `qpslab run`, in the same words.
    .map_err(|source| {
        crate::error::fail(qpslab_lab::request::RunError::Ready {
            source: Box::new(source),
            target_args: crate::target::command_args(&a.target),
        })
    })?;
    let meta = RunMeta::new(
        plan(a, o, l),
        target.options.describe(),
        server,
        qpslab_probe::host_facts(),
        crate::target::command_line(),
    );
    // Prepared XA transactions the replay leaves are rolled back, those it started only: another
    // client's, prepared meanwhile, are its own.
    let xa_before = sampler
        .conn()
        .and_then(|c| qpslab_traffic::replay::xa::prepared(c).ok());
    let xa_started = qpslab_traffic::replay::xa::Started::default();
    let outcome = qpslab_traffic::replay::measure(
        store,
        &meta,
        session,
        &l.log,
        o,
        &mut sampler,
        &mut printer,
        &INTERRUPTED,
        &xa_started,
    );
    if let (Some(before), Some(conn)) = (&xa_before, sampler.conn()) {
        match qpslab_traffic::replay::xa::roll_back_new(conn, before, &xa_started.xids()) {
            Ok(left) => {
                for (xid, failed) in left {
                    match failed {
                        None => eprintln!("rolled back XA transaction {xid}, left prepared by the replay"),
                        Some(e) => eprintln!(
                            "warning: XA transaction {xid} left prepared by the replay: XA ROLLBACK {xid} failed: {e}"
                        ),
                    }
                }
            }
            Err(e) => eprintln!("warning: could not list the XA transactions left prepared: {e}"),
        }
    }
    let outcome = outcome?;
    let m = match outcome {
        Ended::Done(m) => m,
        Ended::Unfinished(u) => {
            if let Some(m) = &u.measured {
                println!();
                print!("{}", crate::render::replay::summary(&m.phase));
            }
            return Err(unfinished(u.source, &u.closed, "replay".into()));
        }
    };
    println!();
    print!("{}", crate::render::replay::summary(&m.phase));
    println!(
        "stored as run {} in {}  (qpslab show {})",
        m.run_id.0,
        store.path().display(),
        m.run_id.0
    );
    super::show::emit_run(&a.output, "replay", store, m.run_id)?;
    Ok(())
}

/// For a run the library closed after its phase did not finish (interrupted or failed): says
/// where what was measured is stored, and returns the error to report, in the context `what`;
/// for a phase the store could not keep, where it went instead.
pub(crate) fn unfinished(e: qpslab_lab::ExecError, closed: &Closed, what: String) -> anyhow::Error {
    closed_note(closed);
    if let (qpslab_lab::ExecError::Unstored { source, .. }, Some(kept)) = (&e, &closed.kept) {
        let whereto = match kept {
            Ok(path) => format!("it is kept in {} (the run's JSON form)", path.display()),
            Err(why) => format!("it could not be written anywhere either ({why})"),
        };
        return anyhow::anyhow!(
            "{what}: the results store {} could not keep the measured phase ({source}); {whereto}",
            closed.store.display()
        );
    }
    exec_error(e).context(what)
}
