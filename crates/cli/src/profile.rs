//! `--profile DIR`'s part in the CLI: the user error when the server's process is not known
//! (what is checked before anything starts is `qpslab_lab::request::profile`), and for
//! `diff --profile` the figures of the report from the flame graphs of both sides and their
//! difference.
//!
//! Flame graphs are drawn where their profiles are recorded: a run's by the sampler
//! (`qpslab_probe::profile`), which the lab starts and stops around each measured phase and
//! which draws the phase's graph as it stops (`qpslab_probe::profile::flame`); a diff's by
//! `qpslab_traffic::diff::flame` after its profiling pass. The CLI only says where they are.

use crate::error::user;
use qpslab_core::diff::SideProfile;
use qpslab_report::diff::Figure;
use qpslab_traffic::diff::flame::draw_sides;
use std::path::Path;

/// The user error for `--profile DIR` when the process of the server `what` names is not known.
pub fn unknown_pid(dir: &Path, what: &str) -> anyhow::Error {
    user(qpslab_lab::request::profile::unknown_pid(dir, what))
}

/// `diff --profile`: the flame graphs of both sides and the differential one (B against A,
/// beside them as `diff.svg`, drawn by `qpslab_traffic::diff::flame`), as figures of the report
/// at `report` (their paths relative to it). A graph that could not be drawn is a warning and
/// no figure.
pub fn figures(profiles: &[SideProfile], report: Option<&Path>) -> Vec<Figure> {
    let mut figures = Vec::new();
    for graph in draw_sides(profiles) {
        match graph.drawn {
            Ok(()) => {
                eprintln!("diff: flame graph {}", graph.svg.display());
                figures.push(Figure {
                    title: graph.title,
                    path: relative_to_report(&graph.svg, report),
                });
            }
            Err(e) => eprintln!("warning: no flame graph {} ({e})", graph.svg.display()),
        }
    }
    figures
}

/// `path` as the report at `report` (standard output: the current directory) reaches it.
fn relative_to_report(path: &Path, report: Option<&Path>) -> String {
    let base = report
        .and_then(Path::parent)
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let (Ok(target), Ok(base)) = (std::fs::canonicalize(path), std::fs::canonicalize(base)) else {
        return path.display().to_string();
    };
    let common = target
        .components()
        .zip(base.components())
        .take_while(|(a, b)| a == b)
        .count();
    let ups = base.components().count() - common;
    let mut rel = std::path::PathBuf::new();
    for _ in 0..ups {
        rel.push("..");
    }
    rel.extend(target.components().skip(common));
    rel.display().to_string()
}

#[cfg(test)]
mod tests {
    use super::relative_to_report;

    #[test]
    fn figures_are_found_from_the_report() {
        let dir = tempfile::tempdir().unwrap();
        let prof = dir.path().join("prof");
        std::fs::create_dir_all(&prof).unwrap();
        let svg = prof.join("a.svg");
        std::fs::write(&svg, "<svg/>").unwrap();
        let report = dir.path().join("out").join("r.html");
        std::fs::create_dir_all(report.parent().unwrap()).unwrap();
        assert_eq!(relative_to_report(&svg, Some(&report)), "../prof/a.svg");
        assert_eq!(
            relative_to_report(&svg, Some(&dir.path().join("r.html"))),
            "prof/a.svg"
        );
    }
}
