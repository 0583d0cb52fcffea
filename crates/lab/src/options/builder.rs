//! The options being read: the plan under construction with qpslab's defaults, and the values
//! that only make sense together (time and events, rate and its arrival, warm-up and its bound).

use super::Transport;
use qpslab_core::live::{LiveAction, DEFAULT_SETTLE_AFTER_S};
use qpslab_core::plan::LiveSpec;
use qpslab_core::plan::{Arrival, AutoWarmup, RateSpec, RunPlan, SettleSpec, StopCondition};
use qpslab_core::tpcc::{TpccMode, TERMINALS_PER_WAREHOUSE};
use qpslab_core::{WorkloadKind, WorkloadOptions};

/// The longest auto warm-up unless `warmup_max` says otherwise.
pub const DEFAULT_WARMUP_MAX_S: f64 = 60.0;
/// The fixed warm-up of the measured phase's own sessions after an auto warm-up.
pub const AUTO_SESSION_WARMUP_S: f64 = 1.0;
/// The longest wait for a drain unless `settle_max` says otherwise.
pub const DEFAULT_SETTLE_MAX_S: f64 = 120.0;
/// Measurements again of an unstable cell unless `retries` says otherwise.
pub const DEFAULT_RETRIES: u32 = 2;
/// The longest `time` or `warmup`: a year of seconds.
pub const MAX_SECONDS: f64 = 365.0 * 86_400.0;
/// The most sessions, event loops or loader connections (MariaDB's own `max_connections`
/// limit is 100000).
pub const MAX_CONNECTIONS: u64 = 100_000;
/// The most loader connections of a prepare.
pub const MAX_LOADERS: u64 = 1024;

/// Where the options came from: it decides how an option is named in errors and the one
/// default that differs (a study warms up until throughput is flat; `run` does not warm up).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Command-line flags (`--table-size`).
    Flags,
    /// A study spec's keys (`table_size`).
    Spec,
}

/// The warm-up before a measured phase.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Warmup {
    Auto,
    Seconds(f64),
}

/// Options being read: the plan under construction plus the values that only make sense
/// together (time and events, rate and its arrival, warm-up and its bound).
#[derive(Clone, Debug)]
pub(crate) struct Builder {
    pub plan: RunPlan,
    /// Whether `threads` was given (TPC-C's spec mode otherwise runs 10 per warehouse).
    pub threads_given: bool,
    /// Whether `linger_us` was given (TPC-C otherwise runs without the nap).
    pub linger_given: bool,
    pub time_s: Option<f64>,
    pub events: Option<u64>,
    pub warmup: Warmup,
    pub warmup_max_s: f64,
    pub settle: bool,
    pub settle_max_s: f64,
    pub rate: f64,
    pub arrival: Arrival,
    pub prepare_threads: Option<u32>,
    pub transport: Transport,
    pub retries: u32,
    pub repeats: u32,
    pub profile: bool,
    pub max_allowed_packet: Option<u64>,
    pub histogram: bool,
    pub actions: Vec<LiveAction>,
    pub settle_after_s: f64,
    /// The fileio options, once one is set (or `workload = "fileio"`).
    pub io: Option<qpslab_core::fileio::FileIoOptions>,
    /// Whether `workload` named an OLTP workload (then fileio options are refused).
    pub oltp_named: bool,
}

impl Builder {
    /// qpslab's defaults (sysbench's where it has one).
    pub fn new(origin: Origin) -> Builder {
        Builder {
            plan: RunPlan::new(WorkloadOptions::new(WorkloadKind::OltpReadOnly)),
            threads_given: false,
            linger_given: false,
            time_s: None,
            events: None,
            warmup: match origin {
                Origin::Flags => Warmup::Seconds(0.0),
                Origin::Spec => Warmup::Auto,
            },
            warmup_max_s: DEFAULT_WARMUP_MAX_S,
            settle: true,
            settle_max_s: DEFAULT_SETTLE_MAX_S,
            rate: 0.0,
            arrival: Arrival::Poisson,
            prepare_threads: None,
            transport: Transport::Socket,
            retries: DEFAULT_RETRIES,
            repeats: 1,
            profile: false,
            max_allowed_packet: None,
            histogram: false,
            actions: Vec::new(),
            settle_after_s: DEFAULT_SETTLE_AFTER_S,
            io: None,
            oltp_named: false,
        }
    }

    pub(crate) fn finish(mut self) -> Result<Resolved, String> {
        let plan = &mut self.plan;
        plan.stop = match (self.time_s, self.events) {
            (None, None) => RunPlan::new(plan.workload.clone()).stop,
            (time_s, events) => StopCondition { time_s, events },
        };
        match self.warmup {
            Warmup::Auto => {
                plan.warmup_auto = Some(AutoWarmup {
                    max_s: self.warmup_max_s,
                    took_s: None,
                });
                plan.warmup_s = AUTO_SESSION_WARMUP_S;
            }
            Warmup::Seconds(s) => plan.warmup_s = s,
        }
        plan.settle = self.settle.then_some(SettleSpec {
            max_s: self.settle_max_s,
            report: None,
        });
        plan.rate = (self.rate > 0.0).then_some(RateSpec {
            per_second: self.rate,
            arrival: self.arrival,
        });
        tpcc_run(plan, self.threads_given, self.oltp_named)?;
        if plan.workload.kind == WorkloadKind::Tpcc
            && plan.workload.scripts.is_empty()
            && !self.linger_given
        {
            // TPC-C's transactions hold row locks across some 25 round trips: a nap before each
            // wait lengthens every hold, and the sessions queued on those locks are what makes
            // "many in flight" true. Measured (2 vCPUs, 2 warehouses, 32 sessions): the default
            // nap cut NewOrder/min by 42% (21292 → 12424); bench/RESULTS.md.
            plan.engine.linger_us = 0;
        }
        check_pipeline(plan)?;
        check_times(&self.actions, plan.stop.time_s)?;
        // A settle window given without actions is kept, so the stored plan says what was asked.
        let live = !self.actions.is_empty() || self.settle_after_s != DEFAULT_SETTLE_AFTER_S;
        plan.live = live.then(|| LiveSpec {
            actions: std::mem::take(&mut self.actions),
            settle_after_s: self.settle_after_s,
        });
        plan.fileio = self.io.take();
        if let Some(io) = &plan.fileio {
            if self.oltp_named {
                return Err(format!(
                    "workload: file_* options apply to workload = \"fileio\", not {}",
                    plan.workload.kind.name()
                ));
            }
            io.check().map_err(|e| e.to_string())?;
            // fio measures from the first I/O after the files are laid out: no warm-up phase.
            if let Warmup::Seconds(w) = self.warmup {
                if w > 0.0 {
                    return Err(format!(
                        "warmup: fileio runs have no warm-up phase (fio measures from its first I/O); not {w}s"
                    ));
                }
            }
            plan.warmup_auto = None;
            plan.warmup_s = 0.0;
        }
        // Every limit the engine enforces, checked before a server starts or anything is built.
        qpslab_engine::workload::validate(&plan.workload).map_err(|e| e.to_string())?;
        Ok(Resolved {
            plan: self.plan,
            prepare_threads: self.prepare_threads,
            transport: self.transport,
            retries: self.retries,
            repeats: self.repeats,
            profile: self.profile,
            max_allowed_packet: self.max_allowed_packet,
        })
    }
}

/// Refuses an action at or past the end of a timed measured phase (checked before anything
/// connects).
/// TPC-C's run options: refused for another workload when one was `named` (as the fileio
/// options are); spec mode runs 10 terminals per warehouse unless `threads` was given, and
/// paces itself (no `rate`); only spec mode has think times to scale.
fn tpcc_run(plan: &mut RunPlan, threads_given: bool, named: bool) -> Result<(), String> {
    let t = plan.workload.tpcc;
    if t.is_default() {
        return Ok(());
    }
    if plan.workload.kind != WorkloadKind::Tpcc || !plan.workload.scripts.is_empty() {
        if !named {
            return Ok(());
        }
        return Err(format!(
            "mode, think_scale and check apply to workload tpcc only, not {}",
            plan.workload.label()
        ));
    }
    if t.mode != TpccMode::Spec {
        if t.think_scale != 1.0 {
            return Err(
                "think_scale: applies to mode spec only (stress mode has no think time)".into(),
            );
        }
        return Ok(());
    }
    if plan.rate.is_some() {
        return Err(
            "rate: spec mode's terminals pace themselves by keying and think times; give no rate"
                .into(),
        );
    }
    if !threads_given {
        plan.threads = vec![TERMINALS_PER_WAREHOUSE * plan.workload.warehouses.last];
    }
    Ok(())
}

fn check_times(actions: &[LiveAction], time_s: Option<f64>) -> Result<(), String> {
    let (Some(last), Some(time_s)) = (actions.last(), time_s) else {
        return Ok(());
    };
    if last.at_s >= time_s {
        return Err(format!(
            "at {}: {} s is not inside the {time_s} s measured phase (time); actions are timed \
             from the start of the measured phase",
            last, last.at_s
        ));
    }
    Ok(())
}

/// Run options resolved: the engine's plan and what the study runner needs besides.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    /// The plan the engine runs (its seed may still be 0: from the clock).
    pub plan: RunPlan,
    /// Loader connections if the dataset must be prepared (none: the default).
    pub prepare_threads: Option<u32>,
    /// How a sandbox is reached.
    pub transport: Transport,
    /// Measurements again of an unstable cell.
    pub retries: u32,
    /// Measured cells per point of a study's matrix.
    pub repeats: u32,
    /// Record an on-CPU profile of the server during each measured phase (study key
    /// `perf_profile`; `run` has `--profile DIR`).
    pub profile: bool,
    /// The largest packet the client accepts from the server, in bytes (study key
    /// `max_allowed_packet`, as `run --max-allowed-packet`; none: the client's default).
    pub max_allowed_packet: Option<u64>,
}

/// `pipeline = on` needs events that are transactions: a COMMIT sent only once every reply is
/// in is what keeps a failed statement's followers out of the database (see the engine's
/// `session::open`). Events of one statement have nothing to pipeline; scripts may branch on
/// results, and a replay keeps the log's own order.
fn check_pipeline(plan: &RunPlan) -> Result<(), String> {
    if !plan.pipeline {
        return Ok(());
    }
    let w = &plan.workload;
    let not = match w.kind {
        _ if plan.replay.is_some() => "a replay".to_string(),
        _ if !w.scripts.is_empty() => "a script".to_string(),
        WorkloadKind::Tpcc => return Ok(()),
        WorkloadKind::OltpReadOnly | WorkloadKind::OltpReadWrite | WorkloadKind::OltpWriteOnly
            if !w.skip_trx =>
        {
            return Ok(())
        }
        k if w.skip_trx => format!("{} with skip_trx", k.name()),
        k => k.name().to_string(),
    };
    Err(format!(
        "pipeline: applies to workloads whose events are transactions (tpcc, oltp_read_only, \
         oltp_read_write, oltp_write_only without skip_trx), not {not}"
    ))
}
