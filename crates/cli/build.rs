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

/// `YYYY-MM-DD` (UTC) of a Unix time.
fn civil_date(secs: u64) -> String {
    i64::try_from(secs)
        .ok()
        .and_then(|s| jiff::Timestamp::from_second(s).ok())
        .map_or_else(|| "unknown".into(), |t| t.strftime("%Y-%m-%d").to_string())
}
