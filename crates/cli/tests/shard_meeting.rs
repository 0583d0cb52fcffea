//! The shard meeting checks what it reads from its table (issue 45): rows forged into
//! `qpslab_shards.meeting` on the shared server, beside a real shard. A start an hour ahead or
//! of 1e300 fails the shard with the reason, within its `--shard-timeout`; an arrival with an
//! index outside the group fails shard 0 instead of letting it measure alone; the first SIGTERM
//! ends the wait for a start that is still ahead.

mod common;
use common::*;
use std::process::{Child, Output};
use std::time::{Duration, Instant};

/// The dataset the shards here look at, in its own database of the shared server.
const DB: &str = "qpslab_meeting_test";

fn prepared(s: &Scratch) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        prepare_shared(
            s,
            "oltp_point_select",
            DB,
            &["--tables", "1", "--table-size", "100"],
        )
    });
}

/// The meeting table as qpslab makes it, made here so rows can be written before a shard runs.
fn table() {
    sql("CREATE DATABASE IF NOT EXISTS qpslab_shards");
    sql("CREATE TABLE IF NOT EXISTS qpslab_shards.meeting (
           grp VARCHAR(64) NOT NULL, meeting VARCHAR(64) NOT NULL, idx INT NOT NULL,
           arrived DOUBLE NOT NULL, start_at DOUBLE, host VARCHAR(255) NOT NULL,
           PRIMARY KEY (grp, meeting, idx)) ENGINE=InnoDB");
}

/// A row of meeting `meeting` of `group`, arrived now, with `start_at` (SQL).
fn row(group: &str, meeting: &str, idx: i32, start_at: &str) {
    sql(&format!(
        "REPLACE INTO qpslab_shards.meeting VALUES ('{group}', '{meeting}', {idx},
           UNIX_TIMESTAMP(NOW(6)), {start_at}, 'forged')"
    ));
}

/// Shard `shard` of `group` (3 sessions in all: its phase's meeting is `t3`).
fn shard(s: &Scratch, shard: &str, group: &str, timeout: &str) -> Child {
    let sock = socket();
    let db = s.path().join(format!("{group}.db")).display().to_string();
    s.cmd(&[
        "run",
        "oltp_point_select",
        "--socket",
        &sock,
        "--database",
        DB,
        "--tables",
        "1",
        "--table-size",
        "100",
        "--threads",
        "3",
        "--time",
        "2",
        "--settle",
        "off",
        "--shard",
        shard,
        "--shard-group",
        group,
        "--shard-timeout",
        timeout,
        "--db",
        &db,
    ])
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .expect("start qpslab run")
}

/// Waits for `child` at most `limit`; kills it and fails when it takes longer.
fn finish(mut child: Child, limit: Duration) -> Output {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        if child.try_wait().expect("wait").is_some() {
            return child.wait_with_output().expect("output");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let o = child.wait_with_output().expect("output");
    panic!("the shard ran past {limit:?}: {}", stderr(&o));
}

/// Waits (at most a minute) until shard `idx` of `group` has arrived at the phase's meeting.
fn arrived(group: &str, idx: i32) {
    let until = Instant::now() + Duration::from_secs(60);
    let q = format!(
        "SELECT count(*) FROM qpslab_shards.meeting WHERE grp = '{group}' AND meeting = 't3'
           AND idx = {idx} AND host <> 'forged'"
    );
    while sql(&q).trim() != "1" {
        assert!(
            Instant::now() < until,
            "shard {idx} of {group} never arrived"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Shard 1 of 2 of a new group, its dataset said ready and shard 0's arrival forged; once it
/// has arrived, the start `start_at` (SQL, the server's Unix seconds) is written for it.
fn shard_1_given_start(s: &Scratch, tag: &str, start_at: &str, timeout: &str) -> Child {
    prepared(s);
    table();
    let group = format!("{tag}{}", std::process::id());
    row(&group, "dataset", -1, "UNIX_TIMESTAMP(NOW(6))");
    let child = shard(s, "1/2", &group, timeout);
    arrived(&group, 1);
    row(&group, "t3", 0, "NULL");
    row(&group, "t3", -1, start_at);
    child
}

#[test]
fn issue_45_a_start_an_hour_ahead_fails_within_the_timeout() {
    let s = Scratch::new();
    let began = Instant::now();
    let child = shard_1_given_start(&s, "hour", "UNIX_TIMESTAMP(NOW(6)) + 3600", "5");
    let o = finish(child, Duration::from_secs(60));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("its start is 3600 s ahead"), "{err}");
    assert!(err.contains("--shard-timeout"), "{err}");
    assert!(began.elapsed() < Duration::from_secs(50));
}

#[test]
fn issue_45_a_start_of_1e300_fails_without_a_panic() {
    let s = Scratch::new();
    let child = shard_1_given_start(&s, "huge", "1e300", "5");
    let o = finish(child, Duration::from_secs(60));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("is not one this shard can trust"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains("its start is 1.0e300 s ahead"), "{err}");
    assert_eq!(err.matches("error").count(), 1, "{err}");
}

#[test]
fn issue_45_the_first_sigterm_ends_the_wait_for_the_start() {
    let s = Scratch::new();
    let child = shard_1_given_start(&s, "term", "UNIX_TIMESTAMP(NOW(6)) + 25", "60");
    // Time to read the start, then the signal: the shard leaves at once, not 25 s later.
    std::thread::sleep(Duration::from_secs(2));
    let signalled = Instant::now();
    let kill = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let o = finish(child, Duration::from_secs(20));
    let took = signalled.elapsed();
    assert_eq!(o.status.code(), Some(143), "{}", stderr(&o));
    assert!(took < Duration::from_secs(5), "left {took:?} after SIGTERM");
}

#[test]
fn issue_45_an_arrival_outside_the_group_does_not_let_shard_0_measure_alone() {
    let s = Scratch::new();
    prepared(&s);
    table();
    let group = format!("extra{}", std::process::id());
    // Shard 1 never comes; a row of index 5 stands in the count instead.
    row(&group, "t3", 5, "NULL");
    let o = finish(shard(&s, "0/2", &group, "30"), Duration::from_secs(60));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("an arrival with index 5 (the group has shards 0 to 1)"),
        "{err}"
    );
}

#[test]
fn the_first_sigterm_ends_the_wait_for_the_dataset() {
    let s = Scratch::new();
    prepared(&s);
    table();
    let group = format!("dataset{}", std::process::id());
    let child = shard(&s, "1/2", &group, "60");
    std::thread::sleep(Duration::from_secs(3));
    let signalled = Instant::now();
    let kill = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let o = finish(child, Duration::from_secs(20));
    let took = signalled.elapsed();
    assert_eq!(o.status.code(), Some(143), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("waiting for shard 0 to ready the dataset"),
        "{}",
        stderr(&o)
    );
    assert!(took < Duration::from_secs(5), "left {took:?} after SIGTERM");
}
