//! `qpslab prepare` and `qpslab cleanup`: the arguments checked, the target connected, then one
//! call each to `qpslab_lab::run::ready::{prepare, cleanup}`; their errors said as the user needs them.

use crate::args::{CleanupArgs, Format, PrepareArgs};
use crate::error::{exec_error, fail, user};
use crate::out::Output;
use crate::plan::workload_options;
use crate::printer::Printer;
use crate::target::{command_args, connect, sandbox_home};
use anyhow::Result;
use qpslab_core::{ConnectOptions, WorkloadOptions};
use qpslab_engine::prepare;
use qpslab_lab::run::exec::Observer;
use qpslab_lab::run::ready::ReadyError;

/// Runs `qpslab prepare`.
pub fn prepare(a: PrepareArgs) -> Result<()> {
    let out = Output::new(&a.output, "prepare")?;
    let w = workload_options(&a.workload)?;
    let threads = a
        .threads
        .map(|n| crate::plan::loader_threads("--threads", n))
        .transpose()?;
    let home = sandbox_home(&a.home);
    let target = connect(&a.target, Some(&a.embedded), &home)?;
    let target_args = command_args(&a.target);
    let server = target.server(&home, &target_args);
    // A sandbox is ours: its database is created as needed. On the user's server only when asked.
    let mut observer = Prepared {
        inner: Printer::new().for_prepare(),
        doc: None,
        // A signal stops prepare at once: on the user's server, say what it leaves there.
        interrupted: (!target.ours).then(|| Interrupted {
            workload: w.clone(),
            target: target.options.clone(),
            cleanup: format!("qpslab cleanup {} {}", w.kind, target_args.join(" ")),
        }),
    };
    let outcome =
        qpslab_lab::dataset::ready::prepare(&server, &w, threads, a.create_db, &mut observer)
            .map_err(|e| prepare_error(e, &w, &target.options));
    crate::signals::leaves_behind(None);
    let stopped = target.finish();
    outcome?;
    stopped?;
    out.emit(|f| match (f, &observer.doc) {
        (Format::Json, Some(doc)) => crate::out::json(doc),
        // The printer said it as it happened.
        _ => Ok(String::new()),
    })
}

/// `prepare`'s observer: the printer's progress and line, what was built for --format json,
/// and on a user's server what a signal would leave there.
struct Prepared {
    inner: Printer,
    doc: Option<serde_json::Value>,
    interrupted: Option<Interrupted>,
}

/// What a prepare on the user's server is loading, for the line a signal prints.
struct Interrupted {
    workload: WorkloadOptions,
    target: ConnectOptions,
    cleanup: String,
}

impl Interrupted {
    /// `prepare left 4 partly loaded table(s) in sbtest on ...: sbtest1, ...; drop them with:`.
    fn line(&self, p: &prepare::PrepareProgress) -> String {
        let w = &self.workload;
        let names = if w.kind == qpslab_core::WorkloadKind::Tpcc {
            "the TPC-C tables".to_string()
        } else {
            (1..=w.tables)
                .map(|t| format!("sbtest{t}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        format!(
            "prepare left {} table(s) of `{}` on {} partly loaded ({} of {} finished: {names}); drop them with: {}",
            p.tables_total,
            self.target.database.as_deref().unwrap_or(crate::target::DEFAULT_DATABASE),
            self.target.describe(),
            p.tables_done,
            p.tables_total,
            self.cleanup.trim_end()
        )
    }
}

impl Observer for Prepared {
    fn message(&mut self, line: &str) {
        self.inner.message(line);
    }

    fn prepare_progress(&mut self, p: &prepare::PrepareProgress) {
        self.inner.prepare_progress(p);
        if let Some(i) = &self.interrupted {
            crate::signals::leaves_behind(Some(i.line(p)));
        }
    }

    fn prepared(&mut self, w: &WorkloadOptions, r: &prepare::PrepareReport, loaders: u32) {
        self.inner.prepared(w, r, loaders);
        self.doc = Some(serde_json::json!({
            "workload": w.kind,
            "database": r.database,
            "already_present": r.already_present,
            "tables": r.tables,
            "rows": r.rows,
            "seconds": r.elapsed.as_secs_f64(),
            "loaders": loaders,
            "method": r.method.describe(),
        }));
    }
}

/// Runs `qpslab cleanup`.
pub fn cleanup(a: CleanupArgs) -> Result<()> {
    let out = Output::new(&a.output, "cleanup")?;
    let kind = a
        .workload
        .as_ref()
        .map(|name| {
            name.parse::<qpslab_core::WorkloadKind>()
                .map_err(|e| user(e.to_string()))
        })
        .transpose()?;
    let home = sandbox_home(&a.home);
    let target = connect(&a.target, None, &home)?;
    let target_args = command_args(&a.target);
    let server = target.server(&home, &target_args);
    let outcome = qpslab_lab::dataset::ready::cleanup(&server, kind).map_err(|e| match e {
        ReadyError::Cleanup(e) => {
            anyhow::Error::new(e).context(format!("cleaning up on {}", target.options.describe()))
        }
        // The sandbox's error (it could not be held) decides the exit code; the others are
        // judged down their chain.
        ReadyError::Sandbox(e) => fail(e),
        e => anyhow::Error::new(e),
    });
    let stopped = target.finish();
    let report = outcome?;
    if crate::out::sysbench() && out.format() == Format::Table {
        print!(
            "{}",
            crate::render::sysbench::cleanup_lines(&report.dropped)
        );
        eprintln!("dropped {} table(s)", report.dropped.len());
        return stopped;
    }
    out.emit(|f| match f {
        Format::Json => crate::out::json(&serde_json::json!({ "dropped": report.dropped })),
        _ if report.dropped.is_empty() => {
            Ok("nothing to drop: no tables created by qpslab in this database\n".into())
        }
        _ => Ok(format!(
            "dropped {} table(s): {}\n",
            report.dropped.len(),
            report.dropped.join(", ")
        )),
    })?;
    stopped
}

/// A failed `qpslab prepare` as the CLI reports it: a missing database says how to create it.
fn prepare_error(e: ReadyError, w: &WorkloadOptions, target: &ConnectOptions) -> anyhow::Error {
    let e = match e {
        ReadyError::Dataset(e) => e,
        ReadyError::Sandbox(e) => return fail(e),
        e => return anyhow::Error::new(e),
    };
    if let qpslab_lab::ExecError::Dataset(prepare::PrepareError::MissingDatabase(db)) = &e {
        return user(format!(
            "database {db} does not exist on {}: add --create-db to create it",
            target.describe()
        ));
    }
    exec_error(e).context(format!("preparing {} on {}", w.kind, target.describe()))
}
