//! `qpslab io MODE`: sysbench's fileio tests through fio, end to end with the real binary and
//! the real fio: each mode family, fio's own percentiles against the stored ones, files removed
//! after (also on Ctrl-C), show and compare, user errors before anything runs, and a fileio
//! study cell stored as it is measured (`kill -9` keeps its intervals).

mod common;

use common::{
    assert_user_error, processes_mentioning, stderr, stdout, wait_for_running_run, Scratch,
};
use qpslab_store::{CellStatus, RunStatus, Store};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

const SMALL: &[&str] = &["--file-total-size", "64M", "--file-num", "4"];

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn test_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("test_file."))
        .collect()
}

/// Runs `io MODE` with small files in a fresh directory; returns the directory, qpslab's
/// `--json` and fio's own report.
fn io(s: &Scratch, name: &str, mode: &str, extra: &[&str]) -> (std::path::PathBuf, Value, Value) {
    let dir = s.path().join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let (json, fio) = (dir.join("run.json"), dir.join("fio.json"));
    let mut args = vec!["io", mode, "--time", "2"];
    if !extra.contains(&"--threads") {
        args.extend(["--threads", "2"]);
    }
    let d = dir.display().to_string();
    let (j, f) = (json.display().to_string(), fio.display().to_string());
    args.extend(["--dir", d.as_str(), "--json", &j, "--fio-json", &f]);
    args.extend(SMALL);
    args.extend(extra);
    let o = s.run(&args);
    assert!(o.status.success(), "{mode}: {}", stderr(&o));
    assert!(stdout(&o).contains("[ 1s ] iops:"), "{}", stdout(&o));
    // Progress with an ETA on stderr, from the first interval on.
    assert!(
        stderr(&o).contains("io: 1s of 2s, ETA 1s"),
        "{}",
        stderr(&o)
    );
    let fio_report = read_json(&fio);
    std::fs::copy(
        &fio,
        common::artifacts().join(format!("io-{name}-fio.json")),
    )
    .unwrap();
    (dir, read_json(&json), fio_report)
}

/// fio's completion-latency percentiles (ms) of the whole job.
fn fio_percentiles(fio: &Value) -> Vec<(String, f64)> {
    let p = fio["jobs"][0]["mixed"]["clat_ns"]["percentile"]
        .as_object()
        .unwrap();
    p.iter()
        .map(|(k, v)| {
            let k: f64 = k.parse().unwrap();
            (format!("p{k}"), v.as_f64().unwrap() / 1e6)
        })
        .collect()
}

#[test]
fn each_mode_family_runs_and_stores_fios_own_percentiles() {
    let s = Scratch::new();
    for (name, mode, extra, reads, writes) in [
        ("seqwr", "seqwr", &[][..], false, true),
        (
            "seqrd",
            "seqrd",
            &["--file-io-mode", "async"][..],
            true,
            false,
        ),
        (
            "rndrd",
            "rndrd",
            &["--file-extra-flags", "direct"][..],
            true,
            false,
        ),
        ("rndrw", "rndrw", &[][..], true, true),
        (
            "mmap",
            "rndwr",
            &["--file-io-mode", "mmap", "--threads", "1"][..],
            false,
            true,
        ),
    ] {
        let (dir, doc, fio) = io(&s, name, mode, extra);
        assert!(test_files(&dir).is_empty(), "{name}: files left");
        let phase = &doc["phases"][0];
        let stored = &phase["latency_ms"];
        let fio_p = fio_percentiles(&fio);
        assert_eq!(fio_p.len(), 4, "{name}");
        for (k, ms) in fio_p {
            assert_eq!(stored[&k].as_f64(), Some(ms), "{name}: {k}");
        }
        let max = fio["jobs"][0]["mixed"]["clat_ns"]["max"].as_f64().unwrap() / 1e6;
        assert_eq!(stored["max"].as_f64(), Some(max), "{name}");
        let total = fio["jobs"][0]["mixed"]["total_ios"].as_u64().unwrap();
        assert_eq!(phase["events"].as_u64(), Some(total), "{name}");
        let io = &phase["io"];
        assert!(io["iops"].as_f64().unwrap() > 0.0, "{name}");
        assert_eq!(io["read_mib_s"].as_f64().unwrap() > 0.0, reads, "{name}");
        assert_eq!(io["write_mib_s"].as_f64().unwrap() > 0.0, writes, "{name}");
        assert_eq!(io["fio_version"], fio["fio version"]);
        assert!(io["intervals"].as_array().unwrap().len() >= 2, "{name}");
        let cmd: Vec<&str> = io["fio_command"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        assert_eq!(cmd[0], "fio");
        assert!(cmd.contains(&"--nrfiles=4"), "{cmd:?}");
        assert_eq!(doc["meta"]["plan"]["fileio"]["mode"], mode);
    }
}

#[test]
fn show_and_compare_treat_io_runs_like_runs() {
    let s = Scratch::new();
    io(&s, "a", "rndrd", &[]);
    io(&s, "b", "rndrd", &["--file-block-size", "4K"]);
    let o = s.run(&["show", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("fileio rndrd"), "{}", stdout(&o));
    assert!(stdout(&o).contains("read, MiB/s:"), "{}", stdout(&o));
    assert!(!stdout(&o).contains("server "), "{}", stdout(&o));
    let o = s.run(&["compare", "1", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("block_size"), "{}", stdout(&o));
    io(&s, "c", "rndwr", &[]);
    let o = s.run(&["compare", "1", "3"]);
    assert_user_error(&o, "different workloads");
    assert!(stderr(&o).contains("fileio rndwr"), "{}", stderr(&o));
}

#[test]
fn bad_input_is_one_line_exit_2_before_anything_runs() {
    let s = Scratch::new();
    let file = s.path().join("plain");
    std::fs::write(&file, "x").unwrap();
    let f = file.display().to_string();
    for (args, needle) in [
        (
            &["io", "rndrd", "--file-block-size", "0"][..],
            "--file-block-size",
        ),
        (&["io", "rndxx"], "rndxx"),
        (
            &["io", "rndrd", "--dir", "/nonexistent/x"],
            "not a directory",
        ),
        (&["io", "rndrd", "--dir", &f], "not a directory"),
        (&["io", "rndrd", "--file-total-size", "900T"], "free"),
        (
            &["io", "rndrd", "--file-extra-flags", "odirect"],
            "--file-extra-flags",
        ),
        (&["io", "rndrd", "--threads", "1,2"], "one thread count"),
        (
            &["io", "rndrd", "--file-total-size", "1K"],
            "less than one block",
        ),
        (&["io", "rndrd", "--file-rw-ratio", "-1"], "--file-rw-ratio"),
        (
            &["io", "rndrd", "--file-io-mode", "mmap", "--threads", "2"],
            "--threads 1",
        ),
    ] {
        let o = s.run(args);
        if args[1] == "rndxx" {
            // clap's own error for a value outside the choices: exit 2 as well.
            assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
            assert!(stderr(&o).contains(needle), "{}", stderr(&o));
        } else {
            assert_user_error(&o, needle);
            assert_eq!(stderr(&o).trim().lines().count(), 1, "{}", stderr(&o));
        }
    }
    assert!(!s.db().exists(), "rejected input wrote the store");
}

#[test]
fn without_fio_it_exits_1_naming_the_package() {
    let s = Scratch::new();
    let o = s
        .cmd(&["io", "rndrd", "--dir", &s.path().display().to_string()])
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("fio package"), "{}", stderr(&o));
}

/// The fio processes whose command line mentions `needle` (qpslab's own mentions it too).
fn fio_mentioning(needle: &str) -> Vec<u32> {
    let comm = |pid: &u32| std::fs::read_to_string(format!("/proc/{pid}/comm")).ok();
    processes_mentioning(needle)
        .into_iter()
        .filter(|pid| comm(pid).is_some_and(|c| c.trim() == "fio"))
        .collect()
}

/// MiB an unprivileged user may still write on the filesystem of `dir`.
fn free_mib(dir: &Path) -> u64 {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).unwrap();
    // SAFETY: statvfs writes into the zeroed struct it is given; `path` is NUL-terminated.
    let st = unsafe {
        let mut st: libc::statvfs = std::mem::zeroed();
        assert_eq!(libc::statvfs(path.as_ptr(), &mut st), 0, "statvfs {dir:?}");
        st
    };
    st.f_bavail.saturating_mul(st.f_frsize) >> 20
}

#[test]
fn fio_laying_out_files_dies_with_a_killed_qpslab() {
    // The layout runs fio with its output discarded, so no broken pipe would stop it: only the
    // parent-death signal does.
    let s = Scratch::new();
    let dir = s.path().join("layout");
    std::fs::create_dir_all(&dir).unwrap();
    let d = dir.display().to_string();
    // Big enough that laying out takes a while, small enough for the room a CI machine has.
    let total = format!("{}M", (free_mib(&dir) / 2).clamp(64, 8192));
    let args = ["io", "seqrd", "--time", "5", "--dir", &d];
    let args = [&args[..], &["--file-total-size", &total, "--file-num", "2"]].concat();
    let mut child = s.cmd(&args).stdout(Stdio::null()).spawn().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while fio_mentioning(&d).is_empty() {
        assert!(std::time::Instant::now() < deadline, "fio never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL: no handler runs
    child.wait().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !fio_mentioning(&d).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "fio outlived the killed qpslab: {:?}",
            fio_mentioning(&d)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn ctrl_c_kills_fio_removes_the_files_and_keeps_the_intervals() {
    let s = Scratch::new();
    let dir = s.path().join("files");
    std::fs::create_dir_all(&dir).unwrap();
    let d = dir.display().to_string();
    let mut args = vec!["io", "rndrw", "--time", "60", "--dir", &d];
    args.extend(SMALL);
    let mut child = s.cmd(&args).stdout(Stdio::piped()).spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = 0;
    while seen < 2 {
        let line = lines.next().expect("an interval line").unwrap();
        seen += usize::from(line.contains("iops:"));
    }
    assert!(processes_mentioning(&d).len() >= 2, "fio should be running");
    // SAFETY: signals the child this test started, by its pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(test_files(&dir).is_empty(), "files left after Ctrl-C");
    assert_eq!(processes_mentioning(&d).len(), 0, "fio left running");
    let o = s.run(&["show", "1", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(doc["status"], "interrupted");
    assert!(
        doc["phases"][0]["result"]["samples"]
            .as_array()
            .unwrap()
            .len()
            >= 2
    );
}

#[test]
fn a_fileio_study_sweeps_modes_and_block_sizes_without_a_server() {
    let s = Scratch::new();
    let spec = s.path().join("io.toml");
    std::fs::write(
        &spec,
        "name = \"fileio-matrix\"\n[defaults]\nworkload = \"fileio\"\nfile_total_size = \"32M\"\n\
         file_num = 4\ntime = 1\n[sweep]\nfile_test_mode = [\"rndrd\", \"seqwr\"]\n\
         file_block_size = [\"4K\", \"16K\"]\n",
    )
    .unwrap();
    let spec = spec.display().to_string();
    let o = s.run(&["lab", "plan", &spec]);
    assert!(stdout(&o).contains("fileio seqwr"), "{}", stdout(&o));
    assert!(stdout(&o).contains("0 server start(s)"), "{}", stdout(&o));
    let o = s.run(&["lab", "run", &spec]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("4 cell(s) measured, 0 failed"),
        "{}",
        stdout(&o)
    );
    // No sandbox was made, and the files went to the cells' directory and were removed.
    let lab = s.lab();
    let sandboxes = std::fs::read_dir(&lab).unwrap().filter(|e| {
        let name = e.as_ref().unwrap().file_name();
        name != "io" && name != "templates"
    });
    assert_eq!(sandboxes.count(), 0);
    let cell_dir = lab.join("io/fileio-matrix/default");
    assert!(cell_dir.is_dir());
    assert!(test_files(&cell_dir).is_empty());
    let o = s.run(&["lab", "show", "fileio-matrix", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let modes: Vec<&str> = doc["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["run"]["meta"]["plan"]["fileio"]["mode"].as_str().unwrap())
        .collect();
    assert_eq!(modes.len(), 4, "{doc}");
    assert!(
        modes.contains(&"rndrd") && modes.contains(&"seqwr"),
        "{modes:?}"
    );
    let o = s.run(&["report", "fileio-matrix", "--format", "md"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let md = stdout(&o);
    assert!(
        md.contains("file_block_size=16K file_test_mode=seqwr"),
        "{md}"
    );
    // The best result and the four cells' rows (the context's placement table lists the
    // phases too, before them).
    let tables = &md[md.find("## Best result").unwrap_or(0)..];
    assert_eq!(tables.matches("| default |").count(), 5, "{md}");
}

#[test]
fn kill_9_mid_fileio_cell_keeps_its_intervals_and_resume_measures_it_again() {
    let s = Scratch::new();
    let spec = s.path().join("kill.toml");
    std::fs::write(
        &spec,
        "name = \"fileio-kill\"\n[defaults]\nworkload = \"fileio\"\nfile_test_mode = \"rndrd\"\n\
         file_total_size = \"32M\"\nfile_num = 4\ntime = 6\n",
    )
    .unwrap();
    let spec = spec.display().to_string();
    let mut child = s
        .cmd(&["lab", "run", &spec])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Killed once the cell's run holds two intervals: they are in the store while fio runs.
    let killed = wait_for_running_run(&s, &mut child, 2, Duration::from_secs(60), |_| true);
    child.kill().unwrap(); // SIGKILL: no handler runs
    child.wait().unwrap();
    // fio dies with the qpslab that started it (parent-death signal), files left for resume.
    let cell_dir = s.lab().join("io/fileio-kill/default");
    let needle = cell_dir.display().to_string();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !processes_mentioning(&needle).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "fio outlived the killed qpslab: {:?}",
            processes_mentioning(&needle)
        );
        std::thread::sleep(Duration::from_millis(100));
    }

    // The killed cell's run reads as interrupted, with the intervals it measured.
    let store = Store::open(&s.db()).unwrap();
    let run = store.load_run(killed).unwrap();
    assert_eq!(run.status, RunStatus::Interrupted);
    let samples = &run.phases[0].result.samples;
    assert!(samples.len() >= 2, "{samples:?}");
    assert!(samples.iter().all(|x| x.events > 0), "{samples:?}");
    assert_eq!(run.meta.study_id.as_deref(), Some("fileio-kill"));
    drop(store);
    let o = s.run(&["show", &killed.0.to_string(), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let shown: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(shown["status"], "interrupted", "{shown}");
    assert_eq!(shown["phases"][0]["status"], "interrupted", "{shown}");

    // Resumed, the cell is measured again; the killed run stays as its interrupted attempt.
    let o = s.run(&["lab", "resume", &spec]);
    assert!(o.status.success(), "{}", stderr(&o));
    let store = Store::open(&s.db()).unwrap();
    let study = store.study_by_name("fileio-kill").unwrap();
    let cells = store.study_cells(study.id).unwrap();
    assert_eq!(cells.len(), 1, "{cells:?}");
    assert_eq!(cells[0].status, CellStatus::Done, "{cells:?}");
    assert!(cells[0].run_id.unwrap() > killed, "{cells:?}");
    let o = s.run(&["lab", "show", "fileio-kill", "--json"]);
    let doc: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let tries = doc["cells"][0]["attempts"].as_array().unwrap();
    assert_eq!(tries.len(), 2, "{tries:?}");
    assert_eq!(tries[0]["run_id"], killed.0, "{tries:?}");
    assert_eq!(tries[0]["status"], "interrupted");
    assert_eq!(tries[1]["used"], true);
    assert!(test_files(&cell_dir).is_empty(), "files left after resume");
}
