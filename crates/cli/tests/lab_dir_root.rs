//! As root, `--lab DIR` holds its sandboxes' data (datadir, socket, logs) when the server's
//! account can reach DIR; when it cannot, the data goes to /var/lib/qpslab and the first start
//! says why in one line.

mod common;

use common::{stderr, Scratch};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// A lab directory `sub` of a directory this test makes under /tmp with `mode`, removed
/// (sandboxes first) on drop.
struct Lab {
    /// Kept for its removal on drop.
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl Lab {
    fn new(mode: u32, sub: &str) -> Lab {
        let dir = tempfile::Builder::new()
            .prefix("qpslab-labtest")
            .tempdir_in("/tmp")
            .unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(mode)).unwrap();
        let lab = match sub {
            "" => dir.path().to_path_buf(),
            sub => dir.path().join(sub),
        };
        Lab {
            _dir: dir,
            path: lab,
        }
    }
    fn path(&self) -> &Path {
        &self.path
    }
    fn run(&self, s: &Scratch, args: &[&str]) -> std::process::Output {
        s.cmd(args).env("QPSLAB_LAB", self.path()).output().unwrap()
    }
    fn datadir(&self, name: &str) -> PathBuf {
        let home = qpslab_sandbox::SandboxHome::new(self.path());
        let list = qpslab_sandbox::list(&home).unwrap();
        list.into_iter().find(|i| i.name == name).unwrap().datadir
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        let home = qpslab_sandbox::SandboxHome::new(self.path());
        for info in qpslab_sandbox::list(&home).unwrap_or_default() {
            let _ = qpslab_sandbox::remove(&home, &info.name);
        }
    }
}

/// Runtime directories under /var/lib/qpslab that belong to a sandbox of `lab`.
fn in_var_lib(lab: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir("/var/lib/qpslab") else {
        return Vec::new();
    };
    entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            std::fs::read(p.join("owner"))
                .is_ok_and(|o| Path::new(&String::from_utf8_lossy(&o).to_string()).starts_with(lab))
        })
        .collect()
}

#[test]
fn a_lab_the_server_account_can_reach_holds_the_data() {
    if !is_root() {
        eprintln!("skipped: the server runs as another account only when qpslab runs as root");
        return;
    }
    let s = Scratch::new();
    // A lab qpslab makes (two levels) in a directory the user made open to others.
    let lab = Lab::new(0o755, "made/lab");
    let o = lab.run(&s, &["server", "start", "inlab"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("not into the lab"), "{}", stderr(&o));
    let datadir = lab.datadir("inlab");
    assert!(datadir.starts_with(lab.path().join("run")), "{datadir:?}");
    assert!(datadir.join("mysql").is_dir());
    assert_eq!(in_var_lib(lab.path()), Vec::<PathBuf>::new());
    for made in [lab.path(), lab.path().parent().unwrap()] {
        let mode = std::fs::metadata(made).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o710, "{made:?}");
    }
    for cmd in ["stop", "rm"] {
        let o = lab.run(&s, &["server", cmd, "inlab"]);
        assert!(o.status.success(), "{cmd}: {}", stderr(&o));
    }
    assert!(!datadir.exists());
}

#[test]
fn a_closed_lab_keeps_the_data_in_var_lib_and_says_why_once() {
    if !is_root() {
        eprintln!("skipped: the server runs as another account only when qpslab runs as root");
        return;
    }
    let s = Scratch::new();
    let lab = Lab::new(0o700, "");
    let o = lab.run(&s, &["server", "start", "closed"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    let why = format!("{} is 0700", lab.path().display());
    assert_eq!(err.matches("not into the lab").count(), 1, "{err}");
    assert!(err.contains(&why), "{err}");
    let datadir = lab.datadir("closed");
    assert!(datadir.starts_with("/var/lib/qpslab"), "{datadir:?}");
    assert_eq!(in_var_lib(lab.path()).len(), 1);
    assert!(!lab.path().join("run").exists());

    // The next start finds the data where it is and says nothing more, even once the lab is
    // open to the server's account (a sandbox made before keeps its data).
    let o = lab.run(&s, &["server", "stop", "closed"]);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::set_permissions(lab.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let o = lab.run(&s, &["server", "start", "closed"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("not into the lab"), "{}", stderr(&o));
    assert_eq!(lab.datadir("closed"), datadir);
}

/// The default lab (`~/.qpslab`, no `--lab` or `QPSLAB_LAB`) under a private home was never
/// asked to hold the data: its sandboxes' data goes to /var/lib/qpslab without a word, so the
/// first run of a fresh machine does not advise loosening the home directory.
#[test]
fn the_default_lab_under_a_private_home_says_nothing() {
    if !is_root() {
        eprintln!("skipped: the server runs as another account only when qpslab runs as root");
        return;
    }
    let s = Scratch::new();
    let home = Lab::new(0o700, "");
    let lab = home.path().join(".qpslab");
    let start = s
        .cmd(&["server", "start", "quiet"])
        .env_remove("QPSLAB_LAB")
        .env("HOME", home.path())
        .output()
        .unwrap();
    let named = Lab {
        _dir: tempfile::tempdir().unwrap(),
        path: lab.clone(),
    };
    assert!(start.status.success(), "{}", stderr(&start));
    assert!(
        !stderr(&start).contains("not into the lab"),
        "{}",
        stderr(&start)
    );
    assert!(named.datadir("quiet").starts_with("/var/lib/qpslab"));
}
