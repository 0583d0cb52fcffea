//! Charts drawn from fixed series against golden files, ticks and labels.

use super::legend::{SAMPLE, SAMPLE_GAP};
use super::*;

#[test]
fn draws_each_series_with_its_points() {
    let c = LineChart {
        title: "tps <vs> sessions".into(),
        x_axis: XAxis::Log2,
        series: vec![Series {
            name: "a".into(),
            points: vec![(1.0, 10.0), (4.0, 35.0), (16.0, 80.0)],
            color: 0,
            style: 0,
        }],
        ..Default::default()
    };
    let svg = c.to_svg();
    assert!(svg.contains(r#"data-points="3""#), "{svg}");
    // A marker per point, and one in the legend.
    assert_eq!(svg.matches("<circle").count(), 4);
    assert!(svg.contains("tps &lt;vs&gt; sessions"));
    // Log2 ticks at powers of two.
    for t in [">1<", ">2<", ">4<", ">8<", ">16<"] {
        assert!(svg.contains(t), "{t}");
    }
}

/// Compares `svg` with `src/testdata/NAME` (`UPDATE_GOLDEN=1` rewrites it; review the diff).
fn check_golden(name: &str, svg: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src/testdata")
        .join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, svg).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap();
    assert_eq!(svg, want, "{name} differs from its golden file");
}

#[test]
fn charts_match_golden_files() {
    let series = |name: &str, color, style, points: Vec<(f64, f64)>| Series {
        name: name.into(),
        points,
        color,
        style,
    };
    let sessions = LineChart {
        title: "p99 & p95 vs sessions".into(),
        x_label: "sessions (log2)".into(),
        y_label: "ms".into(),
        x_axis: XAxis::Log2,
        series: vec![
            series("a p99", 0, 0, vec![(1.0, 2.5), (8.0, 7.25), (64.0, 31.0)]),
            series("a p95", 0, 1, vec![(1.0, 1.5), (8.0, 5.0), (64.0, 20.0)]),
            series("b <x> p99", 9, 0, vec![(2.0, 3.0), (128.0, 44.0)]),
        ],
        band: None,
        markers: Vec::new(),
        size: Size::Full,
    };
    check_golden("sessions.svg", &sessions.to_svg());
    let over_time = LineChart {
        title: "Throughput per interval".into(),
        x_label: "seconds since the measured phase began".into(),
        y_label: "transactions/s".into(),
        x_axis: XAxis::Linear,
        size: Size::Full,
        series: vec![series(
            "a @64",
            1,
            0,
            (1..=30)
                .map(|i| (i as f64 * 0.5, 12_000.0 + 37.0 * i as f64))
                .collect(),
        )],
        band: Some((-2.0, 0.0, "warm-up (discarded)".into())),
        markers: vec![(8.0, "set innodb_buffer_pool_size=512M".into())],
    };
    check_golden("over_time.svg", &over_time.to_svg());
    check_golden("empty.svg", &LineChart::default().to_svg());
    let distribution = LineChart {
        title: "Latency by percentile · 4 sessions".into(),
        x_label: "percentile (log scale of 1/(1-p))".into(),
        y_label: "latency, ms (log scale)".into(),
        x_axis: XAxis::Percentile,
        size: Size::Small,
        series: vec![series(
            "bp8m",
            0,
            0,
            (0..=60)
                .map(|i| {
                    let x = 10f64.powf(i as f64 / 20.0);
                    (x, 0.2 + 0.05 * x.ln())
                })
                .collect(),
        )],
        band: None,
        markers: Vec::new(),
    };
    check_golden("distribution_small.svg", &distribution.to_svg());
}

#[test]
fn round_ticks_and_labels() {
    assert_eq!(
        nice_ticks(87.0),
        (vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0], 100.0)
    );
    assert_eq!(fmt_num(12_500.0), "12.5k");
    assert_eq!(fmt_num(2_000_000.0), "2M");
    assert_eq!(fmt_num(0.25), "0.25");
    assert_eq!(fmt_num(250.0), "250");
    let labels: Vec<String> = [1.0, 2.0, 10.0, 100.0, 1000.0, 1e5]
        .into_iter()
        .map(percentile_label)
        .collect();
    assert_eq!(labels, ["0%", "50%", "90%", "99%", "99.9%", "99.999%"]);
}

#[test]
fn the_legend_wraps_below_the_plot_and_common_words_are_said_once() {
    let c = LineChart {
        title: "Throughput per interval · 16 sessions".into(),
        size: Size::Small,
        series: (0..6)
            .map(|i| Series {
                name: format!(
                    "{} · oltp_{} · (not judged)",
                    ["baseline", "tuned"][i / 3],
                    ["read_only", "read_write", "write_only"][i % 3]
                ),
                points: vec![(0.5, 10.0), (1.0, 12.0)],
                color: i / 3,
                style: i % 3,
            })
            .collect(),
        ..Default::default()
    };
    let svg = c.to_svg();
    assert!(svg.contains("every line: (not judged)"), "{svg}");
    assert!(svg.contains(">tuned · oltp_write_only<"), "{svg}");
    // Six entries do not fit one row of a small chart: the picture grows below the plot.
    let g = Geom::of(Size::Small, true);
    let h: f64 = svg
        .split("height=\"")
        .nth(1)
        .and_then(|x| x.split('"').next())
        .and_then(|x| x.parse().ok())
        .unwrap();
    assert!(h > g.legend_top() + LEGEND_ROW, "{h}");
    // Every entry's text ends inside the picture.
    for (x, _, label) in legend_layout(
        &g,
        &c.series.iter().map(|s| s.name.clone()).collect::<Vec<_>>(),
    ) {
        assert!(
            x + SAMPLE + SAMPLE_GAP + text::width(&label, g.font) <= g.w,
            "{label}"
        );
    }
    // Same colour, another style: another dash pattern.
    assert!(svg.contains(r##"stroke="#0072B2" stroke-width="2" stroke-dasharray="7 4""##));
}

/// The y of each point of the first series path of `svg`.
fn path_ys(svg: &str) -> Vec<f64> {
    let d = svg.split("class=\"series\"").nth(1).unwrap();
    let d = &d[d.find(" d=\"").unwrap() + 4..];
    d[..d.find('"').unwrap()]
        .split(' ')
        .map(|p| p[1..].split(',').nth(1).unwrap().parse().unwrap())
        .collect()
}

/// Issue 47: a latency distribution whose tail is 500 times its median is drawn on a log
/// latency axis, so the median and p99 lie far apart (on a linear axis to 250 ms they shared
/// three pixels), with ticks at 1-2-5 and the percentile axis labelled from 50%.
#[test]
fn a_latency_distribution_keeps_its_median_and_p99_apart() {
    // x = 1/(1-p): p50 at 2, p99 at 100, p99.99 at 10 000.
    let latency = |x: f64| {
        if x < 2.0 {
            0.3 + 0.2 * (x - 1.0)
        } else if x <= 100.0 {
            0.5 * x.powf(0.5)
        } else {
            5.0 * (x / 100.0).powf(0.85)
        }
    };
    let points: Vec<(f64, f64)> = (0..=80)
        .map(|i| {
            let x = 10f64.powf(i as f64 / 20.0);
            (x, latency(x))
        })
        .collect();
    let at = |x: f64| points.iter().position(|p| (p.0 - x).abs() < 1e-6).unwrap();
    let (p50, p99) = (at(10f64.powf(6.0 / 20.0)), at(100.0));
    let c = LineChart {
        title: "Latency by percentile · 4 sessions".into(),
        y_label: "latency, ms (log scale)".into(),
        x_axis: XAxis::Percentile,
        size: Size::Small,
        series: vec![Series {
            name: "a".into(),
            points,
            color: 0,
            style: 0,
        }],
        ..Default::default()
    };
    let svg = c.to_svg();
    let ys = path_ys(&svg);
    let g = Geom::of(Size::Small, false);
    // A factor of five between p50 and p99 takes at least a sixth of the plot's height.
    assert!(ys[p50] - ys[p99] > g.ph / 6.0, "{} {}", ys[p50], ys[p99]);
    // The curve still fills the plot: its top at the plot's top or within a tick of it.
    assert!(ys.last().unwrap() - g.top < g.ph / 4.0, "{ys:?}");
    for t in [
        ">0.2<", ">1<", ">10<", ">100<", ">500<", ">50%<", ">99%<", ">99.99%<",
    ] {
        assert!(svg.contains(t), "{t} missing:\n{svg}");
    }
}

#[test]
fn log_ticks_are_round_and_hold_the_range() {
    assert_eq!(
        log_ticks(0.3, 40.0),
        (vec![0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0], 0.2, 50.0)
    );
    // Over more than three decades, powers of ten between the ends.
    assert_eq!(
        log_ticks(0.002, 30.0),
        (vec![0.002, 0.01, 0.1, 1.0, 10.0, 50.0], 0.002, 50.0)
    );
    // One value: a range around it all the same.
    let (_, a, b) = log_ticks(5.0, 5.0);
    assert!(a < b, "{a} {b}");
    assert_eq!(fmt_small(0.0005), "0.0005");
    assert_eq!(percentile_label(2.0), "50%");
}
