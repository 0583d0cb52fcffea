//! Puts the git commit and the build date into `qpslab --version`
//! (`qpslab 0.1.0 (abc1234 2026-11-26)`), as `QPSLAB_LONG_VERSION`. Outside a git checkout
//! (a source tarball) the commit is `unknown`; `SOURCE_DATE_EPOCH` fixes the date for
//! reproducible builds.

use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

fn main() {
    let commit = git(&["rev-parse", "--short", "HEAD"]).unwrap_or_else(|| "unknown".into());
    let secs = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .or_else(|| Some(SystemTime::now().duration_since(UNIX_EPOCH).ok()?.as_secs()));
    let date = secs.map_or_else(|| "unknown".into(), civil_date);
    println!(
        "cargo:rustc-env=QPSLAB_LONG_VERSION={} ({commit} {date})",
        env!("CARGO_PKG_VERSION")
    );
    println!("cargo:rerun-if-env-changed=SOURCE_DATE_EPOCH");
    // A new commit or a checkout changes HEAD or the branch it points to: rebuild then only.
    if let (Some(dir), Some(common)) = (
        git(&["rev-parse", "--absolute-git-dir"]),
        git(&["rev-parse", "--path-format=absolute", "--git-common-dir"]),
    ) {
        println!("cargo:rerun-if-changed={dir}/HEAD");
        if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
            println!("cargo:rerun-if-changed={common}/{branch}");
            println!("cargo:rerun-if-changed={common}/packed-refs");
        }
    }
}

/// `git ARGS` in this crate's directory, its trimmed output when it succeeds.
fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !text.is_empty()).then_some(text)
}

/// `YYYY-MM-DD` (UTC) of a Unix time (Howard Hinnant's days-to-civil algorithm).
fn civil_date(secs: u64) -> String {
    let days = (secs / 86_400) as i64 + 719_468;
    let era = days.div_euclid(146_097);
    let doe = days - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}
