//! OS-level toggles of a factorial study, applied safely and reversibly.
//!
//! Only transparent huge pages for now: `/sys/kernel/mm/transparent_hugepage/enabled` is a
//! host-wide switch that takes effect for memory mapped afterwards, so it is set right before a
//! setup's server starts. The value found first is restored when the guard is dropped (end of
//! the study, an error, or Ctrl-C unwinding); a `kill -9` of qpslab cannot restore it, so the
//! original value is recorded in the study's environment and printed at start. Without root or
//! a writable sysfs, the toggle is reported as not supported here, never half applied.

use std::path::PathBuf;

const THP: &str = "/sys/kernel/mm/transparent_hugepage/enabled";

/// Restores what it changed when dropped.
#[derive(Debug, Default)]
pub struct OsGuard {
    original_thp: Option<String>,
    path: Option<PathBuf>,
}

/// The selected word of a sysfs choice list: `always [madvise] never` → `madvise`.
pub fn selected(text: &str) -> Option<String> {
    text.split_whitespace()
        .find(|w| w.starts_with('['))
        .map(|w| w.trim_matches(|c| c == '[' || c == ']').to_string())
}

/// Why transparent huge pages cannot be toggled here (the user's to fix: root, a writable
/// `/sys`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("os.thp not supported here: {0}")]
pub struct ThpUnsupported(pub String);

/// Why THP could not be set: this machine has no THP setting to change, or writing it failed
/// (not root, a read-only /sys). Both say the study's `os.thp` cannot run here.
#[derive(Debug, thiserror::Error)]
pub enum ThpError {
    /// No THP setting on this machine.
    #[error(transparent)]
    Unsupported(#[from] ThpUnsupported),
    /// Writing the setting failed.
    #[error("os.thp not supported here: writing {THP}: {0}")]
    Write(#[source] std::io::Error),
}

/// A study's environment records the reason as its message.
impl serde::Serialize for ThpUnsupported {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Whether THP can be toggled here (its current value); the error says why not.
pub fn thp_support() -> Result<String, ThpUnsupported> {
    let no = |why: String| ThpUnsupported(why);
    let current =
        std::fs::read_to_string(THP).map_err(|e| no(format!("cannot read {THP} ({e})")))?;
    let meta = std::fs::metadata(THP).map_err(|e| no(e.to_string()))?;
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 || meta.permissions().readonly() {
        return Err(no(
            "changing transparent huge pages needs root and a writable /sys".into(),
        ));
    }
    selected(&current).ok_or_else(|| no(format!("{THP} reads '{}'", current.trim())))
}

impl OsGuard {
    /// A guard that has changed nothing yet.
    pub fn new() -> OsGuard {
        OsGuard::default()
    }

    /// Sets THP to `value` (`always`, `madvise`, `never`), remembering the first value seen.
    pub fn set_thp(&mut self, value: &str) -> Result<(), ThpError> {
        let current = thp_support()?;
        if self.original_thp.is_none() {
            self.original_thp = Some(current.clone());
            self.path = Some(PathBuf::from(THP));
        }
        if current != value {
            std::fs::write(THP, value).map_err(ThpError::Write)?;
        }
        Ok(())
    }

    /// The THP value found before the first change, if any change was made.
    pub fn original_thp(&self) -> Option<&str> {
        self.original_thp.as_deref()
    }

    /// Puts back what was changed.
    pub fn restore(&mut self) {
        if let (Some(v), Some(p)) = (self.original_thp.take(), self.path.take()) {
            let _ = std::fs::write(p, v);
        }
    }
}

impl Drop for OsGuard {
    fn drop(&mut self) {
        self.restore();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selected_word() {
        assert_eq!(
            selected("always [madvise] never\n").as_deref(),
            Some("madvise")
        );
        assert_eq!(selected("none"), None);
    }
}
