//! Who runs the server and where the files it writes live.
//!
//! Run by a normal user, the server runs as that user and everything sits in the sandbox
//! directory (0700). Run by root, the server runs as the unprivileged `mysql` user, which must
//! own its datadir and reach it. So the server's runtime directory (datadir, tmpdir,
//! `secure_file_priv` directory, socket, my.cnf, error log, pid file) is `<base>/<hash>-<name>/`,
//! owned by mysql, 0700, under a base directory that only the mysql group may traverse
//! (root:mysql 0710) and nobody but root may list. The base is `LAB/run` when mysql can traverse
//! every directory down to the lab, so the data lands on the lab's disk; otherwise (the default
//! lab `/root/.qpslab` is under `/root`, 0700, which is never loosened, nor is any directory the
//! user made) it is `/var/lib/qpslab`, and the first start of the sandbox says why in one line.
//! A runtime directory that exists already is used where it is, so sandboxes made before keep
//! their data. The lab's sandbox directory keeps what the server never reads (password,
//! client.cnf, state). A runtime directory records its sandbox directory in `owner`; one whose
//! sandbox directory is gone (a deleted lab) is removed by the next start, unless its server
//! still runs.

use crate::error::{Error, Result};
use crate::process;
use std::ffi::{CStr, CString};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The parent of the runtime directories of sandboxes started by root.
pub(crate) const RUN_BASE: &str = "/var/lib/qpslab";
/// The unprivileged account that runs servers started by root (Debian's mariadb-server makes
/// it); `QPSLAB_SERVER_USER` names another.
pub(crate) const SERVER_USER: &str = "mysql";

/// An OS account.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Account {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
}

impl Account {
    pub fn ids(&self) -> (u32, u32) {
        (self.uid, self.gid)
    }
}

fn passwd(entry: *mut libc::passwd) -> Account {
    // SAFETY: called only with an entry getpwnam_r/getpwuid_r just filled in; its strings live
    // in the caller's buffer, which outlives this call.
    unsafe {
        Account {
            name: CStr::from_ptr((*entry).pw_name)
                .to_string_lossy()
                .into_owned(),
            uid: (*entry).pw_uid,
            gid: (*entry).pw_gid,
        }
    }
}

/// The account called `name`, if it exists.
pub(crate) fn account_named(name: &str) -> Option<Account> {
    let cname = CString::new(name).ok()?;
    let mut buf = vec![0 as libc::c_char; 16384];
    // SAFETY: passwd is plain data; getpwnam_r writes at most buf.len() bytes into buf and sets
    // `found` to null or to `pw`.
    unsafe {
        let mut pw: libc::passwd = std::mem::zeroed();
        let mut found: *mut libc::passwd = std::ptr::null_mut();
        let rc = libc::getpwnam_r(
            cname.as_ptr(),
            &mut pw,
            buf.as_mut_ptr(),
            buf.len(),
            &mut found,
        );
        (rc == 0 && !found.is_null()).then(|| passwd(found))
    }
}

/// The name of the account running this process (the lab's owner), or its uid as text.
pub(crate) fn current_user() -> String {
    // SAFETY: geteuid cannot fail.
    let uid = unsafe { libc::geteuid() };
    let mut buf = vec![0 as libc::c_char; 16384];
    // SAFETY: as in account_named.
    unsafe {
        let mut pw: libc::passwd = std::mem::zeroed();
        let mut found: *mut libc::passwd = std::ptr::null_mut();
        let rc = libc::getpwuid_r(uid, &mut pw, buf.as_mut_ptr(), buf.len(), &mut found);
        if rc == 0 && !found.is_null() {
            return passwd(found).name;
        }
    }
    uid.to_string()
}

/// The account the server runs as when it is not this process's own: `mysql` when we are root,
/// `None` otherwise.
pub(crate) fn server_account() -> Result<Option<Account>> {
    if !process::running_as_root() {
        return Ok(None);
    }
    let name = std::env::var("QPSLAB_SERVER_USER")
        .ok()
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| SERVER_USER.to_string());
    match account_named(&name) {
        Some(a) if a.uid != 0 => Ok(Some(a)),
        _ => Err(Error::NoServerUser { user: name }),
    }
}

/// FNV-1a of a path: a stable short name (std's hasher is not stable across releases).
pub(crate) fn fnv64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100000001b3)
    })
}

/// The runtime directory of the sandbox in `dir`: `dir` itself, or a directory under a base
/// (`LAB/run` or [`RUN_BASE`]) when the server runs as another account.
pub(crate) fn runtime_dir(dir: &Path, name: &str, server: Option<&Account>) -> PathBuf {
    placement(dir, name, server).0
}

/// Where the runtime directory of the sandbox in `dir` is, and, when it goes to [`RUN_BASE`]
/// although it would belong in the lab, the one line saying why. An existing runtime directory
/// wins, so a sandbox keeps its data where an earlier qpslab put it.
pub(crate) fn placement(
    dir: &Path,
    name: &str,
    server: Option<&Account>,
) -> (PathBuf, Option<String>) {
    let Some(account) = server else {
        return (dir.to_path_buf(), None);
    };
    let leaf = format!("{:016x}-{name}", fnv64(dir.as_os_str().as_encoded_bytes()));
    let base_run = Path::new(RUN_BASE).join(&leaf);
    // The sandbox directory is LAB/sandboxes/NAME.
    let Some(lab) = dir.parent().and_then(Path::parent) else {
        return (base_run, None);
    };
    let lab_run = lab.join("run").join(&leaf);
    if base_run.is_dir() {
        return (base_run, None);
    }
    if lab_run.is_dir() {
        return (lab_run, None);
    }
    let why = match unreachable_by(lab, account) {
        Some(block) => Some((
            format!("{block} and {} cannot traverse it", account.name),
            format!("let {} traverse every directory down to it", account.name),
        )),
        None if lab_run.join(SOCKET).as_os_str().len() > MAX_SOCKET_PATH => Some((
            format!("its socket path there would pass the {MAX_SOCKET_PATH}-byte limit"),
            "use a lab with a shorter path".to_string(),
        )),
        None => None,
    };
    match why {
        None => (lab_run, None),
        Some((why, fix)) => {
            let note = format!(
                "sandbox {name}'s data goes to {} and not into the lab {}: {why}; to have it \
                 in the lab, {fix}",
                base_run.display(),
                lab.display(),
            );
            (base_run, Some(note))
        }
    }
}

/// The server's socket file name in its runtime directory.
pub(crate) const SOCKET: &str = "mysqld.sock";
/// Longest Unix socket path (`sun_path` is 108 bytes with the terminating NUL).
pub(crate) const MAX_SOCKET_PATH: usize = 107;

/// Whether `account` may traverse (search) a directory with this owner, group and mode. Only
/// the account's primary group is considered: a miss only means the data stays in
/// /var/lib/qpslab.
fn may_traverse(account: &Account, uid: u32, gid: u32, mode: u32) -> bool {
    if account.uid == uid {
        mode & 0o100 != 0
    } else if account.gid == gid {
        mode & 0o010 != 0
    } else {
        mode & 0o001 != 0
    }
}

/// The first directory on the way to `path` (itself included) that `account` cannot traverse,
/// as "DIR is MODE" (or why it could not be looked at); `None` when every one is open to it.
/// Symbolic links are resolved first: the server follows them.
pub(crate) fn unreachable_by(path: &Path, account: &Account) -> Option<String> {
    let real = match std::fs::canonicalize(path) {
        Ok(p) => p,
        Err(e) => return Some(format!("{} cannot be resolved ({e})", path.display())),
    };
    for dir in real.ancestors().collect::<Vec<_>>().into_iter().rev() {
        let meta = match std::fs::metadata(dir) {
            Ok(m) => m,
            Err(e) => return Some(format!("{} cannot be read ({e})", dir.display())),
        };
        if !may_traverse(account, meta.uid(), meta.gid(), meta.mode()) {
            return Some(format!("{} is {:04o}", dir.display(), meta.mode() & 0o7777));
        }
    }
    None
}

/// A directory to mount a filesystem on that will hold the datadir of a sandbox of `home`
/// (see `SandboxSpec::datadir_root`), created if missing: `<lab>/mnt/<tag>` when the server runs
/// as this process's user, else `/var/lib/qpslab/mnt-<hash of the lab>-<tag>`, because the lab
/// of root is never loosened for the server's account to reach it.
pub fn mount_dir(home: &crate::SandboxHome, tag: &str) -> Result<PathBuf> {
    crate::validate_name(tag)?;
    match server_account()? {
        None => {
            let base = home.path().join("mnt");
            private_dir(home.path(), 0o700, None)?;
            private_dir(&base, 0o700, None)?;
            let dir = base.join(tag);
            private_dir(&dir, 0o700, None)?;
            Ok(dir)
        }
        Some(a) => {
            private_dir(Path::new(RUN_BASE), 0o710, Some((0, a.gid)))?;
            let lab = fnv64(home.path().as_os_str().as_encoded_bytes());
            let dir = Path::new(RUN_BASE).join(format!("mnt-{lab:016x}-{tag}"));
            private_dir(&dir, 0o755, None)?;
            Ok(dir)
        }
    }
}

/// Creates `path` if needed and makes it a directory with `mode`, owned by `owner` when given.
pub(crate) fn private_dir(path: &Path, mode: u32, owner: Option<(u32, u32)>) -> Result<()> {
    let ctx = || format!("creating {}", path.display());
    match std::fs::DirBuilder::new().mode(mode).create(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && path.is_dir() => {}
        Err(e) => return Err(Error::io(ctx(), e)),
    }
    if let Some((uid, gid)) = owner {
        std::os::unix::fs::chown(path, Some(uid), Some(gid)).map_err(|e| Error::io(ctx(), e))?;
    }
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(|e| Error::io(ctx(), e))
}

/// Prepares the runtime directory `run` of sandbox directory `dir` for `server`: the base
/// (root:mysql 0710) and the directory itself (mysql 0700) with its `owner` record.
pub(crate) fn prepare_runtime(run: &Path, dir: &Path, server: Option<&Account>) -> Result<()> {
    let owner = server.map(Account::ids);
    if let Some(a) = server {
        // The base (RUN_BASE or LAB/run) is made by qpslab, so it gets the mode it needs.
        let base = run.parent().unwrap_or(Path::new(RUN_BASE));
        private_dir(base, 0o710, Some((0, a.gid)))?;
        private_dir(run, 0o700, owner)?;
        let record = dir.as_os_str().as_encoded_bytes();
        crate::secure::write_private(&run.join("owner"), record, None)?;
    }
    for sub in ["tmp", "files"] {
        private_dir(&run.join(sub), 0o700, owner)?;
    }
    Ok(())
}

/// Moves the datadir a sandbox kept inside its lab directory (qpslab before the server ran as
/// its own account) to the runtime directory, so its data survives the change; nothing to do
/// when there is none or the runtime directory has one already. A move across filesystems is
/// not attempted (the sandbox then starts from a fresh copy of the template).
pub(crate) fn adopt_old_datadir(old: &Path, new: &Path, owner: (u32, u32)) -> Result<()> {
    if !old.join("mysql").is_dir() || new.join("mysql").is_dir() {
        return Ok(());
    }
    let _ = std::fs::remove_dir_all(new);
    if std::fs::rename(old, new).is_err() {
        return Ok(());
    }
    chown_tree(new, owner)
}

fn chown_tree(path: &Path, (uid, gid): (u32, u32)) -> Result<()> {
    let ctx = || format!("giving {} to the server's account", path.display());
    std::os::unix::fs::lchown(path, Some(uid), Some(gid)).map_err(|e| Error::io(ctx(), e))?;
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
        for entry in std::fs::read_dir(path).map_err(|e| Error::io(ctx(), e))? {
            chown_tree(&entry.map_err(|e| Error::io(ctx(), e))?.path(), (uid, gid))?;
        }
    }
    Ok(())
}

/// Removes runtime directories whose sandbox directory no longer exists and whose server does
/// not run (their lab was deleted with `rm -r`), under [`RUN_BASE`] and `lab/run`.
pub(crate) fn sweep_orphans(lab: &Path) {
    for base in [PathBuf::from(RUN_BASE), lab.join("run")] {
        sweep_base(&base);
    }
}

fn sweep_base(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let run = entry.path();
        let Ok(owner) = std::fs::read(run.join("owner")) else {
            continue;
        };
        // SAFETY: the bytes were written from an OsStr by prepare_runtime.
        let owner = unsafe { std::ffi::OsStr::from_encoded_bytes_unchecked(&owner) };
        if Path::new(owner).exists() {
            continue;
        }
        let pid = std::fs::read_to_string(run.join("mysqld.pid"))
            .ok()
            .and_then(|p| p.trim().parse::<u32>().ok());
        if pid.is_some_and(|pid| process::is_ours(pid, &run.join("data"))) {
            continue;
        }
        let _ = std::fs::remove_dir_all(&run);
    }
}

/// Bytes on disk under `path` (allocated blocks, symlinks not followed).
pub(crate) fn disk_usage(path: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    let own = meta.blocks() * 512;
    if !meta.is_dir() {
        return own;
    }
    let children = std::fs::read_dir(path)
        .map(|rd| rd.flatten().map(|e| disk_usage(&e.path())).sum())
        .unwrap_or(0);
    own + children
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtime_dir_is_the_sandbox_dir_unless_another_account_runs_the_server() {
        let dir = Path::new("/root/.qpslab/sandboxes/s");
        assert_eq!(runtime_dir(dir, "s", None), dir);
        let mysql = Account {
            name: "mysql".into(),
            uid: 102,
            gid: 105,
        };
        let run = runtime_dir(dir, "s", Some(&mysql));
        assert!(run.starts_with(RUN_BASE) && run.to_string_lossy().ends_with("-s"));
        let other = runtime_dir(Path::new("/tmp/lab/sandboxes/s"), "s", Some(&mysql));
        assert_ne!(run, other);
    }

    fn nobody() -> Account {
        Account {
            name: "mysql".into(),
            uid: 60_001,
            gid: 60_001,
        }
    }

    #[test]
    fn traversal_follows_owner_then_group_then_others() {
        let a = nobody();
        assert!(may_traverse(&a, a.uid, 0, 0o700));
        assert!(!may_traverse(&a, a.uid, a.gid, 0o070));
        assert!(may_traverse(&a, 0, a.gid, 0o710));
        assert!(!may_traverse(&a, 0, a.gid, 0o701));
        assert!(may_traverse(&a, 0, 0, 0o711));
        assert!(!may_traverse(&a, 0, 0, 0o770));
    }

    #[test]
    fn the_first_closed_directory_is_named() {
        let d = tempfile::tempdir().unwrap();
        let lab = d.path().join("lab");
        std::fs::create_dir(&lab).unwrap();
        let mode = |p: &Path, m| {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
        };
        mode(d.path(), 0o700);
        mode(&lab, 0o755);
        let why = unreachable_by(&lab, &nobody()).unwrap();
        assert_eq!(why, format!("{} is 0700", d.path().display()));
        mode(d.path(), 0o711);
        assert_eq!(unreachable_by(&lab, &nobody()), None);
        mode(&lab, 0o750);
        assert!(unreachable_by(&lab, &nobody())
            .unwrap()
            .ends_with("lab is 0750"));
        assert!(unreachable_by(&d.path().join("none"), &nobody()).is_some());
    }

    #[test]
    fn a_reachable_lab_holds_the_runtime_dir_else_a_note_says_why() {
        let d = tempfile::tempdir().unwrap();
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let dir = d.path().join("sandboxes").join("s");
        let (run, note) = placement(&dir, "s", Some(&nobody()));
        assert!(run.starts_with(d.path().join("run")), "{run:?}");
        assert_eq!(note, None);

        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let (run, note) = placement(&dir, "s", Some(&nobody()));
        assert!(run.starts_with(RUN_BASE), "{run:?}");
        let note = note.unwrap();
        assert!(
            note.contains(&format!("{} is 0700", d.path().display())),
            "{note}"
        );
        assert!(note.contains(&run.display().to_string()), "{note}");

        // Reachable, but the socket would not fit in sun_path.
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let deep = d.path().join("x".repeat(80));
        std::fs::create_dir(&deep).unwrap();
        let dir = deep.join("sandboxes").join("s");
        let (run, note) = placement(&dir, "s", Some(&nobody()));
        assert!(run.starts_with(RUN_BASE), "{run:?}");
        assert!(note.unwrap().contains("107-byte limit"));
    }

    #[test]
    fn the_sweep_removes_runtime_dirs_whose_sandbox_is_gone() {
        let d = tempfile::tempdir().unwrap();
        let (kept, gone) = (d.path().join("kept"), d.path().join("gone"));
        for run in [&kept, &gone] {
            std::fs::create_dir(run).unwrap();
        }
        let owner = |run: &Path, dir: &Path| {
            std::fs::write(run.join("owner"), dir.as_os_str().as_encoded_bytes()).unwrap();
        };
        owner(&kept, d.path());
        owner(&gone, &d.path().join("no-such-sandbox"));
        sweep_base(d.path());
        assert!(kept.is_dir());
        assert!(!gone.exists());
    }

    #[test]
    fn disk_usage_counts_files() {
        let d = tempfile::tempdir().unwrap();
        let before = disk_usage(d.path());
        std::fs::write(d.path().join("f"), vec![7u8; 1 << 20]).unwrap();
        assert!(disk_usage(d.path()) >= before + (1 << 20));
        assert_eq!(disk_usage(&d.path().join("none")), 0);
    }

    #[test]
    fn private_dirs_get_their_mode() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x");
        private_dir(&p, 0o700, None).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        private_dir(&p, 0o700, None).unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().mode() & 0o777, 0o700);
    }
}
