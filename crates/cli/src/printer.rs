//! What the user sees while work goes on: dataset progress (rewritten in place on a terminal,
//! a line every few seconds in a log) and the live lines of a phase.

use qpslab_core::WorkloadOptions;
use qpslab_engine::prepare::{PrepareProgress, PrepareReport};

/// Prints dataset progress as `qpslab prepare` always has, and live lines of a phase.
pub struct Printer {
    /// Dataset loading's progress line.
    loading: crate::progress::Line,
    /// The replica's lag over the interval whose line comes next (`run --replica`).
    lag: Option<qpslab_core::telemetry::ReplicaLag>,
    /// The live metrics endpoint's registry (`--metrics-addr`).
    metrics: Option<qpslab_metrics::Registry>,
    /// Whether each phase's latency histogram follows its summary (sysbench's --histogram).
    histogram: bool,
    /// Whether each interval prints its line (sysbench's --report-interval=0: none).
    live_lines: bool,
    /// Whether this is `prepare`'s printer: called as sysbench, a prepare prints sysbench's
    /// table lines (a run that loads a missing dataset prints none, as sysbench's run).
    prepare: bool,
}

impl Printer {
    /// A printer for this terminal (or log).
    pub fn new() -> Printer {
        Printer {
            loading: crate::progress::Line::new(),
            lag: None,
            metrics: None,
            histogram: false,
            live_lines: true,
            prepare: false,
        }
    }

    /// The same, as `prepare`'s printer.
    pub fn for_prepare(self) -> Printer {
        Printer {
            prepare: true,
            ..self
        }
    }

    /// The same, printing sysbench's latency histogram after each phase's summary when
    /// `histogram`, and no interval lines unless `live_lines`.
    pub fn sysbench_output(self, histogram: bool, live_lines: bool) -> Printer {
        Printer {
            histogram,
            live_lines,
            ..self
        }
    }

    /// The same, also reporting each interval to the metrics endpoint `exporter`.
    pub fn with_metrics(exporter: Option<&qpslab_metrics::Exporter>) -> Printer {
        Printer {
            metrics: exporter.map(|e| e.registry().clone()),
            ..Printer::new()
        }
    }
}

impl qpslab_lab::run::exec::Observer for Printer {
    fn message(&mut self, line: &str) {
        eprintln!("{line}");
    }

    fn prepare_progress(&mut self, p: &PrepareProgress) {
        self.loading.show(|| progress_line(p));
    }

    fn prepared(&mut self, w: &WorkloadOptions, report: &PrepareReport, loaders: u32) {
        self.loading.end();
        if w.kind == qpslab_core::WorkloadKind::Tpcc {
            return tpcc_prepared(w, report, loaders);
        }
        if report.already_present {
            own!(
                "{} table(s) × {} rows already prepared in {} by qpslab: nothing to do",
                w.tables,
                w.table_size,
                report.database
            );
            return;
        }
        if crate::out::sysbench() && self.prepare {
            let lines = crate::render::sysbench::prepare_lines(w.tables, w.table_size, loaders);
            print!("{lines}");
        }
        let secs = report.elapsed.as_secs_f64();
        own!(
            "prepared {} table(s) × {} rows in {:.1}s ({:.0} rows/s, {} loader connection(s), {})",
            w.tables,
            w.table_size,
            secs,
            report.rows as f64 / secs.max(1e-9),
            loaders,
            report.method.describe()
        );
    }

    fn replica_lag(&mut self, _threads: u32, lag: &qpslab_core::telemetry::ReplicaLag) {
        self.lag = Some(lag.clone());
    }

    fn sample(&mut self, threads: u32, s: &qpslab_core::Sample) {
        let lag = self.lag.take();
        // Live lines are progress, not results: `--quiet` leaves them out.
        if crate::out::quiet() || !self.live_lines {
            return;
        }
        if crate::out::sysbench() {
            println!("{}", crate::render::sysbench::interval_line(threads, s));
            // qpslab's warnings of the interval; its other figures are in the store.
            if s.stuck_sessions > 0 || s.late_events > 0 {
                let extras = crate::render::live_extras(s);
                eprintln!("qpslab: [ {:.0}s ]{extras}", s.elapsed_s);
            }
            return;
        }
        let line = crate::render::live_line(threads, s);
        match lag {
            Some(lag) => println!("{line} {}", crate::render::lag::lag_text(&lag)),
            None => println!("{line}"),
        }
    }

    fn interval(&mut self, i: &qpslab_lab::run::exec::Interval<'_>) {
        crate::metrics::report(self.metrics.as_ref(), i);
    }

    fn profiled(&mut self, _threads: u32, files: &qpslab_core::telemetry::ProfileFiles) {
        match crate::render::run::profile_text(files) {
            Ok(line) => own!("{line}"),
            Err(warning) => eprintln!("{warning}"),
        }
    }

    fn placed(&mut self, _threads: u32, placement: &str) {
        if crate::out::quiet() {
            return;
        }
        own!("client: {placement}");
    }

    fn action(&mut self, _threads: u32, r: &qpslab_core::live::ActionRecord) {
        own!("{}", crate::render::live::action_line(r));
    }

    fn warmed_up(&mut self, _threads: u32, took_s: f64) {
        eprintln!("warm-up: {took_s:.0} s until throughput was flat");
    }
}

/// `qpslab run`'s lines around each phase.
impl qpslab_lab::run::sweep::SweepObserver for Printer {
    fn settled(&mut self, report: &qpslab_core::plan::SettleReport) {
        eprintln!("{}", qpslab_lab::run::settle::describe(report));
    }

    fn phase_begins(&mut self, plan: &qpslab_core::RunPlan, threads: u32) {
        if crate::out::sysbench() {
            let interval = self.live_lines.then_some(plan.report_interval_s);
            let rate = plan.rate.as_ref().map(|r| r.per_second);
            print!(
                "{}",
                crate::render::sysbench::header(threads, interval, rate)
            );
            return;
        }
        if crate::out::quiet() {
            return;
        }
        println!("{}", crate::render::run::phase_header(plan, threads));
    }

    fn phase_measured(
        &mut self,
        phase: &qpslab_core::PhaseResult,
        client: Option<&qpslab_lab::run::client_bound::ClientCheck>,
    ) {
        if crate::out::sysbench() {
            print!(
                "{}",
                crate::render::sysbench::summary(phase, self.histogram)
            );
            eprint!("{}", crate::render::sysbench::own_lines(phase));
            if let Some(c) = client {
                eprint!("{}", crate::render::run::client_text(c));
            }
            eprint!(
                "{}",
                crate::render::run::limits_text(phase.limits.as_ref(), "")
            );
            return;
        }
        println!();
        // `--quiet` drops the phase's header line, which said whose summary follows.
        if crate::out::quiet() {
            println!("phase of {} thread(s):", phase.threads);
        }
        // Before the summary, where sysbench prints it.
        if self.histogram {
            print!(
                "{}",
                crate::render::histogram_text(phase).unwrap_or_default()
            );
        }
        print!("{}", crate::render::phase_summary(phase));
        if let Some(c) = client {
            print!("{}", crate::render::run::client_text(c));
        }
        // What limited the phase, in addition to the client check's warning.
        print!(
            "{}",
            crate::render::run::limits_text(phase.limits.as_ref(), "")
        );
    }

    fn actions_judged(&mut self, actions: &[qpslab_core::live::ActionRecord]) {
        let table = crate::render::live::actions_table(actions);
        own!("{}", table.trim_end_matches('\n'));
    }

    fn run_closed(&mut self, closed: &qpslab_lab::run::sweep::Closed) {
        closed_note(closed);
    }
}

/// Says where what a run measured before it ended early is stored (stderr).
pub fn closed_note(closed: &qpslab_lab::run::sweep::Closed) {
    match &closed.stored {
        Ok(Some(id)) => eprintln!(
            "what was measured is stored as run {id} ({}) in {}  (qpslab show {id})",
            closed.status,
            closed.store.display()
        ),
        Ok(None) => {}
        // The error that ended the run is the one to report; a store that cannot even close
        // the run is said once, beside it.
        Err(s) => eprintln!("warning: the run could not be closed in the results store: {s}"),
    }
}

/// `loading 1200000/8000000 rows (15%) 412345 rows/s, ETA 16s`.
/// The last line of `prepare tpcc`.
fn tpcc_prepared(w: &WorkloadOptions, report: &PrepareReport, loaders: u32) {
    let ws = w.warehouses;
    if report.already_present {
        own!(
            "TPC-C warehouses {ws} already loaded in {} by qpslab, row counts verified: nothing to do",
            report.database
        );
        return;
    }
    let secs = report.elapsed.as_secs_f64();
    own!(
        "prepared TPC-C warehouses {ws} in {secs:.1}s ({} rows, {:.0} rows/s, {loaders} loader \
         connection(s), {}), row counts verified",
        report.rows,
        report.rows as f64 / secs.max(1e-9),
        report.method.describe()
    );
}

fn progress_line(p: &PrepareProgress) -> String {
    let rate = p.rows_done as f64 / p.elapsed.as_secs_f64().max(1e-9);
    let pct = (100 * p.rows_done).checked_div(p.rows_total).unwrap_or(100);
    let (done, total) = (p.rows_done as f64, p.rows_total as f64);
    let eta = crate::progress::eta_text(done, total, p.elapsed);
    format!(
        "loading {}/{} rows ({pct}%) {rate:.0} rows/s{eta}",
        p.rows_done, p.rows_total
    )
}
