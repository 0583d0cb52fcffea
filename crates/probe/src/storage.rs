//! Where a directory is stored: its mount, file system, mount options and the block device's
//! I/O scheduler. Like host facts, a missing source reads `None`, never an error.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// Storage facts of one directory (a sandbox's datadir).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StorageFacts {
    /// The directory asked about.
    pub path: String,
    /// The mount point holding it.
    pub mount_point: Option<String>,
    /// Its file system type (`ext4`, `xfs`, `tmpfs`...).
    pub fs_type: Option<String>,
    /// Mount options (`rw,relatime,...`), per-mount and super-block ones joined.
    pub mount_options: Option<String>,
    /// The mounted device (`/dev/vda1`).
    pub device: Option<String>,
    /// The selected I/O scheduler of the device's queue (`mq-deadline`, `none`...).
    pub io_scheduler: Option<String>,
    /// Whether the device's queue says it is rotational (a spinning disk); `None` when unknown.
    #[serde(default)]
    pub rotational: Option<bool>,
}

/// The storage facts of `dir`.
pub fn storage_facts(dir: &Path) -> StorageFacts {
    let path = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mut f = StorageFacts {
        path: path.display().to_string(),
        ..Default::default()
    };
    let Ok(text) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return f;
    };
    if let Some(m) = best_mount(&text, &path.display().to_string()) {
        f.io_scheduler = queue_file(&m.device, "scheduler").map(|t| selected(&t));
        f.rotational = queue_file(&m.device, "rotational").map(|t| t.trim() == "1");
        f.mount_point = Some(m.mount_point);
        f.fs_type = Some(m.fs_type);
        f.mount_options = Some(m.options);
        f.device = Some(m.device);
    }
    f
}

pub(crate) struct Mount {
    pub mount_point: String,
    pub fs_type: String,
    pub options: String,
    pub device: String,
}

/// The mount of `/proc/self/mountinfo` with the longest mount point that contains `path`.
pub(crate) fn best_mount(mountinfo: &str, path: &str) -> Option<Mount> {
    let mut best: Option<Mount> = None;
    for line in mountinfo.lines() {
        let (left, right) = line.split_once(" - ")?;
        let l: Vec<&str> = left.split(' ').collect();
        let r: Vec<&str> = right.split(' ').collect();
        if l.len() < 6 || r.len() < 3 {
            continue;
        }
        let mp = l[4];
        let inside = path == mp
            || mp == "/"
            || path
                .strip_prefix(mp)
                .is_some_and(|rest| rest.starts_with('/'));
        if inside
            && best
                .as_ref()
                .is_none_or(|b| mp.len() >= b.mount_point.len())
        {
            best = Some(Mount {
                mount_point: mp.to_string(),
                fs_type: r[0].to_string(),
                options: format!("{},{}", l[5], r[2]),
                device: r[1].to_string(),
            });
        }
    }
    best
}

/// A file of the device's block queue (`/sys/block/vda/queue/FILE` for `/dev/vda1`).
fn queue_file(device: &str, file: &str) -> Option<String> {
    let name = device.strip_prefix("/dev/")?;
    let mut candidates = vec![name.to_string()];
    // A partition's queue is its disk's: vda1 → vda, nvme0n1p2 → nvme0n1.
    let trimmed = name.trim_end_matches(|c: char| c.is_ascii_digit());
    candidates.push(trimmed.trim_end_matches('p').to_string());
    candidates.push(trimmed.to_string());
    candidates
        .iter()
        .find_map(|c| std::fs::read_to_string(format!("/sys/block/{c}/queue/{file}")).ok())
}

/// `[mq-deadline] none` → `mq-deadline`; the whole text when nothing is bracketed.
fn selected(text: &str) -> String {
    text.split_whitespace()
        .find(|w| w.starts_with('['))
        .map(|w| w.trim_matches(|c| c == '[' || c == ']').to_string())
        .unwrap_or_else(|| text.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_mount_wins() {
        let mi = "22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,discard\n\
                  30 22 0:26 / /tmp rw,nosuid shared:2 - tmpfs tmpfs rw,size=1024k\n";
        let m = best_mount(mi, "/tmp/lab/data").unwrap();
        assert_eq!(m.mount_point, "/tmp");
        assert_eq!(m.fs_type, "tmpfs");
        assert_eq!(m.options, "rw,nosuid,rw,size=1024k");
        let m = best_mount(mi, "/tmpx/data").unwrap();
        assert_eq!(m.device, "/dev/vda");
    }

    #[test]
    fn the_selected_scheduler_is_the_bracketed_one() {
        assert_eq!(selected("[mq-deadline] none\n"), "mq-deadline");
        assert_eq!(selected("mq-deadline [none]"), "none");
        assert_eq!(selected("none\n"), "none");
    }

    #[test]
    fn this_machine_has_a_root_mount() {
        let f = storage_facts(Path::new("/"));
        assert_eq!(f.mount_point.as_deref(), Some("/"));
        assert!(f.fs_type.is_some());
    }
}
