//! Every connection qpslab closes says goodbye (COM_QUIT): a phase and the blocking client
//! leave the server's `Aborted_clients` unchanged. One test in its own process, so no other
//! test's connections share this server.

#[path = "run_common.rs"]
mod common;

use common::*;
use qpslab_core::workload::WorkloadKind;

#[test]
fn closed_connections_are_not_counted_as_aborted() {
    let opts = database("run_quit", 1, 1000);
    let p = plan(WorkloadKind::OltpReadOnly, 1, 1000, 1.0);
    let mut ctl = control(&opts);
    let connected = status(&mut ctl, "Threads_connected");
    let before = status(&mut ctl, "Aborted_clients");
    // The blocking client, dropped.
    for _ in 0..3 {
        let mut c = control(&opts);
        c.query("SELECT 1").unwrap();
    }
    // A phase: one loop per session, then one loop for many sessions (io_uring writes).
    for threads in [4, 40] {
        let (r, _) = run(&opts, &p, threads);
        assert!(r.unwrap().events > 0);
    }
    let after = status_after(&mut ctl, "Aborted_clients", connected);
    assert_eq!(
        after - before,
        0,
        "connections closed without COM_QUIT ({} before, {after} after)",
        before
    );
    // The test can fail: a socket closed without a goodbye is counted.
    {
        let c = control(&opts);
        let (stream, _) = c.into_stream();
        drop(stream);
    }
    let aborted = status_after(&mut ctl, "Aborted_clients", connected);
    assert_eq!(aborted, after + 1);
}
