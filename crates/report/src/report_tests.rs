//! The report's page agrees with its verdict: per-setup charts say they do not decide, the
//! paired rounds are shown, and rows keep their order.

use super::*;
use crate::render::{Html, Renderer};
use crate::test_runs::{run, RO};
use crate::Subject;

/// A study of two variants, `a` then `b`, in rounds: round k ran `a[k]` and `b[k]` per second,
/// `b` first in every other round (as a study alternates them).
fn study(a: &[f64], b: &[f64]) -> ReportInput {
    let mut subjects = Vec::new();
    for (k, (&ta, &tb)) in a.iter().zip(b).enumerate() {
        let mut round = vec![("default", ta), ("tuned", tb)];
        if k % 2 == 1 {
            round.reverse();
        }
        for (variant, t) in round {
            let mut s = Subject::lone(run(subjects.len() as i64 + 1, RO, t, 0.01));
            s.cell.variant = variant.into();
            s.cell.repeat = k as u32 + 1;
            subjects.push(s);
        }
    }
    ReportInput {
        title: "Study s".into(),
        studies: vec!["s".into()],
        subjects,
        ..Default::default()
    }
}

fn adaptive() -> Sequential {
    Sequential {
        adaptive: true,
        max_rounds: 20,
        ..Sequential::default()
    }
}

#[test]
fn per_setup_intervals_apart_but_paired_undecided_says_so_next_to_the_chart() {
    let input = study(
        &[1000.0, 1040.0, 980.0, 1020.0],
        &[1150.0, 1110.0, 1180.0, 1120.0],
    );
    let r = build_with(&input, &adaptive()).unwrap();
    let m = r.comparisons[0].points[0].tps().unwrap();
    assert!(!m.significant, "{m:?}");
    assert_eq!(m.round_ratios.len(), 4, "{m:?}");
    let chart = r
        .charts
        .iter()
        .find(|c| c.id == "throughput-at-4")
        .expect("a dot plot at 4 sessions");
    assert!(
        chart.caption.contains("do not decide")
            && chart
                .caption
                .contains("wider because it covers the variation between rounds")
            && chart.caption.contains("rounds: 1.15, 1.07, 1.20, 1.10")
            && chart.caption.contains(
                "intervals do not overlap, yet the interval of the change does not decide"
            ),
        "{}",
        chart.caption
    );
    let html = Html.render(&r).unwrap();
    assert!(
        html.contains("<figcaption>Each setup&#39;s own runs")
            || html.contains("<figcaption>Each setup's own runs"),
        "no caption under the chart"
    );
    assert!(
        html.contains("(rounds: 1.15, 1.07, 1.20, 1.10)"),
        "no rounds beside the interval"
    );
}

#[test]
fn dot_plot_rows_keep_the_variants_order_whichever_ran_first() {
    // Round 1 ran tuned first over TCP, default first over the socket: the rows of every chart
    // are still default's, then tuned's.
    let mut subjects = Vec::new();
    for (k, transport, variant, t) in [
        (1, "socket", "default", 1000.0),
        (1, "socket", "tuned", 1100.0),
        (1, "tcp", "tuned", 900.0),
        (1, "tcp", "default", 800.0),
        (2, "socket", "tuned", 1120.0),
        (2, "socket", "default", 1010.0),
        (2, "tcp", "default", 810.0),
        (2, "tcp", "tuned", 910.0),
    ] {
        let mut s = Subject::lone(run(subjects.len() as i64 + 1, RO, t, 0.01));
        s.cell.variant = variant.into();
        s.cell.repeat = k;
        s.cell
            .params
            .insert("transport".into(), serde_json::json!(transport));
        subjects.push(s);
    }
    let input = ReportInput {
        subjects,
        ..Default::default()
    };
    let r = build(&input).unwrap();
    let c = r
        .charts
        .iter()
        .find(|c| c.id == "throughput-at-4")
        .expect("a dot plot at 4 sessions");
    let rows: Vec<&str> = c
        .svg
        .split("text-anchor=\"end\" fill=\"#222\">")
        .skip(1)
        .filter_map(|t| t.split('<').next())
        .collect();
    assert_eq!(
        rows,
        [
            "default · transport=socket",
            "default · transport=tcp",
            "tuned · transport=socket",
            "tuned · transport=tcp"
        ]
    );
}

#[test]
fn seed_000_what_changed_names_the_cpu_set_the_spec_changed() {
    // examples/point-select-scaling.toml: `shared-cpus` against `server-cpu0`, which differ
    // only by `cpus = "0"`; the server shows it only as a thread pool one thread smaller.
    let spec = include_str!("../../../examples/point-select-scaling.toml");
    let mut subjects = Vec::new();
    for k in 1..=3u32 {
        for (variant, pool, t) in [("shared-cpus", "2", 1000.0), ("server-cpu0", "1", 900.0)] {
            let mut r = run(subjects.len() as i64 + 1, RO, t, 0.01);
            r.meta
                .server
                .variables
                .insert("thread_pool_size".into(), pool.into());
            // What the CPU set did: where the server's threads may run.
            r.meta.server.cpus = Some(if pool == "2" { "0-1" } else { "0" }.into());
            let mut s = Subject::lone(r);
            s.cell.variant = variant.into();
            s.cell.repeat = k;
            subjects.push(s);
        }
    }
    let input = ReportInput {
        title: "Study point-select-scaling".into(),
        studies: vec!["point-select-scaling".into()],
        subjects,
        setups: crate::spec_setups::setups(spec),
        ..Default::default()
    };
    let r = build(&input).unwrap();
    let line = r
        .what_changed
        .iter()
        .find(|l| l.starts_with("server-cpu0 vs shared-cpus"))
        .expect("a line for the comparison");
    assert_eq!(
        line,
        "server-cpu0 vs shared-cpus: as set: CPU set (cpus) – → 0; on the server: \
         server.cpus 0-1 → 0, server.thread_pool_size 2 → 1"
    );
    let html = Html.render(&r).unwrap();
    assert!(html.contains("CPU set (cpus) – → 0"));
}

#[test]
fn a_run_reports_its_warm_up_band_as_not_kept_rather_than_empty() {
    let mut r = run(1, RO, 1000.0, 0.05);
    r.meta.plan.warmup_s = 5.0;
    let report = build(&crate::test_runs::side("run 1", vec![r])).unwrap();
    let c = report
        .charts
        .iter()
        .find(|c| c.id == "throughput-over-time-4")
        .expect("a per-interval chart");
    assert!(
        c.svg.contains("class=\"band\"") && c.svg.contains(">unkept warm-up<"),
        "{}",
        c.svg
    );
    assert!(
        c.caption.contains("not kept in the results store"),
        "{}",
        c.caption
    );
    let html = Html.render(&report).unwrap();
    assert!(html.contains("<figcaption>The shaded band before 0 is the warm-up"));
}

#[test]
fn a_run_draws_its_kept_warm_up_intervals_in_their_band() {
    let mut r = run(1, RO, 1000.0, 0.05);
    r.meta.plan.warmup_s = 3.0;
    let measured = r.phases[0].result.samples.len();
    r.phases[0].result.warmup = (0..3)
        .map(|i| qpslab_core::result::Sample {
            elapsed_s: f64::from(i - 2),
            interval_s: 1.0,
            events: 300 * (i as u64 + 1),
            ..Default::default()
        })
        .collect();
    let report = build(&crate::test_runs::side("run 1", vec![r])).unwrap();
    let c = report
        .charts
        .iter()
        .find(|c| c.id == "throughput-over-time-4")
        .expect("a per-interval chart");
    assert!(c.svg.contains(">warm-up<"), "{}", c.svg);
    let drawn = format!("data-points=\"{}\"", measured + 3);
    assert!(
        c.svg.contains(&drawn),
        "the warm-up's 3 points lead the line: {}",
        c.svg
    );
    assert!(
        c.caption.contains("its intervals are drawn"),
        "{}",
        c.caption
    );
}
