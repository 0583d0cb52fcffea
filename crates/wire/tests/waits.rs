//! Every wait of the blocking session is bounded and interruptible, against a real MariaDB: a
//! statement that outlives the read timeout ends with a timeout, and [`qpslab_wire::interrupt`]
//! ends a wait in progress at once while later sessions work as before. (Its own test process:
//! an interrupt is process-wide.)

use qpslab_wire::{Conn, Error};
use std::time::{Duration, Instant};

#[test]
fn reads_end_at_the_read_timeout_and_at_an_interrupt() {
    let server = qpslab_sandbox::testing::shared_server();
    let mut tcp = server.tcp_options();
    tcp.timeouts.read = Some(Duration::from_secs(1));
    let mut c = Conn::connect(&tcp).unwrap();
    let start = Instant::now();
    let e = c.query("SELECT SLEEP(3)").unwrap_err();
    let took = start.elapsed();
    assert!(
        matches!(&e, Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut),
        "{e:?}"
    );
    assert!(e.to_string().contains("no reply within 1 s"), "{e}");
    assert!(
        took >= Duration::from_secs(1) && took < Duration::from_millis(2500),
        "{took:?}"
    );

    let mut c = Conn::connect(&server.connect_options()).unwrap();
    let waker = std::thread::spawn(|| {
        std::thread::sleep(Duration::from_millis(500));
        qpslab_wire::interrupt();
    });
    let start = Instant::now();
    let e = c.query("SELECT SLEEP(5)").unwrap_err();
    let took = start.elapsed();
    waker.join().unwrap();
    assert!(matches!(e, Error::Interrupted), "{e:?}");
    assert!(took < Duration::from_millis(1500), "{took:?}");

    // A wait that begins after the interrupt is not affected.
    let mut c = Conn::connect(&tcp).unwrap();
    let r = c.query("SELECT SLEEP(0.5), 7").unwrap();
    assert_eq!(r.rows[0][1].as_deref(), Some("7"));
}
