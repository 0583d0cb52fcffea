//! The load loop against a real server: counts, limits, protocols and failures.

use qpslab_core::fault::Blame;

#[path = "run_common.rs"]
mod common;

use common::*;
use qpslab_core::workload::WorkloadKind;
use std::sync::Mutex;

/// The tests share one server and compare its global counters: run them one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

#[test]
fn point_select_events_match_the_servers_execute_count() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let opts = database("run_basic", 2, 1000);
    let p = plan(WorkloadKind::OltpPointSelect, 2, 1000, 2.0);
    let mut ctl = control(&opts);
    let connected = status(&mut ctl, "Threads_connected");
    let before = status(&mut ctl, "Com_stmt_execute");
    let (r, samples) = run(&opts, &p, 4);
    let after = status_after(&mut ctl, "Com_stmt_execute", connected);
    let r = r.unwrap();
    assert!(r.events > 100, "{r:?}");
    assert_eq!(r.events, after - before, "every execute is counted once");
    assert_eq!(r.queries.read, r.events);
    assert_eq!(r.queries.write + r.queries.other, 0);
    assert_eq!(samples.len(), 2, "{samples:?}");
    assert_eq!(samples.iter().map(|s| s.events).sum::<u64>(), r.events);
    assert!((r.duration_s - 2.0).abs() < 0.2, "{}", r.duration_s);
    assert!(r.latency.count == r.events && r.latency.max_ms > 0.0);
    assert!(r.client_cpu.user_s + r.client_cpu.sys_s > 0.0);
    assert_cpu_adds_up(&r, &samples);
    assert_eq!(r.statements.len(), 1);
    assert_eq!(r.statements[0].kind, "point_selects");
    assert_eq!(r.histograms[0].name, "event");
    eprintln!(
        "4 sessions: {:.0} qps, {:.1} us client CPU/query",
        r.qps(),
        r.client_cpu_us_per_query().unwrap()
    );
}

#[test]
fn events_limit_is_exact_across_loops() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let opts = database("run_basic", 2, 1000);
    let mut s = plan(WorkloadKind::OltpPointSelect, 2, 1000, 0.0);
    s.stop.time_s = None;
    s.stop.events = Some(777);
    s.event_loops = Some(3);
    s.warmup_s = 0.3;
    let mut ctl = control(&opts);
    let connected = status(&mut ctl, "Threads_connected");
    let before = status(&mut ctl, "Com_stmt_execute");
    let (r, samples) = run(&opts, &s, 8);
    let after = status_after(&mut ctl, "Com_stmt_execute", connected);
    let r = r.unwrap();
    assert_eq!(r.events, 777);
    assert_cpu_adds_up(&r, &samples);
    assert_eq!(r.latency.count, 777);
    // Warm-up ran on the same sessions and is not counted.
    assert!(
        after - before > 777,
        "warm-up executed too: {}",
        after - before
    );
}

#[test]
fn text_protocol_and_transactions() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let opts = database("run_basic", 2, 1000);
    let mut s = plan(WorkloadKind::OltpReadWrite, 2, 1000, 1.5);
    s.prepared_statements = false;
    let mut ctl = control(&opts);
    let connected = status(&mut ctl, "Threads_connected");
    let exec_before = status(&mut ctl, "Com_stmt_execute");
    let commit_before = status(&mut ctl, "Com_commit");
    let (r, _) = run(&opts, &s, 3);
    let commit_after = status_after(&mut ctl, "Com_commit", connected);
    let exec_after = status(&mut ctl, "Com_stmt_execute");
    let r = r.unwrap();
    assert!(r.events > 10, "{r:?}");
    assert_eq!(
        exec_after, exec_before,
        "--ps off sends no COM_STMT_EXECUTE"
    );
    // Each event is BEGIN, 14 reads, 4 writes, COMMIT (sysbench's defaults). A deadlock or
    // lock wait rolls the event back (one more "other") and runs it again: the statements of
    // the failed attempt count too, at most one event's worth per error.
    let (n, e) = (r.events, r.error_total());
    assert!((14 * n..=14 * (n + e)).contains(&r.queries.read), "{r:?}");
    assert!((4 * n..=4 * (n + e)).contains(&r.queries.write), "{r:?}");
    assert!(
        (2 * n + e..=2 * n + 2 * e).contains(&r.queries.other),
        "{r:?}"
    );
    assert_eq!(commit_after - commit_before, n, "one COMMIT per event");
    let kinds: Vec<&str> = r.statements.iter().map(|s| s.kind.as_str()).collect();
    for k in [
        "begin",
        "point_selects",
        "simple_ranges",
        "index_updates",
        "commit",
    ] {
        assert!(kinds.contains(&k), "{kinds:?}");
    }
}

#[test]
fn a_non_retryable_server_error_stops_the_phase_with_its_code() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let opts = database("run_basic_drop", 1, 100);
    let p = plan(WorkloadKind::OltpPointSelect, 1, 100, 20.0);
    let dropper = {
        let opts = opts.clone();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(500));
            control(&opts).execute("DROP TABLE sbtest1").unwrap();
        })
    };
    let (r, _) = run(&opts, &p, 2);
    dropper.join().unwrap();
    let e = r.unwrap_err();
    assert_eq!(e.server_code(), Some(1146), "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("sbtest1") && msg.contains("SELECT c FROM"),
        "{msg}"
    );
    assert!(!e.is_user_error());
}

#[test]
fn connect_failures_are_classified() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let opts = database("run_basic", 1, 1000);
    let p = plan(WorkloadKind::OltpPointSelect, 1, 1000, 1.0);
    let mut ctl = control(&opts);
    ctl.execute("CREATE USER IF NOT EXISTS 'runner'@'localhost' IDENTIFIED BY 'right'")
        .unwrap();
    let mut bad = opts.clone();
    bad.user = "runner".into();
    bad.password = qpslab_core::Secret::new("wrong");
    let e = run(&bad, &p, 2).0.unwrap_err();
    assert!(e.is_access_denied() && e.is_user_error(), "{e}");
    assert_eq!(e.server_code(), Some(1045));

    let mut nowhere = opts.clone();
    nowhere.endpoint = qpslab_core::Endpoint::Unix {
        path: "/nonexistent/qpslab.sock".into(),
    };
    let e = run(&nowhere, &p, 2).0.unwrap_err();
    assert!(e.is_unreachable() && e.is_user_error(), "{e}");

    let mut missing = opts.clone();
    missing.database = Some("run_basic_empty".into());
    ctl.execute("CREATE DATABASE IF NOT EXISTS run_basic_empty")
        .unwrap();
    let e = run(&missing, &p, 2).0.unwrap_err();
    assert_eq!(e.server_code(), Some(1146), "{e}");
    assert!(e.is_user_error(), "missing tables: {e}");

    let e = run(&opts, &p, 0).0.unwrap_err();
    assert!(matches!(e, qpslab_engine::RunError::Config(_)), "{e}");

    // The workload must be the plan's.
    let other = workload(&plan(WorkloadKind::OltpReadOnly, 1, 1000, 1.0));
    let stop = std::sync::atomic::AtomicBool::new(false);
    let e = qpslab_engine::run_phase(&opts, &p, &other, 2, &mut |_| {}, &stop).unwrap_err();
    assert!(matches!(e, qpslab_engine::RunError::Config(_)), "{e}");
}

#[test]
fn the_stop_flag_ends_the_phase_promptly() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let opts = database("run_basic", 1, 1000);
    let p = plan(WorkloadKind::OltpPointSelect, 1, 1000, 60.0);
    let w = workload(&p);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let t = std::time::Instant::now();
    let r = std::thread::scope(|sc| {
        sc.spawn(|| {
            std::thread::sleep(std::time::Duration::from_millis(700));
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
        });
        qpslab_engine::run_phase(&opts, &p, &w, 16, &mut |_| {}, &stop)
    });
    assert!(
        matches!(r, Err(qpslab_engine::RunError::Interrupted)),
        "{r:?}"
    );
    assert!(t.elapsed().as_secs_f64() < 2.0, "{:?}", t.elapsed());
}

/// Plain TCP (the test server has no TLS certificate, so TLS is not exercised here).
#[test]
fn tcp_sessions_and_pinned_loops() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let unix = database("run_basic", 2, 1000);
    let mut opts = qpslab_sandbox::testing::shared_server().tcp_options();
    opts.database = unix.database.clone();
    let mut s = plan(WorkloadKind::OltpReadOnly, 2, 1000, 1.5);
    s.client_cpus = Some(vec![1]);
    // The event loops' CPU lists, read while the phase runs.
    let mut placement = Vec::new();
    let stop = std::sync::atomic::AtomicBool::new(false);
    let r = qpslab_engine::run_phase(
        &opts,
        &s,
        &workload(&s),
        5,
        &mut |_| {
            for task in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
                let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
                if comm.starts_with("qpslab-loop") {
                    let status = std::fs::read_to_string(task.path().join("status")).unwrap();
                    let cpus = status
                        .lines()
                        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                        .unwrap()
                        .trim()
                        .to_string();
                    placement.push((comm.trim().to_string(), cpus));
                }
            }
        },
        &stop,
    )
    .unwrap();
    assert!(r.events > 10, "{r:?}");
    assert_eq!(r.queries.read, 14 * r.events);
    assert!(!placement.is_empty());
    assert!(
        placement
            .iter()
            .all(|(name, cpus)| name == "qpslab-loop-0" && cpus == "1"),
        "{placement:?}"
    );
}

#[test]
fn every_workload_runs_with_and_without_prepared_statements() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let opts = database("run_basic_all", 2, 1000);
    for kind in WorkloadKind::ALL {
        for ps in [true, false] {
            let mut s = plan(kind, 2, 1000, 0.0);
            s.stop = qpslab_core::StopCondition {
                time_s: None,
                events: Some(60),
            };
            s.prepared_statements = ps;
            let (r, _) = run(&opts, &s, 3);
            let r = r.unwrap_or_else(|e| panic!("{kind} ps={ps}: {e}"));
            assert_eq!(r.events, 60, "{kind} ps={ps}");
            assert!(r.queries.total() >= 60, "{kind} ps={ps}: {:?}", r.queries);
            assert!(!r.statements.is_empty(), "{kind}");
        }
    }
}

/// The `io_uring` instances this process holds.
fn rings() -> usize {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .flatten()
        .filter(|fd| {
            std::fs::read_link(fd.path()).is_ok_and(|l| l.to_string_lossy().contains("io_uring"))
        })
        .count()
}

/// Whether this kernel lets the process set up an io_uring.
fn kernel_has_io_uring() -> bool {
    let mut params = [0u32; 30];
    // SAFETY: io_uring_setup fills the 120-byte params struct we own; the ring it may return
    // is closed at once.
    unsafe {
        let fd = libc::syscall(libc::SYS_io_uring_setup, 1u32, params.as_mut_ptr());
        if fd < 0 {
            return false;
        }
        libc::close(fd as i32);
    }
    true
}

#[test]
fn the_plans_engine_knobs_turn_io_uring_and_the_linger_off() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let opts = database("run_basic", 1, 1000);
    let mut p = plan(WorkloadKind::OltpPointSelect, 1, 1000, 1.5);
    p.report_interval_s = 0.5;
    // One loop for many sessions: the case that writes through the ring and naps.
    p.event_loops = Some(1);
    let mut seen = Vec::new();
    for io_uring in [true, false] {
        p.engine = qpslab_core::EngineKnobs {
            io_uring,
            linger_us: if io_uring { 300 } else { 0 },
        };
        let mut ctl = control(&opts);
        let connected = status(&mut ctl, "Threads_connected");
        let before = status(&mut ctl, "Com_stmt_execute");
        let mut most = 0;
        let stop = std::sync::atomic::AtomicBool::new(false);
        let w = workload(&p);
        let r =
            qpslab_engine::run_phase(&opts, &p, &w, 40, &mut |_| most = most.max(rings()), &stop);
        let after = status_after(&mut ctl, "Com_stmt_execute", connected);
        let r = r.unwrap();
        assert_eq!(r.events, after - before, "io_uring {io_uring}");
        seen.push(most);
    }
    // A kernel that refuses io_uring leaves the loop writing plainly either way.
    assert_eq!(seen, [usize::from(kernel_has_io_uring()), 0]);
}

/// sysbench's unique-id counter lives in the workload, which the caller builds once per run:
/// a second phase (a sweep's next thread count, or the measured phase after an auto warm-up)
/// continues it instead of inserting the first phase's ids again.
#[test]
fn phases_of_one_workload_insert_no_id_twice() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fresh = database("run_basic", 1, 1000);
    control(&fresh)
        .execute("DROP DATABASE IF EXISTS run_basic_insert")
        .unwrap();
    let opts = database("run_basic_insert", 1, 10);
    let mut p = plan(WorkloadKind::OltpInsert, 1, 10, 0.0);
    p.workload.auto_inc = false;
    p.stop = qpslab_core::StopCondition {
        time_s: None,
        events: Some(200),
    };
    let w = workload(&p);
    let stop = std::sync::atomic::AtomicBool::new(false);
    for phase in 0..2 {
        let r = qpslab_engine::run_phase(&opts, &p, &w, 2, &mut |_| {}, &stop);
        let r = r.unwrap_or_else(|e| panic!("phase {phase}: {e}"));
        assert_eq!((r.events, r.error_total()), (200, 0), "phase {phase}");
    }
}
