//! The restore trail in a server's store: a record held by a live process on another host is
//! never taken over, one whose lease ran out is (its record kept, for the next command to
//! restore), and one let go on a clean end leaves no row. Against a real MariaDB sandbox;
//! "another host" is a row whose holder carries another boot id.

use qpslab_store::{Store, TrailRecord};
use std::time::{Duration, Instant};

mod common;

const KEY: &str = "00112233aabbccdd";

#[test]
fn a_record_held_on_another_host_is_taken_over_only_after_its_lease() {
    let place = common::server("trail_lease");
    let mut a = Store::open(&place.db).unwrap();
    assert!(a.trail_hold(KEY, "").unwrap());
    a.trail_write(KEY, "", r#"{"command":"tune"}"#).unwrap();
    // This process holds it: a second hold is refused, as a second flock of one file is.
    let mut b = Store::open(&place.db).unwrap();
    assert!(!b.trail_hold(KEY, "").unwrap());
    // The holder as another host saw it, alive 10 s ago.
    let mut c = common::raw(&place);
    c.query(
        "UPDATE restore_trail SET owner_boot_id = 'another-host', owner_pid = 4242,
                heartbeat_at = UNIX_TIMESTAMP(NOW(6)) - 10",
    )
    .unwrap();
    drop(a);
    assert!(!b.trail_hold(KEY, "").unwrap(), "a live lease is held");
    assert_eq!(
        common::value(&mut c, "SELECT owner_pid FROM restore_trail"),
        "4242"
    );
    // Its lease run out: taken over, the record kept as the leftover it is.
    c.query("UPDATE restore_trail SET heartbeat_at = UNIX_TIMESTAMP(NOW(6)) - 31")
        .unwrap();
    assert!(b.trail_hold(KEY, "").unwrap());
    assert_eq!(
        common::value(&mut c, "SELECT owner_pid FROM restore_trail"),
        std::process::id().to_string()
    );
    assert_eq!(
        b.trail_records(None).unwrap(),
        vec![TrailRecord {
            server: KEY.into(),
            account: String::new(),
            json: r#"{"command":"tune"}"#.into(),
        }]
    );
    assert_eq!(
        b.trail_read(KEY, "").unwrap().as_deref(),
        Some(r#"{"command":"tune"}"#)
    );
}

#[test]
fn a_held_record_is_beaten_and_a_clean_end_leaves_no_row() {
    let place = common::server("trail_beat");
    let mut s = Store::open(&place.db).unwrap();
    assert!(s.trail_hold(KEY, "qpslab_ro_1").unwrap());
    s.trail_write(KEY, "qpslab_ro_1", "{}").unwrap();
    let mut c = common::raw(&place);
    let first: f64 = common::value(&mut c, "SELECT heartbeat_at FROM restore_trail")
        .parse()
        .unwrap();
    // Renewed by the lease thread while held.
    let deadline = Instant::now() + Duration::from_secs(30);
    let renewed = loop {
        std::thread::sleep(Duration::from_millis(500));
        let now: f64 = common::value(&mut c, "SELECT heartbeat_at FROM restore_trail")
            .parse()
            .unwrap();
        if now > first || Instant::now() > deadline {
            break now;
        }
    };
    assert!(renewed > first, "no beat in 30 s: {first} {renewed}");
    // Another server's and another account's records are apart.
    assert!(s.trail_records(Some("ffff")).unwrap().is_empty());
    assert_eq!(s.trail_records(Some(KEY)).unwrap().len(), 1);
    assert!(s.trail_hold(KEY, "").unwrap());
    // The command ends cleanly: record cleared, hold let go, nothing left.
    s.trail_clear(KEY, "qpslab_ro_1").unwrap();
    s.trail_let_go(KEY, "qpslab_ro_1").unwrap();
    s.trail_let_go(KEY, "").unwrap();
    assert_eq!(
        common::value(&mut c, "SELECT count(*) FROM restore_trail"),
        "0"
    );
    // A record whose holder let go without clearing it (the change still on the server)
    // stays, held by nobody, for the next command.
    assert!(s.trail_hold(KEY, "").unwrap());
    s.trail_write(KEY, "", "{}").unwrap();
    s.trail_let_go(KEY, "").unwrap();
    assert_eq!(
        common::value(
            &mut c,
            "SELECT count(*) FROM restore_trail WHERE owner_pid IS NULL"
        ),
        "1"
    );
    assert!(s.trail_hold(KEY, "").unwrap());
}

#[test]
fn a_record_left_by_a_dead_process_on_this_host_is_free_at_once() {
    let place = common::server("trail_dead");
    let mut s = Store::open(&place.db).unwrap();
    assert!(s.trail_hold(KEY, "").unwrap());
    s.trail_write(KEY, "", "{}").unwrap();
    // A process of this host that has exited, with a fresh heartbeat: judged by its process.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    let mut c = common::raw(&place);
    c.query(&format!(
        "UPDATE restore_trail SET owner_pid = {pid}, owner_started = NULL,
                heartbeat_at = UNIX_TIMESTAMP(NOW(6))"
    ))
    .unwrap();
    let mut other = Store::open(&place.db).unwrap();
    assert!(other.trail_hold(KEY, "").unwrap());
    assert_eq!(other.trail_read(KEY, "").unwrap().as_deref(), Some("{}"));
}
