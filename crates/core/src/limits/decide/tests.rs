//! The verdict's rules, each on evidence built for it.
use super::*;
use crate::limits::WaitKind;
use crate::limits::{Class, ClassCpu, DiskUse, ThreadCpu, ThreadPool, WaitTime, Waits};

fn base() -> Evidence {
    Evidence {
        duration_s: 10.0,
        events: 10_000,
        sessions: 8,
        server_cpus_used: Some(0.4),
        server_cpus_allowed: Some(2.0),
        client_cpus_used: 0.2,
        machine_cpus: 2.0,
        waits: Some(Waits {
            source: "status".into(),
            reason: Some("performance_schema is off".into()),
            ..Waits::default()
        }),
        ..Evidence::default()
    }
}

fn kinds(l: &Limits) -> Vec<Kind> {
    l.limiters.iter().map(|l| l.kind).collect()
}

#[test]
fn a_quiet_phase_names_nothing_and_says_what_came_nearest() {
    let l = decide(base());
    assert!(l.limiters.is_empty());
    let why = l.unclear.as_deref().unwrap();
    assert!(why.starts_with("nearest: server CPU at"), "{why}");
    assert!(l.to_string().starts_with("no clear limiter (nearest"));
    assert_eq!(
        l.unseen,
        vec!["latches and wait times: performance_schema is off".to_string()]
    );
}

#[test]
fn one_session_on_an_idle_machine_is_said_to_wait_on_its_round_trips() {
    let mut e = base();
    e.sessions = 1;
    let why = decide(e).unclear.unwrap();
    assert!(
        why.starts_with(
            "1 session(s) on 2 CPUs, the machine 30% busy: each waited on its own round trips"
        ),
        "{why}"
    );
}

#[test]
fn a_server_on_one_busy_cpu_is_server_cpu_with_its_thread_classes() {
    let mut e = base();
    e.server_cpus_used = Some(0.96);
    e.server_cpus_allowed = Some(1.0);
    e.threads = Some(ThreadCpu {
        named_by: "performance_schema".into(),
        classes: vec![ClassCpu {
            class: Class::Connection,
            threads: 8,
            cpu_s: 9.0,
            busiest_s: 1.5,
        }],
        ..ThreadCpu::default()
    });
    let l = decide(e);
    assert_eq!(kinds(&l), [Kind::ServerCpu]);
    assert_eq!(l.limiters[0].evidence[0], "96% of its 1 CPU");
    assert_eq!(
        l.limiters[0].evidence[1],
        "by thread class: connections 0.90 CPUs (busiest thread 15%)"
    );
}

#[test]
fn the_profile_names_the_hottest_functions_of_a_busy_server() {
    let folded = "mariadbd;do_command;ut_delay 30\nmariadbd;do_command;my_hash_sort 10\n\
                  mariadbd;ut_delay 10\nnot a line\nmariadbd;x 50\n";
    let top = crate::limits::top_functions(folded.lines(), 2);
    assert_eq!(top, [("x".to_string(), 0.5), ("ut_delay".to_string(), 0.4)]);
    let mut e = base();
    e.server_cpus_used = Some(1.9);
    e.top_functions = top;
    let l = decide(e);
    assert_eq!(
        l.limiters[0].evidence.last().unwrap(),
        "on CPU most (profile): x 50%, ut_delay 40%"
    );
}

#[test]
fn a_server_sharing_its_busy_cpu_is_server_cpu() {
    let mut e = base();
    e.server_cpus_used = Some(0.7);
    e.server_cpus_allowed = Some(1.0);
    e.threads = Some(ThreadCpu {
        allowed_cpus: Some(1),
        allowed_busy: Some(0.98),
        ..ThreadCpu::default()
    });
    let l = decide(e);
    assert_eq!(kinds(&l), [Kind::ServerCpu]);
    assert_eq!(
        l.limiters[0].evidence[0],
        "its 1 CPU was 98% busy, 70% of it the server's"
    );
}

#[test]
fn a_busy_machine_shared_with_the_client_leaves_the_server_no_more() {
    let mut e = base();
    e.server_cpus_used = Some(1.3);
    e.client_cpus_used = 0.6;
    let l = decide(e);
    assert_eq!(kinds(&l), [Kind::ServerCpu]);
    assert!(l.limiters[0].evidence[0].contains("95% busy"), "{l:?}");
}

#[test]
fn the_client_is_named_first_and_a_neighbour_beside_it() {
    let mut e = base();
    e.client_limited = true;
    e.client_loops = Some((2, 2, 0.99));
    e.others_share = Some(0.5);
    let l = decide(e);
    assert_eq!(kinds(&l), [Kind::Client, Kind::Neighbour]);
    assert_eq!(
        l.to_string(),
        "client (2 of 2 event loop(s) busy at least 90%, the busiest 99% of a CPU); \
         neighbour (other processes used 50% of the machine)"
    );
}

#[test]
fn row_lock_time_names_row_locks_without_performance_schema() {
    let mut e = base();
    e.row_lock_s = Some(60.0);
    let l = decide(e);
    assert_eq!(kinds(&l), [Kind::RowLocks]);
    assert!(l.limiters[0].evidence[0].contains("75% of their time"));
}

#[test]
fn a_latch_is_named_from_performance_schema() {
    let mut e = base();
    e.waits = Some(Waits {
        source: "performance_schema".into(),
        events: vec![
            WaitTime {
                name: "wait/synch/rwlock/innodb/lock_latch".into(),
                kind: WaitKind::Latch,
                seconds: 30.0,
                count: 1000,
            },
            WaitTime {
                name: "wait/synch/mutex/sql/LOCK_open".into(),
                kind: WaitKind::Latch,
                seconds: 1.0,
                count: 10,
            },
        ],
        reason: None,
    });
    let l = decide(e);
    assert_eq!(l.limiters[0].label(), "latch: lock_latch");
    assert!(l.unseen.is_empty());
}

#[test]
fn a_busy_device_is_the_redo_log_with_fsyncs_per_commit_else_data_io() {
    let disk = DiskUse {
        device: "loop3".into(),
        elapsed_s: 10.0,
        reads: 10,
        writes: 5000,
        write_ms: 9000,
        busy_ms: 9000,
        queue_ms: 12_000,
        ..DiskUse::default()
    };
    let mut e = base();
    e.disk = Some(disk.clone());
    e.fsyncs = Some(20_000);
    let l = decide(e.clone());
    assert_eq!(kinds(&l), [Kind::RedoLog]);
    assert!(l.limiters[0].evidence[0].starts_with("2.00 fsyncs per transaction; loop3 90% busy"));
    e.fsyncs = Some(10);
    assert_eq!(kinds(&decide(e)), [Kind::DataIo]);
}

#[test]
fn a_full_redo_log_is_named_with_the_page_cleaners_cpu() {
    let mut e = base();
    e.checkpoint_fill = Some(0.96);
    e.checkpoint_max_age = Some(2 * 1048576);
    e.threads = Some(ThreadCpu {
        classes: vec![ClassCpu {
            class: Class::PageCleaner,
            threads: 1,
            cpu_s: 0.5,
            busiest_s: 0.5,
        }],
        ..ThreadCpu::default()
    });
    let l = decide(e);
    assert_eq!(kinds(&l), [Kind::RedoLog]);
    assert!(l.limiters[0].evidence[0].starts_with("the redo log was 96% full on average"));
    assert_eq!(
        l.limiters[0].evidence[1],
        "the page cleaner used 0.050 CPUs"
    );
}

#[test]
fn pages_read_per_transaction_name_the_buffer_pool() {
    let mut e = base();
    e.pool_reads = Some(25_000);
    e.pool_read_requests = Some(100_000);
    e.server_cpus_used = Some(1.9);
    let l = decide(e);
    assert_eq!(kinds(&l), [Kind::BufferPool, Kind::ServerCpu]);
    assert_eq!(
        l.limiters[0].evidence[0],
        "2.50 pages read from disk per transaction (miss ratio 25.0%)"
    );
}

#[test]
fn a_queued_thread_pool_and_a_kept_pace_are_named() {
    let mut e = base();
    e.thread_pool = Some(ThreadPool {
        size: 1,
        queued: 40.0,
    });
    assert_eq!(kinds(&decide(e)), [Kind::ThreadPool]);
    let mut e = base();
    e.paced = Some((1000.0, 999.0));
    let l = decide(e.clone());
    assert_eq!(kinds(&l), [Kind::UnderCapacity]);
    assert_eq!(
        l.limiters[0].evidence[0],
        "paced at 1000/s and kept it (999/s); server CPU 20%"
    );
    e.paced = Some((1000.0, 600.0));
    assert!(decide(e).limiters.is_empty());
}

#[test]
fn a_limiter_past_two_thresholds_is_named_once_with_both_figures() {
    let mut e = base();
    e.pool_reads = Some(25_000);
    e.pool_wait_free = Some(1_000);
    e.row_lock_s = Some(20.0);
    let l = decide(e);
    assert_eq!(kinds(&l), [Kind::BufferPool, Kind::RowLocks]);
    assert_eq!(l.limiters[0].evidence.len(), 2, "{l:?}");
}

#[test]
fn at_most_two_are_named_the_strongest_first() {
    let mut e = base();
    e.row_lock_s = Some(40.0);
    e.others_share = Some(0.9);
    e.server_cpus_used = Some(1.95);
    let l = decide(e);
    assert_eq!(kinds(&l), [Kind::Neighbour, Kind::RowLocks]);
    assert_eq!(l.short(), "neighbour + row locks");
}

#[test]
fn the_verdict_reads_back_as_stored() {
    let l = decide(base());
    let text = serde_json::to_string(&l).unwrap();
    assert_eq!(serde_json::from_str::<Limits>(&text).unwrap(), l);
}
