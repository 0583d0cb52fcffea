//! Why a sandbox did not start, in the server's own words: its `[ERROR]` lines (and what it
//! printed before its log was open) first, then what we observed, then the log's tail.

use crate::error::Error;
use crate::process::NotReady;
use std::time::Duration;

/// Lines of error log carried by start errors.
const TAIL_LINES: usize = 20;

/// The start error: an unknown setting is the user's; otherwise the server's own `[ERROR]`
/// lines come first, then what we saw, then the log's tail.
pub(crate) fn start_error(name: &str, why: NotReady, timeout: Duration, log: &str) -> Error {
    let all: Vec<&str> = log.lines().collect();
    let log_tail = all[all.len().saturating_sub(TAIL_LINES)..].join("\n");
    let unknown = all.iter().find_map(|l| {
        ["unknown variable", "unknown option"]
            .iter()
            .find_map(|pat| l.find(pat).map(|i| l[i..].trim().to_string()))
    });
    if let Some(detail) = unknown {
        return Error::UnknownSetting {
            name: name.into(),
            detail,
            log_tail,
        };
    }
    let what = match why {
        NotReady::Exited(s) => s,
        NotReady::Timeout => format!("no connection accepted within {} s", timeout.as_secs()),
    };
    let mut errors: Vec<&str> = Vec::new();
    for line in all.iter().filter_map(|l| server_error(l)) {
        // "Aborting" and friends only repeat that something failed.
        if !errors.contains(&line) && !line.ends_with("Aborting") && errors.len() < 3 {
            errors.push(line);
        }
    }
    let reason = if errors.is_empty() {
        what
    } else {
        format!("{} ({what})", errors.join("; "))
    };
    Error::StartFailed {
        name: name.into(),
        reason,
        log_tail,
    }
}

/// The server's own complaint in a log line: an `[ERROR]` entry, or what it printed to stderr
/// before its log was open (`/usr/sbin/mariadbd: Character set 'x' is not ...`).
fn server_error(line: &str) -> Option<&str> {
    if let Some(i) = line.find("[ERROR]") {
        return Some(line[i..].trim());
    }
    let untagged = !line.contains("[Note]") && !line.contains("[Warning]");
    ["mariadbd: ", "mysqld: "]
        .iter()
        .find_map(|p| line.find(p).filter(|_| untagged).map(|_| line.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use qpslab_core::fault::Blame;

    #[test]
    fn unknown_variable_becomes_a_user_error() {
        let tail = "2026-01-01 0 [ERROR] /usr/sbin/mariadbd: unknown variable 'no_such=1'\n2026 [ERROR] Aborting";
        let e = start_error(
            "s",
            NotReady::Exited("exit 7".into()),
            Duration::from_secs(1),
            tail,
        );
        assert!(e.is_user_error());
        assert!(
            e.to_string().contains("unknown variable 'no_such=1'"),
            "{e}"
        );
        let e = start_error("s", NotReady::Timeout, Duration::from_secs(5), "boom");
        assert!(!e.is_user_error());
        assert!(
            e.to_string().contains("within 5 s") && e.to_string().contains("boom"),
            "{e}"
        );
        // The server's own error lines come first, even when the tail has moved past them.
        let mut log = String::from("x [ERROR] Can't open shared library 'y.so'\n");
        log.push_str(&"2026 [Note] filler\n".repeat(40));
        log.push_str("2026 [ERROR] Aborting\n");
        let e = start_error("s", NotReady::Exited("exit 1".into()), Duration::ZERO, &log);
        let msg = e.to_string();
        assert!(
            msg.starts_with("sandbox 's' failed to start: [ERROR] Can't open shared library"),
            "{msg}"
        );
        assert!(
            msg.contains("(exit 1)") && !msg.contains("[ERROR] Aborting ("),
            "{msg}"
        );
        let log = "2026 [Warning] Changed limits\n/usr/sbin/mariadbd: Character set 'x' is not a compiled character set\n2026 [ERROR] Aborting\n";
        let e = start_error("s", NotReady::Exited("exit 1".into()), Duration::ZERO, log);
        assert!(
            e.to_string()
                .starts_with("sandbox 's' failed to start: /usr/sbin/mariadbd: Character set 'x'"),
            "{e}"
        );
    }
}
