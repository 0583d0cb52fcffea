//! A replay stopped while its statements run (issue 45): the stop flag alone, with no signal
//! to end the sessions' waits, ends the replay at once, its statements killed on the server
//! (`KILL QUERY` from the coordinator's control connection); and every session carries the
//! server's limit on a statement's time, its read timeout.

use qpslab_core::replay::ReplayMode;
use qpslab_sqllog::Policy;
use qpslab_traffic::replay::exec::replay;
use qpslab_traffic::replay::{Logged, ReplayLog, ReplayOptions};
use qpslab_wire::Conn;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

fn statement(log: &mut ReplayLog, conn: u64, sql: &str) {
    log.add_statement(Logged {
        conn,
        start_us: Some(0),
        // A second long: the two connections overlap.
        query_s: 1.0,
        sql: sql.as_bytes().to_vec(),
        fingerprint: sql.to_string(),
        verdict: qpslab_sqllog::classify(sql),
        db: None,
    });
}

/// The sessions of the shared server running `info`.
fn running(c: &mut Conn, info: &str) -> usize {
    let r = c
        .query(&format!(
            "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO = '{info}'"
        ))
        .unwrap();
    r.first_value().unwrap().parse().unwrap()
}

#[test]
fn a_stopped_replay_kills_its_statements_and_every_session_has_the_servers_limit() {
    let server = qpslab_sandbox::testing::shared_server();
    let mut target = server.connect_options();
    // Also the server's limit: a replay that failed to stop would end there, not in 600 s.
    target.timeouts.read = Some(Duration::from_secs(120));
    let mut control = Conn::connect(&server.connect_options()).unwrap();
    let sleeper = "SELECT SLEEP(600) FROM DUAL WHERE @@max_statement_time = 120";
    let mut log = ReplayLog::default();
    // Two logged connections at once: two sessions, both asleep when the stop comes.
    statement(&mut log, 1, sleeper);
    statement(&mut log, 2, sleeper);
    let o = ReplayOptions {
        mode: ReplayMode::Sessions,
        speed: 0.0,
        threads: None,
        database: None,
        policy: Policy::default(),
        report_interval_s: 1.0,
        percentiles: vec![99.0],
    };
    let stop = AtomicBool::new(false);
    let xa = Default::default();
    let started = std::sync::Mutex::new(None);
    let phase = std::thread::scope(|scope| {
        let h = scope.spawn(|| replay(&target, &log, &o, &mut |_| {}, &stop, &xa));
        let deadline = Instant::now() + Duration::from_secs(60);
        while running(&mut control, sleeper) < 2 {
            assert!(Instant::now() < deadline, "the sleepers never ran");
            assert!(!h.is_finished(), "the replay ended before its sleepers ran");
            std::thread::sleep(Duration::from_millis(50));
        }
        *started.lock().unwrap() = Some(Instant::now());
        stop.store(true, Ordering::Relaxed);
        // A replay that waits for its statements would take until the server's limit.
        let deadline = Instant::now() + Duration::from_secs(30);
        while !h.is_finished() {
            assert!(Instant::now() < deadline, "the stopped replay still runs");
            std::thread::sleep(Duration::from_millis(50));
        }
        h.join().unwrap().unwrap()
    });
    let took = started.lock().unwrap().unwrap().elapsed();
    assert!(took < Duration::from_secs(15), "{took:?}");
    assert_eq!(running(&mut control, sleeper), 0);
    let outcome = phase.replay.unwrap();
    assert_eq!(outcome.ended_early.as_deref(), Some("interrupted"));
}
