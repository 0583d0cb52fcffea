//! On-CPU profiles of a real MariaDB (the sandbox crate's shared test server): a recording
//! under a few seconds of queries folds into stacks naming the server's own functions, and
//! a process that is gone is refused in one line.

use qpslab_core::fault::Blame;
use qpslab_probe::profile::{ProfileError, Recording};
use qpslab_sandbox::testing::shared_server;
use qpslab_wire::Conn;
use std::time::{Duration, Instant};

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("qpslab-profile-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Keeps the server busy for `secs` with queries that cost it CPU.
fn load(secs: f64) {
    let mut c = Conn::connect(&shared_server().connect_options()).expect("connect");
    let until = Instant::now() + Duration::from_secs_f64(secs);
    while Instant::now() < until {
        c.query(
            "SELECT BENCHMARK(20000, MD5('qpslab')), COUNT(*) FROM information_schema.COLLATIONS",
        )
        .expect("query");
    }
}

#[test]
fn a_loaded_server_folds_into_its_own_functions() {
    let sb = shared_server();
    let dir = scratch("loaded");
    let rec = Recording::start(sb.pid(), &dir, "t1").expect("perf records the server");
    load(2.0);
    let p = rec.stop().expect("the profile is folded");
    let folded = std::fs::read_to_string(&p.files.folded).unwrap();
    assert_eq!(p.files.folded, dir.join("t1.folded"));
    assert_eq!(p.files.svg, dir.join("t1.svg"));
    assert!(p.files.samples > 50, "{} samples", p.files.samples);
    assert!(
        ["cycles", "cpu-clock"].contains(&p.files.event.as_str())
            && p.files.event_reason.starts_with(&p.files.event),
        "{:?}",
        p.files
    );
    // Every line is `stack count`, and the server's query path is in the stacks.
    assert!(folded.lines().all(|l| l
        .rsplit_once(' ')
        .is_some_and(|(_, n)| n.parse::<u64>().is_ok())));
    assert!(
        folded.contains("dispatch_command") || folded.contains("mysql_parse"),
        "no server function in:\n{}",
        &folded[..folded.len().min(2000)]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_process_that_is_gone_is_refused() {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    let dir = scratch("gone");
    let e = Recording::start(pid, &dir, "x")
        .err()
        .expect("no process to record");
    assert!(matches!(e, ProfileError::NoProcess(p) if p == pid), "{e}");
    let text = e.to_string();
    assert!(
        text.contains(&pid.to_string()) && !text.contains('\n'),
        "{text}"
    );
    assert!(!e.is_user_error());
}
