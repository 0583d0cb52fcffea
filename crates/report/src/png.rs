//! PNG versions of the charts, rendered from the same SVG with resvg and the system's fonts
//! (no network: fonts come from the local font directories only).

use crate::charts::Chart;
use crate::error::Error;
use std::path::{Path, PathBuf};

/// Renders one SVG document to PNG bytes at `scale` (2.0 for crisp text).
pub fn svg_to_png(svg: &str, scale: f32) -> Result<Vec<u8>, Error> {
    let mut opt = resvg::usvg::Options::default();
    opt.fontdb_mut().load_system_fonts();
    let tree = resvg::usvg::Tree::from_str(svg, &opt).map_err(|e| Error::Png(e.to_string()))?;
    let size = tree
        .size()
        .to_int_size()
        .scale_by(scale)
        .ok_or_else(|| Error::Png("empty chart".into()))?;
    let mut pixmap = resvg::tiny_skia::Pixmap::new(size.width(), size.height())
        .ok_or_else(|| Error::Png("chart too large".into()))?;
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    pixmap.encode_png().map_err(|e| Error::Png(e.to_string()))
}

/// Writes every chart as `DIR/<id>.png`; returns the paths written.
pub fn write_pngs(charts: &[Chart], dir: &Path) -> Result<Vec<PathBuf>, Error> {
    std::fs::create_dir_all(dir).map_err(|e| Error::Write(dir.to_path_buf(), e))?;
    charts
        .iter()
        .map(|c| {
            let path = dir.join(format!("{}.png", c.id));
            let bytes = svg_to_png(&c.svg, 2.0)?;
            std::fs::write(&path, bytes).map_err(|e| Error::Write(path.clone(), e))?;
            Ok(path)
        })
        .collect()
}

/// Whether any font is available to draw chart text.
pub fn fonts_available() -> bool {
    let mut db = resvg::usvg::fontdb::Database::new();
    db.load_system_fonts();
    !db.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::svg::{LineChart, Series};

    #[test]
    fn renders_a_chart_with_text() {
        let chart = LineChart {
            title: "t".into(),
            series: vec![Series {
                name: "a".into(),
                points: vec![(1.0, 1.0), (2.0, 3.0)],
                color: 0,
                style: 0,
            }],
            ..Default::default()
        };
        let png = svg_to_png(&chart.to_svg(), 1.0).unwrap();
        assert_eq!(&png[1..4], b"PNG");
        assert!(
            fonts_available(),
            "no system fonts: chart labels would be missing"
        );
    }
}
