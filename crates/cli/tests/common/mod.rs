//! Helpers for running the real `qpslab` binary in tests.
#![allow(dead_code)]

pub mod busy;
pub mod launchers;
pub mod replay;
pub mod sources;
pub mod stored;
pub mod tpcc;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A scratch directory with its own lab dir and results store.
pub struct Scratch {
    pub dir: tempfile::TempDir,
}

impl Scratch {
    pub fn new() -> Scratch {
        Scratch {
            dir: tempfile::Builder::new()
                .prefix("qpslab-test")
                .tempdir_in("/tmp")
                .unwrap(),
        }
    }
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
    pub fn db(&self) -> PathBuf {
        self.dir.path().join("results.db")
    }
    pub fn lab(&self) -> PathBuf {
        self.dir.path().join("lab")
    }
    /// `qpslab ARGS` with this scratch's lab and store.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_qpslab"));
        c.args(args)
            .env("QPSLAB_LAB", self.lab())
            .env("QPSLAB_DB", self.db())
            .env("QPSLAB_TEMPLATES", templates())
            .env_remove("MYSQL_PWD")
            .env("RUST_BACKTRACE", "1");
        c
    }
    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().expect("run qpslab")
    }
}

/// Directories of scratches kept for the whole test process, cleaned at its exit.
static AT_EXIT: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

extern "C" fn clean_kept_scratches() {
    if let Ok(mut kept) = AT_EXIT.lock() {
        for dir in kept.drain(..) {
            remove_sandboxes(&dir.join("lab"));
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}

/// Removes every sandbox of the lab at `lab` (stopping those that run).
fn remove_sandboxes(lab: &Path) {
    let lab = qpslab_sandbox::SandboxHome::new(lab);
    for info in qpslab_sandbox::list(&lab).unwrap_or_default() {
        let _ = qpslab_sandbox::remove(&lab, &info.name);
    }
}

impl Scratch {
    /// A scratch shared by the tests of a process (e.g. one study several tests read): it lives
    /// until the process exits, and is cleaned then like a dropped one.
    pub fn for_process(self) -> &'static Scratch {
        let mut kept = AT_EXIT.lock().unwrap();
        if kept.is_empty() {
            // SAFETY: registering a plain extern "C" function that never unwinds.
            unsafe { libc::atexit(clean_kept_scratches) };
        }
        kept.push(self.path().to_path_buf());
        Box::leak(Box::new(self))
    }
}

impl Drop for Scratch {
    /// A test that failed half-way must not leave the sandboxes it started running, and none
    /// may leave its files behind (run as root, they live outside the lab).
    fn drop(&mut self) {
        remove_sandboxes(&self.lab());
    }
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts a user error: exit 2, one line on stderr that mentions `needle`, no backtrace.
pub fn assert_user_error(o: &Output, needle: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "expected exit 2, stderr: {err}");
    assert!(
        err.contains(needle),
        "stderr should mention '{needle}': {err}"
    );
    assert!(
        !err.contains("panicked") && !err.contains("backtrace"),
        "{err}"
    );
}

/// Datadir templates shared by every test's lab, so each server version is initialised once.
pub fn templates() -> PathBuf {
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    std::env::temp_dir()
        .join(format!("qpslab-cli-tests-{uid}"))
        .join("templates")
}

/// Where test artifacts (screenshots) are kept: `target/test-artifacts`.
pub fn artifacts() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/test-artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Headless Chromium with its own profile directory, as the report tests run it.
pub fn chromium(args: &[&str], profile: &std::path::Path) -> std::process::Output {
    Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .output()
        .expect("chromium (apt-get install chromium)")
}

/// Opens the HTML file `html` in headless Chromium: asserts that it loaded without a refused
/// request, an uncaught error or a console message, keeps a screenshot `WIDTH,HEIGHT` big as
/// `artifacts()/shot`, and returns the DOM as Chromium built it.
pub fn render_in_chromium(html: &std::path::Path, shot: &str, size: &str) -> String {
    let profile = tempfile::tempdir().unwrap();
    let url = format!("file://{}", html.display());
    let dom = chromium(&["--dump-dom", &url], profile.path());
    assert!(dom.status.success(), "{}", stderr(&dom));
    let log = stderr(&dom);
    for bad in ["Refused to", "Uncaught", "ERR_", ":CONSOLE("] {
        assert!(!log.contains(bad), "chromium logged '{bad}':\n{log}");
    }
    let shot = artifacts().join(shot);
    let _ = std::fs::remove_file(&shot);
    let o = chromium(
        &[
            &format!("--screenshot={}", shot.display()),
            &format!("--window-size={size}"),
            "--hide-scrollbars",
            &url,
        ],
        profile.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::metadata(&shot).unwrap().len() > 20_000);
    stdout(&dom)
}

/// The shared test server's socket path as a string.
pub fn socket() -> String {
    qpslab_sandbox::testing::shared_server()
        .socket()
        .display()
        .to_string()
}

/// Loads `workload`'s dataset (shaped by `options`) into database `db` of the shared server,
/// creating the database: the shared server is an external target, which `run` never prepares.
pub fn prepare_shared(s: &Scratch, workload: &str, db: &str, options: &[&str]) {
    let sock = socket();
    let mut args = vec!["prepare", workload, "--socket", &sock, "--database", db];
    args.extend_from_slice(options);
    args.push("--create-db");
    let o = s.run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// The id of the run a command stored: `N` of its `stored as run N ...` line.
pub fn stored_run_id(out: &str) -> String {
    out.lines()
        .find_map(|l| l.strip_prefix("stored as run ")?.split_whitespace().next())
        .unwrap_or_else(|| panic!("no stored run in {out}"))
        .to_string()
}

/// Runs SQL through the mariadb client on the shared server.
pub fn sql(query: &str) -> String {
    let o = Command::new("mariadb")
        .args(["--socket", &socket(), "-uroot", "-N", "-B", "-e", query])
        .output()
        .expect("mariadb client");
    assert!(o.status.success(), "{query}: {}", stderr(&o));
    stdout(&o)
}

/// One statement's result on our sandbox `name` of `s`'s lab, through the mariadb client.
pub fn sandbox_sql(s: &Scratch, name: &str, sql: &str) -> String {
    let cnf = s.lab().join("sandboxes").join(name).join("client.cnf");
    let o = Command::new("mariadb")
        .arg(format!("--defaults-file={}", cnf.display()))
        .args(["-N", "-B", "-e", sql])
        .output()
        .expect("mariadb client");
    assert!(o.status.success(), "{sql}: {}", stderr(&o));
    stdout(&o).trim().to_string()
}

/// Compares `actual` with the golden file `tests/golden/NAME`; `UPDATE_GOLDEN=1` rewrites it
/// (review the diff).
pub fn check_golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|_| {
        panic!(
            "missing golden file {}; run with UPDATE_GOLDEN=1",
            path.display()
        )
    });
    assert_eq!(actual, want, "{name} differs from its golden file");
}

/// Pids of live processes whose command line mentions `needle` (a scratch lab's path).
pub fn processes_mentioning(needle: &str) -> Vec<u32> {
    let mut pids = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        if String::from_utf8_lossy(&cmd).contains(needle) {
            pids.push(pid);
        }
    }
    pids
}

/// Waits (polling every 200 ms, at most `limit`) until the store of `s` holds a run still
/// `running` whose first phase has stored at least `samples` intervals, while `ready` holds of
/// the store; returns that run. Panics when `child` (the process writing it) ends first.
pub fn wait_for_running_run(
    s: &Scratch,
    child: &mut std::process::Child,
    samples: usize,
    limit: std::time::Duration,
    ready: impl Fn(&qpslab_store::Store) -> bool,
) -> qpslab_store::RunId {
    use qpslab_store::{RunStatus, Store};
    let deadline = std::time::Instant::now() + limit;
    loop {
        std::thread::sleep(std::time::Duration::from_millis(200));
        let found = Store::open(&s.db()).ok().and_then(|store| {
            if !ready(&store) {
                return None;
            }
            let runs = store.list_runs(10).ok()?;
            let running = runs.iter().find(|r| r.status == RunStatus::Running)?;
            let run = store.load_run(running.id).ok()?;
            (run.phases.first()?.result.samples.len() >= samples).then_some(running.id)
        });
        if let Some(id) = found {
            return id;
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("it ended ({status}) before a running run held {samples} stored intervals");
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no running run held {samples} stored intervals within {limit:?}"
        );
    }
}
