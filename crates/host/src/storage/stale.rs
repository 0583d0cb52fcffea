//! Mounts and loop devices left by a qpslab that was killed (`kill -9`) before it could undo
//! them, found by their image: a `qpslab-*.img` file in the lab's `storage/` directory or in an
//! `image_dir` of the spec. Nothing else is ever touched.

use super::host::{self, unmount};
use std::path::{Path, PathBuf};

/// The image of setup `sandbox` in `dir`.
pub fn image_path(dir: &Path, sandbox: &str) -> PathBuf {
    dir.join(format!("qpslab-{sandbox}.img"))
}

/// The file next to an image naming the qpslab process that uses it.
pub fn owner_path(image: &Path) -> PathBuf {
    let mut p = image.as_os_str().to_owned();
    p.push(".owner");
    PathBuf::from(p)
}

/// Records this process as the user of `image`.
pub fn claim(image: &Path) -> std::io::Result<()> {
    let me = qpslab_sandbox::state::Owner::me();
    std::fs::write(
        owner_path(image),
        serde_json::to_vec(&me).unwrap_or_default(),
    )
}

/// Whether a live qpslab (another study in the same lab) still uses `image`.
fn in_use(image: &Path) -> bool {
    std::fs::read(owner_path(image))
        .ok()
        .and_then(|b| serde_json::from_slice::<qpslab_sandbox::state::Owner>(&b).ok())
        .is_some_and(|o| o.alive())
}

/// Whether `file` is an image qpslab made in one of `dirs`.
fn ours(file: &Path, dirs: &[PathBuf]) -> bool {
    let named = file
        .file_name()
        .map(|n| n.to_string_lossy())
        .is_some_and(|n| n.starts_with("qpslab-") && n.ends_with(".img"));
    named && file.parent().is_some_and(|p| dirs.iter().any(|d| d == p))
}

/// Unmounts, detaches and deletes what a killed qpslab left on images in `dirs`; one line per
/// thing cleaned (or that could not be).
pub fn clean_stale(dirs: &[PathBuf]) -> Vec<String> {
    let mut said = Vec::new();
    for (device, file) in host::loops() {
        if !ours(&file, dirs) || in_use(&file) {
            continue;
        }
        let name = host::kernel_name(&device);
        for m in host::mounts() {
            if name.is_some() && host::kernel_name(Path::new(&m.source)) == name {
                match unmount(&m.target) {
                    Ok(()) => {
                        let _ = std::fs::remove_dir(&m.target);
                        said.push(format!("unmounted stale {}", m.target.display()));
                    }
                    Err(e) => said.push(format!("stale mount {}: {e}", m.target.display())),
                }
            }
        }
        match host::run("losetup", &["-d", &device.to_string_lossy()]) {
            Ok(_) => said.push(format!("detached stale {}", device.display())),
            Err(e) => said.push(format!("stale loop device: {e}")),
        }
    }
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for file in entries.flatten().map(|e| e.path()) {
            if ours(&file, dirs) && !in_use(&file) && std::fs::remove_file(&file).is_ok() {
                let _ = std::fs::remove_file(owner_path(&file));
                said.push(format!("removed stale {}", file.display()));
            }
        }
    }
    said
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_our_images_in_our_dirs() {
        let dirs = [PathBuf::from("/l/storage")];
        assert!(ours(&image_path(&dirs[0], "s1-x"), &dirs));
        assert!(!ours(Path::new("/l/storage/other.img"), &dirs));
        assert!(!ours(Path::new("/l/storage/sub/qpslab-a.img"), &dirs));
        assert!(!ours(Path::new("/elsewhere/qpslab-a.img"), &dirs));
    }
}
