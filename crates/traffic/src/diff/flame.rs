//! The flame graphs of `diff --profile DIR`, drawn from the profiles [`super::profile`]
//! recorded: each side's (`a.svg`, `b.svg`) and the differential one of B against A
//! (`diff.svg` beside them; red where B spends more of its samples). A graph that cannot be
//! drawn is said so in its [`Graph`], not an error: the folded stacks are kept either way.

use qpslab_core::diff::SideProfile;
use qpslab_probe::profile::flame::{self, FlameError};
use std::path::{Path, PathBuf};

/// One flame graph of a diff: where it is, its title, and whether it could be drawn.
#[derive(Debug)]
pub struct Graph {
    /// The SVG file.
    pub svg: PathBuf,
    /// What it shows (`A: SIDE`, `B: SIDE`, `B against A ...`).
    pub title: String,
    /// `Ok` once written; why not otherwise.
    pub drawn: Result<(), FlameError>,
}

/// Draws the flame graphs of both sides and the differential one, in that order; none
/// unless there are two profiles.
pub fn draw_sides(profiles: &[SideProfile]) -> Vec<Graph> {
    let [a, b] = profiles else {
        return Vec::new();
    };
    let differential = a.files.svg.with_file_name("diff.svg");
    let graphs: [(&Path, Vec<&Path>, String); 3] = [
        (
            &a.files.svg,
            vec![a.files.folded.as_path()],
            format!("A: {}", a.side),
        ),
        (
            &b.files.svg,
            vec![b.files.folded.as_path()],
            format!("B: {}", b.side),
        ),
        (
            &differential,
            vec![a.files.folded.as_path(), b.files.folded.as_path()],
            "B against A (red: B spends more of its samples there)".to_string(),
        ),
    ];
    graphs
        .into_iter()
        .map(|(svg, folded, title)| {
            let subtitle = format!("server on-CPU · {}", a.files.event_reason);
            let drawn = flame::draw(svg, &folded, &title, &subtitle);
            Graph {
                svg: svg.to_path_buf(),
                title,
                drawn,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use qpslab_core::telemetry::ProfileFiles;

    fn side(dir: &Path, name: &str, folded: &str) -> SideProfile {
        let path = dir.join(format!("{name}.folded"));
        std::fs::write(&path, folded).unwrap();
        SideProfile {
            side: format!("side {name}"),
            files: ProfileFiles {
                folded: path,
                svg: dir.join(format!("{name}.svg")),
                event_reason: "cpu-clock: no counters".into(),
                ..ProfileFiles::default()
            },
            ..SideProfile::default()
        }
    }

    #[test]
    fn both_sides_and_their_difference_are_drawn_beside_the_stacks() {
        let dir = std::env::temp_dir().join(format!("qpslab-diff-flame-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let a = side(
            &dir,
            "a",
            "mysqld;do_command;mysql_parse 60\nmysqld;srv_master 40\n",
        );
        let b = side(&dir, "b", "mysqld;do_command;mysql_parse 20\n");
        let graphs = draw_sides(&[a, b]);
        let titles: Vec<&str> = graphs.iter().map(|g| g.title.as_str()).collect();
        assert_eq!(
            titles,
            [
                "A: side a",
                "B: side b",
                "B against A (red: B spends more of its samples there)"
            ]
        );
        assert!(graphs.iter().all(|g| g.drawn.is_ok() && g.svg.exists()));
        assert_eq!(graphs[2].svg, dir.join("diff.svg"));
        assert!(draw_sides(&[]).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
