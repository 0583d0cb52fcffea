//! What `lab run` prints as a study runs: each cell as it starts and ends with the study's
//! ETA, and after each round every comparison's interval so far, the budget and the ETA of the
//! rounds still needed.

use crate::printer::Printer;
use qpslab_core::PhaseResult;
use qpslab_lab::run::exec::Observer;
use qpslab_lab::study::{Loaded, RoundReport, StudyObserver};
use qpslab_report::compare::Decision;
use qpslab_store::CellRecord;

/// The observer of a study run.
pub(super) struct LabPrinter {
    pub(super) inner: Printer,
    pub(super) eta: CellsEta,
}

/// The study's ETA: the plan's warm-up and measured seconds of the cells left, at the pace
/// of the cells run so far (before the first, the plan's own seconds).
pub(super) struct CellsEta {
    /// Each cell's planned seconds, by sequence number.
    planned: std::collections::BTreeMap<u32, f64>,
    /// Planned seconds of the cells this process has run.
    done: f64,
    started: std::time::Instant,
    /// The study's budget: its wall time bounds the ETA (rounds not needed are not run).
    budget_s: Option<f64>,
    /// The last round's ETA and when it was given: it bounds the plan's.
    rounds: Option<(f64, std::time::Instant)>,
}

impl CellsEta {
    pub(super) fn new(l: &Loaded) -> CellsEta {
        CellsEta {
            planned: l
                .plan()
                .cells
                .iter()
                .map(|c| (c.cell.seq, c.seconds))
                .collect(),
            done: 0.0,
            started: std::time::Instant::now(),
            budget_s: l.spec.stop_rule().ok().and_then(|r| r.budget_s),
            rounds: None,
        }
    }

    /// `progress: cell 3/12, 2m05s elapsed, ETA 10m30s`, as cell `seq` begins.
    fn line(&self, seq: u32, total: usize) -> String {
        use crate::progress::{duration_text, eta_s};
        let left: f64 = self.planned.range(seq..).map(|(_, s)| s).sum();
        let elapsed = self.started.elapsed();
        let mut eta = eta_s(self.done, self.done + left, elapsed).unwrap_or(left);
        if let Some(b) = self.budget_s {
            eta = eta.min((b - elapsed.as_secs_f64()).max(0.0));
        }
        if let Some((r, at)) = self.rounds {
            eta = eta.min((r - at.elapsed().as_secs_f64()).max(0.0));
        }
        format!(
            "progress: cell {seq}/{total}, {} elapsed, ETA {}",
            duration_text(elapsed.as_secs_f64()),
            duration_text(eta)
        )
    }

    fn finished(&mut self, seq: u32) {
        self.done += self.planned.get(&seq).copied().unwrap_or(0.0);
    }
}

impl Observer for LabPrinter {
    fn message(&mut self, line: &str) {
        self.inner.message(line);
    }
    fn prepare_progress(&mut self, p: &qpslab_engine::prepare::PrepareProgress) {
        self.inner.prepare_progress(p);
    }
    fn prepared(
        &mut self,
        w: &qpslab_core::WorkloadOptions,
        r: &qpslab_engine::prepare::PrepareReport,
        loaders: u32,
    ) {
        self.inner.prepared(w, r, loaders);
    }
    fn replica_lag(&mut self, threads: u32, lag: &qpslab_core::telemetry::ReplicaLag) {
        self.inner.replica_lag(threads, lag);
    }
    fn sample(&mut self, threads: u32, s: &qpslab_core::Sample) {
        self.inner.sample(threads, s);
    }
    fn interval(&mut self, i: &qpslab_lab::run::exec::Interval<'_>) {
        self.inner.interval(i);
    }
    fn profiled(&mut self, threads: u32, files: &qpslab_core::telemetry::ProfileFiles) {
        self.inner.profiled(threads, files);
    }
}

impl StudyObserver for LabPrinter {
    fn cell_started(&mut self, cell: &CellRecord, total: usize) {
        println!("\n== [{}/{total}] {} ==", cell.cell.seq, cell.cell.label);
        eprintln!("{}", self.eta.line(cell.cell.seq, total));
    }
    fn cell_finished(&mut self, cell: &CellRecord, outcome: Result<&PhaseResult, &str>) {
        self.eta.finished(cell.cell.seq);
        match outcome {
            Ok(p) => println!(
                "-- {}: done, {:.1} tps, {:.1} qps, avg {:.2} ms",
                cell.cell.label,
                p.tps(),
                p.qps(),
                p.latency.avg_ms
            ),
            Err(e) => println!("-- {}: FAILED: {e}", cell.cell.label),
        }
    }
    fn server_started(&mut self, setup: &str, version: &str) {
        eprintln!("server for {setup}: {version}");
    }
    fn round_finished(&mut self, r: &RoundReport) {
        if r.comparisons.is_empty() {
            return;
        }
        print!("{}", round_text(r));
        self.eta.rounds = r.eta_s.map(|e| (e, std::time::Instant::now()));
        if let Some(line) = budget_line(r) {
            eprintln!("{line}");
        }
    }
}

/// After a round: each comparison's interval and answer so far (settled: it runs no more
/// rounds), one line each.
fn round_text(r: &RoundReport) -> String {
    let mut out = format!(
        "\n-- round {}/{}: {} intervals (target ±{}%)\n",
        r.round, r.max_rounds, r.metric, r.precision_pct
    );
    for c in &r.comparisons {
        let answer = match c.decision {
            Some(Decision::Improvement) => ", improvement".to_string(),
            Some(Decision::Regression) => ", regression".to_string(),
            Some(Decision::Equivalent) => format!(", equivalent within ±{}%", r.precision_pct),
            _ => String::new(),
        };
        let state = if c.settled {
            format!("{answer}, settled")
        } else {
            answer
        };
        let dropped = match c.dropped {
            0 => String::new(),
            n => format!(", {n} dropped (unstable)"),
        };
        // With planned looks the interval is the last look's, and the first comes at a look.
        let (at_look, first) = match r.look_every {
            0 => ("", 3),
            n => (" at the last look", n.max(3)),
        };
        out.push_str(&match (c.change_pct, c.interval) {
            (Some(x), Some((l, h))) => format!(
                "   {}: {x:+.1}% [{l:+.1}, {h:+.1}], {} round(s){at_look}{dropped}{state}\n",
                c.name, c.used
            ),
            _ => format!(
                "   {}: {} paired round(s){dropped}, an interval from {first}\n",
                c.name, c.used
            ),
        });
    }
    out
}

/// `budget: 3m10s of 10m used, 6m50s left; ETA ~2m10s (1 comparison(s) open, next round
/// ~1m05s)`; without a budget only the ETA, after the last round only the budget; none when
/// there is neither.
fn budget_line(r: &RoundReport) -> Option<String> {
    use crate::progress::duration_text;
    let open = r.comparisons.iter().filter(|c| c.open).count();
    let budget = r.budget_s.map(|b| {
        format!(
            "budget: {} of {} used, {} left",
            duration_text(r.elapsed_s),
            duration_text(b),
            duration_text((b - r.elapsed_s).max(0.0))
        )
    });
    let eta = r
        .eta_s
        .filter(|_| open > 0 && r.round < r.max_rounds)
        .map(|eta| {
            format!(
                "ETA ~{} ({open} comparison(s) open{})",
                duration_text(eta),
                r.next_round_s
                    .map(|s| format!(", next round ~{}", duration_text(s)))
                    .unwrap_or_default()
            )
        });
    match (budget, eta) {
        (Some(b), Some(e)) => Some(format!("{b}; {e}")),
        (b, e) => b.or(e),
    }
}
