//! What a run does: the plan built by the CLI (or a study) and handed to the engine.

use crate::workload::WorkloadOptions;
use serde::{Deserialize, Serialize};

/// When a measured phase ends. sysbench semantics: whichever limit is reached first; with
/// neither set, the phase runs for 10 s.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StopCondition {
    /// `--time`: seconds of measurement.
    pub time_s: Option<f64>,
    /// `--events`: transactions across all sessions.
    pub events: Option<u64>,
}

/// How fixed-rate arrivals are spaced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arrival {
    /// Evenly spaced intended starts.
    Uniform,
    /// Exponentially distributed gaps (a Poisson process), as sysbench's `--rate` does.
    Poisson,
}

/// `--rate N`: a fixed arrival rate of events per second across all sessions. Latency is
/// measured from each event's intended start, so a stalled server shows in the percentiles.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RateSpec {
    /// Events per second across all sessions.
    pub per_second: f64,
    /// Spacing of intended starts.
    pub arrival: Arrival,
}

/// `--warmup auto`: warm up until the per-interval throughput has no significant trend over a
/// window of intervals, for at most `max_s` seconds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AutoWarmup {
    /// The longest warm-up.
    pub max_s: f64,
    /// How long the warm-up took before the measured phase (filled when it ran; for a sweep,
    /// its first phase).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub took_s: Option<f64>,
}

/// Settling: before measuring, wait until InnoDB's dirty pages and purge backlog are drained
/// and read the dataset once into the buffer pool.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SettleSpec {
    /// The longest wait for the drain.
    pub max_s: f64,
    /// What settling found and did, once it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report: Option<SettleReport>,
}

/// What settling a server found and did.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SettleReport {
    /// Seconds spent (waiting and warming).
    pub seconds: f64,
    /// `Innodb_buffer_pool_pages_dirty` before and after.
    pub dirty_pages: (u64, u64),
    /// `trx_rseg_history_len` before and after.
    pub history_len: (u64, u64),
    /// Whether both reached their floor within the bound.
    pub drained: bool,
    /// Tables read into the buffer pool.
    pub tables_warmed: u32,
    /// What could not be done (an external server is only checked, never changed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// The nap of [`EngineKnobs::linger_us`] by default. Measured on 2 cores at 64 to 1024 sessions
/// (point selects): 200–500 µs cut the client's CPU per query from ~20 to ~8–10 µs and raised
/// QPS by 30–40% against no nap. TPC-C runs without it unless asked (its transactions hold
/// locks across round trips, and a nap lengthens every hold: see `lab::options`).
pub const DEFAULT_LINGER_US: u64 = 300;

/// How the engine's event loops send and wait: levers that change what is measured, so a
/// stored run says how they were set (runs stored before they existed ran with the defaults).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct EngineKnobs {
    /// `--io-uring on|off`: write the requests gathered in one wake-up with a single io_uring
    /// submission (plain `write`s when off, or when the kernel refuses io_uring).
    pub io_uring: bool,
    /// `--linger-us`: microseconds a loop naps before `epoll_wait` when many requests are in
    /// flight, so one wake-up serves many replies (0: never).
    pub linger_us: u64,
}

impl Default for EngineKnobs {
    fn default() -> Self {
        EngineKnobs {
            io_uring: true,
            linger_us: DEFAULT_LINGER_US,
        }
    }
}

/// One `qpslab run`: a workload swept over thread counts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunPlan {
    /// The workload and its sysbench options.
    pub workload: WorkloadOptions,
    /// `--threads`: the sweep of session counts, one measured phase each.
    pub threads: Vec<u32>,
    /// End of each measured phase.
    pub stop: StopCondition,
    /// `--warmup`: seconds run before each measured phase, never counted (its whole report
    /// intervals are kept apart in [`crate::result::PhaseResult::warmup`]).
    pub warmup_s: f64,
    /// `--report-interval`: seconds per sample (default 1).
    pub report_interval_s: f64,
    /// `--percentiles`: which latency percentiles to report (default 95, 99).
    pub percentiles: Vec<f64>,
    /// `--rate`: fixed arrival rate, if any.
    pub rate: Option<RateSpec>,
    /// `--ps on|off`: server-side prepared statements (on) or the text protocol (off).
    pub prepared_statements: bool,
    /// `--pipeline on|off`: a transaction's statements are written back to back and their
    /// replies read together, its COMMIT once every reply is in (off: one statement per round
    /// trip, as an application and sysbench send them). Changes what is measured: the server
    /// runs the transaction without waiting for the network between statements.
    /// Always written, so a comparison of a pipelined run with another says `false → true`
    /// (runs stored before it existed read as off, which they were).
    #[serde(default)]
    pub pipeline: bool,
    /// `--client-cpus`: CPUs for the client's event loops (none: not pinned).
    pub client_cpus: Option<Vec<usize>>,
    /// Number of event-loop threads (none: one per `client_cpus` entry, else derived from the
    /// client's CPUs, the sessions and the server's CPUs: see the engine's `placement`).
    pub event_loops: Option<usize>,
    /// The CPUs the server's process may run on, when it is on this machine and known (an
    /// empty list: a remote server, none of this machine's CPUs). Set by the caller for each
    /// phase from the running server, not stored: the phase's `client` record says what the
    /// placement made of it.
    #[serde(skip)]
    pub server_cpus: Option<Vec<usize>>,
    /// `--warmup auto`: warm up until throughput is flat (then `warmup_s` is the short warm-up
    /// of the measured phase's own sessions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_auto: Option<AutoWarmup>,
    /// Settle the server before measuring (none: measured as found).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settle: Option<SettleSpec>,
    /// The event loops' levers (io_uring, linger).
    #[serde(default)]
    pub engine: EngineKnobs,
    /// `qpslab replay`: the log replayed instead of `workload` (whose options then do not apply).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<crate::replay::ReplayPlan>,
    /// `--pin` (or a study variant's `pin`): the thread placement policy and the threads it
    /// placed when the run started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<crate::placement::PlacementRecord>,
    /// A study setup's `storage`: the filesystem its server's datadir was on, as found mounted
    /// (`fs`, `device`, `mount_options`, `scheduler`, `read_ahead_kb`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage: Option<std::collections::BTreeMap<String, String>>,
    /// `--at TIME:ACTION`: changes made to the server while each measured phase runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live: Option<LiveSpec>,
    /// sysbench's fileio workload run through fio instead of `workload` (`qpslab io`, or
    /// `workload = "fileio"` in a study).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fileio: Option<crate::fileio::FileIoOptions>,
    /// `--shard I/N|auto`: this process measures one shard of a run several processes share
    /// (see [`crate::shard`]); its threads, rate and seed are then this shard's share.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::shard::ShardSpec>,
    /// `--mysql-ignore-errors` (sysbench's name): the server errors after which an event is
    /// rolled back and run again instead of stopping the phase. Left out of the stored plan
    /// when it is the default, so plans stored before it existed compare equal.
    #[serde(default, skip_serializing_if = "RetryErrors::is_default")]
    pub ignore_errors: RetryErrors,
    /// `--isolation`: the transaction isolation level every session sets (none: the server's,
    /// `transaction_isolation`). Left out of the stored plan when none, so plans stored
    /// before it existed compare equal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isolation: Option<Isolation>,
    /// `--label KEY=VALUE` (repeatable): what the user says of the run (`build=1234`,
    /// `commit=abc123`), kept to tell the runs of a series apart and to order them
    /// (`qpslab history --by label:KEY`). Not a run option of the work: never part of a
    /// series' identity. Left out of the stored plan when empty.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub labels: std::collections::BTreeMap<String, String>,
    /// `--series NAME`: the series the run belongs to, named by the user (none: the series
    /// of its benchmark identity; docs/history.md). Left out of the stored plan when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<String>,
}

/// A transaction isolation level, as `SET SESSION TRANSACTION ISOLATION LEVEL` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Isolation {
    ReadUncommitted,
    ReadCommitted,
    RepeatableRead,
    Serializable,
}

impl Isolation {
    /// The names `--isolation` takes (the server's `transaction_isolation` values, lower
    /// case).
    pub const NAMES: &'static [&'static str] = &[
        "read-uncommitted",
        "read-committed",
        "repeatable-read",
        "serializable",
    ];

    /// Its name, `read-committed`.
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// The words of `SET SESSION TRANSACTION ISOLATION LEVEL ...`: `READ COMMITTED`.
    pub fn sql(self) -> &'static str {
        match self {
            Isolation::ReadUncommitted => "READ UNCOMMITTED",
            Isolation::ReadCommitted => "READ COMMITTED",
            Isolation::RepeatableRead => "REPEATABLE READ",
            Isolation::Serializable => "SERIALIZABLE",
        }
    }

    /// A level by its name in any case, with dashes, underscores or spaces
    /// (`READ-COMMITTED`, `read committed`), or by sysbench-tpcc's `--trx_level` (RU, RC,
    /// RR, SER).
    pub fn parse(text: &str) -> Option<Isolation> {
        let t = text.trim().to_ascii_lowercase().replace(['_', ' '], "-");
        let by_letters = match t.as_str() {
            "ru" => Some(Isolation::ReadUncommitted),
            "rc" => Some(Isolation::ReadCommitted),
            "rr" => Some(Isolation::RepeatableRead),
            "ser" => Some(Isolation::Serializable),
            _ => None,
        };
        by_letters.or_else(|| {
            let at = Self::NAMES.iter().position(|n| *n == t)?;
            [
                Isolation::ReadUncommitted,
                Isolation::ReadCommitted,
                Isolation::RepeatableRead,
                Isolation::Serializable,
            ]
            .get(at)
            .copied()
        })
    }
}

/// The server error codes sysbench 1.0.20 ignores by default: 1213 deadlock, 1205 lock wait
/// timeout, 1020 record changed since last read.
pub const DEFAULT_RETRY_CODES: [u16; 3] = [1213, 1205, 1020];

/// A list of server error codes with an entry that is not one (the entry, trimmed): always the
/// user's mistake.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not a server error code: `{0}`")]
pub struct RetryCodeError(pub String);

impl crate::fault::Blame for RetryCodeError {
    /// The user's: the list is theirs to fix.
    fn fault(&self) -> crate::fault::Fault {
        crate::fault::Fault::User
    }
}

/// The message, for the option table, which composes messages as text.
impl From<RetryCodeError> for String {
    fn from(e: RetryCodeError) -> String {
        e.to_string()
    }
}

/// Which server errors an event survives (rolled back, counted by code, run again), as
/// sysbench's `--mysql-ignore-errors` says: its default list, `all`, or the codes given (which
/// replace the default list, as in sysbench).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RetryErrors {
    /// 1213, 1205 and 1020 ([`DEFAULT_RETRY_CODES`]).
    #[default]
    Default,
    /// Every server error (a lost session still reconnects instead).
    All,
    /// These codes only.
    Codes(Vec<u16>),
}

impl RetryErrors {
    /// Whether an event that got server error `code` is rolled back and run again.
    pub fn retries(&self, code: u16) -> bool {
        match self {
            RetryErrors::Default => DEFAULT_RETRY_CODES.contains(&code),
            RetryErrors::All => true,
            RetryErrors::Codes(codes) => codes.contains(&code),
        }
    }

    /// The default list (serde leaves it out).
    pub fn is_default(&self) -> bool {
        *self == RetryErrors::Default
    }

    /// As sysbench's option takes it: `all`, or a comma-separated list of codes.
    pub fn parse(text: &str) -> Result<RetryErrors, RetryCodeError> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("all") {
            return Ok(RetryErrors::All);
        }
        let codes = text
            .split(',')
            .map(|c| {
                c.trim()
                    .parse::<u16>()
                    .ok()
                    .filter(|c| *c > 0)
                    .ok_or_else(|| RetryCodeError(c.trim().to_string()))
            })
            .collect::<Result<Vec<u16>, RetryCodeError>>()?;
        let mut sorted = codes.clone();
        sorted.sort_unstable();
        let mut default = DEFAULT_RETRY_CODES.to_vec();
        default.sort_unstable();
        Ok(if sorted == default {
            RetryErrors::Default
        } else {
            RetryErrors::Codes(codes)
        })
    }
}

impl std::fmt::Display for RetryErrors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let list = |codes: &[u16]| {
            codes
                .iter()
                .map(u16::to_string)
                .collect::<Vec<_>>()
                .join(",")
        };
        match self {
            RetryErrors::Default => f.write_str(&list(&DEFAULT_RETRY_CODES)),
            RetryErrors::All => f.write_str("all"),
            RetryErrors::Codes(codes) => f.write_str(&list(codes)),
        }
    }
}

/// `--at` and `--settle-after`: the live actions of every measured phase.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LiveSpec {
    /// The actions, in time order.
    pub actions: Vec<crate::live::LiveAction>,
    /// Seconds after an action left out of the judgment (the server settling).
    pub settle_after_s: f64,
}

impl RunPlan {
    /// The plan for `workload` with qpslab's defaults (sysbench's where it has one).
    pub fn new(workload: WorkloadOptions) -> Self {
        RunPlan {
            workload,
            threads: vec![1],
            stop: StopCondition {
                time_s: Some(10.0),
                events: None,
            },
            warmup_s: 0.0,
            report_interval_s: 1.0,
            percentiles: vec![95.0, 99.0],
            rate: None,
            prepared_statements: true,
            pipeline: false,
            client_cpus: None,
            event_loops: None,
            server_cpus: None,
            warmup_auto: None,
            settle: None,
            engine: EngineKnobs::default(),
            replay: None,
            placement: None,
            storage: None,
            live: None,
            fileio: None,
            shard: None,
            ignore_errors: RetryErrors::Default,
            isolation: None,
            labels: Default::default(),
            series: None,
        }
    }

    /// The name of what ran: `replay` for a replayed log, else the workload's label (its
    /// sysbench name, or `script a.sql@3 b.sql@1`).
    pub fn workload_name(&self) -> String {
        match (&self.replay, &self.fileio) {
            (Some(_), _) => "replay".to_string(),
            (None, Some(io)) => io.label(),
            (None, None) => self.workload.label(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn isolation_levels_by_name_and_by_sysbench_tpccs_letters() {
        assert_eq!(
            Isolation::parse("READ-COMMITTED"),
            Some(Isolation::ReadCommitted)
        );
        assert_eq!(Isolation::parse("rc"), Some(Isolation::ReadCommitted));
        assert_eq!(Isolation::parse("SER"), Some(Isolation::Serializable));
        assert_eq!(
            Isolation::parse("repeatable read"),
            Some(Isolation::RepeatableRead)
        );
        assert_eq!(Isolation::parse("snapshot"), None);
        for n in Isolation::NAMES {
            assert_eq!(Isolation::parse(n).map(Isolation::name), Some(*n));
        }
        assert_eq!(Isolation::ReadUncommitted.sql(), "READ UNCOMMITTED");
    }
    use crate::workload::WorkloadKind;

    #[test]
    fn ignore_errors_reads_as_sysbench_takes_it() {
        assert_eq!(RetryErrors::parse("all"), Ok(RetryErrors::All));
        assert_eq!(
            RetryErrors::parse("1020, 1213,1205"),
            Ok(RetryErrors::Default)
        );
        assert_eq!(
            RetryErrors::parse("1062,1213"),
            Ok(RetryErrors::Codes(vec![1062, 1213]))
        );
        assert_eq!(
            RetryErrors::parse("1062,x").unwrap_err().to_string(),
            "not a server error code: `x`"
        );
        assert!(RetryErrors::parse("").is_err());
        let given = RetryErrors::Codes(vec![1062]);
        assert!(given.retries(1062) && !given.retries(1213));
        assert!(RetryErrors::Default.retries(1205) && !RetryErrors::Default.retries(1062));
        assert!(RetryErrors::All.retries(1146));
        assert_eq!(RetryErrors::Default.to_string(), "1213,1205,1020");
        // The default stays out of a stored plan, so older plans compare equal.
        let plan = RunPlan::new(WorkloadOptions::new(WorkloadKind::OltpPointSelect));
        let json = serde_json::to_value(&plan).unwrap();
        assert!(json.get("ignore_errors").is_none());
    }

    #[test]
    fn a_plan_stored_before_engine_knobs_loads_with_the_defaults() {
        let plan = RunPlan::new(WorkloadOptions::new(WorkloadKind::OltpPointSelect));
        let mut json = serde_json::to_value(&plan).unwrap();
        assert_eq!(json["engine"]["io_uring"], true);
        assert_eq!(json["engine"]["linger_us"], DEFAULT_LINGER_US);
        json.as_object_mut().unwrap().remove("engine");
        let old: RunPlan = serde_json::from_value(json).unwrap();
        assert_eq!(old.engine, EngineKnobs::default());
        assert_eq!(old, plan);
    }

    #[test]
    fn engine_knobs_round_trip() {
        let mut plan = RunPlan::new(WorkloadOptions::new(WorkloadKind::OltpInsert));
        plan.engine = EngineKnobs {
            io_uring: false,
            linger_us: 0,
        };
        let text = serde_json::to_string(&plan).unwrap();
        assert_eq!(serde_json::from_str::<RunPlan>(&text).unwrap(), plan);
    }
}
