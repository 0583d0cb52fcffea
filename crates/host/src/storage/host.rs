//! The host side of storage factors: commands (losetup, mkfs, mount), /proc/mounts, sysfs.

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Whether `tool` is on PATH or in the directories [`run`] runs tools from (root's sbin
/// directories are missing from some PATHs).
pub fn on_path(tool: &str) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/usr/bin", "/sbin", "/bin"].map(PathBuf::from))
        .any(|d| d.join(tool).is_file())
}

/// Runs `tool args`; its stdout, or one line naming the command and what it said.
pub(crate) fn run(tool: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(tool)
        .args(args)
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .output()
        .map_err(|e| format!("{tool}: {e}"))?;
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).trim().to_string());
    }
    let err = String::from_utf8_lossy(&out.stderr);
    let first = err
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("failed");
    Err(format!("{tool} {}: {}", args.join(" "), first.trim()))
}

/// Unmounts `dir`, waiting out the moment a just-stopped server still holds it busy; lazily as
/// a last resort, so the loop device can still be detached once it is free.
pub(crate) fn unmount(dir: &Path) -> Result<(), String> {
    let d = dir.to_string_lossy();
    for _ in 0..20 {
        if mount_at(dir).is_none() {
            return Ok(());
        }
        if run("umount", &[&d]).is_ok() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    run("umount", &["-l", &d]).map(drop)
}

/// One line of /proc/mounts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MountEntry {
    pub source: String,
    pub target: PathBuf,
    pub fstype: String,
    pub options: String,
}

/// The mounts of this mount namespace.
pub fn mounts() -> Vec<MountEntry> {
    parse_mounts(&std::fs::read_to_string("/proc/mounts").unwrap_or_default())
}

/// Parses /proc/mounts (fields are space separated, spaces in them escaped as `\040`).
pub fn parse_mounts(text: &str) -> Vec<MountEntry> {
    let unescape = |s: &str| {
        s.replace("\\040", " ")
            .replace("\\011", "\t")
            .replace("\\134", "\\")
    };
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (f.len() >= 4).then(|| MountEntry {
                source: unescape(f[0]),
                target: PathBuf::from(unescape(f[1])),
                fstype: f[2].to_string(),
                options: f[3].to_string(),
            })
        })
        .collect()
}

/// The mount at exactly `dir`, the last one if stacked.
pub fn mount_at(dir: &Path) -> Option<MountEntry> {
    mounts().into_iter().rev().find(|m| m.target == dir)
}

/// The sysfs directory of block device `name` (`vda`, `loop3`, `vda1`).
fn class_dir(name: &str) -> PathBuf {
    Path::new("/sys/class/block").join(name)
}

/// The kernel name of the block device at `dev` (`/dev/loop3` → `loop3`), symlinks resolved.
pub fn kernel_name(dev: &Path) -> Option<String> {
    let real = std::fs::canonicalize(dev).ok()?;
    let meta = std::fs::metadata(&real).ok()?;
    if !meta.file_type().is_block_device() {
        return None;
    }
    name_of_devno(meta.rdev())
}

fn name_of_devno(devno: u64) -> Option<String> {
    let (major, minor) = (libc::major(devno), libc::minor(devno));
    let link = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()?;
    link.file_name().map(|n| n.to_string_lossy().into_owned())
}

/// The whole disk of block device `name`: itself, or its parent when it is a partition.
pub fn disk_of(name: &str) -> String {
    let dir = class_dir(name);
    if dir.join("partition").exists() {
        if let Ok(real) = std::fs::canonicalize(&dir) {
            if let Some(p) = real.parent().and_then(Path::file_name) {
                return p.to_string_lossy().into_owned();
            }
        }
    }
    name.to_string()
}

/// The queue directory of block device `name` (its disk's for a partition).
pub fn queue_dir(name: &str) -> PathBuf {
    class_dir(&disk_of(name)).join("queue")
}

/// The block device holding the filesystem of `path` (`vda` for a file on /), if it is one.
pub fn device_of_path(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    name_of_devno(meta.dev())
}

/// Refuses a scratch device that is not a block device, is (or has a partition) mounted or
/// used as swap, is held by another device (LVM, RAID, dm), or holds the root filesystem.
pub(crate) fn check_scratch_device(dev: &Path) -> Result<(), String> {
    let show = dev.display();
    let name =
        kernel_name(dev).ok_or_else(|| format!("storage: device {show} is not a block device"))?;
    let disk = disk_of(&name);
    let mut family = vec![name.clone()];
    family.extend(partitions(&disk));
    family.push(disk.clone());
    if device_of_path(Path::new("/")).is_some_and(|r| family.contains(&r) || disk_of(&r) == disk) {
        return Err(format!(
            "storage: device {show} holds the root filesystem; refusing to format it"
        ));
    }
    for m in mounts() {
        let src = kernel_name(Path::new(&m.source));
        if src.is_some_and(|s| s == name || (name == disk && family.contains(&s))) {
            return Err(format!(
                "storage: device {show} is mounted at {}; refusing to format it",
                m.target.display()
            ));
        }
    }
    let swaps = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    let holders = std::fs::read_dir(class_dir(&name).join("holders"))
        .map(|d| d.count())
        .unwrap_or(0);
    if holders > 0
        || swaps
            .lines()
            .any(|l| l.starts_with(&*dev.to_string_lossy()))
    {
        return Err(format!(
            "storage: device {show} is in use (swap, LVM, RAID or dm); refusing to format it"
        ));
    }
    Ok(())
}

/// The partitions of disk `name` (`vda1`, `vda2`).
fn partitions(disk: &str) -> Vec<String> {
    std::fs::read_dir(class_dir(disk))
        .map(|d| {
            d.flatten()
                .filter(|e| e.path().join("partition").exists())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Loop devices and their backing files (`/dev/loop3`, `/lab/storage/x.img`).
pub fn loops() -> Vec<(PathBuf, PathBuf)> {
    let Ok(dir) = std::fs::read_dir("/sys/block") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let file = std::fs::read_to_string(e.path().join("loop/backing_file")).ok()?;
            let file = file.trim().trim_end_matches(" (deleted)");
            Some((Path::new("/dev").join(name), PathBuf::from(file)))
        })
        .collect()
}

/// Reads a sysfs value; a choice list gives its selected word (`none [mq-deadline]`).
pub(crate) fn read_sysfs(path: &Path) -> Result<String, String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    Ok(crate::os::selected(&text).unwrap_or_else(|| text.trim().to_string()))
}

/// Writes a sysfs value.
pub(crate) fn write_sysfs(path: &Path, value: &str) -> Result<(), String> {
    std::fs::write(path, value).map_err(|e| format!("writing '{value}' to {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mounts_parse_with_escapes() {
        let m = parse_mounts(
            "/dev/vda / ext4 rw,relatime 0 0\n/dev/loop3 /var/lib/a\\040b xfs rw,noatime 0 0\nbad\n",
        );
        assert_eq!(m.len(), 2);
        assert_eq!(m[1].target, PathBuf::from("/var/lib/a b"));
        assert_eq!(
            (m[1].fstype.as_str(), m[1].options.as_str()),
            ("xfs", "rw,noatime")
        );
    }

    #[test]
    fn scratch_devices_that_are_not_block_devices_are_refused() {
        let e = check_scratch_device(Path::new("/etc/hostname")).unwrap_err();
        assert!(e.contains("not a block device"), "{e}");
    }
}
