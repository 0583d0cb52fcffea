//! Thread classes and placement against real MariaDB servers: the shared test server
//! (performance_schema off) and one of this test's own with performance_schema on.

use qpslab_core::fault::Blame;
use qpslab_core::placement::Policy;
use qpslab_probe::threads::{self, Keeper, Placer};
use qpslab_sandbox::testing::shared_server;
use qpslab_sandbox::{Sandbox, SandboxHome, SandboxSpec};
use qpslab_wire::Conn;
use std::time::Duration;

#[test]
fn without_performance_schema_threads_are_listed_unnamed_and_policies_refused() {
    let s = shared_server();
    let mut c = Conn::connect(&s.connect_options()).unwrap();
    let t = threads::server_threads(s.info().pid, &mut c).unwrap();
    assert!(!t.classes_known);
    assert!(t.threads.len() > 3, "{t:?}");
    assert!(t.threads.iter().all(|t| t.class.is_none()));
    let policy = Policy::parse(&["thread/innodb/page_cleaner_thread=0"]).unwrap();
    let e = Placer::new(s.info().pid, &mut c, policy).unwrap_err();
    assert!(e.is_user_error());
    assert!(e.to_string().contains("performance_schema is OFF"), "{e}");
}

/// A sandbox with performance_schema on, in a lab of its own (templates shared with the other
/// test servers of this user).
fn server_with_ps() -> (Sandbox, SandboxHome) {
    // SAFETY: getuid has no preconditions and cannot fail.
    let base = std::env::temp_dir().join(format!("qpslab-test-{}", unsafe { libc::getuid() }));
    let lab = base.join(format!("threads-{}", std::process::id()));
    let home = SandboxHome::new(&lab).with_templates(base.join("templates"));
    let mut spec = SandboxSpec::new("ps");
    spec.settings = vec![("performance_schema".into(), "ON".into())];
    (qpslab_sandbox::start(&home, &spec).unwrap(), home)
}

fn allowed(pid: u32, tid: u32) -> Vec<usize> {
    threads::task(pid, tid).unwrap().cpus
}

#[test]
fn classes_are_pinned_and_connection_threads_let_go_when_their_connection_ends() {
    let (server, home) = server_with_ps();
    let pid = server.info().pid;
    let opts = server.connect_options();
    let mut c = Conn::connect(&opts).unwrap();
    let listed = threads::server_threads(pid, &mut c).unwrap();
    assert!(listed.classes_known);
    let classes = listed.classes();
    assert!(classes
        .iter()
        .any(|c| c.class == "thread/innodb/page_cleaner_thread"));

    let policy = Policy::parse(&["thread/innodb/page_cleaner_thread=1"]).unwrap();
    let applied = threads::apply(pid, &mut c, &policy).unwrap();
    assert!(!applied.placed.is_empty());
    for p in &applied.placed {
        assert!(p.took, "{p:?}");
        assert_eq!(allowed(pid, p.tid), vec![1]);
    }

    let policy = Policy::parse(&["thread/sql/one_connection=1,nice=2"]).unwrap();
    let keeper = Keeper::start(pid, &opts, &policy).unwrap();
    let mut other = Conn::connect(&opts).unwrap();
    let id = other.connection_id();
    let tid: u32 = other
        .query(&format!(
            "SELECT THREAD_OS_ID FROM performance_schema.threads WHERE PROCESSLIST_ID = {id}"
        ))
        .unwrap()
        .first_value()
        .unwrap()
        .parse()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1600));
    assert_eq!(
        allowed(pid, tid),
        vec![1],
        "a new connection's thread is placed"
    );
    assert_eq!(threads::task(pid, tid).unwrap().nice, 2);
    drop(other);
    std::thread::sleep(Duration::from_millis(1600));
    if let Ok(t) = threads::task(pid, tid) {
        assert_eq!(
            t.cpus,
            allowed(pid, pid),
            "a cached thread goes back to the server's CPUs"
        );
        assert_eq!(t.nice, 0);
    }
    let record = keeper.stop(false);
    assert!(record.applied.placed.iter().any(|p| p.tid == tid && p.took));
    assert!(record.errors.is_empty(), "{:?}", record.errors);
    server.stop().unwrap();
    qpslab_sandbox::remove(&home, "ps").unwrap();
    let _ = std::fs::remove_dir_all(home.path());
}
