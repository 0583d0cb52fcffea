//! Telemetry on every report tick of a phase: server status deltas, CPU and memory of the
//! server and of the client, the server's I/O bytes, and `perf stat` counters for the phase.
//!
//! A [`Sampler`] holds its own control connection (never one of the measured sessions) and is
//! driven from the engine's `on_sample` callback: [`Sampler::begin`] before the phase,
//! [`Sampler::tick`] on each report tick, [`Sampler::finish`] after it.
//!
//! Telemetry must never cost a measurement, so a server that goes away mid-phase (killed,
//! restarted) is survived:
//! - the connection is re-established with the sessions' backoff (given
//!   [`Sampler::reconnect_to`]), and counted (`telemetry` sample, `reconnects`);
//! - a tick without a reading records why ([`Tick::Failed`]), and once readings resume (or the phase
//!   ends) a `gap` sample says which span had none and why;
//! - counters that went back (a restart) count from zero, never negative; a restarted server's
//!   new process is followed: by its `pid_file` after a reconnection, or through
//!   [`Sampler::set_server_pid`];
//! - [`Sampler::finish`] always returns the phase's telemetry, with what could be read.

mod link;
mod reading;

use crate::error::Error;
use crate::perf::PerfStat;
use crate::process::{process_cpu, self_cpu};
pub use crate::process::{process_io, IoBytes};
use crate::profile::{ProfileError, Recording};
use crate::replica::LagMonitor;
use crate::server::global_status;
use link::Link;
use qpslab_core::env::ProcessCpu;
use qpslab_core::telemetry::ProcUsage;
use qpslab_core::telemetry::{Gap, Perf, Reading, StatusCounts, Tick, TickChange};
use qpslab_core::{ConnectOptions, TelemetrySample};
use qpslab_wire::Conn;
use reading::{Change, Totals};
use std::path::PathBuf;
use std::time::Instant;

/// How long [`Sampler::begin`] waits for a watched replica to catch up with its primary.
const REPLICA_CATCH_UP: std::time::Duration = std::time::Duration::from_secs(300);

/// Per-tick telemetry of one phase. See the module documentation.
pub struct Sampler {
    link: Link,
    server_pid: Option<u32>,
    /// The client's CPU at the phase's start and at the last tick with a reading.
    first_client: Option<ProcessCpu>,
    client_last: Option<ProcessCpu>,
    /// The last good reading.
    last: Option<reading::Reading>,
    totals: Totals,
    /// `elapsed_s` of the last good reading (0 at [`Sampler::begin`]).
    last_ok_s: f64,
    /// An open span without readings: since when (`elapsed_s`) and why.
    gap: Option<(f64, String)>,
    gaps: u64,
    perf: Option<PerfStat>,
    /// Counters of an earlier server process of this phase (before a restart).
    perf_parts: Vec<Perf>,
    samples: Vec<TelemetrySample>,
    /// Where each phase's profile goes (`run --profile DIR`), the one being recorded and the
    /// title of its flame graph, drawn when it stops.
    profile_dir: Option<PathBuf>,
    recording: Option<Recording>,
    profile_title: String,
    /// The replica whose lag each tick also reads (`run --replica`).
    replica: Option<LagMonitor>,
    /// Where the last tick's readings begin in `samples`.
    tick_from: usize,
    /// Thread classes, waits, disk, network and thread pool over the phase.
    why: crate::why::Why,
}

impl Sampler {
    /// A sampler reading status through `conn` and, when `server_pid` is known (a sandbox), the
    /// server process's CPU, memory, I/O and perf counters.
    pub fn new(conn: Conn, server_pid: Option<u32>) -> Sampler {
        Sampler {
            link: Link::new(conn),
            server_pid,
            first_client: None,
            client_last: None,
            last: None,
            totals: Totals::default(),
            last_ok_s: 0.0,
            gap: None,
            gaps: 0,
            perf: None,
            perf_parts: Vec::new(),
            samples: Vec::new(),
            profile_dir: None,
            recording: None,
            profile_title: String::new(),
            replica: None,
            tick_from: 0,
            why: crate::why::Why::default(),
        }
    }

    /// Lets the sampler reconnect to `target` when its connection is lost (the options `conn`
    /// was opened with). Without it, readings stop at the first loss.
    pub fn reconnect_to(mut self, target: ConnectOptions) -> Sampler {
        self.why.set_endpoint(&target.endpoint);
        self.link.set_target(target);
        self
    }

    /// Whether the measured sessions reach the server over TCP (a `net` reading per phase);
    /// by default, whether [`Sampler::reconnect_to`]'s target is a TCP one.
    pub fn set_tcp(&mut self, tcp: bool) {
        self.why.set_tcp(tcp);
    }

    /// Adds the lag of a replica to every tick (a `replica_lag` reading after the `tick`);
    /// the monitor stops when the sampler is dropped.
    pub fn watch_replica(&mut self, monitor: LagMonitor) {
        self.replica = Some(monitor);
    }

    /// The control connection, for other queries between phases; `None` while it is lost.
    pub fn conn(&mut self) -> Option<&mut Conn> {
        self.link.conn()
    }

    /// The server's process, when it runs on this machine.
    pub fn server_pid(&self) -> Option<u32> {
        self.server_pid
    }

    /// The server's process is now `pid` (restarted by the caller): CPU, I/O and perf follow
    /// it; the old process's perf counters are kept for the phase's total.
    pub fn set_server_pid(&mut self, pid: u32) {
        if self.server_pid == Some(pid) {
            return;
        }
        self.server_pid = Some(pid);
        if let Some(old) = self.perf.take() {
            self.perf_parts.push(old.stop());
            self.perf = PerfStat::start(pid).ok();
        }
    }

    /// Connections re-established during the current phase.
    pub fn reconnects(&self) -> u64 {
        self.link.reconnects
    }

    fn read(&mut self) -> Result<reading::Reading, Error> {
        let status = self.link.run(global_status)?;
        if std::mem::take(&mut self.link.fresh) {
            // What happened since the last reading until the connection was lost is unread
            // (a restarted server's counters begin again).
            if self.gap.is_none() {
                self.gap = Some((self.last_ok_s, self.link.lost_because().to_string()));
            }
            self.follow_pid();
        }
        Ok(reading::Reading {
            at: Instant::now(),
            status,
            server_pid: self.server_pid,
            server: self.server_pid.and_then(|p| process_cpu(p).ok()),
            server_io: self.server_pid.and_then(|p| process_io(p).ok()),
        })
    }

    /// After a reconnection to a server whose process we watch: the server may be a new
    /// process (restarted); its `pid_file` says which.
    fn follow_pid(&mut self) {
        if self.server_pid.is_none() {
            return;
        }
        let path = self.link.run(|c| {
            Ok(c.query("SELECT @@pid_file")?
                .first_value()
                .map(str::to_owned))
        });
        let pid = path
            .ok()
            .flatten()
            .and_then(|p| std::fs::read_to_string(p).ok())
            .and_then(|t| t.trim().parse::<u32>().ok())
            .filter(|p| std::path::Path::new(&format!("/proc/{p}")).exists());
        if let Some(pid) = pid {
            self.set_server_pid(pid);
        }
    }

    /// Records an on-CPU profile of the server (`perf record -g`) during each following phase
    /// into `dir` (none: stop profiling); [`Sampler::start_profile`] starts each recording and
    /// [`Sampler::finish`] folds it and adds a `profile` reading naming its files.
    pub fn profile_into(&mut self, dir: Option<PathBuf>) {
        self.profile_dir = dir;
    }

    /// Starts recording the phase's profile as `NAME.*` when [`Sampler::profile_into`] asked for
    /// profiles (else does nothing); [`Sampler::finish`] draws its flame graph under `title`.
    /// Fails when the server's process is not known or perf cannot record it.
    pub fn start_profile(&mut self, name: &str, title: &str) -> Result<(), Error> {
        self.recording = None;
        let Some(dir) = &self.profile_dir else {
            return Ok(());
        };
        let pid = self.server_pid.ok_or(ProfileError::NoPid)?;
        self.recording = Some(Recording::start(pid, dir, name)?);
        self.profile_title = title.to_string();
        Ok(())
    }

    /// Takes the reading the phase is compared against and starts `perf stat` on the server
    /// when the machine supports it; a watched replica is first given time to catch up. Call
    /// right before the phase.
    pub fn begin(&mut self) -> Result<(), Error> {
        self.samples.clear();
        self.tick_from = 0;
        if let Some(m) = &self.replica {
            // A replica still applying a load or the last phase would start the phase behind.
            m.begin(REPLICA_CATCH_UP);
        }
        self.perf_parts.clear();
        self.recording = None;
        self.totals = Totals::default();
        self.link.reset_count();
        // The readings' own statements (`SELECT @@…`) go before the status the phase counts
        // from, so they are not counted as the phase's.
        self.why.begin(self.link.conn(), self.server_pid);
        let r = self.read()?;
        // A reconnection between phases is no gap of this one.
        self.gap = None;
        self.gaps = 0;
        self.link.reset_count();
        self.first_client = self_cpu().ok();
        self.client_last = self.first_client;
        self.last = Some(r);
        self.last_ok_s = 0.0;
        self.perf = self.server_pid.and_then(|p| PerfStat::start(p).ok());
        Ok(())
    }

    /// Records the changes since the previous reading; `elapsed_s` is the tick's time since
    /// the measured phase began (the engine's `Sample::elapsed_s`).
    pub fn tick(&mut self, elapsed_s: f64) {
        self.tick_from = self.samples.len();
        let tick = match self.advance(elapsed_s) {
            Ok(Some(change)) => Tick::Change(TickChange {
                interval_s: change.interval_s,
                status: StatusCounts {
                    counters: change.status.counters,
                    gauges: change.status.gauges,
                },
                server: change.server,
                client: self.client_since_last(),
            }),
            Ok(None) => Tick::First {},
            Err(e) => Tick::Failed {
                error: e.to_string(),
            },
        };
        self.push(elapsed_s, Reading::Tick(tick));
        self.why.tick(self.link.conn());
        if let Some(m) = &self.replica {
            let lag = m.take();
            self.push(elapsed_s, Reading::ReplicaLag(lag));
        }
    }

    /// The readings the last [`Sampler::tick`] took (a gap that ended, the tick, the lag).
    pub fn last_tick(&self) -> &[TelemetrySample] {
        &self.samples[self.tick_from.min(self.samples.len())..]
    }

    /// Takes a reading at `elapsed_s`: the change since the last good one, added to the
    /// phase's totals; a failure opens (or extends) a gap.
    fn advance(&mut self, elapsed_s: f64) -> Result<Option<Change>, Error> {
        let now = match self.read() {
            Ok(r) => r,
            Err(e) => {
                if self.gap.is_none() {
                    self.gap = Some((self.last_ok_s, e.to_string()));
                }
                return Err(e);
            }
        };
        self.close_gap(elapsed_s, true);
        self.last_ok_s = elapsed_s;
        let change = self.last.as_ref().map(|prev| Change::between(prev, &now));
        if let Some(c) = &change {
            self.totals.add(c);
        }
        self.last = Some(now);
        Ok(change)
    }

    /// The client's CPU since the last tick with a reading.
    fn client_since_last(&mut self) -> Option<ProcUsage> {
        let now = self_cpu().ok()?;
        let d = self.client_last.map(|a| ProcUsage::between(&a, &now, true));
        self.client_last = Some(now);
        d
    }

    fn close_gap(&mut self, to_s: f64, readings_resumed: bool) {
        if let Some((from_s, reason)) = self.gap.take() {
            self.gaps += 1;
            let gap = Gap {
                from_s,
                to_s,
                reason,
                readings_resumed,
            };
            self.push(to_s, Reading::Gap(gap));
        }
    }

    /// The per-tick readings (and gaps) taken since [`Sampler::begin`], oldest first.
    pub fn ticks(&self) -> &[TelemetrySample] {
        &self.samples
    }

    fn push(&mut self, elapsed_s: f64, reading: Reading) {
        self.samples.push(TelemetrySample { elapsed_s, reading });
    }
}

mod finish;
