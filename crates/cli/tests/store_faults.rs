//! A results store that cannot be written does not lose the measurement, and a bad `--db` gets
//! one message and one exit code whatever the command: a store on a full file system (a
//! 300 kB tmpfs) still prints the run's summary and keeps the unstored phase beside it or in
//! the temporary directory; `show` still reads that store; a read-only store is refused before
//! anything is measured and still reads; a directory as `--db` is the same user error for
//! `run`, `show`, `lab show` and `report`.

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A tmpfs of `size` mounted on a fresh directory, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, size: &str) -> Option<Tmpfs> {
        std::fs::create_dir_all(dir).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Tmpfs(dir.to_path_buf()))
    }

    fn remount_read_only(&self) {
        let s = Command::new("mount")
            .args(["-o", "remount,ro"])
            .arg(&self.0)
            .status()
            .unwrap();
        assert!(s.success());
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

fn start_sandbox(s: &Scratch) {
    let o = s.run(&["server", "start", "st"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

fn run_args<'a>(db: &'a str, time: &'a str) -> Vec<&'a str> {
    vec![
        "run",
        "oltp_point_select",
        "--sandbox",
        "st",
        "--tables",
        "1",
        "--table-size",
        "1000",
        "--threads",
        "2",
        "--time",
        time,
        "--report-interval",
        "0.1",
        "--settle",
        "off",
        "--db",
        db,
    ]
}

#[test]
fn a_full_disk_under_the_store_loses_no_measurement() {
    let s = Scratch::new();
    let Some(fs) = Tmpfs::mount(&s.path().join("tiny"), "300k") else {
        eprintln!("skipped: cannot mount a tmpfs here (needs root)");
        return;
    };
    start_sandbox(&s);
    let db = fs.0.join("q.db");
    let db = db.to_str().unwrap();
    let o = s.run(&run_args(db, "15"));
    let (out, err) = (stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(
        out.contains("SQL statistics:") && out.contains("transactions:"),
        "{out}"
    );
    let line = err
        .lines()
        .find(|l| l.starts_with("qpslab: error:"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(line.contains("could not keep the measured phase"), "{err}");
    assert!(
        !err.contains("panicked") && !err.contains("closing the run"),
        "{err}"
    );
    let kept = line
        .split("it is kept in ")
        .nth(1)
        .and_then(|r| r.split(" (the run's JSON form)").next())
        .unwrap_or_else(|| panic!("{line}"));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(kept).unwrap()).unwrap();
    let _ = std::fs::remove_file(kept);
    assert_eq!(doc["format"], "qpslab-run");
    let phase = &doc["phases"][0];
    assert_eq!(phase["status"], "unstored");
    assert!(phase["events"].as_u64().unwrap() > 0, "{phase}");
    assert!(phase["result"]["samples"].as_array().unwrap().len() > 10);
    // The full store still reads.
    let o = s.run(&["show", "--db", db]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("oltp_point_select"), "{}", stdout(&o));
}

#[test]
fn a_read_only_store_is_refused_before_measuring_and_still_reads() {
    let s = Scratch::new();
    let Some(fs) = Tmpfs::mount(&s.path().join("ro"), "20m") else {
        eprintln!("skipped: cannot mount a tmpfs here (needs root)");
        return;
    };
    start_sandbox(&s);
    let db = fs.0.join("q.db");
    let db = db.to_str().unwrap();
    let o = s.run(&run_args(db, "1"));
    assert!(o.status.success(), "{}", stderr(&o));
    fs.remount_read_only();
    let started = std::time::Instant::now();
    let o = s.run(&run_args(db, "5"));
    assert_user_error(&o, "is read-only here");
    assert!(
        started.elapsed().as_secs() < 5,
        "refused only after measuring"
    );
    assert!(!stdout(&o).contains("SQL statistics"), "{}", stdout(&o));
    let o = s.run(&["show", "1", "--db", db]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn a_directory_as_db_is_one_user_error_for_every_command() {
    let s = Scratch::new();
    let dir = s.path().to_str().unwrap().to_string();
    let want =
        format!("qpslab: error: results store {dir}: is a directory; pass another --db path");
    for args in [
        vec!["run", "oltp_point_select", "--time", "1"],
        vec!["show"],
        vec!["lab", "show"],
        vec!["report", "1", "--out", "/tmp/never-written.html"],
    ] {
        let mut args = args.clone();
        args.extend(["--db", &dir]);
        let o = s.run(&args);
        assert_user_error(&o, "is a directory");
        assert_eq!(stderr(&o).trim(), want, "{args:?}");
    }
    let o = s.run(&["show", "--db", &format!("{dir}/none.db")]);
    assert_user_error(&o, "no results store at");
}
