//! Sandboxes of the real installed MariaDB (Debian's mariadb-server): start, list, settings,
//! placement, allocator, failures, and every way of stopping.

use qpslab_core::fault::Blame;

mod common;

use qpslab_sandbox::{
    find, list, log_tail, registry, remove, start, stop_by_name, Error, Malloc, MyCnf, SandboxHome,
    SandboxSpec,
};
use std::path::Path;

/// A fresh lab per test, sharing the initialised templates with the other tests; its sandboxes
/// (and their runtime directories outside the lab, when the tests run as root) are removed
/// when the guard drops.
fn home() -> (LabGuard, SandboxHome) {
    let dir = tempfile::Builder::new()
        .prefix("qpslab-t")
        .tempdir()
        .unwrap();
    // SAFETY: getuid cannot fail.
    let uid = unsafe { libc::getuid() };
    let templates = std::env::temp_dir().join(format!("qpslab-test-{uid}/templates"));
    let home = SandboxHome::new(dir.path()).with_templates(templates);
    (
        LabGuard {
            home: home.clone(),
            dir,
        },
        home,
    )
}

struct LabGuard {
    home: SandboxHome,
    dir: tempfile::TempDir,
}

impl LabGuard {
    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for LabGuard {
    fn drop(&mut self) {
        for info in list(&self.home).unwrap_or_default() {
            let _ = remove(&self.home, &info.name);
        }
    }
}

/// Pids of live processes whose command line mentions `needle`.
fn processes_mentioning(needle: &Path) -> Vec<u32> {
    let needle = needle.to_string_lossy().into_owned();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| String::from_utf8_lossy(&c).contains(&needle))
                .unwrap_or(false)
        })
        .collect()
}

fn status_field(pid: u32, field: &str) -> String {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .map(|v| v.trim_start_matches(':').trim().to_string())
        .unwrap()
}

#[test]
fn start_list_find_stop() {
    let (_d, home) = home();
    let s = start(&home, &SandboxSpec::new("one")).unwrap();
    assert_eq!(
        common::query_socket(s.socket(), "SELECT @@port"),
        s.port().to_string()
    );
    let listed = list(&home).unwrap();
    assert_eq!(listed.len(), 1);
    assert!(listed[0].alive && listed[0].pid == s.pid() && listed[0].name == "one");
    assert_eq!(find(&home, "one").unwrap().socket, s.socket());
    // The same name cannot run twice.
    let again = start(&home, &SandboxSpec::new("one")).unwrap_err();
    assert!(
        matches!(again, Error::AlreadyRunning { .. }) && again.is_user_error(),
        "{again}"
    );
    assert!(log_tail(&home, "one", 5)
        .unwrap()
        .contains("ready for connections"));

    let (pid, datadir) = (s.pid(), s.datadir().to_path_buf());
    s.stop().unwrap();
    assert!(
        processes_mentioning(&datadir).is_empty(),
        "pid {pid} still runs"
    );
    // A stopped sandbox is still listed, with the room its datadir takes.
    let listed = list(&home).unwrap();
    assert!(listed.len() == 1 && !listed[0].alive, "{listed:?}");
    assert!(listed[0].disk_bytes.unwrap() > 10 << 20, "{listed:?}");
    assert!(matches!(find(&home, "one"), Err(Error::NotRunning { .. })));
    let again = stop_by_name(&home, "one").unwrap_err();
    assert!(matches!(again, Error::NotRunning { .. }), "{again}");
    assert!(matches!(find(&home, "nope"), Err(Error::NotFound { .. })));
}

#[test]
fn lab_settings_my_cnf_and_overrides_apply() {
    let (d, home) = home();
    let my_cnf = d.path().join("my.cnf");
    let included = d.path().join("conf.d");
    std::fs::create_dir(&included).unwrap();
    std::fs::write(
        included.join("pool.cnf"),
        "[mariadbd]\ninnodb_buffer_pool_size = '64M' # from an included file\n",
    )
    .unwrap();
    std::fs::write(
        &my_cnf,
        format!(
            "[client]\nport=1\n[mysqld]\nmax_connections = 300\n!includedir {}\n",
            included.display()
        ),
    )
    .unwrap();
    let mut spec = SandboxSpec::new("set");
    spec.my_cnf = MyCnf::File(my_cnf);
    spec.settings = vec![
        ("max-connections".into(), "123".into()),
        ("innodb_flush_log_at_trx_commit".into(), "2".into()),
    ];
    let s = start(&home, &spec).unwrap();
    let q = |sql: &str| common::query_socket(s.socket(), sql);
    assert_eq!(q("SELECT @@max_connections"), "123"); // --set beats the my.cnf fragment
    assert_eq!(
        q("SELECT @@innodb_buffer_pool_size"),
        (64 << 20).to_string()
    );
    assert_eq!(q("SELECT @@innodb_flush_log_at_trx_commit"), "2");
    assert_eq!(q("SELECT @@max_prepared_stmt_count"), "1048576");
    assert_eq!(q("SELECT @@local_infile"), "1");
    assert_eq!(q("SELECT @@bind_address"), "127.0.0.1");
    assert_eq!(q("SELECT @@skip_name_resolve"), "0");
    assert_eq!(q("SELECT @@datadir"), format!("{}/", s.datadir().display()));
    s.stop().unwrap();
}

#[test]
fn default_limits_suit_thousands_of_sessions() {
    let (_d, home) = home();
    let s = start(&home, &SandboxSpec::new("limits")).unwrap();
    let q = |sql: &str| common::query_socket(s.socket(), sql);
    assert_eq!(q("SELECT @@max_connections"), "5000");
    let cache: u64 = q("SELECT @@table_open_cache").parse().unwrap();
    let files: u64 = q("SELECT @@open_files_limit").parse().unwrap();
    eprintln!("table_open_cache={cache} open_files_limit={files}");
    assert!(cache >= 4096 && files > 5000, "{cache} {files}");
    s.stop().unwrap();
}

#[test]
fn cpu_affinity_and_jemalloc_preload() {
    let (_d, home) = home();
    let last = std::thread::available_parallelism().unwrap().get() - 1;
    let mut spec = SandboxSpec::new("placed");
    spec.cpus = Some(vec![last]);
    spec.malloc = Some(Malloc::Jemalloc);
    let s = start(&home, &spec).unwrap();
    assert_eq!(status_field(s.pid(), "Cpus_allowed_list"), last.to_string());
    // Every server thread inherits the mask, not just the main one.
    for task in std::fs::read_dir(format!("/proc/{}/task", s.pid()))
        .unwrap()
        .flatten()
    {
        let status = std::fs::read_to_string(task.path().join("status")).unwrap();
        assert!(
            status.contains(&format!("Cpus_allowed_list:\t{last}\n")),
            "{status}"
        );
    }
    let maps = std::fs::read_to_string(format!("/proc/{}/maps", s.pid())).unwrap();
    assert!(maps.contains("libjemalloc.so.2"));
    assert_eq!(
        find(&home, "placed").unwrap().malloc,
        Some(Malloc::Jemalloc)
    );
    s.stop().unwrap();
}

#[test]
fn no_preload_without_malloc_option() {
    let (_d, home) = home();
    let s = start(&home, &SandboxSpec::new("plain")).unwrap();
    let maps = std::fs::read_to_string(format!("/proc/{}/maps", s.pid())).unwrap();
    assert!(!maps.contains("libjemalloc"));
    s.stop().unwrap();
}

#[test]
fn unknown_variable_reports_log_tail_and_leaves_no_process() {
    let (_d, home) = home();
    let mut spec = SandboxSpec::new("bad");
    spec.settings = vec![("no_such_variable_qps".into(), "1".into())];
    let err = start(&home, &spec).unwrap_err();
    assert!(err.is_user_error(), "{err}");
    match &err {
        Error::UnknownSetting {
            detail, log_tail, ..
        } => {
            assert!(detail.contains("no_such_variable_qps"), "{detail}");
            assert!(log_tail.contains("[ERROR]"), "{log_tail}");
        }
        other => panic!("unexpected {other}"),
    }
    assert!(processes_mentioning(&home.sandbox_dir("bad")).is_empty());
    assert!(list(&home).unwrap().is_empty());
}

#[test]
fn drop_stops_the_server() {
    let (_d, home) = home();
    let s = start(&home, &SandboxSpec::new("dropped")).unwrap();
    let datadir = s.datadir().to_path_buf();
    assert_eq!(processes_mentioning(&datadir), vec![s.pid()]);
    drop(s);
    assert!(processes_mentioning(&datadir).is_empty());
    assert!(list(&home).unwrap().iter().all(|i| !i.alive));
}

#[test]
fn tcp_login_works_even_with_skip_name_resolve() {
    let (_d, home) = home();
    let mut spec = SandboxSpec::new("tcp");
    spec.settings = vec![("skip-name-resolve".into(), String::new())];
    let s = start(&home, &spec).unwrap();
    let client = s.info().client_file();
    assert_eq!(
        common::query_tcp(&client, s.port(), "SELECT CURRENT_USER()"),
        "root@127.0.0.1"
    );
    let o = s.tcp_options();
    assert_eq!(o.describe(), format!("root@127.0.0.1:{}/", s.port()));
    assert!(!o.password.is_empty());
    s.stop().unwrap();
}

#[test]
fn explicit_port_in_use_fails_before_starting() {
    let (_d, home) = home();
    let taken = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let mut spec = SandboxSpec::new("clash");
    spec.port = taken.local_addr().unwrap().port().into();
    let err = start(&home, &spec).unwrap_err();
    assert!(
        matches!(err, Error::PortInUse { .. }) && err.is_user_error(),
        "{err}"
    );
    assert!(!home.sandbox_dir("clash").exists());
}

#[test]
fn kept_sandbox_outlives_its_handle_until_stopped_by_name() {
    let (_d, home) = home();
    let s = start(&home, &SandboxSpec::new("kept")).unwrap();
    common::query_socket(s.socket(), "CREATE DATABASE keepme");
    let info = s.keep();
    assert!(find(&home, "kept").unwrap().alive);
    registry::stop_all_started(); // kept sandboxes are not ours to stop any more
    assert_eq!(common::query_socket(&info.socket, "SELECT 1"), "1");
    stop_by_name(&home, "kept").unwrap();
    assert!(processes_mentioning(&info.datadir).is_empty());
    assert!(matches!(find(&home, "kept"), Err(Error::NotRunning { .. })));

    // A restart reuses the datadir: the data survives, nothing is copied.
    let s = start(&home, &SandboxSpec::new("kept")).unwrap();
    assert!(s.timings().datadir_copy.is_none());
    assert_eq!(
        common::query_socket(s.socket(), "SHOW DATABASES LIKE 'keepme'"),
        "keepme"
    );
    let datadir = s.datadir().to_path_buf();
    s.keep();
    remove(&home, "kept").unwrap();
    assert!(processes_mentioning(&datadir).is_empty());
    assert!(!home.sandbox_dir("kept").exists());
}

#[test]
fn stop_all_started_works_from_another_thread() {
    let (_d, home) = home();
    let s = start(&home, &SandboxSpec::new("ctrlc")).unwrap();
    let datadir = s.datadir().to_path_buf();
    std::thread::spawn(registry::stop_all_started)
        .join()
        .unwrap();
    assert!(processes_mentioning(&datadir).is_empty());
    // The owner's later stop finds the server gone and succeeds.
    s.stop().unwrap();
}

#[test]
fn first_start_initialises_template_then_copies() {
    let dir = tempfile::Builder::new()
        .prefix("qpslab-t")
        .tempdir()
        .unwrap();
    let home = SandboxHome::new(dir.path());
    let a = start(&home, &SandboxSpec::new("a")).unwrap();
    let b = start(&home, &SandboxSpec::new("b")).unwrap();
    let (ta, tb) = (a.timings().clone(), b.timings().clone());
    eprintln!("first start: {ta:?}\nsecond start: {tb:?}");
    assert!(ta.template_init.is_some() && ta.datadir_copy.is_some());
    assert!(tb.template_init.is_none() && tb.datadir_copy.is_some());
    assert_ne!(a.port(), b.port());
    assert_eq!(list(&home).unwrap().len(), 2);
    a.stop().unwrap();
    b.stop().unwrap();
    remove(&home, "a").unwrap();
    remove(&home, "b").unwrap();
}

#[test]
fn start_timeout_reports_log_tail_and_leaves_no_process() {
    let (_d, home) = home();
    let mut spec = SandboxSpec::new("slow");
    spec.start_timeout = std::time::Duration::ZERO;
    let err = start(&home, &spec).unwrap_err();
    assert!(!err.is_user_error(), "{err}");
    match &err {
        Error::StartFailed { reason, .. } => assert!(reason.contains("within 0 s"), "{reason}"),
        other => panic!("unexpected {other}"),
    }
    assert!(processes_mentioning(&home.sandbox_dir("slow")).is_empty());
    assert!(list(&home).unwrap().is_empty());
}

/// A sandbox made when the server still ran as root from `<lab>/sandboxes/<name>/data` keeps its
/// data when it moves to the runtime directory of the server's own account.
#[test]
fn a_datadir_from_the_old_layout_is_adopted_with_its_data() {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: only root's sandboxes moved");
        return;
    }
    let (_d, home) = home();
    let s = start(&home, &SandboxSpec::new("moved")).unwrap();
    common::query_socket(s.socket(), "CREATE DATABASE kept_across_layouts");
    let (run, pid) = (s.info().runtime_dir().to_path_buf(), s.pid());
    s.stop().unwrap();
    // The old layout: the datadir inside the sandbox directory, owned by root.
    let old = home.sandbox_dir("moved").join("data");
    assert!(std::process::Command::new("mv")
        .arg(run.join("data"))
        .arg(&old)
        .status()
        .unwrap()
        .success());
    assert!(std::process::Command::new("chown")
        .args(["-R", "root:root"])
        .arg(&old)
        .status()
        .unwrap()
        .success());
    let s = start(&home, &SandboxSpec::new("moved")).unwrap();
    assert_ne!(s.pid(), pid);
    assert!(s.timings().datadir_copy.is_none() && !old.exists());
    assert_eq!(
        common::query_socket(s.socket(), "SHOW DATABASES LIKE 'kept_across_layouts'"),
        "kept_across_layouts"
    );
    let ibdata = std::fs::metadata(s.datadir().join("ibdata1")).unwrap();
    assert_ne!(ibdata.uid(), 0);
    s.stop().unwrap();
}
