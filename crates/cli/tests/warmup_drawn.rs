//! A run's warm-up, measured by the client and kept apart: its intervals are stored with the
//! phase, drawn in the report's warm-up band, and never counted in a figure.

mod common;
use common::*;

#[test]
fn a_run_keeps_its_warm_up_intervals_and_the_report_draws_them() {
    let s = Scratch::new();
    let sock = socket();
    common::prepare_shared(
        &s,
        "oltp_point_select",
        "warmdrawn",
        &["--tables", "1", "--table-size", "1000"],
    );
    let json = s.path().join("run.json");
    let o = s.run(&[
        "run",
        "oltp_point_select",
        "--socket",
        &sock,
        "--database",
        "warmdrawn",
        "--tables",
        "1",
        "--table-size",
        "1000",
        "--threads",
        "2",
        "--warmup",
        "2",
        "--time",
        "3",
        "--report-interval",
        "0.5",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
    // Live lines are the measured intervals only, as sysbench prints them.
    let live = stdout(&o).lines().filter(|l| l.contains(" thds: ")).count();
    assert!((5..=7).contains(&live), "{}", stdout(&o));

    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let r = &v["phases"][0]["result"];
    let warm = r["warmup"].as_array().expect("the warm-up's intervals");
    assert_eq!(warm.len(), 4, "2 s of warm-up at 0.5 s: {warm:?}");
    let ends: Vec<f64> = warm
        .iter()
        .map(|w| w["elapsed_s"].as_f64().unwrap())
        .collect();
    for (end, want) in ends.iter().zip([-1.5, -1.0, -0.5, 0.0]) {
        assert!((end - want).abs() < 0.05, "{ends:?}");
    }
    let warm_events: u64 = warm.iter().map(|w| w["events"].as_u64().unwrap()).sum();
    assert!(warm_events > 0, "{warm:?}");
    // The phase's figures are the measured intervals' alone.
    let measured: u64 = r["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["events"].as_u64().unwrap())
        .sum();
    assert_eq!(r["events"].as_u64().unwrap(), measured);

    // The store keeps them: the report, read from it, draws them in the band.
    let html = s.path().join("run.html");
    let o = s.run(&["report", "1", "--out", html.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let page = std::fs::read_to_string(&html).unwrap();
    let at = page
        .find("<title>Throughput per interval")
        .expect("a per-interval throughput chart");
    let chart = &page[at..at + page[at..].find("</svg>").unwrap()];
    assert!(chart.contains(">warm-up<"), "{chart}");
    let points: usize = chart
        .split("data-points=\"")
        .nth(1)
        .and_then(|x| x[..x.find('"')?].parse().ok())
        .unwrap();
    let samples = r["samples"].as_array().unwrap().len();
    assert_eq!(points, samples + 4, "{chart}");
    assert!(page.contains("its intervals are drawn"));
}

#[test]
fn a_run_without_warm_up_keeps_none() {
    let s = Scratch::new();
    let sock = socket();
    common::prepare_shared(
        &s,
        "oltp_point_select",
        "warmnone",
        &["--tables", "1", "--table-size", "1000"],
    );
    let json = s.path().join("run.json");
    let o = s.run(&[
        "run",
        "oltp_point_select",
        "--socket",
        &sock,
        "--database",
        "warmnone",
        "--tables",
        "1",
        "--table-size",
        "1000",
        "--time",
        "1",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(v["phases"][0]["result"].get("warmup").is_none(), "{v}");
}
