//! Run options as a spec writes them (`[defaults]`, each `[sweep]` list, a cell's settings),
//! and their translation to the engine's [`RunPlan`].
//!
//! One list declares every option once; a macro makes the single-valued struct
//! ([`RunOptions`]), the list-valued one ([`SweepOptions`]) and the glue between them, so a new
//! option is one line and can be swept at once.

use qpslab_core::plan::{Arrival, AutoWarmup, RateSpec, RunPlan, SettleSpec, StopCondition};
use qpslab_core::{RandType, WorkloadKind, WorkloadOptions};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Seconds written as a number (`5`, `0.5`) or with a unit (`"2s"`, `"500ms"`, `"1m"`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Seconds {
    /// Plain seconds.
    Number(f64),
    /// With a unit.
    Text(String),
}

impl Seconds {
    /// The value in seconds, or why it is not one.
    pub fn seconds(&self) -> Result<f64, String> {
        let v = match self {
            Seconds::Number(n) => *n,
            Seconds::Text(t) => {
                let t = t.trim();
                let (num, mult) = if let Some(n) = t.strip_suffix("ms") {
                    (n, 0.001)
                } else if let Some(n) = t.strip_suffix('s') {
                    (n, 1.0)
                } else if let Some(n) = t.strip_suffix('m') {
                    (n, 60.0)
                } else if let Some(n) = t.strip_suffix('h') {
                    (n, 3600.0)
                } else {
                    (t, 1.0)
                };
                num.trim().parse::<f64>().map_err(|_| {
                    format!("'{t}' is not a duration (e.g. 5, \"2s\", \"500ms\", \"1m\")")
                })? * mult
            }
        };
        if v.is_finite() && v >= 0.0 {
            Ok(v)
        } else {
            Err(format!("{v} is not a duration"))
        }
    }
}

/// `on`/`off` written as a boolean or a word.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Switch {
    /// `true` / `false`.
    Bool(bool),
    /// `"on"` / `"off"`.
    Word(String),
}

impl Switch {
    fn on(&self) -> Result<bool, String> {
        match self {
            Switch::Bool(b) => Ok(*b),
            Switch::Word(w) => match w.as_str() {
                "on" => Ok(true),
                "off" => Ok(false),
                _ => Err(format!("'{w}' is not on or off")),
            },
        }
    }
}

/// How a sandbox server is reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// Its Unix socket (the default).
    Socket,
    /// TCP to 127.0.0.1.
    Tcp,
}

impl fmt::Display for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Transport::Socket => "socket",
            Transport::Tcp => "tcp",
        })
    }
}

macro_rules! run_options {
    ($($(#[doc = $doc:literal])* $name:ident : $ty:ty,)*) => {
        /// Run options of a cell; unset ones take qpslab's defaults (sysbench's where it has one).
        #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct RunOptions {
            $($(#[doc = $doc])* #[serde(default, skip_serializing_if = "Option::is_none")]
              pub $name: Option<$ty>,)*
        }

        /// `[sweep]`: any run option over a list of values; the cells are the cross product.
        #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct SweepOptions {
            $($(#[doc = $doc])* #[serde(default, skip_serializing_if = "Option::is_none")]
              pub $name: Option<Vec<$ty>>,)*
        }

        impl RunOptions {
            /// Every option name, in declaration order.
            pub const NAMES: &'static [&'static str] = &[$(stringify!($name)),*];

            /// Sets the options `other` sets.
            pub fn overlay(&mut self, other: &RunOptions) {
                $(if other.$name.is_some() { self.$name = other.$name.clone(); })*
            }

            /// Sets option `name` from a JSON value (a sweep axis value).
            pub fn set_json(&mut self, name: &str, v: &serde_json::Value) -> Result<(), String> {
                match name {
                    $(stringify!($name) => {
                        self.$name = Some(serde_json::from_value(v.clone())
                            .map_err(|e| format!("{name}: {e}"))?);
                    })*
                    _ => return Err(format!("unknown run option `{name}`")),
                }
                Ok(())
            }
        }

        impl SweepOptions {
            /// The swept options in declaration order, each with its values as JSON.
            pub fn axes(&self) -> Vec<(&'static str, Vec<serde_json::Value>)> {
                let mut out = Vec::new();
                $(if let Some(list) = &self.$name {
                    out.push((stringify!($name),
                        list.iter().map(|v| serde_json::to_value(v).unwrap_or_default()).collect()));
                })*
                out
            }
        }
    };
}

run_options! {
    /// Workload name, e.g. `oltp_read_only`.
    workload: String,
    /// How to reach a sandbox: `socket` or `tcp`.
    transport: Transport,
    /// Sessions.
    threads: u32,
    /// Number of tables.
    tables: u32,
    /// Rows per table.
    table_size: u64,
    /// Seconds run before the measured phase and discarded, or `"auto"` (the default): until
    /// throughput has no trend, at most `warmup_max`.
    warmup: Seconds,
    /// The longest auto warm-up (default 60 s).
    warmup_max: Seconds,
    /// Settle the server before measuring (default on): drain dirty pages and purge, warm the
    /// buffer pool.
    settle: Switch,
    /// The longest wait for the drain when settling (default 120 s).
    settle_max: Seconds,
    /// Measurements again of a cell whose verdict is unstable (default 2; 0: none).
    retries: u32,
    /// Seconds of measurement.
    duration: Seconds,
    /// Transactions of measurement (across all sessions).
    events: u64,
    /// Measured cells per point of the matrix (only in `[defaults]`).
    repeats: u32,
    /// Fixed arrival rate, transactions per second.
    rate: f64,
    /// `uniform` or `poisson` spacing with `rate`.
    rate_arrival: String,
    /// Latency percentiles to report.
    percentiles: Vec<f64>,
    /// Server-side prepared statements.
    ps: Switch,
    /// Seconds per stored sample.
    report_interval: Seconds,
    /// CPUs of the client's event loops, e.g. `"1"` or `"2-3"`.
    client_cpus: String,
    /// Event-loop threads.
    event_loops: usize,
    /// Loader connections when the dataset must be prepared.
    prepare_threads: u32,
    /// Distribution of ids.
    rand_type: String,
    /// Seed of the random generator (0: from the clock).
    rand_seed: u64,
    /// Range size of range queries.
    range_size: u64,
    /// Point selects per transaction.
    point_selects: u32,
    /// Simple ranges per transaction.
    simple_ranges: u32,
    /// SUM ranges per transaction.
    sum_ranges: u32,
    /// ORDER BY ranges per transaction.
    order_ranges: u32,
    /// DISTINCT ranges per transaction.
    distinct_ranges: u32,
    /// Index updates per transaction.
    index_updates: u32,
    /// Non-index updates per transaction.
    non_index_updates: u32,
    /// DELETE/INSERT pairs per transaction.
    delete_inserts: u32,
    /// No BEGIN/COMMIT.
    skip_trx: Switch,
}

/// The longest auto warm-up unless `warmup_max` says otherwise.
pub const DEFAULT_WARMUP_MAX_S: f64 = 60.0;
/// The fixed warm-up of the measured phase's own sessions after an auto warm-up.
pub const AUTO_SESSION_WARMUP_S: f64 = 1.0;
/// The longest wait for a drain unless `settle_max` says otherwise.
pub const DEFAULT_SETTLE_MAX_S: f64 = 120.0;
/// Measurements again of an unstable cell unless `retries` says otherwise.
pub const DEFAULT_RETRIES: u32 = 2;

/// Parses a CPU list in taskset's format (`0`, `0-3,6`) by the rules of [`qpslab_core::cpus`].
pub fn parse_cpu_list(s: &str) -> Result<Vec<usize>, String> {
    qpslab_core::cpus::parse_cpu_list(s).map_err(|e| e.to_string())
}

impl RunOptions {
    /// The transport (socket unless set).
    pub fn transport(&self) -> Transport {
        self.transport.unwrap_or(Transport::Socket)
    }

    /// Measurements again of an unstable cell.
    pub fn retries(&self) -> u32 {
        self.retries.unwrap_or(DEFAULT_RETRIES)
    }

    /// Repeats (1 unless set).
    pub fn repeats(&self) -> u32 {
        self.repeats.unwrap_or(1)
    }

    /// The engine's plan for these options: one thread count, defaults for what is unset.
    pub fn to_plan(&self) -> Result<RunPlan, String> {
        let kind: WorkloadKind = self
            .workload
            .as_deref()
            .unwrap_or("oltp_read_only")
            .parse()
            .map_err(|e: qpslab_core::workload::UnknownWorkload| e.to_string())?;
        let mut w = WorkloadOptions::new(kind);
        macro_rules! copy {
            ($($f:ident),*) => { $(if let Some(v) = self.$f.clone() { w.$f = v; })* };
        }
        copy!(
            tables,
            table_size,
            range_size,
            point_selects,
            simple_ranges,
            sum_ranges,
            order_ranges,
            distinct_ranges,
            index_updates,
            non_index_updates,
            delete_inserts
        );
        if let Some(s) = &self.skip_trx {
            w.skip_trx = s.on().map_err(|e| format!("skip_trx: {e}"))?;
        }
        if let Some(t) = &self.rand_type {
            w.rand.rand_type = t.parse::<RandType>()?;
        }
        if let Some(seed) = self.rand_seed {
            w.rand.seed = seed;
        }
        if w.tables == 0 || w.table_size == 0 {
            return Err("tables and table_size must be at least 1".into());
        }
        let mut plan = RunPlan::new(w);
        let threads = self.threads.unwrap_or(1);
        if threads == 0 || threads > 100_000 {
            return Err("threads must be between 1 and 100000".into());
        }
        plan.threads = vec![threads];
        let secs = |name: &str, v: &Option<Seconds>| {
            v.as_ref()
                .map(|s| match s.seconds() {
                    Ok(v) if v > 365.0 * 86_400.0 => Err(format!("{name}: at most a year")),
                    Ok(v) => Ok(v),
                    Err(e) => Err(format!("{name}: {e}")),
                })
                .transpose()
        };
        let time_s = secs("duration", &self.duration)?;
        if time_s == Some(0.0) || self.events == Some(0) {
            return Err("duration and events must be positive".into());
        }
        plan.stop = match (time_s, self.events) {
            (None, None) => StopCondition {
                time_s: Some(10.0),
                events: None,
            },
            (time_s, events) => StopCondition { time_s, events },
        };
        let auto = match &self.warmup {
            None => true,
            Some(Seconds::Text(t)) => t.trim() == "auto",
            Some(Seconds::Number(_)) => false,
        };
        if auto {
            let max_s = secs("warmup_max", &self.warmup_max)?.unwrap_or(DEFAULT_WARMUP_MAX_S);
            plan.warmup_auto = Some(AutoWarmup {
                max_s,
                took_s: None,
            });
            plan.warmup_s = AUTO_SESSION_WARMUP_S;
        } else {
            plan.warmup_s = secs("warmup", &self.warmup)?.unwrap_or(0.0);
        }
        let settle = match &self.settle {
            Some(s) => s.on().map_err(|e| format!("settle: {e}"))?,
            None => true,
        };
        if settle {
            let max_s = secs("settle_max", &self.settle_max)?.unwrap_or(DEFAULT_SETTLE_MAX_S);
            plan.settle = Some(SettleSpec {
                max_s,
                report: None,
            });
        }
        if let Some(r) = secs("report_interval", &self.report_interval)? {
            if r < 0.1 {
                return Err("report_interval must be at least 0.1 s".into());
            }
            plan.report_interval_s = r;
        }
        if let Some(p) = &self.percentiles {
            if p.is_empty() || p.iter().any(|p| !(*p > 0.0 && *p <= 100.0)) {
                return Err("percentiles must be numbers in (0, 100]".into());
            }
            plan.percentiles = p.clone();
        }
        plan.rate = match self.rate {
            None | Some(0.0) => None,
            Some(r) if (0.001..=1e9).contains(&r) => Some(RateSpec {
                per_second: r,
                arrival: match self.rate_arrival.as_deref() {
                    None | Some("poisson") => Arrival::Poisson,
                    Some("uniform") => Arrival::Uniform,
                    Some(o) => return Err(format!("rate_arrival '{o}': uniform or poisson")),
                },
            }),
            Some(r) => return Err(format!("rate {r}: between 0.001 and 1e9 per second")),
        };
        if let Some(ps) = &self.ps {
            plan.prepared_statements = ps.on().map_err(|e| format!("ps: {e}"))?;
        }
        plan.client_cpus = self
            .client_cpus
            .as_deref()
            .map(parse_cpu_list)
            .transpose()?;
        if self.event_loops == Some(0) {
            return Err("event_loops must be at least 1".into());
        }
        plan.event_loops = self.event_loops;
        qpslab_engine::workload::validate(&plan.workload).map_err(|e| e.to_string())?;
        Ok(plan)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(Seconds::Text("2s".into()).seconds().unwrap(), 2.0);
        assert_eq!(Seconds::Text("500ms".into()).seconds().unwrap(), 0.5);
        assert_eq!(Seconds::Text("1m".into()).seconds().unwrap(), 60.0);
        assert_eq!(Seconds::Number(1.5).seconds().unwrap(), 1.5);
        assert!(Seconds::Text("soon".into()).seconds().is_err());
        assert!(Seconds::Number(-1.0).seconds().is_err());
    }

    #[test]
    fn plan_from_options() {
        let mut o = RunOptions {
            workload: Some("oltp_point_select".into()),
            threads: Some(8),
            duration: Some(Seconds::Text("3s".into())),
            warmup: Some(Seconds::Number(1.0)),
            ps: Some(Switch::Word("off".into())),
            ..Default::default()
        };
        let p = o.to_plan().unwrap();
        assert_eq!(p.threads, vec![8]);
        assert_eq!(p.stop.time_s, Some(3.0));
        assert_eq!(p.warmup_s, 1.0);
        assert!(p.warmup_auto.is_none());
        assert_eq!(
            p.settle.as_ref().map(|s| s.max_s),
            Some(DEFAULT_SETTLE_MAX_S)
        );
        let auto = RunOptions {
            warmup: Some(Seconds::Text("auto".into())),
            warmup_max: Some(Seconds::Text("30s".into())),
            settle: Some(Switch::Bool(false)),
            ..Default::default()
        }
        .to_plan()
        .unwrap();
        assert_eq!(auto.warmup_auto.map(|a| a.max_s), Some(30.0));
        assert!(auto.settle.is_none());
        let default = RunOptions::default().to_plan().unwrap();
        assert!(default.warmup_auto.is_some());
        assert_eq!(RunOptions::default().retries(), DEFAULT_RETRIES);
        assert!(!p.prepared_statements);
        o.set_json("threads", &serde_json::json!(16)).unwrap();
        assert_eq!(o.to_plan().unwrap().threads, vec![16]);
        assert!(o.set_json("threads", &serde_json::json!("many")).is_err());
        o.workload = Some("nope".into());
        assert!(o.to_plan().is_err());
    }
}
