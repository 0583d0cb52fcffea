//! The sampler survives its server being killed (-9) and restarted mid-phase: it reconnects,
//! follows the new process, counts from zero after the restart, records the gap, and still
//! finishes the phase when the server is gone for good. Runs its own sandbox (it kills it).

use qpslab_core::telemetry::{Account, Gap, Reading, StatusDelta, Tick, TickChange};
use qpslab_core::TelemetrySample;
use qpslab_probe::Sampler;
use qpslab_sandbox::{Sandbox, SandboxHome, SandboxSpec};
use qpslab_wire::Conn;
use std::path::PathBuf;
use std::time::Duration;

fn home() -> (SandboxHome, PathBuf) {
    // SAFETY: getuid has no preconditions and cannot fail.
    let base = std::env::temp_dir().join(format!("qpslab-test-{}", unsafe { libc::getuid() }));
    // Named like the shared test labs, so a killed test's server is swept by the next run.
    let path = base.join(format!("lab-{}", std::process::id()));
    (
        SandboxHome::new(&path).with_templates(base.join("templates")),
        path,
    )
}

fn start(home: &SandboxHome) -> Sandbox {
    qpslab_sandbox::start(home, &SandboxSpec::new("restarts")).expect("sandbox starts")
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

fn ticks(t: &[TelemetrySample]) -> Vec<&Tick> {
    t.iter()
        .filter_map(|s| match &s.reading {
            Reading::Tick(x) => Some(x),
            _ => None,
        })
        .collect()
}

fn gaps(t: &[TelemetrySample]) -> Vec<&Gap> {
    t.iter()
        .filter_map(|s| match &s.reading {
            Reading::Gap(g) => Some(g),
            _ => None,
        })
        .collect()
}

fn status_total(t: &[TelemetrySample]) -> Option<&StatusDelta> {
    t.iter().find_map(|s| match &s.reading {
        Reading::ServerStatusDelta(d) => Some(d),
        _ => None,
    })
}

fn account(t: &[TelemetrySample]) -> Account {
    t.iter()
        .find_map(|s| match s.reading {
            Reading::Telemetry(a) => Some(a),
            _ => None,
        })
        .expect("a telemetry account")
}

fn load(sb: &Sandbox, n: usize) {
    let mut c = Conn::connect(&sb.connect_options()).unwrap();
    for _ in 0..n {
        c.query("SELECT 1").unwrap();
    }
}

#[test]
fn the_sampler_survives_a_kill_and_restart_and_a_server_gone_for_good() {
    let (home, path) = home();
    let sb = start(&home);
    let opts = sb.connect_options();
    let conn = Conn::connect(&opts).unwrap();
    let mut sampler = Sampler::new(conn, Some(sb.pid())).reconnect_to(opts.clone());
    sampler.begin().unwrap();
    load(&sb, 500);
    sampler.tick(1.0);
    kill_9(sb);
    sampler.tick(2.0);
    let sb = start(&home);
    load(&sb, 100);
    sampler.tick(3.0);
    let t = sampler.finish(3.5).unwrap();

    let ticks = ticks(&t);
    assert_eq!(ticks.len(), 3, "{t:#?}");
    let questions = |c: &TickChange| c.status.counters["Questions"];
    assert!(questions(ticks[0].change().unwrap()) >= 500);
    assert!(matches!(ticks[1], Tick::Failed { .. }), "{:?}", ticks[1]);
    // After the restart: counters from zero (no negative delta), the new process followed.
    let after = ticks[2].change().unwrap();
    assert!((100..1000).contains(&questions(after)), "{after:?}");
    assert!(after.status.counters.values().all(|v| *v >= 0), "{after:?}");
    assert!(after.server.unwrap().rss_kib > 0, "{after:?}");
    let gaps_1 = gaps(&t);
    assert_eq!(gaps_1.len(), 1, "{t:#?}");
    assert_eq!((gaps_1[0].from_s, gaps_1[0].to_s), (1.0, 3.0));
    assert!(gaps_1[0].readings_resumed);
    assert!(!gaps_1[0].reason.is_empty());
    let tq = status_total(&t).unwrap().counter("Questions");
    assert!(tq >= 600, "both server lives count: {tq}");
    assert_eq!(
        account(&t),
        Account {
            reconnects: 1,
            gaps: 1
        }
    );

    // A second phase; the server dies for good before it ends.
    sampler.begin().unwrap();
    sampler.tick(1.0);
    kill_9(sb);
    sampler.tick(2.0);
    let t = sampler
        .finish(2.5)
        .expect("a phase finishes without its server");
    let gaps_2 = gaps(&t);
    assert_eq!(gaps_2.len(), 1, "{t:#?}");
    assert_eq!((gaps_2[0].from_s, gaps_2[0].to_s), (1.0, 2.5));
    assert!(!gaps_2[0].readings_resumed);
    assert!(status_total(&t).is_some());
    assert_eq!(account(&t).reconnects, 0);
    assert!(
        t.iter().any(|s| matches!(s.reading, Reading::Perf(_))),
        "{t:#?}"
    );
    let _ = std::fs::remove_dir_all(path);
}
