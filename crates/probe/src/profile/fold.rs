//! `perf script` output folded into stacks with inferno's perf collapser.

use super::{io_error, ProfileError};
use inferno::collapse::perf::Folder;
use inferno::collapse::Collapse;
use std::io::BufReader;
use std::path::Path;
use std::process::{Command, Stdio};

/// The stacks of `data` (a perf.data file), folded: one `frame;frame;frame count` line each.
pub(super) fn perf_script_folded(data: &Path) -> Result<String, ProfileError> {
    let mut child = Command::new("perf")
        .args(["script", "-i"])
        .arg(data)
        // Without the `period` field each stack counts once per sample (the collapser would
        // otherwise weight it by the event's period: nanoseconds or cycles).
        .args(["-F", "comm,tid,time,event,ip,sym,dso"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| ProfileError::Perf(format!("cannot start perf script: {e}")))?;
    let mut folded = Vec::new();
    let collapsed = match child.stdout.take() {
        Some(out) => Folder::default().collapse(BufReader::new(out), &mut folded),
        None => Ok(()),
    };
    let status = child.wait().map_err(io_error(data))?;
    collapsed.map_err(|e| ProfileError::Perf(format!("folding perf script's stacks: {e}")))?;
    if !status.success() {
        return Err(ProfileError::Perf(format!(
            "perf script -i {} failed ({status})",
            data.display()
        )));
    }
    String::from_utf8(folded)
        .map_err(|e| ProfileError::Perf(format!("folded stacks are not UTF-8: {e}")))
}

/// The samples folded lines add up to (the count ends each line).
pub(crate) fn count_samples(folded: &str) -> u64 {
    folded
        .lines()
        .filter_map(|l| l.rsplit_once(' '))
        .filter_map(|(_, n)| n.trim().parse::<u64>().ok())
        .sum()
}

/// Writes `bytes` to `path` through a temporary file beside it.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), ProfileError> {
    qpslab_core::files::write_atomically(path, bytes).map_err(io_error(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_are_the_sum_of_the_counts() {
        let folded = "mariadbd;do_command;dispatch_command 7\nmariadbd;a b;c 3\n\n";
        assert_eq!(count_samples(folded), 10);
        assert_eq!(count_samples(""), 0);
    }

    #[test]
    fn perf_script_lines_fold_into_stacks() {
        let script = "mariadbd 21962 29574.700453: cpu-clock:\n\
            \t  55 do_select (/usr/sbin/mariadbd)\n\
            \t  66 dispatch_command (/usr/sbin/mariadbd)\n\n\
            mariadbd 21962 29574.702453: cpu-clock:\n\
            \t  55 do_select (/usr/sbin/mariadbd)\n\
            \t  66 dispatch_command (/usr/sbin/mariadbd)\n\n";
        let mut out = Vec::new();
        Folder::default()
            .collapse(script.as_bytes(), &mut out)
            .unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.trim(), "mariadbd;dispatch_command;do_select 2");
    }
}
