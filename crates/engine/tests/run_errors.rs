//! Error policy against a real server: lock waits and deadlocks are rolled back, retried and
//! counted by code; lost connections reconnect.

#[path = "run_common.rs"]
mod common;

use common::*;
use qpslab_core::workload::WorkloadKind;
use std::sync::Mutex;
use std::time::Duration;

static SERIAL: Mutex<()> = Mutex::new(());

#[test]
fn lock_wait_timeouts_are_rolled_back_retried_and_counted() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let opts = database("run_errors", 1, 1000);
    let p = plan(WorkloadKind::OltpUpdateIndex, 1, 1000, 4.0);
    let mut ctl = control(&opts);
    // New sessions (the phase's) wait 1 s for a row lock, then get 1205.
    ctl.execute("SET GLOBAL innodb_lock_wait_timeout = 1")
        .unwrap();
    let holder = {
        let opts = opts.clone();
        std::thread::spawn(move || {
            let mut c = control(&opts);
            std::thread::sleep(Duration::from_millis(300));
            c.execute("BEGIN").unwrap();
            c.query("SELECT id FROM sbtest1 FOR UPDATE").unwrap();
            std::thread::sleep(Duration::from_millis(2600));
            c.execute("COMMIT").unwrap();
        })
    };
    let (r, samples) = run(&opts, &p, 2);
    holder.join().unwrap();
    ctl.execute("SET GLOBAL innodb_lock_wait_timeout = 50")
        .unwrap();
    let r = r.unwrap();
    // Each of the 2 sessions times out about twice during the 2.6 s hold.
    let waits = r.errors.get(&1205).copied().unwrap_or(0);
    assert!((2..=8).contains(&waits), "{:?}", r.errors);
    assert_eq!(r.error_total(), waits);
    assert_eq!(samples.iter().map(|s| s.errors).sum::<u64>(), waits);
    // Retried events complete: the slowest waited out the whole hold.
    assert!(r.latency.max_ms > 2000.0, "{:?}", r.latency);
    assert!(r.events > 100, "{}", r.events);
    // The ROLLBACKs are counted as "other" queries.
    assert_eq!(r.queries.other, waits);
}

#[test]
fn killed_sessions_reconnect_and_the_phase_goes_on() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let opts = database("run_errors", 1, 1000);
    let p = plan(WorkloadKind::OltpPointSelect, 1, 1000, 2.5);
    let killer = {
        let opts = opts.clone();
        std::thread::spawn(move || {
            let mut c = control(&opts);
            std::thread::sleep(Duration::from_millis(800));
            let me = c.connection_id();
            let list = c
                .query("SELECT id FROM information_schema.processlist WHERE db = 'run_errors'")
                .unwrap();
            let mut killed = 0;
            for row in list.rows {
                let id: u32 = row[0].as_deref().unwrap().parse().unwrap();
                if id != me {
                    c.execute(&format!("KILL {id}")).unwrap();
                    killed += 1;
                }
            }
            killed
        })
    };
    let (r, _) = run(&opts, &p, 4);
    let killed = killer.join().unwrap();
    let r = r.unwrap();
    assert_eq!(killed, 4);
    assert_eq!(r.reconnects, 4, "{r:?}");
    assert!(r.samples.last().unwrap().events > 100, "{:?}", r.samples);
}
