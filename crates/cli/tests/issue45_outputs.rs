//! Issue 45: outputs never replace what they do not own. `--out` (of `report`, `show --hlog`,
//! `capture`) and `--export-json` onto a FIFO, a device, `-` or standard output (`/dev/stdout`,
//! or a link to this process's descriptor 1) write into it and leave it as it was; only a
//! regular file or a new path is replaced whole, and "written to" is said only of a file.
//! `--db` names a regular file or a new path: anything else is one line, exit 2, and nothing
//! created beside it.

mod common;
use common::*;
use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::process::Command;

/// A scratch whose store holds run 1.
fn with_run() -> Scratch {
    let s = Scratch::new();
    stored::run_in(&s.db(), None);
    s
}

/// Makes a FIFO at `path` and reads everything written to it on a thread, until the writer
/// and the handle returned are both closed: nothing waits on a FIFO that a command replaced
/// instead of writing into it (the handle, opened read-write, is a writer that never blocks
/// and lets the reader open at once).
fn fifo(path: &Path) -> (std::fs::File, std::thread::JoinHandle<String>) {
    let made = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(made.success());
    let keep = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap();
    let mut reader = std::fs::File::open(path).unwrap();
    let read = std::thread::spawn(move || {
        let mut text = String::new();
        reader.read_to_string(&mut text).unwrap();
        text
    });
    (keep, read)
}

fn is_fifo(path: &Path) -> bool {
    std::fs::symlink_metadata(path)
        .unwrap()
        .file_type()
        .is_fifo()
}

#[test]
fn a_fifo_is_written_into_and_stays_a_fifo() {
    let s = with_run();
    for args in [
        vec!["report", "1", "--format", "md", "--out"],
        vec!["show", "1", "--export-json"],
    ] {
        let path = s.path().join(format!("{}.fifo", args[0]));
        let (keep, reader) = fifo(&path);
        let mut args = args.clone();
        let p = path.to_str().unwrap();
        args.push(p);
        let o = s.run(&args);
        drop(keep);
        let text = reader.join().unwrap();
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        assert!(text.contains("oltp_point_select"), "{args:?}: {text}");
        assert!(is_fifo(&path), "{args:?}: the FIFO was replaced");
    }
}

#[test]
fn standard_output_gets_the_report_and_no_line_says_otherwise() {
    let s = with_run();
    // A link to this process's descriptor 1 is what /dev/stdout is.
    let link = s.path().join("stdout");
    std::os::unix::fs::symlink("/proc/self/fd/1", &link).unwrap();
    // /dev/stdout last: a build that replaces it fails on the others first.
    for out in ["-", link.to_str().unwrap(), "/dev/stdout"] {
        let o = s.run(&["report", "1", "--format", "md", "--out", out]);
        assert!(o.status.success(), "{out}: {}", stderr(&o));
        assert!(
            stdout(&o).contains("oltp_point_select"),
            "{out}: {}",
            stdout(&o)
        );
        assert!(!stderr(&o).contains("written to"), "{out}: {}", stderr(&o));
    }
    let kind = std::fs::symlink_metadata(&link).unwrap().file_type();
    assert!(kind.is_symlink(), "the link was replaced");
    let o = s.run(&["show", "1", "--export-json", link.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("\"format\": \"qpslab-run\""),
        "{}",
        stdout(&o)
    );
    // A regular file is still replaced whole, and said so.
    let file = s.path().join("r.md");
    let o = s.run(&["report", "1", "--out", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("report written to {}", file.display())),
        "{}",
        stderr(&o)
    );
    assert!(std::fs::read_to_string(&file)
        .unwrap()
        .contains("oltp_point_select"));
}

#[test]
fn a_device_node_is_written_into_and_stays_a_device() {
    let s = with_run();
    // The null device under another name (making one needs root).
    let null = s.path().join("null");
    let made = Command::new("mknod")
        .arg(&null)
        .args(["c", "1", "3"])
        .status()
        .is_ok_and(|st| st.success());
    if !made {
        eprintln!("skipped: cannot make a device node here (needs root)");
        return;
    }
    for args in [
        vec!["show", "1", "--export-json"],
        vec!["report", "1", "--out"],
        vec!["show", "1", "--hlog"],
    ] {
        let mut args = args.clone();
        args.push(null.to_str().unwrap());
        let o = s.run(&args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        let kind = std::fs::symlink_metadata(&null).unwrap().file_type();
        assert!(kind.is_char_device(), "{args:?}: the device was replaced");
    }
}

#[test]
fn a_db_that_is_no_regular_file_is_refused_and_nothing_is_created_beside_it() {
    let s = Scratch::new();
    let fifo = s.path().join("db.fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    for (db, says) in [
        ("/dev/zero", "is a character device, not a file"),
        (fifo.to_str().unwrap(), "is a FIFO (named pipe), not a file"),
    ] {
        for args in [
            vec!["show"],
            vec!["import", "/dev/null"],
            vec!["run", "oltp_point_select", "--time", "1"],
        ] {
            let mut args = args.clone();
            args.extend(["--db", db]);
            let o = s.run(&args);
            assert_user_error(&o, says);
            assert_eq!(stderr(&o).lines().count(), 1, "{args:?}: {}", stderr(&o));
            for suffix in ["-journal", "-wal", "-shm"] {
                let beside = format!("{db}{suffix}");
                assert!(!Path::new(&beside).exists(), "{args:?} left {beside}");
            }
        }
    }
}

#[test]
fn a_capture_into_a_fifo_writes_the_log_into_it() {
    let s = Scratch::new();
    let o = s.run(&["server", "start", "capfifo"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let path = s.path().join("slow.fifo");
    let (keep, reader) = fifo(&path);
    let out = path.to_str().unwrap();
    // No --force: writing into a FIFO replaces nothing.
    let o = s.run(&[
        "capture",
        "--sandbox",
        "capfifo",
        "--time",
        "2s",
        "--out",
        out,
    ]);
    drop(keep);
    let text = reader.join().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(is_fifo(&path), "the FIFO was replaced");
    assert!(
        text.contains("Time\t\t    Id Command\tArgument"),
        "the log's head: {text}"
    );
}
