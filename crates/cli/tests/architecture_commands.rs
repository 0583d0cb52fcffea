//! The CLI's command modules stay small: each subcommand (or a small group of them) is a file of
//! its own under `crates/cli/src/cmd/`, as `args/` and `render/` are organised, and no file
//! there is over 300 lines. A command only parses, calls the libraries and prints, so one that
//! grows past that is doing a library's work or holds several subcommands.

use std::path::{Path, PathBuf};

/// The most lines a file under `cmd/` may have.
const MAX_LINES: usize = 300;

/// Every `.rs` file below `dir`, sorted.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
    {
        let p = e.path();
        if p.is_dir() {
            out.extend(sources(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out.sort();
    out
}

#[test]
fn no_command_file_is_over_300_lines() {
    let cmd = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/cmd");
    let files = sources(&cmd);
    assert!(
        files.len() > 10,
        "only {} files under {}",
        files.len(),
        cmd.display()
    );
    let offenders: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let lines = std::fs::read_to_string(f).unwrap().lines().count();
            (lines > MAX_LINES)
                .then(|| format!("{}: {lines} lines", f.strip_prefix(&cmd).unwrap().display()))
        })
        .collect();
    assert!(
        offenders.is_empty(),
        "files under crates/cli/src/cmd/ over {MAX_LINES} lines (split them along their \
         subcommands):\n  {}",
        offenders.join("\n  ")
    );
}
