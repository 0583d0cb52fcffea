//! Issue 48: the README's capture recipe records the run's statements on a busy machine. The
//! log goes on after capture's baseline, later still when the CPUs are busy: a script that
//! waits for `--ready-file` starts its run once every new connection is logged, where a fixed
//! `sleep 2` let the run's connections open first and the log held none of them.

mod common;
use common::busy::BusyLoops;
use common::*;
use std::process::Command;
use std::time::Duration;

/// The README's recipe, its waits bounded; the capture's window ended once the run is done
/// (Ctrl-C keeps what was captured; the capture exits 130, as interrupted).
const RECIPE: &str = "set -e
qpslab capture --sandbox cap --time 60s --out slow.log --ready-file cap.ready &
cap=$!
i=0; until [ -e cap.ready ]; do i=$((i+1)); [ $i -lt 600 ]; sleep 0.1; done
qpslab run oltp_point_select --sandbox cap --tables 1 --table-size 1000 --time 2 --warmup 0 -q
kill -INT $cap
wait $cap || [ $? -eq 130 ]
[ ! -e cap.ready ]
";

#[test]
fn issue_48_the_capture_recipe_records_the_run_on_a_busy_machine() {
    let s = Scratch::new();
    let o = s.run(&["server", "start", "cap"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let bin = s.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_qpslab"), bin.join("qpslab")).unwrap();
    let scratch = s.cmd(&[]);
    let mut sh = Command::new("timeout");
    sh.args(["120", "sh", "-c", RECIPE]).current_dir(s.path());
    for (k, v) in scratch.get_envs() {
        match v {
            Some(v) => sh.env(k, v),
            None => sh.env_remove(k),
        };
    }
    let path = std::env::var("PATH").unwrap_or_default();
    sh.env("PATH", format!("{}:{path}", bin.display()));
    let hogs = BusyLoops::start(2);
    let o = sh.output().expect("sh");
    drop(hogs);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let log = std::fs::read_to_string(s.path().join("slow.log")).unwrap();
    let selects = log
        .lines()
        .filter(|l| l.starts_with("SELECT c FROM sbtest1 WHERE id="))
        .count();
    assert!(
        selects > 100,
        "{selects} point selects logged: {}",
        stderr(&o)
    );
    let o = s.run(&["server", "stop", "cap"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// While a capture arms (its baseline, before the log is on) it marks the server in the lab,
/// and a run on that server is told the capture will miss it; once the log is on, the mark is
/// gone.
#[test]
fn issue_48_a_run_is_told_when_a_capture_is_still_arming() {
    let s = Scratch::new();
    let o = s.run(&["server", "start", "arm", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let info: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let socket = info["socket"].as_str().unwrap().to_string();
    let name: String = socket
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let mark = s.lab().join("capture-arming").join(name);
    // The mark comes first, the ready file once the log is on (after a 2 s baseline). A watch
    // that was itself kept off the CPU for half a second may have slept through the mark: it
    // proves nothing either way, so the capture is taken again (three tries).
    let mut seen = None;
    for attempt in 0..3 {
        let ready = s.path().join(format!("arm{attempt}.ready"));
        let said = s.path().join(format!("arm{attempt}.err"));
        let (out, ready_arg) = (
            s.path()
                .join(format!("arm{attempt}.log"))
                .display()
                .to_string(),
            ready.display().to_string(),
        );
        let mut capture = s
            .cmd(&[
                "capture",
                "--sandbox",
                "arm",
                "--time",
                "1s",
                "--out",
                &out,
                "--ready-file",
                &ready_arg,
            ])
            .stderr(std::fs::File::create(&said).unwrap())
            .spawn()
            .unwrap();
        let started = std::time::Instant::now();
        let (mut marked, mut last, mut longest) = (false, started, Duration::ZERO);
        let mut names = std::collections::BTreeSet::new();
        while !ready.exists() {
            marked |= mark.exists();
            // What the arming directory held, for the failure message.
            if let Ok(dir) = std::fs::read_dir(mark.parent().unwrap()) {
                names.extend(
                    dir.flatten()
                        .map(|e| e.file_name().to_string_lossy().into_owned()),
                );
            }
            assert!(started.elapsed().as_secs() < 60, "no ready file");
            std::thread::sleep(Duration::from_millis(10));
            longest = longest.max(last.elapsed());
            last = std::time::Instant::now();
        }
        assert!(!mark.exists(), "the mark outlived the arming");
        assert!(capture.wait().unwrap().success());
        let said = std::fs::read_to_string(&said).unwrap_or_default();
        seen = Some((
            marked,
            format!("{said}(the arming directory held: {names:?})"),
        ));
        // A watch kept off the CPU for half a second may have slept through the mark, and on a
        // machine this busy a capture once went unmarked for a reason not seen since: either
        // way the capture is taken again, and three captures in a row unmarked fail.
        if marked {
            break;
        }
        eprintln!("attempt {attempt}: no mark seen (longest gap {longest:?}): {said}");
    }
    let (marked, said) = seen.expect("the watch never ran steadily through a capture's arming");
    assert!(
        marked,
        "no arming mark at {}; capture said:\n{said}",
        mark.display()
    );
    // A run that starts while the mark is there (a live capture's pid) is told so.
    std::fs::create_dir_all(mark.parent().unwrap()).unwrap();
    std::fs::write(&mark, std::process::id().to_string()).unwrap();
    let o = s.run(&[
        "run",
        "oltp_point_select",
        "--sandbox",
        "arm",
        "--tables",
        "1",
        "--table-size",
        "100",
        "--time",
        "1",
        "--warmup",
        "0",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("has not switched its log on yet"),
        "{}",
        stderr(&o)
    );
    std::fs::remove_file(&mark).unwrap();
    let o = s.run(&["server", "stop", "arm"]);
    assert!(o.status.success(), "{}", stderr(&o));
}
