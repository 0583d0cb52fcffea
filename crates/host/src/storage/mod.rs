//! OS storage factors of a study setup: the filesystem the sandbox's datadir lives on, its mount
//! options, the I/O scheduler and read-ahead of its device, applied safely and reversibly.
//!
//! ```toml
//! [[variant]]
//! name = "xfs"
//! storage = { fs = "xfs", size = "4G", mount_options = "noatime", read_ahead_kb = 128 }
//! ```
//!
//! A setup with `storage` gets a sparse image file under `LAB/storage/` (or `image_dir`), a free
//! loop device on it, a fresh filesystem, and a mount point the server's account can reach
//! (`qpslab_sandbox::mount_dir`); its sandbox keeps the datadir there. With `device =
//! "/dev/X"` a scratch block device is formatted instead, only when the spec also says `format =
//! true`, and never one that is mounted, holds mounted partitions or is the root device.
//! Everything is undone when the setup ends, when the study ends, on error and on Ctrl-C or
//! SIGTERM ([`StorageGuard`]); what was changed is recorded in the study's environment so a
//! `kill -9` can be undone by hand, and the next `lab run`/`resume` removes mounts and loop
//! devices left on images of its own lab ([`clean_stale`]).

use qpslab_core::fault::{user_if, Blame, Fault};

mod guard;
mod host;
mod stale;

pub use guard::{Mounted, StorageGuard, Undo};
pub use stale::{clean_stale, image_path};

use qpslab_core::units::UnitError;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A storage factor that cannot be used or applied.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StorageError {
    /// The `storage` table as written cannot be used (the user's to fix).
    #[error("{0}")]
    Invalid(String),
    /// This host cannot apply it: no root, a missing tool, a scratch device in use (the
    /// user's to fix).
    #[error("{0}")]
    Unsupported(String),
    /// Applying it failed (a runtime failure); what was done stays recorded for undoing.
    #[error("{0}")]
    Failed(String),
}

impl Blame for StorageError {
    /// True when the user has to change the spec or the host (exit code 2).
    fn fault(&self) -> Fault {
        user_if(!matches!(self, StorageError::Failed(_)))
    }
}

/// A setup's `storage` table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Storage {
    /// `ext4` or `xfs`.
    pub fs: String,
    /// Size of the loop image: `4G`, `512M` (default 4G).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<String>,
    /// Extra options of mkfs, split at spaces: `"-b size=4096"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mkfs_options: Option<String>,
    /// Options of mount: `"noatime,nodiratime"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mount_options: Option<String>,
    /// I/O scheduler of the device the filesystem is on (`none`, `mq-deadline`, `kyber`, `bfq`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<String>,
    /// Read-ahead of that device, KiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_ahead_kb: Option<u32>,
    /// `loop` (default) or the path of a scratch block device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// Consent to format `device` (required for a block device; erases it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub format: bool,
    /// Where loop images go instead of `LAB/storage`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_dir: Option<PathBuf>,
}

/// The default size of a loop image.
const DEFAULT_SIZE: &str = "4G";
/// The smallest image: xfs refuses filesystems under 300 MiB.
const MIN_SIZE: u64 = 300 << 20;
/// Mount options that modern kernels accept for these filesystems only to refuse or ignore:
/// they must show in /proc/mounts once mounted, or the mount is refused as not supported here.
const MUST_SHOW: &[&str] = &[
    "noatime",
    "nodiratime",
    "relatime",
    "lazytime",
    "nobarrier",
    "barrier",
    "discard",
    "sync",
    "dirsync",
];

impl Storage {
    /// The block device path, `None` for a loop image.
    pub fn block_device(&self) -> Option<&Path> {
        self.device
            .as_deref()
            .filter(|d| *d != "loop")
            .map(Path::new)
    }

    /// The image size in bytes (`4G`, `512M`, `1GiB`: [`qpslab_core::units::parse_size`]).
    pub fn size_bytes(&self) -> Result<u64, UnitError> {
        qpslab_core::units::parse_size(self.size.as_deref().unwrap_or(DEFAULT_SIZE))
    }

    /// The mount options, one per item.
    pub fn mount_option_list(&self) -> Vec<&str> {
        self.mount_options
            .as_deref()
            .unwrap_or("")
            .split(',')
            .map(str::trim)
            .filter(|o| !o.is_empty())
            .collect()
    }
}

/// Checks a `storage` table as written (no host access): `what` names the setup.
pub fn check(what: &str, s: &Storage) -> Result<(), StorageError> {
    let err = |m: String| Err(StorageError::Invalid(format!("{what}: storage: {m}")));
    if !["ext4", "xfs"].contains(&s.fs.as_str()) {
        return err(format!("unknown fs '{}': ext4 or xfs", s.fs));
    }
    let size = s
        .size_bytes()
        .map_err(|m| StorageError::Invalid(format!("{what}: storage: {m}")))?;
    if size < MIN_SIZE {
        return err(format!(
            "size '{}' is too small: at least 300M",
            s.size.as_deref().unwrap_or("")
        ));
    }
    match s.block_device() {
        Some(d) if !d.is_absolute() => {
            return err(format!(
                "device '{}': `loop` or a block device path such as /dev/vdb",
                d.display()
            ))
        }
        Some(d) if !s.format => {
            return err(format!(
                "device {}: qpslab erases it only with `format = true`",
                d.display()
            ))
        }
        None if s.format => {
            return err("`format` applies to a block `device`, not a loop image".into())
        }
        _ => {}
    }
    if let Some(sch) = &s.scheduler {
        if sch.is_empty() || !sch.chars().all(|c| c.is_ascii_lowercase() || c == '-') {
            return err(format!(
                "scheduler '{sch}': a name such as none or mq-deadline"
            ));
        }
    }
    if s.read_ahead_kb.is_some_and(|r| r > 1 << 20) {
        return err("read_ahead_kb: at most 1048576".into());
    }
    Ok(())
}

/// Whether storage factors can be applied here: root and the tools `s` needs, found with
/// `have` (a command name → whether it is on PATH). The error is the line the user sees.
pub fn support(s: &Storage, root: bool, have: impl Fn(&str) -> bool) -> Result<(), StorageError> {
    let no = |why: String| {
        Err(StorageError::Unsupported(format!(
            "storage factors not supported here: {why}"
        )))
    };
    if !root {
        return no("losetup, mkfs and mount need root".into());
    }
    let mkfs = format!("mkfs.{}", s.fs);
    let loop_tool = s.block_device().is_none().then_some("losetup");
    for tool in loop_tool
        .into_iter()
        .chain([mkfs.as_str(), "mount", "umount"])
    {
        if !have(tool) {
            let pkg = if s.fs == "xfs" && tool == mkfs {
                " (Debian package xfsprogs)"
            } else {
                ""
            };
            return no(format!("{tool} not found{pkg}"));
        }
    }
    Ok(())
}

/// Whether a storage factor on a loop image (ext4, the default) can be set up here: root,
/// losetup, mkfs.ext4, mount and umount ([`support`] on this host).
pub fn loop_support() -> Result<(), StorageError> {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    let ext4 = Storage {
        fs: "ext4".into(),
        size: None,
        mkfs_options: None,
        mount_options: None,
        scheduler: None,
        read_ahead_kb: None,
        device: None,
        format: false,
        image_dir: None,
    };
    support(&ext4, root, host::on_path)
}

/// [`support`] on this host, then the block device's safety checks.
pub fn check_host(s: &Storage) -> Result<(), StorageError> {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    support(s, root, host::on_path)?;
    match s.block_device() {
        Some(d) => host::check_scratch_device(d).map_err(StorageError::Unsupported),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn storage(fs: &str) -> Storage {
        Storage {
            fs: fs.into(),
            size: None,
            mkfs_options: None,
            mount_options: Some("noatime, nobarrier".into()),
            scheduler: None,
            read_ahead_kb: None,
            device: None,
            format: false,
            image_dir: None,
        }
    }

    #[test]
    fn checks_name_what_is_wrong() {
        assert_eq!(check("v", &storage("xfs")), Ok(()));
        let e = check("v", &storage("btrfs")).unwrap_err().to_string();
        assert!(
            e.contains("unknown fs 'btrfs'") && e.starts_with("v: storage"),
            "{e}"
        );
        let small = Storage {
            size: Some("100M".into()),
            ..storage("ext4")
        };
        assert!(check("v", &small)
            .unwrap_err()
            .to_string()
            .contains("too small"));
        let bad = Storage {
            size: Some("lots".into()),
            ..storage("ext4")
        };
        assert!(check("v", &bad)
            .unwrap_err()
            .to_string()
            .contains("size 'lots'"));
        let dev = Storage {
            device: Some("/dev/vdb".into()),
            ..storage("ext4")
        };
        assert!(check("v", &dev)
            .unwrap_err()
            .to_string()
            .contains("format = true"));
        assert_eq!(
            check(
                "v",
                &Storage {
                    format: true,
                    ..dev
                }
            ),
            Ok(())
        );
        let rel = Storage {
            device: Some("vdb".into()),
            format: true,
            ..storage("ext4")
        };
        assert!(check("v", &rel).is_err());
        let fmt = Storage {
            format: true,
            ..storage("ext4")
        };
        assert!(check("v", &fmt)
            .unwrap_err()
            .to_string()
            .contains("not a loop image"));
        let sch = Storage {
            scheduler: Some("Dead line".into()),
            ..storage("ext4")
        };
        assert!(check("v", &sch).is_err());
        assert_eq!(storage("xfs").mount_option_list(), ["noatime", "nobarrier"]);
    }

    #[test]
    fn support_needs_root_and_tools() {
        let all = |_: &str| true;
        let e = support(&storage("xfs"), false, all)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "storage factors not supported here: losetup, mkfs and mount need root"
        );
        let e = support(&storage("xfs"), true, |t| t != "mkfs.xfs")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("mkfs.xfs not found (Debian package xfsprogs)"),
            "{e}"
        );
        let e = support(&storage("ext4"), true, |t| t != "losetup")
            .unwrap_err()
            .to_string();
        assert!(e.contains("losetup not found"), "{e}");
        let dev = Storage {
            device: Some("/dev/vdb".into()),
            format: true,
            ..storage("ext4")
        };
        assert_eq!(support(&dev, true, |t| t != "losetup"), Ok(()));
        assert_eq!(support(&storage("ext4"), true, all), Ok(()));
    }
}
