//! The sampler survives its server being killed (-9) and restarted mid-phase: it reconnects,
//! follows the new process, counts from zero after the restart, records the gap, and still
//! finishes the phase when the server is gone for good. Runs its own sandbox (it kills it).

use qpslab_core::TelemetrySample;
use qpslab_probe::Sampler;
use qpslab_sandbox::{LabDir, Sandbox, SandboxSpec};
use qpslab_wire::Conn;
use serde_json::Value;
use std::path::PathBuf;
use std::time::Duration;

fn lab() -> (LabDir, PathBuf) {
    // SAFETY: getuid has no preconditions and cannot fail.
    let base = std::env::temp_dir().join(format!("qpslab-test-{}", unsafe { libc::getuid() }));
    // Named like the shared test labs, so a killed test's server is swept by the next run.
    let path = base.join(format!("lab-{}", std::process::id()));
    (
        LabDir::new(&path).with_templates(base.join("templates")),
        path,
    )
}

fn start(lab: &LabDir) -> Sandbox {
    qpslab_sandbox::start(lab, &SandboxSpec::new("restarts")).expect("sandbox starts")
}

/// Kills the server with SIGKILL and reaps it.
fn kill_9(sb: Sandbox) {
    let pid = sb.pid();
    // SAFETY: kill only sends a signal, to the server this test started.
    assert_eq!(unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) }, 0);
    for _ in 0..100 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if stat.is_empty() || stat.contains(") Z") {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // Reaps the child and forgets the sandbox's state; the process is already gone.
    let _ = sb.stop();
}

fn by_source<'a>(t: &'a [TelemetrySample], source: &str) -> Vec<&'a TelemetrySample> {
    t.iter().filter(|s| s.source == source).collect()
}

fn load(sb: &Sandbox, n: usize) {
    let mut c = Conn::connect(&sb.connect_options()).unwrap();
    for _ in 0..n {
        c.query("SELECT 1").unwrap();
    }
}

#[test]
fn the_sampler_survives_a_kill_and_restart_and_a_server_gone_for_good() {
    let (lab, path) = lab();
    let sb = start(&lab);
    let opts = sb.connect_options();
    let conn = Conn::connect(&opts).unwrap();
    let mut sampler = Sampler::new(conn, Some(sb.pid())).reconnect_to(opts.clone());
    sampler.begin().unwrap();
    load(&sb, 500);
    sampler.tick(1.0);
    kill_9(sb);
    sampler.tick(2.0);
    let sb = start(&lab);
    load(&sb, 100);
    sampler.tick(3.0);
    let t = sampler.finish(3.5).unwrap();

    let ticks = by_source(&t, "tick");
    assert_eq!(ticks.len(), 3, "{t:#?}");
    assert!(ticks[0].values["status"]["counters"]["Questions"].as_i64() >= Some(500));
    assert!(ticks[1].values.get("error").is_some(), "{:?}", ticks[1]);
    // After the restart: counters from zero (no negative delta), the new process followed.
    let after = &ticks[2].values;
    let q = after["status"]["counters"]["Questions"].as_i64().unwrap();
    assert!((100..1000).contains(&q), "{after}");
    let counters = after["status"]["counters"].as_object().unwrap();
    assert!(counters.values().all(|v| v.as_i64() >= Some(0)), "{after}");
    assert!(after["server"]["rss_kib"].as_u64() > Some(0), "{after}");
    let gaps = by_source(&t, "gap");
    assert_eq!(gaps.len(), 1, "{t:#?}");
    assert_eq!(gaps[0].values["from_s"], 1.0);
    assert_eq!(gaps[0].values["to_s"], 3.0);
    assert_eq!(gaps[0].values["readings_resumed"], true);
    assert!(!gaps[0].values["reason"].as_str().unwrap().is_empty());
    let total = by_source(&t, "server_status_delta")[0];
    let tq = total.values["counters"]["Questions"].as_i64().unwrap();
    assert!(tq >= 600, "both server lives count: {}", total.values);
    let account = by_source(&t, "telemetry")[0];
    assert_eq!(account.values["reconnects"], 1, "{}", account.values);
    assert_eq!(account.values["gaps"], 1);

    // A second phase; the server dies for good before it ends.
    sampler.begin().unwrap();
    sampler.tick(1.0);
    kill_9(sb);
    sampler.tick(2.0);
    let t = sampler
        .finish(2.5)
        .expect("a phase finishes without its server");
    let gaps = by_source(&t, "gap");
    assert_eq!(gaps.len(), 1, "{t:#?}");
    assert_eq!(gaps[0].values["from_s"], 1.0);
    assert_eq!(gaps[0].values["to_s"], 2.5);
    assert_eq!(gaps[0].values["readings_resumed"], false);
    assert!(!by_source(&t, "server_status_delta").is_empty());
    assert_eq!(by_source(&t, "telemetry")[0].values["reconnects"], 0);
    let perf: &Value = &by_source(&t, "perf")[0].values;
    assert!(perf.get("supported").is_some(), "{perf}");
    let _ = std::fs::remove_dir_all(path);
}
