//! One event-loop thread: many sessions as state machines over non-blocking sockets (mio/epoll,
//! edge-triggered).
//!
//! Per query the loop does, in the common case, one `read`: a read that returns less than the
//! buffer holds means the socket was drained, so the loop waits for the next edge instead of
//! issuing a read that would only say `EAGAIN` (TLS streams are always drained, as their
//! decrypted bytes are invisible to epoll). Requests are staged while a wake-up's replies are
//! handled and written together before the loop sleeps, with one io_uring submission (see
//! [`super::uring`]); without io_uring, one `write` each. With many requests in flight the
//! loop naps briefly before sleeping in `epoll_wait`, so one wake-up serves many replies.
//!
//! Both levers are set by the plan ([`qpslab_core::EngineKnobs`]: `--io-uring off` writes with
//! plain `write`s, `--linger-us N` sets the nap, 0 for none), so a stored run says how it was
//! measured. Statistics go into the loop's own [`IntervalStats`], handed to the coordinator once per report interval; nothing per query
//! takes a lock, sends on a channel or allocates.

use super::cpu::thread_sched_s;
use super::error::RunError;
use super::schedule::{Arrivals, Boundaries};
use super::session::{Session, State};
use super::stats::{IntervalStats, IN_FLIGHT_FLOOR_US};
use super::uring::Ring;
use crate::workload::{StmtClass, Workload};
use alarm::{Alarm, ALARM};
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};
use qpslab_core::{ConnectOptions, RunPlan};
use std::io;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

/// Read buffer per loop: a point-select reply is ~150 bytes, a 100-row range ~20 KB.
const READ_BUF: usize = 64 * 1024;
/// Staged requests written at once at most: bounds how long the first of a large wake-up's
/// requests waits for the others.
const SEND_BATCH: usize = 128;
/// Requests in flight from which the loop naps between wake-ups (see [`EventLoop::linger`];
/// the nap itself is the plan's `engine.linger_us`).
const LINGER_MIN_IN_FLIGHT: usize = 32;
/// Longest sleep in `epoll_wait`, so a raised stop flag is seen promptly.
const MAX_WAIT: Duration = Duration::from_millis(50);
/// How long a timed phase waits past its end for the replies still outstanding; then their
/// sessions are closed unanswered, so a server that stopped answering (SIGSTOP, a lock held
/// for minutes) cannot hold the phase past its end by more than this.
const END_GRACE: Duration = Duration::from_secs(1);

/// What a loop tells the coordinator.
pub(crate) enum LoopMsg {
    /// All of the loop's sessions are open (or one failed).
    Ready { result: Result<(), RunError> },
    /// The statistics of interval `k` (0 is warm-up), cut at boundary `k`.
    Interval {
        index: usize,
        k: u64,
        stats: Box<IntervalStats>,
    },
    /// The loop ended during interval `k`, at `at`; `stats` is that last partial interval.
    Finished {
        index: usize,
        k: u64,
        at: Instant,
        stats: Box<IntervalStats>,
        result: Result<(), RunError>,
    },
}

/// The phase's timeline, fixed by the coordinator once every session is open.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Clock {
    /// Start of warm-up (the first events).
    pub t0: Instant,
    /// Report boundaries and the time limit.
    pub bounds: Boundaries,
}

/// Read-only context shared by every loop of a phase.
pub(crate) struct Shared<'a> {
    pub target: &'a ConnectOptions,
    /// The run's plan: prepared statements, seed, limits, rate and engine knobs.
    pub plan: &'a RunPlan,
    pub workload: &'a Workload,
    pub sessions: u32,
    /// Statement index → statement-kind index.
    pub kind_of: Vec<usize>,
    /// Statement index → the kind that keeps the latency of the events it ends, for
    /// workloads with event types (TPC-C's transactions).
    pub event_kind_of: Vec<Option<usize>>,
    pub kinds: usize,
    /// Statement index → read/write/other.
    pub class_of: Vec<StmtClass>,
    /// Statement index → it is a COMMIT (a pipeline's last call waits for the others).
    pub commit_of: Vec<bool>,
    /// Tickets handed out of the plan's `--events`.
    pub tickets: AtomicU64,
    pub loops: usize,
    /// The caller's stop flag (Ctrl-C).
    pub stop: &'a AtomicBool,
    /// Raised by the coordinator when another loop failed.
    pub abort: AtomicBool,
}

impl Shared<'_> {
    /// Server-side prepared statements (true) or the text protocol.
    pub fn ps(&self) -> bool {
        self.plan.prepared_statements
    }

    /// A transaction's statements are pipelined (see [`Shared::batch_end`]).
    pub fn pipeline(&self) -> bool {
        self.plan.pipeline
    }

    /// The end of the calls written together from call `k` of `calls`: the next one alone
    /// without a pipeline; with one, every call up to the event's final COMMIT, which is sent
    /// once their replies are in (a ROLLBACK ending an event goes with the others: nothing
    /// is kept either way).
    pub fn batch_end(&self, calls: &[crate::workload::Call], k: usize) -> usize {
        if !self.plan.pipeline {
            return k + 1;
        }
        match calls.last() {
            Some(last) if self.commit_of[last.stmt as usize] && k + 1 < calls.len() => {
                calls.len() - 1
            }
            _ => calls.len(),
        }
    }

    /// Seed of the sessions' statement generators and of the arrivals.
    pub fn seed(&self) -> u64 {
        self.plan.workload.rand.seed
    }

    /// The phase must end now.
    #[inline]
    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || self.abort.load(Ordering::Relaxed)
    }
}

/// A loop's sessions and state while the phase runs.
pub(crate) struct EventLoop<'a> {
    shared: &'a Shared<'a>,
    index: usize,
    poll: Poll,
    sessions: Vec<Session>,
    rbuf: Vec<u8>,
    scratch: Vec<u8>,
    stats: Box<IntervalStats>,
    k: u64,
    next_boundary: Option<Instant>,
    clock: Clock,
    /// Sessions waiting for a fixed-rate arrival (see [`EventLoop::make_idle`]).
    idle: Vec<usize>,
    /// Since when `idle` has held a session without a break: an arrival due earlier had to
    /// wait for a free session until then (the server's delay, not the client's).
    idle_since: Instant,
    /// The precise wake-up for the next arrival or sleeper, made when first needed.
    alarm: Option<Alarm>,
    arrivals: Option<Arrivals>,
    /// Sessions not yet `Done`.
    active: usize,
    /// `--events` tickets ran out.
    exhausted: bool,
    reconnecting: Vec<usize>,
    /// Sessions parked by a script's `\\sleep` (see [`sleeps`]).
    sleeping: Vec<usize>,
    /// Writes all staged requests with one submission; `None` when the kernel refuses
    /// io_uring (or the plan turns it off), then each request is one `write`.
    ring: Option<Ring>,
    /// Sessions whose staged request waits for the next [`EventLoop::flush_sends`].
    pending: Vec<usize>,
    sent: Vec<(usize, io::Result<usize>)>,
    /// Events of the last wake-up.
    last_batch: usize,
    /// Nap before `epoll_wait` when many requests are in flight (zero: never).
    linger: Duration,
    /// The thread's seconds on a CPU and waiting for one when the current interval began.
    sched_mark: (f64, f64),
}

/// A duration in whole microseconds, saturating.
fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

mod alarm;
mod open;
pub(super) mod recovery;
mod replies;
mod sends;
mod sleeps;

pub(crate) use open::{keep_first_cause, open_sessions};

impl<'a> EventLoop<'a> {
    /// A loop over `sessions`, registered with a new poller.
    pub fn new(
        shared: &'a Shared<'a>,
        index: usize,
        sessions: Vec<Session>,
        clock: Clock,
    ) -> Result<Self, RunError> {
        let poll = Poll::new()?;
        for (i, s) in sessions.iter().enumerate() {
            let fd = s.stream.as_raw_fd();
            poll.registry()
                .register(&mut SourceFd(&fd), Token(i), Interest::READABLE)?;
        }
        let knobs = &shared.plan.engine;
        let arrivals = shared.plan.rate.as_ref().map(|r| {
            Arrivals::new(
                clock.t0,
                r.per_second,
                r.arrival,
                index,
                shared.loops,
                shared.seed(),
            )
        });
        let active = sessions.len();
        // A loop of one session never has two requests to write at once.
        let ring = (knobs.io_uring && sessions.len() > 1)
            .then(|| Ring::new(sessions.len().min(SEND_BATCH) as u32).ok())
            .flatten();
        Ok(EventLoop {
            shared,
            index,
            poll,
            idle: Vec::with_capacity(sessions.len()),
            idle_since: clock.t0,
            alarm: None,
            sessions,
            rbuf: vec![0; READ_BUF],
            scratch: Vec::new(),
            stats: Box::new(IntervalStats::new(shared.kinds)),
            k: 0,
            next_boundary: clock.bounds.get(0),
            clock,
            arrivals,
            active,
            exhausted: false,
            reconnecting: Vec::new(),
            sleeping: Vec::new(),
            ring,
            pending: Vec::with_capacity(SEND_BATCH),
            sent: Vec::with_capacity(SEND_BATCH),
            last_batch: 0,
            linger: Duration::from_micros(knobs.linger_us),
            sched_mark: thread_sched_s(),
        })
    }

    /// Runs until every session is done, the stop flag is raised or an error stops the phase;
    /// then reports the last interval.
    pub fn run(mut self, tx: &Sender<LoopMsg>) {
        let result = self.drive(tx);
        let at = Instant::now();
        self.cut(at, tx);
        self.stamp_cpu();
        self.note_in_flight(at);
        self.stats.unfinished_max_us = self.oldest_event_us(at);
        self.stats.sessions = self.sessions.iter().map(|s| s.measured).collect();
        let stats = std::mem::replace(&mut self.stats, Box::new(IntervalStats::new(0)));
        let _ = tx.send(LoopMsg::Finished {
            index: self.index,
            k: self.k,
            at,
            stats,
            result,
        });
    }

    fn drive(&mut self, tx: &Sender<LoopMsg>) -> Result<(), RunError> {
        let mut events = Events::with_capacity(1024);
        // Every loop starts at the same instant; an event sent before t0 would run unmeasured.
        std::thread::sleep(self.clock.t0.saturating_duration_since(Instant::now()));
        let now = Instant::now();
        self.cut(now, tx);
        for i in 0..self.sessions.len() {
            if self.arrivals.is_some() {
                self.make_idle(i, now);
            } else {
                self.start_event(i, now, None)?;
            }
        }
        loop {
            let now = Instant::now();
            self.start_arrivals(now)?;
            self.reconnect_due(now)?;
            self.wake_sleepers(now)?;
            self.retire_idle(now);
            self.flush_sends(now)?;
            if self.active == 0 || self.past_grace(now) {
                return Ok(());
            }
            self.linger(now);
            let now = Instant::now();
            self.arm_alarm(now);
            let wait = self.wait(now);
            match self.poll.poll(&mut events, Some(wait)) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.into()),
            }
            if self.shared.stopping() {
                return Err(RunError::Interrupted);
            }
            // Boundaries are cut on time even when nothing arrives (a stalled server): an
            // interval left uncut would make the next wait zero and the loop spin.
            self.cut(Instant::now(), tx);
            self.last_batch = events.iter().count();
            for ev in events.iter() {
                if ev.token() == ALARM {
                    continue;
                }
                // A clock read per socket (vDSO, no syscall): with hundreds of sessions ready at
                // once, one timestamp per wake-up would skew the later ones' latencies.
                let now = Instant::now();
                self.cut(now, tx);
                let i = ev.token().0;
                if ev.is_writable() && self.sessions[i].want_write {
                    self.on_writable(i, now)?;
                }
                if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                    self.on_readable(i, now)?;
                }
            }
        }
    }

    /// With many requests at the server and few replies per wake-up, naps a little before
    /// `epoll_wait` so replies pile up: one wake-up then serves many sessions instead of each
    /// reply waking the loop (a wake-up costs the server's write and the loop a context
    /// switch, more than the rest of a query's client work). The server keeps the other
    /// requests to work on, so throughput holds; latencies grow by at most the nap.
    fn linger(&mut self, now: Instant) {
        let in_flight = self
            .active
            .saturating_sub(self.idle.len() + self.reconnecting.len());
        // No reply at the last wake-up (a stall, or the wait timed out): nothing piles up.
        if self.linger.is_zero()
            || in_flight < LINGER_MIN_IN_FLIGHT
            || self.last_batch == 0
            || self.last_batch >= in_flight / 4
        {
            return;
        }
        let nap = self.linger.min(self.wait(now));
        if !nap.is_zero() {
            std::thread::sleep(nap);
        }
    }

    /// How long `epoll_wait` may sleep: until the next boundary, arrival or reconnection.
    fn wait(&self, now: Instant) -> Duration {
        let mut until = now + MAX_WAIT;
        if let Some(b) = self.next_boundary {
            until = until.min(b);
        }
        if let (Some(a), false) = (&self.arrivals, self.idle.is_empty()) {
            until = until.min(a.peek());
        }
        if let Some(end) = self.clock.bounds.end {
            if !self.idle.is_empty() {
                until = until.min(end);
            }
        }
        for &i in &self.reconnecting {
            if let State::Reconnect { at, .. } = self.sessions[i].state {
                until = until.min(at);
            }
        }
        until = self.next_wake(until);
        until.saturating_duration_since(now)
    }

    /// Arms the alarm for the next due arrival or sleeper, when it comes before the poller's
    /// longest wait: `epoll_wait`'s millisecond timeout alone would wake the loop up to a
    /// millisecond late. A loop that does not pace never gets here past the first test.
    fn arm_alarm(&mut self, now: Instant) {
        let arrival = match (&self.arrivals, self.idle.is_empty()) {
            (Some(a), false) => Some(a.peek()),
            _ => None,
        };
        let due = match (arrival, self.next_sleeper()) {
            (Some(a), Some(s)) => a.min(s),
            (a, s) => match a.or(s) {
                Some(at) => at,
                None => return,
            },
        };
        if due <= now || due >= now + MAX_WAIT {
            return;
        }
        if self.alarm.is_none() {
            // Without a timerfd the millisecond timeout still wakes the loop, only later.
            self.alarm = Alarm::new(self.poll.registry()).ok();
        }
        if let Some(alarm) = &mut self.alarm {
            alarm.set(due);
        }
    }

    /// Hands the coordinator every interval whose boundary has passed.
    fn cut(&mut self, now: Instant, tx: &Sender<LoopMsg>) {
        while let Some(b) = self.next_boundary.filter(|b| now >= *b) {
            self.stamp_cpu();
            self.note_in_flight(b);
            let fresh = Box::new(IntervalStats::new(self.shared.kinds));
            let stats = std::mem::replace(&mut self.stats, fresh);
            let _ = tx.send(LoopMsg::Interval {
                index: self.index,
                k: self.k,
                stats,
            });
            self.k += 1;
            self.next_boundary = self.clock.bounds.get(self.k);
        }
    }

    /// Notes the requests that, at the report tick `at`, had waited for their reply at least
    /// the floor of the stuck bound (the coordinator, which knows the phase's p99, decides
    /// which are stuck). One pass over the loop's sessions per tick, nothing per query.
    fn note_in_flight(&mut self, at: Instant) {
        for s in &self.sessions {
            if matches!(s.state, State::Call | State::Rollback) {
                let us = micros(at.saturating_duration_since(s.call_start));
                if us >= IN_FLIGHT_FLOOR_US {
                    self.stats.in_flight_us.push(us);
                }
            }
        }
    }

    /// The age at `at` of the oldest event still waiting for a reply, µs (0: none), counted
    /// from its start as its latency would have been.
    fn oldest_event_us(&self, at: Instant) -> u64 {
        self.sessions
            .iter()
            .filter(|s| matches!(s.state, State::Call | State::Rollback))
            .map(|s| micros(at.saturating_duration_since(s.event_start)))
            .max()
            .unwrap_or(0)
    }

    /// Charges the thread's time on a CPU and waiting for one since the last stamp to the
    /// current interval (one read per report boundary, none per query).
    fn stamp_cpu(&mut self) {
        let now = thread_sched_s();
        self.stats.loop_cpu_s += now.0 - self.sched_mark.0;
        self.stats.loop_wait_s += now.1 - self.sched_mark.1;
        self.sched_mark = now;
    }

    /// A timed phase whose grace after the end is over: the sessions still waiting for a
    /// reply are abandoned (the loop returns; dropping them closes their sockets). The loop
    /// wakes at least every `MAX_WAIT`, so it notices.
    fn past_grace(&self, now: Instant) -> bool {
        self.clock
            .bounds
            .end
            .is_some_and(|end| now >= end + END_GRACE)
    }

    /// Whether what an event started now (`warm`: during warm-up) does is kept in the current
    /// interval: a measured event's always; a warm-up event's while the interval is a warm-up
    /// one (drawn, never counted), not once measurement has begun.
    pub(super) fn kept(&self, warm: bool) -> bool {
        !warm || !self.clock.bounds.measured(self.k)
    }

    fn time_is_up(&self, now: Instant) -> bool {
        self.clock.bounds.end.is_some_and(|end| now >= end)
    }

    fn done(&mut self, i: usize) {
        if self.sessions[i].state != State::Done {
            self.sessions[i].state = State::Done;
            self.active -= 1;
        }
    }

    /// Starts the next event of session `i`, or retires it when the phase is over.
    fn start_event(
        &mut self,
        i: usize,
        now: Instant,
        intended: Option<Instant>,
    ) -> Result<(), RunError> {
        if self.exhausted || self.time_is_up(now) {
            self.done(i);
            return Ok(());
        }
        let warm = now < self.clock.bounds.measure_start;
        if !warm {
            if let Some(limit) = self.shared.plan.stop.events {
                if self.shared.tickets.fetch_add(1, Ordering::Relaxed) >= limit {
                    self.exhausted = true;
                    self.done(i);
                    return Ok(());
                }
            }
            if let Some(at) = intended {
                // Sendable from when it was due and a session was free; the rest is the
                // loop's own lateness.
                let ready = at.max(self.idle_since);
                self.stats.record_start(
                    micros(now.saturating_duration_since(at)),
                    micros(now.saturating_duration_since(ready)),
                );
            }
        }
        let s = &mut self.sessions[i];
        s.gen.next_event(&mut s.ev);
        if s.ev.calls.is_empty() {
            if let Some(failure) = s.gen.script_failure() {
                return Err(RunError::Script(failure.to_string()));
            }
            return Err(RunError::Config(
                "the workload produced an event without statements".into(),
            ));
        }
        s.warm = warm;
        s.event_start = intended.unwrap_or(now);
        s.call = 0;
        // A fixed rate paces events itself; otherwise the event may ask for a pause first.
        if s.ev.pause_us > 0 && intended.is_none() {
            let us = s.ev.pause_us;
            self.pause(i, now, us);
            return Ok(());
        }
        s.state = State::Call;
        self.send(i, now)
    }

    /// Starts fixed-rate arrivals that are due on idle sessions; arrivals beyond the idle
    /// sessions wait (the backlog shows as lag and in the latencies).
    fn start_arrivals(&mut self, now: Instant) -> Result<(), RunError> {
        while !self.idle.is_empty() && !self.exhausted && !self.time_is_up(now) {
            let Some(a) = self.arrivals.as_mut() else {
                return Ok(());
            };
            if a.peek() > now {
                break;
            }
            let intended = a.take();
            let Some(i) = self.idle.pop() else { break };
            self.start_event(i, now, Some(intended))?;
        }
        Ok(())
    }

    /// Session `i` waits for the next fixed-rate arrival from `now` on.
    fn make_idle(&mut self, i: usize, now: Instant) {
        if self.idle.is_empty() {
            self.idle_since = now;
        }
        self.idle.push(i);
    }

    /// Under a fixed rate, idle sessions retire once the phase is over.
    fn retire_idle(&mut self, now: Instant) {
        if self.exhausted || self.time_is_up(now) {
            while let Some(i) = self.idle.pop() {
                self.done(i);
            }
        }
    }
}
