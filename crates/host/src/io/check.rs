//! What is checked before fio runs: fio itself, the directory, and room for the files.

use super::job::file_name;
use super::IoError;
use qpslab_core::fileio::FileIoOptions;
use std::path::Path;
use std::process::Command;

/// fio's version (`fio-3.33`), or [`IoError::FioMissing`].
pub fn fio_version() -> Result<String, IoError> {
    let out = Command::new("fio")
        .arg("--version")
        .output()
        .map_err(|_| IoError::FioMissing)?;
    let v = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if out.status.success() && v.starts_with("fio") {
        Ok(v)
    } else {
        Err(IoError::FioMissing)
    }
}

/// Checks that `dir` is a writable directory with room for the files of `o` (test files
/// already there count as room).
pub fn check_dir(dir: &Path, o: &FileIoOptions) -> Result<(), IoError> {
    let user = |m: String| IoError::User(format!("--dir {}: {m}", dir.display()));
    if !dir.is_dir() {
        return Err(user("not a directory".into()));
    }
    let probe = dir.join(format!(".qpslab-io-probe-{}", std::process::id()));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .map_err(|e| user(format!("not writable ({e})")))?;
    let _ = std::fs::remove_file(&probe);
    let have: u64 = (0..o.num)
        .filter_map(|i| std::fs::metadata(dir.join(file_name(i))).ok())
        .map(|m| m.len().min(o.file_size()))
        .sum();
    let need = (o.file_size() * u64::from(o.num)).saturating_sub(have);
    let free = free_bytes(dir).map_err(|e| user(format!("cannot read its free space ({e})")))?;
    if free < need {
        return Err(user(format!(
            "{} MiB free, the files need {} MiB more (lower --file-total-size)",
            free >> 20,
            need >> 20
        )));
    }
    Ok(())
}

/// Bytes an unprivileged user may still write on the filesystem of `dir`.
fn free_bytes(dir: &Path) -> std::io::Result<u64> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes())?;
    // SAFETY: statvfs writes into the zeroed struct it is given; `path` is NUL-terminated.
    let st = unsafe {
        let mut st: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(path.as_ptr(), &mut st) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        st
    };
    Ok(st.f_bavail.saturating_mul(st.f_frsize))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_is_checked_for_kind_and_room() {
        let d = tempfile::tempdir().unwrap();
        let o = FileIoOptions {
            num: 2,
            total_size: 1 << 20,
            ..Default::default()
        };
        check_dir(d.path(), &o).unwrap();
        let file = d.path().join("f");
        std::fs::write(&file, "x").unwrap();
        assert!(
            matches!(check_dir(&file, &o), Err(IoError::User(m)) if m.contains("not a directory"))
        );
        let huge = FileIoOptions {
            total_size: 1 << 60,
            ..o
        };
        assert!(matches!(check_dir(d.path(), &huge), Err(IoError::User(m)) if m.contains("free")));
        assert!(
            std::fs::read_dir(d.path()).unwrap().count() == 1,
            "the probe file is removed"
        );
    }
}
