//! Study setups with `storage`: the datadir on ext4 and xfs loop images, everything undone after
//! the study and after SIGTERM mid-cell, and the user errors of the `storage` table. Needs root
//! (losetup, mkfs, mount), as the tests run here.

mod common;

use common::{assert_user_error, stdout, Scratch};
use qpslab_store::{CellStatus, Store};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const CELLS: &str = "[defaults]\nworkload = \"oltp_read_only\"\ntables = 1\ntable_size = 500\nduration = \"1s\"\nprepare_threads = 1\nwarmup = 0\nretries = 0\n[sweep]\nthreads = [1]\n";

fn spec(s: &Scratch, name: &str, text: &str) -> String {
    let p = s.path().join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

fn variant(name: &str, fs: &str) -> String {
    format!("[[variant]]\nname = \"{name}\"\nstorage = {{ fs = \"{fs}\", size = \"1G\", mount_options = \"noatime\", read_ahead_kb = 256 }}\n")
}

/// Loop devices whose backing file is under `lab`, and mounts under the lab or at our mount dirs.
fn leftovers(lab: &Path, mount_points: &[PathBuf]) -> Vec<String> {
    let loops = stdout_of(
        "losetup",
        &["--list", "--noheadings", "-O", "NAME,BACK-FILE"],
    );
    let lab = lab.to_string_lossy();
    let mut left: Vec<String> = loops
        .lines()
        .filter(|l| l.contains(&*lab))
        .map(String::from)
        .collect();
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap();
    for m in mount_points {
        let m = m.to_string_lossy();
        left.extend(
            mounts
                .lines()
                .filter(|l| l.split(' ').nth(1) == Some(&*m))
                .map(String::from),
        );
    }
    left
}

fn stdout_of(tool: &str, args: &[&str]) -> String {
    let o = Command::new(tool).args(args).output().unwrap();
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The sysfs values the study set, from the recorded commands that undo them by hand: each
/// must read its original value again.
fn assert_sysfs_restored(undo: &[serde_json::Value]) {
    let mut checked = 0;
    for line in undo.iter().filter_map(|u| u.as_str()) {
        if let Some((value, path)) = line.strip_prefix("echo ").and_then(|l| l.split_once(" > ")) {
            let now = std::fs::read_to_string(path).unwrap();
            assert_eq!(now.trim(), value, "{path} not restored");
            checked += 1;
        }
    }
    assert!(checked >= 1, "no sysfs change recorded: {undo:?}");
}

#[test]
fn datadir_lives_on_ext4_and_xfs_and_everything_is_undone() {
    let s = Scratch::new();
    let text = format!(
        "name = \"st\"\n{CELLS}{}{}",
        variant("ext4", "ext4"),
        variant("xfs", "xfs")
    );
    let p = spec(&s, "st.toml", &text);
    let o = s.run(&["lab", "run", &p]);
    let err = common::stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("if qpslab is killed, undo with: "), "{err}");
    let v: serde_json::Value =
        serde_json::from_str(&stdout(&s.run(&["lab", "show", "st", "--json"]))).unwrap();
    let mut mount_points = Vec::new();
    for (name, fs) in [("ext4", "ext4"), ("xfs", "xfs")] {
        let st = &v["env"]["storage"][name];
        let facts = &st["facts"];
        assert_eq!(facts["fs"], fs, "{st}");
        let opts = facts["mount_options"].as_str().unwrap();
        assert!(opts.split(',').any(|o| o == "noatime"), "{opts}");
        assert_eq!(facts["read_ahead_kb"], "256", "{st}");
        let mp = st["mount_point"].as_str().unwrap();
        // The server's own answer: its datadir was on the mounted filesystem.
        let datadir = v["env"]["servers"][name]["variables"]["datadir"]
            .as_str()
            .unwrap();
        assert!(datadir.starts_with(mp), "{datadir} not under {mp}");
        assert_sysfs_restored(st["undo_by_hand"].as_array().unwrap());
        mount_points.push(PathBuf::from(mp));
    }
    // Each cell's run records the storage it measured: what differs between the setups.
    let store = Store::open(&s.db()).unwrap();
    let mut seen = Vec::new();
    for r in store.list_runs(10).unwrap() {
        let meta = store.load_run(r.id).unwrap().meta;
        seen.push(meta.plan.storage.expect("storage in the plan")["fs"].clone());
    }
    seen.sort();
    assert_eq!(seen, ["ext4", "xfs"]);
    assert_eq!(leftovers(&s.lab(), &mount_points), Vec::<String>::new());
    let images = std::fs::read_dir(s.lab().join("storage")).unwrap().count();
    assert_eq!(images, 0, "images left in the lab");
    assert!(mount_points.iter().all(|m| !m.exists()));
}

#[test]
fn sigterm_mid_cell_undoes_the_storage() {
    let s = Scratch::new();
    let cells = CELLS.replace("duration = \"1s\"", "duration = \"30s\"");
    let p = spec(
        &s,
        "t.toml",
        &format!("name = \"t\"\n{cells}{}", variant("x", "xfs")),
    );
    let child = s
        .cmd(&["lab", "run", &p])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        std::thread::sleep(Duration::from_millis(300));
        let running = Store::open(&s.db()).ok().and_then(|store| {
            let st = store.study_by_name("t").ok()?;
            let cells = store.study_cells(st.id).ok()?;
            let mounted = st.env["storage"]["x"].is_object();
            Some(mounted && cells.iter().any(|c| c.status == CellStatus::Running))
        });
        if running == Some(true) {
            break;
        }
        assert!(Instant::now() < deadline, "the study never got going");
    }
    std::thread::sleep(Duration::from_secs(3));
    // SAFETY: kill(2) takes plain integers; the pid is our child, not yet waited for.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let out = child.wait_with_output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !err.contains("panicked") && !err.contains("could not undo"),
        "{err}"
    );
    let store = Store::open(&s.db()).unwrap();
    let env = store.study_by_name("t").unwrap().env;
    let mp = PathBuf::from(env["storage"]["x"]["mount_point"].as_str().unwrap());
    assert_eq!(
        leftovers(&s.lab(), std::slice::from_ref(&mp)),
        Vec::<String>::new()
    );
    assert!(!mp.exists());
    assert_sysfs_restored(env["storage"]["x"]["undo_by_hand"].as_array().unwrap());
    assert_eq!(
        std::fs::read_dir(s.lab().join("storage")).unwrap().count(),
        0
    );
}

#[test]
fn bad_storage_tables_are_user_errors() {
    let s = Scratch::new();
    let run = |body: &str| {
        let p = spec(
            &s,
            "e.toml",
            &format!("name = \"e\"\n{CELLS}[[variant]]\nname = \"v\"\n{body}\n"),
        );
        s.run(&["lab", "run", &p])
    };
    let o = run("storage = { fs = \"btrfs\" }");
    assert_user_error(&o, "unknown fs 'btrfs': ext4 or xfs");
    let o = run("storage = { fs = \"xfs\", size = \"big\" }");
    assert_user_error(&o, "size 'big'");
    let o = run("storage = { fs = \"xfs\", device = \"/dev/sdz9\" }");
    assert_user_error(&o, "only with `format = true`");

    // A block device that is mounted: a loop device of our own, mounted for the test.
    let img = s.path().join("busy.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let dev = stdout_of("losetup", &["--find", "--show", &img.to_string_lossy()]);
    let dev = dev.trim().to_string();
    let mnt = s.path().join("busy");
    std::fs::create_dir(&mnt).unwrap();
    let mounted = Command::new("mkfs.ext4")
        .args(["-q", "-F", &dev])
        .status()
        .unwrap()
        .success()
        && Command::new("mount")
            .args([&dev, &*mnt.to_string_lossy()])
            .status()
            .unwrap()
            .success();
    let o = run(&format!(
        "storage = {{ fs = \"xfs\", device = \"{dev}\", format = true }}"
    ));
    let _ = Command::new("umount").arg(&mnt).status();
    let _ = Command::new("losetup").args(["-d", &dev]).status();
    assert!(mounted, "could not set up the mounted device");
    assert_user_error(&o, "is mounted at");
    assert!(stdout_of(
        "blkid",
        &["-p", "-o", "value", "-s", "TYPE", &img.to_string_lossy()]
    )
    .contains("ext4"));
}

#[test]
fn resume_after_kill_9_cleans_the_mount_and_loop_device_left_behind() {
    let s = Scratch::new();
    let cells = CELLS.replace("duration = \"1s\"", "duration = \"6s\"");
    let p = spec(
        &s,
        "k.toml",
        &format!("name = \"k\"\n{cells}{}", variant("e", "ext4")),
    );
    let mut child = s
        .cmd(&["lab", "run", &p])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(90);
    let mp = loop {
        std::thread::sleep(Duration::from_millis(300));
        let mp = Store::open(&s.db()).ok().and_then(|store| {
            let env = store.study_by_name("k").ok()?.env;
            env["storage"]["e"]["mount_point"]
                .as_str()
                .map(PathBuf::from)
        });
        if let Some(mp) = mp {
            break mp;
        }
        assert!(
            Instant::now() < deadline,
            "the study never mounted its storage"
        );
    };
    std::thread::sleep(Duration::from_secs(2));
    child.kill().unwrap(); // SIGKILL: nothing is undone
    child.wait().unwrap();
    assert_eq!(
        leftovers(&s.lab(), std::slice::from_ref(&mp)).len(),
        2,
        "loop and mount left"
    );
    let o = s.run(&["lab", "resume", &p]);
    let err = common::stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("unmounted stale") && err.contains("detached stale"),
        "{err}"
    );
    assert_eq!(leftovers(&s.lab(), &[mp]), Vec::<String>::new());
    assert_eq!(
        std::fs::read_dir(s.lab().join("storage")).unwrap().count(),
        0
    );
}

#[test]
fn nobarrier_on_xfs_fails_the_setup_as_not_supported_and_leaves_nothing() {
    let s = Scratch::new();
    let body = format!("name = \"nb\"\n{CELLS}[[variant]]\nname = \"x\"\nstorage = {{ fs = \"xfs\", size = \"1G\", mount_options = \"noatime,nobarrier\" }}\n");
    let p = spec(&s, "nb.toml", &body);
    let o = s.run(&["lab", "run", &p]);
    assert_eq!(o.status.code(), Some(1), "{}", common::stderr(&o));
    let v: serde_json::Value =
        serde_json::from_str(&stdout(&s.run(&["lab", "show", "nb", "--json"]))).unwrap();
    let error = v["cells"][0]["error"].as_str().unwrap();
    assert!(
        error.contains("'noatime,nobarrier' not supported here"),
        "{error}"
    );
    assert_eq!(leftovers(&s.lab(), &[]), Vec::<String>::new());
    assert_eq!(
        std::fs::read_dir(s.lab().join("storage")).unwrap().count(),
        0
    );
}
