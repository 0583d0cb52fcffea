//! Test support for fuzzing on stable Rust: a seeded random-input loop.
//!
//! Each target is a generator (random bytes, or a valid structure mutated at random) and a
//! check that must not panic. Every case draws from its own generator seeded by
//! `(seed, case)`, so one failing case is rerun alone from the two numbers the failure prints.
//!
//! - `QPSLAB_FUZZ_CASES=N`: the long mode, N cases per target (times the target's weight);
//!   without it each target runs its modest default.
//! - `QPSLAB_FUZZ_SEED=S`: the seed (default: fixed, so the suite is deterministic; the long
//!   mode takes one from the clock and prints it).
//! - `QPSLAB_FUZZ_CASE=I`: run only case I (to reproduce a failure).
//! - `QPSLAB_FUZZ_REPORT=FILE`: append one line per target (cases, seconds) to FILE.
//!
//! A case that runs longer than `QPSLAB_FUZZ_HANG_S` (default 20 s) is a hang: the process
//! prints the target, seed and case and aborts.
//!
//! ```
//! let mut n = 0;
//! qpslab_fuzzkit::Target::new("demo", 50).run(|r| r.bytes(8), |b| {
//!     assert!(b.len() <= 8);
//!     n += 1;
//! });
//! ```

mod alloc;
mod rng;

pub mod bytes;

pub use alloc::{measure, Allocated, CountingAlloc};
pub use rng::FuzzRng;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The seed used when none is given and the long mode is off.
const DEFAULT_SEED: u64 = 0x0051_ED0F_F022;

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok()?.trim().parse().ok()
}

/// True in the long mode (`QPSLAB_FUZZ_CASES` set).
pub fn long_mode() -> bool {
    env_u64("QPSLAB_FUZZ_CASES").is_some()
}

/// One fuzz target: a name, a number of cases and a seed.
pub struct Target {
    name: &'static str,
    cases: u64,
    seed: u64,
    only: Option<u64>,
}

impl Target {
    /// A target running `default_cases` cases, or `QPSLAB_FUZZ_CASES` in the long mode.
    pub fn new(name: &'static str, default_cases: u64) -> Target {
        Target::weighted(name, default_cases, 1.0)
    }

    /// Like [`Target::new`], with the long mode's count scaled by `weight` (for targets whose
    /// cases cost much more than the others').
    pub fn weighted(name: &'static str, default_cases: u64, weight: f64) -> Target {
        let cases = match env_u64("QPSLAB_FUZZ_CASES") {
            Some(n) => ((n as f64 * weight) as u64).max(1),
            None => default_cases,
        };
        let seed = env_u64("QPSLAB_FUZZ_SEED").unwrap_or_else(|| {
            if long_mode() {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(DEFAULT_SEED, |d| d.as_nanos() as u64)
            } else {
                DEFAULT_SEED
            }
        });
        Target {
            name,
            cases,
            seed,
            only: env_u64("QPSLAB_FUZZ_CASE"),
        }
    }

    /// The number of cases this target will run.
    pub fn cases(&self) -> u64 {
        self.cases
    }

    /// Runs `check` on `gen`'s input for every case. A panic in `check` is reported with the
    /// target, seed, case and input (`Debug`), then fails the test.
    pub fn run<T: std::fmt::Debug>(
        self,
        mut gen: impl FnMut(&mut FuzzRng) -> T,
        mut check: impl FnMut(&T),
    ) {
        let started = Instant::now();
        let current = Arc::new(AtomicU64::new(u64::MAX));
        let watchdog = Watchdog::start(self.name, self.seed, current.clone());
        let range = match self.only {
            Some(i) => i..i + 1,
            None => 0..self.cases,
        };
        for case in range {
            let mut rng = FuzzRng::for_case(self.seed, case);
            let input = gen(&mut rng);
            current.store(case, Ordering::Relaxed);
            RUNNING.with(|r| r.set((self.name, self.seed, case)));
            watchdog.touch();
            if let Err(e) = catch_unwind(AssertUnwindSafe(|| check(&input))) {
                let what = panic_text(&e);
                let shown = format!("{input:?}");
                let shown = if shown.len() > 4000 {
                    format!("{}... ({} characters)", &shown[..4000], shown.len())
                } else {
                    shown
                };
                panic!(
                    "fuzz target {} panicked on case {case} (rerun: QPSLAB_FUZZ_SEED={} \
                     QPSLAB_FUZZ_CASE={case}): {what}\ninput: {shown}",
                    self.name, self.seed
                );
            }
        }
        watchdog.stop();
        self.report(started.elapsed());
    }

    fn report(&self, took: Duration) {
        let cases = if self.only.is_some() { 1 } else { self.cases };
        let line = format!(
            "{}\t{}\t{:.1}\t{:#x}",
            self.name,
            cases,
            took.as_secs_f64(),
            self.seed
        );
        eprintln!("fuzz {line}");
        if let Ok(path) = std::env::var("QPSLAB_FUZZ_REPORT") {
            use std::io::Write;
            if let Ok(mut f) = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
            {
                let _ = writeln!(f, "{line}");
            }
        }
    }
}

thread_local! {
    /// The target and case this thread is running, for [`abort_on_huge_allocation`].
    static RUNNING: std::cell::Cell<(&'static str, u64, u64)> = const { std::cell::Cell::new(("", 0, 0)) };
}

fn abort_on_huge_allocation(size: usize) -> ! {
    let (name, seed, case) = RUNNING.with(|r| r.get());
    eprintln!(
        "fuzz target {name} asked for {size} bytes on case {case} (rerun: QPSLAB_FUZZ_SEED={seed} \
         QPSLAB_FUZZ_CASE={case})"
    );
    std::process::abort();
}

fn panic_text(e: &Box<dyn std::any::Any + Send>) -> String {
    e.downcast_ref::<String>()
        .cloned()
        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "(non-text panic)".into())
}

/// Aborts the process when one case runs too long (a hang), naming it.
struct Watchdog {
    state: Arc<Mutex<(Instant, bool)>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Watchdog {
    fn start(name: &'static str, seed: u64, current: Arc<AtomicU64>) -> Watchdog {
        let limit = Duration::from_secs(env_u64("QPSLAB_FUZZ_HANG_S").unwrap_or(20));
        let state = Arc::new(Mutex::new((Instant::now(), false)));
        let s = state.clone();
        let thread = std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_millis(200));
            let (since, done) = *s.lock().unwrap_or_else(|e| e.into_inner());
            if done {
                return;
            }
            if since.elapsed() > limit {
                let case = current.load(Ordering::Relaxed);
                eprintln!(
                    "fuzz target {name} hung on case {case} for more than {limit:?} (rerun: \
                     QPSLAB_FUZZ_SEED={seed} QPSLAB_FUZZ_CASE={case})"
                );
                std::process::abort();
            }
        });
        Watchdog {
            state,
            thread: Some(thread),
        }
    }

    fn touch(&self) {
        if let Ok(mut g) = self.state.lock() {
            g.0 = Instant::now();
        }
    }

    fn stop(self) {}
}

impl Drop for Watchdog {
    /// Also on a panic, so a failed target's watchdog does not abort the other tests.
    fn drop(&mut self) {
        if let Ok(mut g) = self.state.lock() {
            g.1 = true;
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
