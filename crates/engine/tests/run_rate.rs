//! Fixed-rate runs against a real server: no coordinated omission, lag reported, never fatal.

#[path = "run_common.rs"]
mod common;

use common::*;
use qpslab_core::plan::{Arrival, RateSpec};
use qpslab_core::result::RateStats;
use qpslab_core::workload::WorkloadKind;
use std::sync::Mutex;
use std::time::Duration;

/// Both tests load the shared server; timing matters, so run them one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

#[test]
fn a_one_second_lock_shows_in_p99_from_intended_starts() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let opts = database("run_rate", 1, 1000);
    let mut s = plan(WorkloadKind::OltpUpdateIndex, 1, 1000, 4.0);
    s.rate = Some(RateSpec {
        per_second: 200.0,
        arrival: Arrival::Poisson,
    });
    let holder = {
        let opts = opts.clone();
        std::thread::spawn(move || {
            let mut c = control(&opts);
            std::thread::sleep(Duration::from_millis(1500));
            c.execute("LOCK TABLES sbtest1 WRITE").unwrap();
            std::thread::sleep(Duration::from_millis(1000));
            c.execute("UNLOCK TABLES").unwrap();
        })
    };
    let (r, samples) = run(&opts, &s, 8);
    holder.join().unwrap();
    let r = r.unwrap();
    eprintln!("{:?}\n{:?}", r.latency, r.rate);
    // ~800 arrivals; the ~200 due during the stall wait up to 1 s each, measured from their
    // intended start. Had latency been measured from the actual send, only the 8 sessions'
    // blocked statements would be slow, about 1% of events.
    assert!((600..=1000).contains(&r.events), "{}", r.events);
    assert!(pct(&r.latency, 99.0) > 700.0, "{:?}", r.latency);
    assert!(pct(&r.latency, 95.0) > 300.0, "{:?}", r.latency);
    assert!(pct(&r.latency, 50.0) < 50.0, "{:?}", r.latency);
    let rate = r.rate.unwrap();
    assert!(rate.late_events > 100, "{rate:?}");
    assert!(rate.max_lag_ms > 700.0, "{rate:?}");
    assert!((rate.achieved_per_s - 200.0).abs() < 40.0, "{rate:?}");
    // The arrivals waited for a session the server held: that lag is the server's, not the
    // client's own.
    assert!(rate.client_max_late_ms < 0.1 * rate.max_lag_ms, "{rate:?}");
    let stalled = samples.iter().map(|s| s.max_lag_ms).fold(0.0, f64::max);
    assert!(stalled > 700.0, "{samples:?}");
}

#[test]
fn a_rate_above_capacity_finishes_on_time_and_reports_lag() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let opts = database("run_rate", 1, 1000);
    let mut s = plan(WorkloadKind::OltpPointSelect, 1, 1000, 2.0);
    s.rate = Some(RateSpec {
        per_second: 5_000_000.0,
        arrival: Arrival::Uniform,
    });
    let t = std::time::Instant::now();
    let (r, samples) = run(&opts, &s, 4);
    let r = r.unwrap();
    assert!(t.elapsed() < Duration::from_secs(4), "{:?}", t.elapsed());
    assert!((r.duration_s - 2.0).abs() < 0.3, "{}", r.duration_s);
    let rate = r.rate.unwrap();
    assert!(rate.achieved_per_s < 1_000_000.0, "{rate:?}");
    assert!(
        (rate.achieved_per_s - r.tps()).abs() < 0.05 * r.tps() + 10.0,
        "{rate:?}"
    );
    // Past the first instant every arrival is behind schedule.
    assert!(rate.late_events as f64 > 0.9 * r.events as f64, "{rate:?}");
    assert!(samples.iter().all(|s| s.late_events > 0), "{samples:?}");
    assert!(
        rate.mean_lag_ms > 200.0 && rate.max_lag_ms > 1500.0,
        "{rate:?}"
    );
    // Latency counts the wait in the backlog: it grows to about the phase length.
    assert!(r.latency.max_ms > 1500.0, "{:?}", r.latency);
}

/// Issue 26: on an idle server a fixed rate measures the server, not the client's timer. The
/// loop used to sleep in `epoll_wait`'s whole milliseconds, so each arrival went out up to a
/// millisecond late and intended-start latency charged that to the server (p50 0.6-0.9 ms
/// against 0.02-0.05 ms unpaced). Three short phases of each mode, interleaved; the client's
/// own lateness, stored apart from latency, must be a wake-up, not a tick.
#[test]
fn paced_latency_on_an_idle_server_is_not_the_clients_timer() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let opts = database("run_rate", 1, 1000);
    let phase = |rate: Option<f64>| -> (f64, Option<RateStats>) {
        let mut s = plan(WorkloadKind::OltpPointSelect, 1, 1000, 1.0);
        s.rate = rate.map(|per_second| RateSpec {
            per_second,
            arrival: Arrival::Poisson,
        });
        let (r, samples) = run(&opts, &s, 2);
        let r = r.unwrap();
        // Each interval carries its share of the client's own late starts.
        let own: u64 = samples.iter().map(|s| s.client_late_events).sum();
        assert_eq!(
            own,
            r.rate.map_or(0, |r| r.client_late_events),
            "{samples:?}"
        );
        (pct(&r.latency, 50.0), r.rate)
    };
    let (mut unpaced, mut r200, mut r2000) = (Vec::new(), Vec::new(), Vec::new());
    let mut rates = Vec::new();
    for _ in 0..3 {
        unpaced.push(phase(None).0);
        for (rate, p50s) in [(200.0, &mut r200), (2000.0, &mut r2000)] {
            let (p50, stats) = phase(Some(rate));
            p50s.push(p50);
            rates.push(stats.expect("a paced phase has rate statistics"));
        }
    }
    eprintln!("p50 ms: unpaced {unpaced:?}, 200/s {r200:?}, 2000/s {r2000:?}\n{rates:?}");
    // The paced p50 itself is not bounded here: on an idle VM it is mostly the server waking
    // from an idle wait (0.18-0.46 ms at 200/s on the 2-core VM of bench/RESULTS.md, against
    // 0.02-0.03 unpaced, the same for sysbench), which no client removes. The comparison with
    // the reference tool at the same rate is crates/cli/tests/pacing.rs; what tells a wake-up
    // from a millisecond tick is the loop's own lateness, below.
    // The client's own lateness is stored, and small: a wake-up, not a millisecond tick
    // (uniform over 0-1 ms before, so a median near 0.5 ms).
    for r in &rates {
        assert!(r.achieved_per_s > 0.5 * r.target_per_s, "{r:?}");
        assert!(r.client_p50_late_ms < 0.2, "{r:?}");
        assert!(r.client_p50_late_ms <= r.client_p99_late_ms, "{r:?}");
        // A part of the schedule lag (the histogram rounds to 3 significant digits).
        assert!(
            r.client_max_late_ms <= r.max_lag_ms * 1.001 + 0.001,
            "{r:?}"
        );
        assert!(
            r.client_mean_late_ms <= r.mean_lag_ms * 1.001 + 0.001,
            "{r:?}"
        );
    }
}
