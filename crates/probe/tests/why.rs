//! The phase readings a limiter verdict is decided from, taken from a real server: the
//! server's CPU by thread class, its waits, the datadir's device and the network; the thread
//! pool's queue only where the server runs one. Runs its own sandboxes (settings of their own).

use qpslab_core::limits::{Class, ClassCpu, DiskUse, NetUse, ThreadCpu, ThreadPool, Waits};
use qpslab_core::telemetry::Reading;
use qpslab_core::TelemetrySample;
use qpslab_probe::Sampler;
use qpslab_sandbox::{Sandbox, SandboxHome, SandboxSpec};
use qpslab_wire::Conn;
use std::path::PathBuf;

fn home(tag: &str) -> (SandboxHome, PathBuf) {
    // SAFETY: getuid has no preconditions and cannot fail.
    let base = std::env::temp_dir().join(format!("qpslab-test-{}", unsafe { libc::getuid() }));
    // Named like the shared test labs, so a killed test's server is swept by the next run.
    let path = base.join(format!("lab-{}-{tag}", std::process::id()));
    (
        SandboxHome::new(&path).with_templates(base.join("templates")),
        path,
    )
}

fn start(home: &SandboxHome, name: &str, settings: &[(&str, &str)]) -> Sandbox {
    let mut spec = SandboxSpec::new(name);
    spec.settings = settings
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    qpslab_sandbox::start(home, &spec).expect("sandbox starts")
}

/// A few hundred statements on a connection of its own, some of them CPU-heavy.
fn load(c: &mut Conn) {
    c.query("CREATE DATABASE IF NOT EXISTS why").unwrap();
    c.query("CREATE TABLE IF NOT EXISTS why.t (id INT PRIMARY KEY, v VARCHAR(64))")
        .unwrap();
    for i in 0..300 {
        c.query(&format!("REPLACE INTO why.t VALUES ({i}, MD5({i}))"))
            .unwrap();
    }
    for _ in 0..3 {
        c.query("SELECT BENCHMARK(300000, MD5('why'))").unwrap();
    }
}

fn find<'a, T>(t: &'a [TelemetrySample], f: impl Fn(&'a Reading) -> Option<&'a T>) -> Vec<&'a T> {
    t.iter().filter_map(|s| f(&s.reading)).collect()
}

fn one_phase(sb: &Sandbox) -> Vec<TelemetrySample> {
    let conn = Conn::connect(&sb.connect_options()).unwrap();
    let mut sampler = Sampler::new(conn, Some(sb.pid())).reconnect_to(sb.tcp_options());
    sampler.begin().unwrap();
    // A session opened after begin, still open at finish (as a phase's sessions are).
    let mut session = Conn::connect(&sb.tcp_options()).unwrap();
    load(&mut session);
    sampler.tick(1.0);
    load(&mut session);
    sampler.tick(2.0);
    sampler.finish(2.0).unwrap()
}

#[test]
fn a_phase_reads_thread_classes_waits_disk_and_network() {
    let (home, path) = home("why");
    let sb = start(&home, "why", &[("performance_schema", "ON")]);
    let t = one_phase(&sb);

    let threads: Vec<&ThreadCpu> = find(&t, |r| match r {
        Reading::Threads(x) => Some(x),
        _ => None,
    });
    assert_eq!(threads.len(), 1, "{t:#?}");
    let th = threads[0];
    assert_eq!(th.named_by, "performance_schema", "{th:?}");
    assert_eq!(th.reason, None);
    assert!(th.allowed_cpus.unwrap_or(0) >= 1, "{th:?}");
    let conns = th.classes.iter().find(|c| c.class == Class::Connection);
    let conns = conns.unwrap_or_else(|| panic!("no connection class: {th:?}"));
    assert!(conns.cpu_s > 0.0 && conns.busiest_s > 0.0, "{th:?}");
    assert!(
        conns.busiest_s <= conns.cpu_s && conns.threads >= 1,
        "{th:?}"
    );
    assert!(th.classes.windows(2).all(|w| w[0].cpu_s >= w[1].cpu_s));

    let waits: Vec<&Waits> = find(&t, |r| match r {
        Reading::Waits(x) => Some(x),
        _ => None,
    });
    assert_eq!(waits.len(), 1, "{t:#?}");
    let w = waits[0];
    assert_eq!(w.source, "performance_schema", "{w:?}");
    assert!(w.events.iter().all(|e| e.seconds > 0.0), "{w:?}");
    assert!(w.events.iter().all(|e| e.name != "idle"), "{w:?}");
    // MariaDB times no latch unless asked to; the reading says so.
    if let Some(r) = &w.reason {
        assert!(r.contains("wait/synch"), "{w:?}");
    }

    let disk: Vec<&DiskUse> = find(&t, |r| match r {
        Reading::Disk(x) => Some(x),
        _ => None,
    });
    assert_eq!(disk.len(), 1, "{t:#?}");
    let d = disk[0];
    assert!(!d.device.is_empty() || d.reason.is_some(), "{d:?}");
    if d.reason.is_none() {
        assert!(d.elapsed_s > 0.0, "{d:?}");
    }

    let net: Vec<&NetUse> = find(&t, |r| match r {
        Reading::Net(x) => Some(x),
        _ => None,
    });
    assert_eq!(net.len(), 1, "a TCP phase reads the network: {t:#?}");
    assert!(
        net[0].segments_out > 0 && net[0].cpu_s > 0.0,
        "{:?}",
        net[0]
    );

    let pool: Vec<&ThreadPool> = find(&t, |r| match r {
        Reading::Pool(x) => Some(x),
        _ => None,
    });
    assert!(pool.is_empty(), "no thread pool, no pool reading: {pool:?}");
    let _ = sb.stop();
    let _ = std::fs::remove_dir_all(path);
}

#[test]
fn a_thread_pool_is_read_and_performance_schema_off_is_said() {
    let (home, path) = home("pool");
    let sb = start(&home, "pool", &[("thread_handling", "pool-of-threads")]);
    let t = one_phase(&sb);

    let pool: Vec<&ThreadPool> = find(&t, |r| match r {
        Reading::Pool(x) => Some(x),
        _ => None,
    });
    assert_eq!(pool.len(), 1, "{t:#?}");
    assert!(pool[0].size >= 1 && pool[0].queued >= 0.0, "{:?}", pool[0]);

    let threads: Vec<&ThreadCpu> = find(&t, |r| match r {
        Reading::Threads(x) => Some(x),
        _ => None,
    });
    let th = threads[0];
    assert_eq!(th.named_by, "none", "{th:?}");
    assert!(th
        .reason
        .as_deref()
        .unwrap()
        .contains("performance_schema is off"));
    let other = |c: &&ClassCpu| matches!(c.class, Class::Other | Class::Io);
    assert!(th.classes.iter().all(|c| other(&c)), "{th:?}");

    let waits: Vec<&Waits> = find(&t, |r| match r {
        Reading::Waits(x) => Some(x),
        _ => None,
    });
    assert_eq!(waits[0].source, "status", "{:?}", waits[0]);
    assert!(waits[0].reason.is_some());
    let _ = sb.stop();
    let _ = std::fs::remove_dir_all(path);
}
