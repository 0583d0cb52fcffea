//! Flame graphs of folded stacks (`frame;frame;frame count` lines, as [`super::Recording`]
//! writes them), drawn with inferno: one profile's ([`flamegraph()`]) and the difference of two
//! ([`differential`]: inferno's differential folding, then the same drawing; a frame is red
//! where the second profile spends more of its samples there, blue where less). Pure
//! functions over text; [`write_svg`] writes one atomically, and [`draw`] reads folded files
//! and writes the graph of one or the difference of two. The profile drawn where it is
//! recorded ([`super::Profile::draw`]) is the one a run's phase keeps.
//!
//! ```no_run
//! # fn demo(a: &str, b: &str) -> Result<(), qpslab_probe::profile::flame::FlameError> {
//! use qpslab_probe::profile::flame::{differential, flamegraph, write_svg};
//! let svg = flamegraph(a, "server CPU · side A", Some("cpu-clock, 499 Hz"))?;
//! write_svg(std::path::Path::new("a.svg"), &svg)?;
//! let diff = differential(a, b, "B against A", None)?;
//! write_svg(std::path::Path::new("diff.svg"), &diff)?;
//! # Ok(()) }
//! ```

use inferno::flamegraph::{self, Options};
use std::path::{Path, PathBuf};

/// Why a flame graph was not drawn; the folded stacks are kept either way.
#[derive(Debug, thiserror::Error)]
pub enum FlameError {
    /// Nothing to draw (no stacks), or inferno could not fold or draw them.
    #[error("flame graph: {0}")]
    Flame(String),
    /// A folded file could not be read.
    #[error("{path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The SVG could not be written.
    #[error("writing {0}: {1}")]
    Write(PathBuf, std::io::Error),
}

/// Draws the flame graph of one folded file (or, given two, the differential graph of the
/// second against the first) into `svg`.
pub fn draw(svg: &Path, folded: &[&Path], title: &str, subtitle: &str) -> Result<(), FlameError> {
    let read = |p: &&Path| {
        std::fs::read_to_string(p).map_err(|source| FlameError::Read {
            path: p.to_path_buf(),
            source,
        })
    };
    let texts = folded.iter().map(read).collect::<Result<Vec<_>, _>>()?;
    let drawn = match texts.as_slice() {
        [one] => flamegraph(one, title, Some(subtitle)),
        [before, after] => differential(before, after, title, Some(subtitle)),
        _ => unreachable!("one or two profiles"),
    };
    drawn.and_then(|text| write_svg(svg, &text))
}

/// The flame graph of `folded` as an SVG document, with `title` and an optional `subtitle`.
/// Fails when there is no stack to draw.
pub fn flamegraph(folded: &str, title: &str, subtitle: Option<&str>) -> Result<String, FlameError> {
    svg_of(folded, title, subtitle)
}

/// The differential flame graph of `after` against `before` (both folded): the shape is
/// `after`'s, the colour says where it spends more (red) or less (blue) of its samples than
/// `before`. The two are normalised to the same total first, so profiles of different
/// lengths compare.
pub fn differential(
    before: &str,
    after: &str,
    title: &str,
    subtitle: Option<&str>,
) -> Result<String, FlameError> {
    let opt = inferno::differential::Options {
        normalize: true,
        ..Default::default()
    };
    let mut lines = Vec::new();
    inferno::differential::from_readers(opt, before.as_bytes(), after.as_bytes(), &mut lines)
        .map_err(|e| FlameError::Flame(format!("differential folding: {e}")))?;
    let lines = String::from_utf8(lines).map_err(|e| FlameError::Flame(e.to_string()))?;
    svg_of(&lines, title, subtitle)
}

fn svg_of(folded: &str, title: &str, subtitle: Option<&str>) -> Result<String, FlameError> {
    if !folded.lines().any(|l| !l.trim().is_empty()) {
        return Err(FlameError::Flame("no stacks were sampled".into()));
    }
    let mut opt = Options::default();
    opt.title = title.to_string();
    opt.subtitle = subtitle.map(str::to_string);
    opt.count_name = "samples".into();
    // The same stacks always get the same colours, so two graphs read alike.
    opt.hash = true;
    opt.deterministic = true;
    let mut svg = Vec::new();
    flamegraph::from_lines(&mut opt, folded.lines(), &mut svg)
        .map_err(|e| FlameError::Flame(e.to_string()))?;
    String::from_utf8(svg).map_err(|e| FlameError::Flame(e.to_string()))
}

/// Writes `svg` to `path` through a temporary file beside it, so a failure never leaves half
/// a file.
pub fn write_svg(path: &Path, svg: &str) -> Result<(), FlameError> {
    qpslab_core::files::write_atomically(path, svg.as_bytes())
        .map_err(|e| FlameError::Write(path.to_path_buf(), e))
}

impl super::Profile {
    /// Draws this profile's flame graph into `files.svg` under `title`, the subtitle naming
    /// its stacks, samples and event. A graph that cannot be drawn is noted in
    /// `files.not_drawn`, not an error: the folded stacks are kept either way.
    pub fn draw(&mut self, title: &str) {
        let f = &mut self.files;
        let subtitle = format!(
            "{} · {} samples · {}",
            stem(&f.folded),
            f.samples,
            f.event_reason
        );
        f.not_drawn = draw(&f.svg, &[&f.folded], title, &subtitle)
            .err()
            .map(|e| e.to_string());
    }
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "mariadbd;do_command;dispatch_command;mysql_parse 60\n\
                     mariadbd;do_command;dispatch_command;ha_innobase::index_read 30\n\
                     mariadbd;srv_master_thread 10\n";
    const B: &str = "mariadbd;do_command;dispatch_command;mysql_parse 20\n\
                     mariadbd;do_command;dispatch_command;ha_innobase::index_read 70\n\
                     mariadbd;srv_master_thread 10\n";

    /// The `<title>` of every frame (`name (N samples, P%)`), and the graph's title text.
    fn frames_and_title(svg: &str) -> (Vec<String>, String) {
        // inferno's SVG starts with the SVG 1.1 DOCTYPE.
        let opt = roxmltree::ParsingOptions {
            allow_dtd: true,
            ..Default::default()
        };
        let doc = roxmltree::Document::parse_with_options(svg, opt).expect("well-formed XML");
        assert_eq!(doc.root_element().tag_name().name(), "svg");
        let text = |n: roxmltree::Node| n.text().unwrap_or("").to_string();
        let frames = doc
            .descendants()
            .filter(|n| n.has_tag_name("title"))
            .map(text)
            .collect();
        let title = doc
            .descendants()
            .find(|n| n.attribute("id") == Some("title"))
            .map(text)
            .unwrap_or_default();
        (frames, title)
    }

    #[test]
    fn a_profile_draws_every_frame_under_its_title() {
        let svg = flamegraph(A, "server CPU", Some("cpu-clock")).unwrap();
        let (frames, title) = frames_and_title(&svg);
        assert_eq!(title, "server CPU");
        assert!(svg.contains("cpu-clock"));
        for f in [
            "mysql_parse",
            "ha_innobase::index_read",
            "srv_master_thread",
        ] {
            assert!(frames.iter().any(|t| t.starts_with(f)), "{f} in {frames:?}");
        }
        assert!(
            frames
                .iter()
                .any(|t| t.starts_with("mysql_parse (60 samples")),
            "{frames:?}"
        );
    }

    #[test]
    fn a_difference_colours_the_frames_that_changed() {
        let svg = differential(A, B, "B against A", None).unwrap();
        let (frames, title) = frames_and_title(&svg);
        assert_eq!(title, "B against A");
        // index_read grew from 30 to 70 samples of 100: +40%; mysql_parse shrank.
        let find = |f: &str| frames.iter().find(|t| t.starts_with(f)).cloned();
        let grew = find("ha_innobase::index_read").unwrap();
        let shrank = find("mysql_parse").unwrap();
        assert!(grew.contains("+40.00%"), "{grew}");
        assert!(shrank.contains("-40.00%"), "{shrank}");
        // Shapes and colours are the same on every drawing.
        assert_eq!(svg, differential(A, B, "B against A", None).unwrap());
    }

    #[test]
    fn nothing_sampled_is_an_error_not_an_empty_picture() {
        let e = flamegraph("\n", "t", None).unwrap_err();
        assert!(e.to_string().contains("no stacks"), "{e}");
    }

    #[test]
    fn a_profile_is_drawn_where_it_was_recorded_or_says_why_not() {
        let dir = std::env::temp_dir().join(format!("qpslab-drawn-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let files = |name: &str, folded: &str| {
            let path = dir.join(format!("{name}.folded"));
            std::fs::write(&path, folded).unwrap();
            super::super::Profile {
                files: qpslab_core::telemetry::ProfileFiles {
                    folded: path,
                    svg: dir.join(format!("{name}.svg")),
                    samples: 100,
                    event_reason: "cpu-clock: no counters".into(),
                    ..Default::default()
                },
            }
        };
        let mut drawn = files("7-t8", A);
        drawn.draw("server on-CPU · 8 thread(s)");
        assert_eq!(drawn.files.not_drawn, None);
        let svg = std::fs::read_to_string(&drawn.files.svg).unwrap();
        assert!(svg.contains("7-t8 · 100 samples · cpu-clock: no counters"));
        let mut empty = files("7-t1", "\n");
        empty.draw("server on-CPU · 1 thread(s)");
        assert_eq!(
            empty.files.not_drawn.as_deref(),
            Some("flame graph: no stacks were sampled")
        );
        assert!(!empty.files.svg.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_svg_is_written_whole_or_not_at_all() {
        let dir = std::env::temp_dir().join(format!("qpslab-flame-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.svg");
        write_svg(&path, "<svg/>").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "<svg/>");
        let missing = dir.join("no/such/dir/a.svg");
        assert!(write_svg(&missing, "<svg/>").is_err());
        assert!(!dir.join("no").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
