//! Applying a setup's storage and undoing it: every change is pushed on a stack of [`Undo`]
//! steps as it is made, and [`StorageGuard::restore`] (also run on drop) pops them in reverse.

use super::host::{self, MountEntry};
use super::{Storage, StorageError, MUST_SHOW};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One change to undo.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Undo {
    /// Delete the loop image.
    RemoveImage(PathBuf),
    /// Detach the loop device, if it is still on the image.
    Detach { device: PathBuf, image: PathBuf },
    /// Remove the (empty) mount point.
    RemoveDir(PathBuf),
    /// Unmount the filesystem.
    Unmount(PathBuf),
    /// Put a sysfs value back.
    Sysfs { path: PathBuf, value: String },
}

impl Undo {
    /// The shell command that undoes it by hand.
    pub fn command(&self) -> String {
        match self {
            Undo::RemoveImage(p) => format!("rm -f {0} {0}.owner", p.display()),
            Undo::Detach { device, .. } => format!("losetup -d {}", device.display()),
            Undo::RemoveDir(p) => format!("rmdir {}", p.display()),
            Undo::Unmount(p) => format!("umount {}", p.display()),
            Undo::Sysfs { path, value } => format!("echo {value} > {}", path.display()),
        }
    }

    /// Does it.
    fn run(&self) -> Result<(), String> {
        match self {
            Undo::RemoveImage(p) => match std::fs::remove_file(p)
                .and_then(|()| std::fs::remove_file(super::stale::owner_path(p)))
            {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    Err(format!("removing {}: {e}", p.display()))
                }
                _ => Ok(()),
            },
            Undo::Detach { device, image } => {
                let ours = host::loops().iter().any(|(d, f)| d == device && f == image);
                if !ours {
                    return Ok(());
                }
                host::run("losetup", &["-d", &device.to_string_lossy()]).map(drop)
            }
            Undo::RemoveDir(p) => {
                let _ = std::fs::remove_dir(p);
                Ok(())
            }
            Undo::Unmount(p) => host::unmount(p),
            Undo::Sysfs { path, value } => host::write_sysfs(path, value),
        }
    }
}

/// A mounted storage setup: where, and the facts recorded with its runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mounted {
    /// The mount point (the sandbox's datadir root).
    pub dir: PathBuf,
    /// The block device mounted (`/dev/loop3` for a loop image).
    pub device: PathBuf,
    /// `fs`, `device`, `mount_options` (as in /proc/mounts), `scheduler`, `read_ahead_kb`, and
    /// for a loop image `backing_device` and its `backing_scheduler`.
    pub facts: BTreeMap<String, String>,
}

/// Restores what it changed when dropped.
#[derive(Debug, Default)]
pub struct StorageGuard {
    undo: Vec<Undo>,
}

impl StorageGuard {
    /// A guard that has changed nothing yet.
    pub fn new() -> StorageGuard {
        StorageGuard::default()
    }

    /// Records a change. A sysfs value changed twice keeps the first original.
    pub fn push(&mut self, step: Undo) {
        if let Undo::Sysfs { path, .. } = &step {
            let seen = self
                .undo
                .iter()
                .any(|u| matches!(u, Undo::Sysfs { path: p, .. } if p == path));
            if seen {
                return;
            }
        }
        self.undo.push(step);
    }

    /// The commands that would undo what is applied, in order.
    pub fn pending(&self) -> Vec<String> {
        self.undo.iter().rev().map(Undo::command).collect()
    }

    /// Undoes everything with `f`, last change first; returns what failed (and is forgotten).
    pub fn restore_with(&mut self, mut f: impl FnMut(&Undo) -> Result<(), String>) -> Vec<String> {
        let mut failed = Vec::new();
        while let Some(step) = self.undo.pop() {
            if let Err(e) = f(&step) {
                failed.push(format!("{e} (undo by hand: {})", step.command()));
            }
        }
        failed
    }

    /// Undoes everything on this host.
    pub fn restore(&mut self) -> Vec<String> {
        self.restore_with(Undo::run)
    }

    /// Applies `s`: a loop device on a new `image` (or the scratch device), a new filesystem
    /// mounted at `dir`, then scheduler and read-ahead. On error what was done stays recorded
    /// for [`restore`](Self::restore).
    pub fn apply(
        &mut self,
        s: &Storage,
        image: &Path,
        dir: &Path,
    ) -> Result<Mounted, StorageError> {
        self.apply_steps(s, image, dir)
            .map_err(StorageError::Failed)
    }

    /// [`apply`](Self::apply), its failure in words.
    fn apply_steps(&mut self, s: &Storage, image: &Path, dir: &Path) -> Result<Mounted, String> {
        let device = match s.block_device() {
            Some(d) => d.to_path_buf(),
            None => self.attach(s, image)?,
        };
        let dev = device.to_string_lossy().into_owned();
        let mut mkfs: Vec<&str> = vec!["-q", if s.fs == "xfs" { "-f" } else { "-F" }];
        mkfs.extend(s.mkfs_options.as_deref().unwrap_or("").split_whitespace());
        mkfs.push(&dev);
        host::run(&format!("mkfs.{}", s.fs), &mkfs).map_err(|e| format!("storage: {e}"))?;
        let entry = self.mount(s, &dev, dir)?;
        let name = host::kernel_name(&device)
            .ok_or_else(|| format!("storage: {dev} is not a block device"))?;
        let queue = host::queue_dir(&name);
        if let Some(v) = &s.scheduler {
            self.set_sysfs(&queue.join("scheduler"), v, "scheduler", &name)?;
        }
        if let Some(kb) = s.read_ahead_kb {
            self.set_sysfs(
                &queue.join("read_ahead_kb"),
                &kb.to_string(),
                "read_ahead_kb",
                &name,
            )?;
        }
        let mut facts = BTreeMap::from([
            ("fs".to_string(), s.fs.clone()),
            ("mount_options".into(), entry.options),
            (
                "device".into(),
                if s.block_device().is_some() {
                    dev
                } else {
                    "loop".into()
                },
            ),
        ]);
        for key in ["scheduler", "read_ahead_kb"] {
            facts.insert(
                key.into(),
                host::read_sysfs(&queue.join(key)).unwrap_or_default(),
            );
        }
        if s.block_device().is_none() {
            if let Some(b) = host::device_of_path(image) {
                let sch = host::read_sysfs(&host::queue_dir(&b).join("scheduler"));
                facts.insert("backing_scheduler".into(), sch.unwrap_or_default());
                facts.insert("backing_device".into(), host::disk_of(&b));
            }
            let dio = queue.parent().map(|d| d.join("loop").join("dio"));
            let dio = dio
                .and_then(|p| host::read_sysfs(&p).ok())
                .unwrap_or_default();
            let on = if dio == "1" { "on" } else { "off" };
            facts.insert("loop_direct_io".into(), on.into());
        }
        Ok(Mounted {
            dir: dir.to_path_buf(),
            device,
            facts,
        })
    }

    /// Makes the sparse image and attaches a free loop device to it.
    fn attach(&mut self, s: &Storage, image: &Path) -> Result<PathBuf, String> {
        let ctx = |e: std::io::Error| format!("storage: creating {}: {e}", image.display());
        if let Some(parent) = image.parent() {
            std::fs::create_dir_all(parent).map_err(ctx)?;
        }
        let file = std::fs::File::create(image).map_err(ctx)?;
        self.push(Undo::RemoveImage(image.to_path_buf()));
        super::stale::claim(image).map_err(ctx)?;
        let size = s.size_bytes().map_err(|e| e.to_string())?;
        file.set_len(size).map_err(ctx)?;
        let img = image.to_string_lossy();
        // Direct I/O to the image: the loop device's reads and writes reach the disk instead of
        // stopping in the host's page cache of the image file (falls back when unsupported;
        // the fact `loop_direct_io` says which).
        let dev = host::run("losetup", &["--find", "--show", "--direct-io=on", &img])
            .map_err(|e| format!("storage: {e}"))?;
        let device = PathBuf::from(dev);
        self.push(Undo::Detach {
            device: device.clone(),
            image: image.to_path_buf(),
        });
        Ok(device)
    }

    /// Mounts `dev` at `dir` and checks that the options that must show did.
    fn mount(&mut self, s: &Storage, dev: &str, dir: &Path) -> Result<MountEntry, String> {
        self.push(Undo::RemoveDir(dir.to_path_buf()));
        let wanted = s.mount_option_list();
        let d = dir.to_string_lossy();
        let mut args = vec!["-t", s.fs.as_str()];
        let joined = wanted.join(",");
        if !wanted.is_empty() {
            args.extend(["-o", joined.as_str()]);
        }
        args.extend([dev, &d]);
        if let Err(e) = host::run("mount", &args) {
            let what = if wanted.is_empty() {
                String::new()
            } else {
                format!(" with '{joined}'")
            };
            return Err(format!(
                "storage: mounting {}{what} not supported here: {e}",
                s.fs
            ));
        }
        self.push(Undo::Unmount(dir.to_path_buf()));
        let entry = host::mount_at(dir).ok_or_else(|| format!("storage: {d} is not mounted"))?;
        let shown: Vec<&str> = entry.options.split(',').collect();
        if let Some(o) = wanted
            .iter()
            .find(|o| MUST_SHOW.contains(o) && !shown.contains(o))
        {
            return Err(format!(
                "storage: mount option '{o}' not supported here: {} ignored it (mounted {})",
                s.fs, entry.options
            ));
        }
        Ok(entry)
    }

    /// Sets a queue attribute of device `name`, remembering its first value.
    fn set_sysfs(
        &mut self,
        path: &Path,
        value: &str,
        what: &str,
        name: &str,
    ) -> Result<(), String> {
        let original = host::read_sysfs(path).map_err(|e| format!("storage: {what}: {e}"))?;
        self.push(Undo::Sysfs {
            path: path.to_path_buf(),
            value: original,
        });
        host::write_sysfs(path, value).map_err(|e| {
            let offered = std::fs::read_to_string(path).unwrap_or_default();
            format!(
                "storage: {what} '{value}' not supported here by {name} (offers: {}): {e}",
                offered.trim()
            )
        })
    }
}

impl Drop for StorageGuard {
    fn drop(&mut self) {
        self.restore();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restore_undoes_in_reverse_and_keeps_first_originals() {
        let mut g = StorageGuard::new();
        g.push(Undo::RemoveImage("/l/storage/a.img".into()));
        g.push(Undo::Detach {
            device: "/dev/loop3".into(),
            image: "/l/storage/a.img".into(),
        });
        g.push(Undo::Unmount("/m".into()));
        let sysfs = |v: &str| Undo::Sysfs {
            path: "/sys/block/loop3/queue/read_ahead_kb".into(),
            value: v.into(),
        };
        g.push(sysfs("128"));
        g.push(sysfs("256"));
        assert_eq!(
            g.pending(),
            [
                "echo 128 > /sys/block/loop3/queue/read_ahead_kb",
                "umount /m",
                "losetup -d /dev/loop3",
                "rm -f /l/storage/a.img /l/storage/a.img.owner"
            ]
        );
        let mut done = Vec::new();
        let failed = g.restore_with(|u| {
            done.push(u.clone());
            match u {
                Undo::Unmount(_) => Err("busy".into()),
                _ => Ok(()),
            }
        });
        assert_eq!(done.len(), 4);
        assert_eq!(done[0], sysfs("128"));
        assert!(matches!(done[3], Undo::RemoveImage(_)));
        assert_eq!(failed, ["busy (undo by hand: umount /m)"]);
        assert!(g.pending().is_empty());
        assert!(g.restore_with(|_| Err("never called".into())).is_empty());
    }
}
