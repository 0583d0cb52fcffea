//! Live actions inside one measured phase (`qpslab run --at TIME:ACTION`). A scheduler thread
//! waits for the measured phase to start, then starts each action at its time on a thread and
//! connection of its own, so neither the engine's sessions, the sampler nor a later action
//! waits for a slow one (a buffer-pool resize). When the phase ends, however it ends, every
//! setting a `set` changed is put back to the value it had before, in reverse order.

mod act;
mod global;

pub use global::{set_global, Changed, SetRefused};

use qpslab_core::live::{ActionRecord, LiveAction};
use qpslab_core::ConnectOptions;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What a finished action sends back: its record, and what to put back at the end.
type Finished = (ActionRecord, Option<act::Undo>);

/// The actions of one phase, under way.
pub struct Live {
    target: ConnectOptions,
    start: Option<Sender<Instant>>,
    finished: Receiver<Finished>,
    ended: Arc<AtomicBool>,
    scheduler: Option<JoinHandle<Vec<JoinHandle<()>>>>,
    records: Vec<ActionRecord>,
    saved: Vec<act::Undo>,
    restores: Vec<String>,
}

impl Live {
    /// Starts the scheduler of `actions` (in time order) against `target` (its server's
    /// process `pid`, when known, for `pin`); nothing runs until [`Live::measured_from`] says
    /// when the measured phase began.
    pub fn start(target: &ConnectOptions, pid: Option<u32>, actions: &[LiveAction]) -> Live {
        let (start_tx, start_rx) = mpsc::channel();
        let (done_tx, done_rx) = mpsc::channel();
        let ended = Arc::new(AtomicBool::new(false));
        let (t, a, e) = (target.clone(), actions.to_vec(), Arc::clone(&ended));
        let scheduler = std::thread::Builder::new()
            .name("qpslab-live".into())
            .spawn(move || schedule((&t, pid), &a, &start_rx, &done_tx, &e))
            .ok();
        Live {
            target: target.clone(),
            start: Some(start_tx),
            finished: done_rx,
            ended,
            scheduler,
            records: Vec::new(),
            saved: Vec::new(),
            restores: Vec::new(),
        }
    }

    /// The measured phase began at `at` (the first report of the phase tells: its end minus
    /// its elapsed seconds). Later calls change nothing.
    pub fn measured_from(&mut self, at: Instant) {
        if let Some(tx) = self.start.take() {
            let _ = tx.send(at);
        }
    }

    /// The actions that finished since the last call.
    pub fn poll(&mut self) -> Vec<ActionRecord> {
        let new: Vec<Finished> = self.finished.try_iter().collect();
        self.take(new)
    }

    fn take(&mut self, new: Vec<Finished>) -> Vec<ActionRecord> {
        let mut out = Vec::new();
        for (record, undo) in new {
            match undo {
                // The first `set` of a variable saved its value before the run changed it.
                Some(act::Undo::Setting(name, _))
                    if self
                        .saved
                        .iter()
                        .any(|u| matches!(u, act::Undo::Setting(n, _) if *n == name)) => {}
                Some(u) => self.saved.push(u),
                None => {}
            }
            self.records.push(record.clone());
            out.push(record);
        }
        out
    }

    /// Ends the schedule (actions not yet due are not run), waits for those under way, and
    /// restores every changed setting. Returns all the records (the restore noted on the
    /// first `set` of each setting); the restores in words wait in [`Live::take_restores`].
    pub fn finish(&mut self) -> Vec<ActionRecord> {
        self.ended.store(true, Ordering::Relaxed);
        self.start = None;
        if let Some(workers) = self.scheduler.take().and_then(|s| s.join().ok()) {
            for w in workers {
                let _ = w.join();
            }
        }
        let rest: Vec<Finished> = self.finished.try_iter().collect();
        self.take(rest);
        self.records.sort_by(|a, b| a.at_s.total_cmp(&b.at_s));
        for u in std::mem::take(&mut self.saved).into_iter().rev() {
            let prefix = match &u {
                act::Undo::Setting(name, _) => format!("set {name}="),
                act::Undo::Pin(class, _) => format!("pin {class}="),
            };
            let outcome = act::undo(&self.target, u);
            let first = self
                .records
                .iter_mut()
                .find(|r| r.ok() && r.action.starts_with(&prefix) && r.restored.is_none());
            if let Some(r) = first {
                r.restored = Some(outcome.clone());
            }
            self.restores.push(format!("restored {outcome}"));
        }
        std::mem::take(&mut self.records)
    }

    /// The restores made by [`Live::finish`], in words (`restored x=1 ok`).
    pub fn take_restores(&mut self) -> Vec<String> {
        std::mem::take(&mut self.restores)
    }
}

impl Drop for Live {
    /// A phase abandoned without [`Live::finish`] (a panic) still puts the server back.
    fn drop(&mut self) {
        if self.scheduler.is_some() || !self.saved.is_empty() {
            self.finish();
        }
    }
}

/// How often a waiting scheduler looks whether the phase ended.
const TICK: Duration = Duration::from_millis(20);

/// The scheduler: waits for the start, then starts each action at its time on its own
/// thread. Returns the threads it started.
fn schedule(
    (target, pid): (&ConnectOptions, Option<u32>),
    actions: &[LiveAction],
    start: &Receiver<Instant>,
    done: &Sender<Finished>,
    ended: &AtomicBool,
) -> Vec<JoinHandle<()>> {
    let Ok(t0) = start.recv() else {
        return Vec::new();
    };
    let mut workers = Vec::new();
    for a in actions {
        let due = t0 + Duration::from_secs_f64(a.at_s);
        while Instant::now() < due && !ended.load(Ordering::Relaxed) {
            std::thread::sleep(TICK.min(due.saturating_duration_since(Instant::now())));
        }
        if ended.load(Ordering::Relaxed) {
            break;
        }
        let (target, action, tx) = (target.clone(), a.clone(), done.clone());
        let spawned = std::thread::Builder::new()
            .name("qpslab-action".into())
            .spawn(move || {
                let started_s = t0.elapsed().as_secs_f64();
                let d = act::run(&target, pid, &action.action);
                let r = record(&action, started_s, d.outcome, d.took_ms);
                let _ = tx.send((r, d.undo));
            });
        match spawned {
            Ok(w) => workers.push(w),
            Err(e) => {
                let r = record(a, t0.elapsed().as_secs_f64(), e.to_string(), 0.0);
                let _ = done.send((r, None));
            }
        }
    }
    workers
}

fn record(a: &LiveAction, started_s: f64, outcome: String, took_ms: f64) -> ActionRecord {
    ActionRecord {
        action: a.action.to_string(),
        at_s: a.at_s,
        started_s,
        outcome,
        took_ms,
        restored: None,
        tps: None,
        p95_ms: None,
        judgment: String::new(),
    }
}
