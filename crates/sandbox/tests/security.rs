//! A sandbox is closed to other local users: they cannot reach its socket nor log in as root
//! over TCP without the password, the server cannot write files outside its own directory, and
//! when the tests run as root the server does not.

mod common;

use qpslab_sandbox::{list, remove, start, SandboxHome, SandboxSpec};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Command;

fn is_root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// `mariadb ARGS -e sql` as user `nobody`, as another local user would run it.
fn as_nobody(args: &[String], sql: &str) -> Result<String, String> {
    let out = Command::new("runuser")
        .args(["-u", "nobody", "--", "mariadb", "--no-defaults"])
        .args(args)
        .args(["--batch", "--skip-column-names", "-e", sql])
        .current_dir("/")
        .output()
        .map_err(|e| format!("running runuser: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p).unwrap().mode() & 0o777
}

fn status_uid(pid: u32) -> u32 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("Uid:")).unwrap();
    // Real, effective, saved, filesystem: all must have dropped root.
    let ids: Vec<u32> = line[4..]
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect();
    assert!(ids.iter().all(|i| *i == ids[0]), "{line}");
    ids[0]
}

#[test]
fn another_local_user_is_refused_and_files_stay_inside() {
    let dir = tempfile::Builder::new()
        .prefix("qpslab-sec")
        .tempdir()
        .unwrap();
    let templates = std::env::temp_dir().join(format!(
        "qpslab-test-{}/templates",
        // SAFETY: getuid cannot fail.
        unsafe { libc::getuid() }
    ));
    let home = SandboxHome::new(dir.path()).with_templates(templates);
    let s = start(&home, &SandboxSpec::new("sec")).unwrap();
    let sock = s.socket().to_path_buf();
    let port = s.port();
    let client = s.info().client_file();
    let sandbox_dir = home.sandbox_dir("sec");
    let run = s.info().runtime_dir().to_path_buf();
    eprintln!("socket {} runtime {}", sock.display(), run.display());

    // Files and directories: nothing for other users.
    assert_eq!(mode(&sandbox_dir), 0o700);
    assert_eq!(mode(sandbox_dir.parent().unwrap()), 0o700);
    assert_eq!(mode(&run), 0o700);
    assert_eq!(mode(sock.parent().unwrap()), 0o700);
    for f in ["password", "client.cnf", "state.json"] {
        assert_eq!(mode(&sandbox_dir.join(f)), 0o600, "{f}");
    }
    assert_eq!(mode(s.defaults_file()), 0o600);
    assert!(!run.join("init.sql").exists());

    // The server is not root, and owns what it writes.
    let uid = status_uid(s.pid());
    if is_root() {
        assert_ne!(uid, 0, "the server runs as root");
        let data = std::fs::metadata(s.datadir()).unwrap();
        assert_eq!(data.uid(), uid);
        // The runtime directory is the server's (0700, checked above), under a base that only
        // root and the server's group may traverse (root:mysql 0710): in the lab when the
        // server's account can reach it, else /var/lib/qpslab.
        let base = run.parent().unwrap();
        assert_eq!(mode(base), 0o710, "{}", base.display());
        assert_eq!(std::fs::metadata(base).unwrap().uid(), 0);
        assert_eq!(std::fs::metadata(&run).unwrap().uid(), uid);
        let in_lab = run.starts_with(dir.path());
        assert_eq!(in_lab, base == dir.path().join("run"), "{}", run.display());
    } else {
        // SAFETY: geteuid cannot fail.
        assert_eq!(uid, unsafe { libc::geteuid() });
    }

    // The password is nowhere but in the sandbox's 0600 files.
    let pw = std::fs::read_to_string(sandbox_dir.join("password")).unwrap();
    let pw = pw.trim();
    assert_eq!(pw.len(), 32);
    let cmdline = std::fs::read(format!("/proc/{}/cmdline", s.pid())).unwrap();
    let environ = std::fs::read(format!("/proc/{}/environ", s.pid())).unwrap();
    for (what, bytes) in [
        ("argv", cmdline),
        ("environment", environ),
        ("my.cnf", std::fs::read(s.defaults_file()).unwrap()),
        (
            "state",
            std::fs::read(sandbox_dir.join("state.json")).unwrap(),
        ),
        ("error log", std::fs::read(s.error_log()).unwrap()),
    ] {
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains(pw), "the password is in the server's {what}");
    }
    assert!(!format!("{:?}", s.info()).contains(pw));

    // Root logs in over TCP with the password only.
    let me = common::query_tcp(&client, port, "SELECT CURRENT_USER()");
    assert!(me.starts_with("root@"), "{me}");
    let denied = common::try_tcp_without_password(port, "SELECT 1").unwrap_err();
    assert!(denied.contains("Access denied"), "{denied}");
    let tcp = vec![
        "--protocol=tcp".to_string(),
        "--host=127.0.0.1".into(),
        format!("--port={port}"),
        "--user=root".into(),
    ];
    if is_root() {
        // Another local user: no TCP login, no way to the socket, no file written.
        let e = as_nobody(&tcp, "SELECT 'x' INTO OUTFILE '/tmp/qpslab-owned'").unwrap_err();
        assert!(e.contains("Access denied"), "{e}");
        let e = as_nobody(
            &[format!("--socket={}", sock.display()), "--user=root".into()],
            "SELECT 1",
        )
        .unwrap_err();
        assert!(e.contains("Permission denied") || e.contains("(13"), "{e}");
        let e = as_nobody(
            &[
                format!("--socket={}", sock.display()),
                "--user=nobody".into(),
            ],
            "SELECT 1",
        )
        .unwrap_err();
        assert!(e.contains("Permission denied") || e.contains("(13"), "{e}");
    }

    // Even our root cannot write outside the sandbox's files directory.
    let target = format!("/tmp/qpslab-outfile-{}", std::process::id());
    let e = common::try_socket(&sock, &format!("SELECT 'x' INTO OUTFILE '{target}'")).unwrap_err();
    assert!(e.contains("secure-file-priv"), "{e}");
    assert!(!Path::new(&target).exists());
    let priv_dir = common::query_socket(&sock, "SELECT @@secure_file_priv");
    assert!(priv_dir.starts_with(run.to_str().unwrap()), "{priv_dir}");
    assert_eq!(
        common::query_socket(&sock, "SELECT @@bind_address"),
        "127.0.0.1"
    );

    // The server reads its option file again after dropping root (plugin options).
    common::query_socket(&sock, "INSTALL SONAME 'auth_ed25519'");
    common::query_socket(&sock, "UNINSTALL SONAME 'auth_ed25519'");

    // Only the accounts we mean: no anonymous user, no passwordless root anywhere.
    let users = common::query_socket(
        &sock,
        "SELECT GROUP_CONCAT(CONCAT(User, '@', Host) ORDER BY User, Host) FROM mysql.user",
    );
    let mut expected = vec!["mariadb.sys@localhost", "root@127.0.0.1", "root@localhost"];
    let owner = std::env::var("USER").unwrap_or_default();
    let owner_account = format!("{owner}@localhost");
    if !is_root() {
        expected.push(&owner_account);
        expected.sort();
    }
    assert_eq!(users, expected.join(","));
    let empty = common::query_socket(
        &sock,
        "SELECT COUNT(*) FROM mysql.user WHERE User = 'root' AND (Password = '' OR authentication_string = '') AND plugin <> 'unix_socket'",
    );
    assert_eq!(empty, "0");

    s.stop().unwrap();
    assert_eq!(list(&home).unwrap().len(), 1);
    remove(&home, "sec").unwrap();
    assert!(!run.exists() && !sandbox_dir.exists());
}
