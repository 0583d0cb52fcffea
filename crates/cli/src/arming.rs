//! A capture that is arming: from its start until its slow log is on (after its baseline of
//! the server's statements), connections opened to the server are not logged. `capture` marks
//! the time in the lab directory (`LAB/capture-arming/ENDPOINT`, holding its pid), and `run`
//! on the same server says so, instead of measuring a workload the capture will miss.

use qpslab_core::Endpoint;
use std::path::{Path, PathBuf};

/// The marker of a capture of `endpoint` that is arming.
fn marker(lab: &Path, endpoint: &Endpoint) -> PathBuf {
    let name: String = endpoint
        .to_string()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    lab.join("capture-arming").join(name)
}

/// A capture arming, marked until it is dropped (the log is on, or the capture ended).
pub struct Arming(PathBuf);

impl Arming {
    /// Marks a capture of `endpoint` as arming; why not, where the mark cannot be written (it
    /// only serves a warning, which the caller prints).
    pub fn begin(lab: &Path, endpoint: &Endpoint) -> Result<Arming, String> {
        let path = marker(lab, endpoint);
        let failed = |e: std::io::Error| format!("{}: {e}", path.display());
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(failed)?;
        }
        std::fs::write(&path, std::process::id().to_string()).map_err(failed)?;
        Ok(Arming(path))
    }
}

impl Arming {
    /// [`Arming::begin`], saying on standard error why not where the mark cannot be written.
    pub fn begin_or_warn(lab: &Path, endpoint: &Endpoint) -> Option<Arming> {
        Arming::begin(lab, endpoint)
            .map_err(|e| {
                eprintln!(
                    "warning: a run on this server while the capture arms will not be told so: {e}"
                )
            })
            .ok()
    }
}

impl Drop for Arming {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The pid of a capture of `endpoint` that is arming now (its process alive), if any.
pub fn capture_arming(lab: &Path, endpoint: &Endpoint) -> Option<u32> {
    let text = std::fs::read_to_string(marker(lab, endpoint)).ok()?;
    let pid: u32 = text.trim().parse().ok()?;
    Path::new(&format!("/proc/{pid}")).exists().then_some(pid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mark_lives_while_the_capture_arms() {
        let lab = tempfile::tempdir().unwrap();
        let e = Endpoint::Unix {
            path: "/run/mysqld/mysqld.sock".into(),
        };
        assert_eq!(capture_arming(lab.path(), &e), None);
        let arming = Arming::begin(lab.path(), &e).unwrap();
        assert_eq!(capture_arming(lab.path(), &e), Some(std::process::id()));
        let other = Endpoint::Tcp {
            host: "db1".into(),
            port: 3306,
        };
        assert_eq!(capture_arming(lab.path(), &other), None);
        drop(arming);
        assert_eq!(capture_arming(lab.path(), &e), None);
    }
}
