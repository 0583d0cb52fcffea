//! Issue 36: a study's HTML report as a reader sees it, measured in headless Chromium. A script in
//! the page measures every chart's SVG text against the chart's box (nothing clipped or outside
//! it) and every chart's series styles (no two series share colour and dash); the summary is the
//! first section and names every comparison with its verdict; the forest plot is the first chart.
//!
//! The studies are stored runs (no server): 2 variants x 3 workloads x 2 session counts, the
//! same with a single session count, where no chart may be a line over one x value, and with
//! three session counts, drawn as lines.

mod common;
use common::*;
use qpslab_core::cell::Cell;
use qpslab_core::result::{LatencySummary, Percentile, PhaseResult, QueryCounts, Sample};
use qpslab_core::{Instability, RunPlan, Stability, WorkloadKind, WorkloadOptions};
use qpslab_store::{NewStudy, RunMeta, RunStatus, Store};
use std::collections::BTreeMap;

const WORKLOADS: [(&str, WorkloadKind); 3] = [
    ("oltp_read_only", WorkloadKind::OltpReadOnly),
    ("oltp_read_write", WorkloadKind::OltpReadWrite),
    ("oltp_write_only", WorkloadKind::OltpWriteOnly),
];

/// A deterministic wobble in [-1, 1].
fn wobble(i: usize, k: usize) -> f64 {
    (((i * 7919 + k * 104_729) % 1000) as f64 / 500.0) - 1.0
}

/// A phase of `n` half-second intervals around `tps` and `p99`.
fn phase(threads: u32, tps: f64, p99: f64, n: usize, k: usize) -> PhaseResult {
    let latency = |p99: f64| LatencySummary {
        min_ms: 0.1,
        avg_ms: p99 / 3.0,
        max_ms: p99 * 2.0,
        percentiles: vec![
            Percentile {
                p: 95.0,
                ms: p99 * 0.7,
            },
            Percentile { p: 99.0, ms: p99 },
        ],
        ..Default::default()
    };
    let samples: Vec<Sample> = (0..n)
        .map(|i| {
            let events = (tps * 0.5 * (1.0 + 0.05 * wobble(i, k))).round() as u64;
            Sample {
                elapsed_s: 0.5 * (i + 1) as f64,
                interval_s: 0.5,
                events,
                queries: QueryCounts {
                    read: events * 10,
                    write: events * 4,
                    other: events * 2,
                },
                latency: LatencySummary {
                    count: events,
                    ..latency(p99 * (1.0 + 0.05 * wobble(i, k + 1)))
                },
                ..Default::default()
            }
        })
        .collect();
    let events: u64 = samples.iter().map(|s| s.events).sum();
    PhaseResult {
        threads,
        duration_s: 0.5 * n as f64,
        events,
        queries: QueryCounts {
            read: events * 10,
            write: events * 4,
            other: events * 2,
        },
        latency: LatencySummary {
            count: events,
            ..latency(p99)
        },
        samples,
        ..Default::default()
    }
}

/// A finished study `name`: baseline and tuned over three workloads at `threads`, two repeats,
/// each run's phases `intervals` half-seconds long.
fn store_study(store: &mut Store, name: &str, threads: &[u32], intervals: usize) {
    store_study_with(store, name, threads, intervals, false, (2, ""));
}

/// [`store_study`], with every tuned phase judged unstable for a busy neighbour when `busy`
/// (each comparison then has a warning per tuned phase).
fn store_study_busy(store: &mut Store, name: &str, threads: &[u32], intervals: usize, busy: bool) {
    store_study_with(store, name, threads, intervals, busy, (2, ""));
}

/// [`store_study_busy`] with `rounds` repeats and the stored spec `spec`.
fn store_study_with(
    store: &mut Store,
    name: &str,
    threads: &[u32],
    intervals: usize,
    busy: bool,
    (rounds, spec): (u32, &str),
) {
    let mut cells = Vec::new();
    for repeat in 1..=rounds {
        for variant in ["baseline", "tuned"] {
            for (w, _) in WORKLOADS {
                let seq = cells.len() as u32 + 1;
                cells.push(Cell {
                    seq,
                    label: format!("{variant}/workload={w}/r{repeat}"),
                    variant: variant.into(),
                    levels: BTreeMap::new(),
                    params: [("workload".to_string(), serde_json::json!(w))].into(),
                    repeat,
                });
            }
        }
    }
    let new = NewStudy {
        name: name.into(),
        spec_toml: spec.into(),
        spec_hash: name.into(),
        env: serde_json::json!({}),
        factors: vec![],
    };
    let id = store.create_study(&new, &cells).unwrap();
    for rec in store.study_cells(id).unwrap() {
        let c = &rec.cell;
        let (wi, kind) = WORKLOADS
            .iter()
            .enumerate()
            .find(|(_, (w, _))| c.params["workload"] == *w)
            .map(|(i, (_, k))| (i, *k))
            .unwrap();
        let tuned = c.variant == "tuned";
        let mut plan = RunPlan::new(WorkloadOptions::new(kind));
        plan.threads = threads.to_vec();
        plan.warmup_s = 1.0;
        plan.report_interval_s = 0.5;
        let uuid = format!("{name}-{}", c.label);
        let meta = RunMeta {
            uuid: uuid.clone(),
            started_at: 1_700_000_000.0,
            command: "qpslab lab run".into(),
            plan,
            target: "root@localhost/sbtest".into(),
            server: qpslab_core::ServerInfo {
                version: "10.11.6-MariaDB".into(),
                flavor: "mariadb".into(),
                variables: [(
                    "innodb_buffer_pool_size".to_string(),
                    if tuned { "268435456" } else { "134217728" }.to_string(),
                )]
                .into(),
                ..Default::default()
            },
            host: Default::default(),
            tool_version: "0.1.0".into(),
            study_id: None,
            cell_label: None,
        }
        .in_study(name, &c.label);
        store.cell_running(rec.id).unwrap();
        let mut run = None;
        for (ti, &t) in threads.iter().enumerate() {
            let base = [1000.0, 600.0, 400.0][wi] * f64::from(t).sqrt();
            let tps = base * if tuned { 1.3 } else { 1.0 } * (1.0 + 0.01 * c.repeat as f64);
            let p99 = [5.0, 9.0, 12.0][wi] * if tuned { 0.8 } else { 1.0 };
            let k = c.seq as usize * 10 + ti;
            let mut p = phase(t, tps, p99, intervals, k);
            if busy && tuned {
                p.stability = Some(Stability {
                    reasons: vec![Instability::Contended { share: 0.3 }],
                });
            }
            run = Some(store.record_phase(&meta, &p, &[]).unwrap());
        }
        store.finish_run(&uuid, RunStatus::Completed).unwrap();
        store.cell_done(rec.id, run.unwrap()).unwrap();
    }
}

/// Measures, in the page, what the test asserts: one line per problem found.
const PROBE: &str = r#"<script>
(function () {
  // The smallest text a chart may show at 1400 px, in CSS pixels.
  const MIN_TEXT_PX = 11;
  const problems = [];
  const charts = Array.from(document.querySelectorAll('figure.chart'));
  for (const fig of charts) {
    const svg = fig.querySelector('svg');
    const box = svg.getBoundingClientRect();
    // The picture is scaled to its box: its text's size on screen is its own times that.
    const scale = box.width / svg.viewBox.baseVal.width;
    for (const t of svg.querySelectorAll('text')) {
      const b = t.getBoundingClientRect();
      if (b.width === 0) continue;
      const px = parseFloat(getComputedStyle(t).fontSize) * scale;
      if (px < MIN_TEXT_PX)
        problems.push('text of ' + px.toFixed(1) + ' px in ' + fig.id + ': "' + t.textContent + '"');
      if (b.left < box.left - 0.5 || b.right > box.right + 0.5 ||
          b.top < box.top - 0.5 || b.bottom > box.bottom + 0.5) {
        problems.push('clipped text in ' + fig.id + ': "' + t.textContent + '" ' +
          [b.left - box.left, b.right - box.left, b.top - box.top, b.bottom - box.top]
            .map(Math.round).join(',') + ' of ' + Math.round(box.width) + 'x' + Math.round(box.height));
      }
    }
    const lines = Array.from(svg.querySelectorAll('path.series'));
    if (lines.length && lines.every(q => Number(q.getAttribute('data-points')) <= 1))
      problems.push('a line chart of one x value: ' + fig.id);
    const seen = {};
    for (const p of svg.querySelectorAll('path.series')) {
      const style = p.getAttribute('stroke') + ' ' + (p.getAttribute('stroke-dasharray') || 'solid');
      if (seen[style]) problems.push('two series of ' + fig.id + ' drawn ' + style);
      seen[style] = true;
    }
  }
  const h2 = document.querySelector('h2');
  const first = charts.length ? charts[0].id : '';
  const pre = document.createElement('pre');
  pre.id = 'layout';
  pre.textContent = JSON.stringify({ problems: problems, first_section: h2 ? h2.id : '',
    first_chart: first, charts: charts.length });
  document.body.appendChild(pre);
})();
</script>"#;

/// The report of `study` (a study's name or a run's id) with the probe in it, as Chromium laid
/// it out at 1400 px: the probe's findings as JSON, and the report's text.
fn measure(s: &Scratch, study: &str) -> (serde_json::Value, String) {
    measure_report(s, &[study])
}

/// [`measure`] of `report ARGS...` (the last argument names the file).
fn measure_report(s: &Scratch, args: &[&str]) -> (serde_json::Value, String) {
    let study = args.last().unwrap();
    let file = match study.parse::<u64>() {
        Ok(id) => format!("run-{id}"),
        Err(_) => study.replace(|c: char| !c.is_alphanumeric() && c != '-', "-"),
    };
    let html = s.path().join(format!("{file}.html"));
    let mut argv = vec!["report"];
    argv.extend_from_slice(args);
    argv.extend_from_slice(&["--out", html.to_str().unwrap()]);
    let o = s.run(&argv);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&html).unwrap();
    std::fs::copy(&html, artifacts().join(format!("{file}.html"))).unwrap();
    // The report forbids scripts (its Content-Security-Policy); the probed copy drops that.
    let probed = s.path().join(format!("{file}-probed.html"));
    let page = text
        .replace(
            "http-equiv=\"Content-Security-Policy\"",
            "name=\"csp-dropped\"",
        )
        .replace("</body>", &format!("{PROBE}</body>"));
    std::fs::write(&probed, page).unwrap();
    let profile = tempfile::tempdir().unwrap();
    let url = format!("file://{}", probed.display());
    let dom = chromium(
        &["--window-size=1400,1000", "--dump-dom", &url],
        profile.path(),
    );
    assert!(dom.status.success(), "{}", stderr(&dom));
    let dom = stdout(&dom);
    let start = dom.find("<pre id=\"layout\">").expect("the probe ran") + 17;
    let end = start + dom[start..].find("</pre>").unwrap();
    let json = dom[start..end]
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    (serde_json::from_str(&json).unwrap(), text)
}

/// The report of `subject` (a study, a run...) as Chromium laid it out, with no clipped or
/// too small text and no two series of a chart drawn alike: the probe's findings and the
/// report's text.
fn assert_legible(s: &Scratch, subject: &str) -> (serde_json::Value, String) {
    let (v, text) = measure(s, subject);
    let problems = v["problems"].as_array().unwrap();
    assert!(
        problems.is_empty(),
        "{subject}: {} problems:\n{}",
        problems.len(),
        problems
            .iter()
            .map(|p| p.as_str().unwrap())
            .collect::<Vec<_>>()
            .join("\n")
    );
    (v, text)
}

fn assert_readable(s: &Scratch, study: &str) -> String {
    let (v, text) = assert_legible(s, study);
    assert!(v["charts"].as_u64().unwrap() >= 3, "{v}");
    assert_eq!(v["first_section"], "summary", "{v}");
    assert_eq!(v["first_chart"], "forest", "{v}");
    // The summary names every comparison (tuned vs baseline, each workload and session count)
    // with its verdict.
    let summary = &text[text.find("id=\"summary\"").unwrap()..];
    let summary = &summary[..summary.find("<h2").unwrap_or(summary.len())];
    for (w, _) in WORKLOADS {
        assert!(summary.contains(w), "summary without {w}:\n{summary}");
    }
    assert!(
        summary.contains("tuned vs baseline") && summary.contains("improvement"),
        "{summary}"
    );
    text
}

#[test]
fn study_reports_have_no_clipped_text_and_distinct_series() {
    let s = Scratch::new();
    let mut store = Store::open(&s.db()).unwrap();
    store_study(&mut store, "swept", &[4, 16], 12);
    store_study(&mut store, "one-count", &[8], 6);
    store_study(&mut store, "three-counts", &[1, 4, 16], 6);
    drop(store);
    let text = assert_readable(&s, "swept");
    assert!(text.contains("4 sessions") && text.contains("16 sessions"));
    // Three session counts: lines against sessions.
    let text = assert_readable(&s, "three-counts");
    assert!(
        text.contains("id=\"throughput-vs-sessions\""),
        "no line chart"
    );
    let text = assert_readable(&s, "one-count");
    // Phases of six intervals or more get per-interval charts; throughput axes start at 0.
    assert!(
        text.contains("id=\"throughput-over-time-8\""),
        "no per-interval chart"
    );
}

/// Many warnings (a busy machine's unstable phases) are folded below the answer: under the
/// summary's forest plots, and in each comparison after its tables.
#[test]
fn warnings_are_folded_below_the_answer() {
    let s = Scratch::new();
    let mut store = Store::open(&s.db()).unwrap();
    store_study_busy(&mut store, "busy", &[8], 6, true);
    drop(store);
    let html = s.path().join("busy.html");
    let o = s.run(&["report", "busy", "--out", html.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(!text.contains("<p class=\"warning\">"), "unfolded warnings");
    let summary = &text[text.find("id=\"summary\"").unwrap()..];
    let folded = summary
        .find("<details class=\"warning\">")
        .expect("folded warnings");
    assert!(summary.find("id=\"forest\"").unwrap() < folded);
    let comparison = &text[text.find("<h2>tuned vs baseline</h2>").unwrap()..];
    let folded = comparison
        .find("<details class=\"warning\"><summary>6 warnings")
        .expect("the comparison's warnings folded");
    let last_table = comparison[..folded].rfind("<table>");
    assert!(
        comparison[..folded].matches("<h3>").count() == 3 && last_table.is_some(),
        "warnings before the comparison's tables"
    );
}

/// A study that ran rounds until precise is reported with the interval `lab run` decided on
/// (its anytime-valid one, as `compare STUDY/A STUDY/B` gives it), not a fixed-n one.
#[test]
fn a_study_report_takes_the_studys_stop_rule() {
    let s = Scratch::new();
    let mut store = Store::open(&s.db()).unwrap();
    let spec = "name = \"precise\"\nprecision = \"5%\"\nbudget = \"10m\"\nmax_repeats = 10\n\
                [defaults]\nthreads = 8\n[[variant]]\nname = \"baseline\"\n\
                [[variant]]\nname = \"tuned\"\n";
    store_study_with(&mut store, "precise", &[8], 6, false, (4, spec));
    drop(store);
    let interval = |v: &serde_json::Value| -> Vec<serde_json::Value> {
        let points = v["points"].as_array().unwrap();
        points
            .iter()
            .map(|p| {
                let m = p["metrics"].as_array().unwrap();
                let tps = m.iter().find(|m| m["metric"] == "tps").unwrap();
                serde_json::json!([p["key"], tps["interval"], tps["stopped"]])
            })
            .collect()
    };
    let o = s.run(&["report", "precise", "--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let report: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let o = s.run(&[
        "compare",
        "precise/baseline",
        "precise/tuned",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let compared: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let want = interval(&compared);
    assert!(want[0][1].is_array(), "{compared}");
    assert_eq!(interval(&report["comparisons"][0]), want);
    // The summary says what each interval rests on and why no more rounds ran.
    let o = s.run(&["report", "precise", "--format", "md"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let md = stdout(&o);
    assert!(md.contains("; 4 rounds paired, stopped: precise"), "{md}");
}

/// Phases too short to show a shape (three intervals) get no per-interval chart.
#[test]
fn short_phases_get_no_per_interval_chart() {
    let s = Scratch::new();
    let mut store = Store::open(&s.db()).unwrap();
    store_study(&mut store, "short", &[8], 3);
    drop(store);
    let html = s.path().join("short.html");
    let o = s.run(&["report", "short", "--out", html.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(
        !text.contains("over-time-8\""),
        "per-interval chart of 3 intervals"
    );
}

/// The Markdown report with `--png DIR` opens with the summary and shows every chart as an image
/// written to DIR, linked relative to the Markdown file.
#[test]
fn markdown_links_the_charts_written_beside_it() {
    let s = Scratch::new();
    let mut store = Store::open(&s.db()).unwrap();
    store_study(&mut store, "md", &[8], 6);
    drop(store);
    let o = s
        .cmd(&["report", "md", "--out", "r.md", "--png", "charts"])
        .current_dir(s.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let md = std::fs::read_to_string(s.path().join("r.md")).unwrap();
    assert!(md.starts_with("# Study md\n\n## Summary"), "{md}");
    assert!(
        md.contains("- tuned vs baseline, oltp_read_write, 8 sessions: throughput +"),
        "{md}"
    );
    let links: Vec<&str> = md
        .split("](")
        .skip(1)
        .map(|x| &x[..x.find(')').unwrap()])
        .collect();
    assert!(links.contains(&"charts/forest.png"), "{links:?}");
    assert!(links.len() >= 4, "{links:?}");
    for l in links {
        assert!(s.path().join(l).is_file(), "{l} not written");
    }
}

/// The fileio settings of [`store_fileio_study`]: test mode and block size.
const IO_SETTINGS: [(&str, &str); 6] = [
    ("rndrd", "4K"),
    ("rndrd", "16K"),
    ("seqwr", "4K"),
    ("seqwr", "16K"),
    ("rndrw", "4K"),
    ("rndrw", "16K"),
];

/// A fileio phase of `n` half-second intervals: `iops` operations per second of `bs` bytes,
/// read, written or both as `mode` does, p99 `p99` ms.
fn io_phase(mode: &str, bs: u64, iops: f64, p99: f64, n: usize, k: usize) -> PhaseResult {
    let mut p = phase(16, iops, p99, n, k);
    let split = |ops: u64| match mode {
        "rndrd" | "seqrd" => (ops, 0),
        "rndrw" => (ops * 3 / 5, ops - ops * 3 / 5),
        _ => (0, ops),
    };
    for s in &mut p.samples {
        let (read, write) = split(s.events);
        s.queries = QueryCounts {
            read,
            write,
            other: 0,
        };
    }
    let (read, write) = split(p.events);
    p.queries = QueryCounts {
        read,
        write,
        other: 0,
    };
    let mib_s = |ops: u64| ops as f64 * bs as f64 / qpslab_core::fileio::MIB / p.duration_s;
    p.io = Some(qpslab_core::fileio::IoFigures {
        read_ops: read,
        write_ops: write,
        read_bytes: read * bs,
        write_bytes: write * bs,
        read_mib_s: mib_s(read),
        write_mib_s: mib_s(write),
        fsyncs: write / 100,
        fio_version: "fio-3.33".into(),
        fio_command: vec!["fio".into()],
    });
    p
}

/// A finished fileio study `name` as `lab run` stores one (no server): two storage setups over
/// three test modes and two block sizes at 16 sessions, two rounds, each phase `intervals`
/// half-seconds long; the phases `unstable` picks (variant, mode, block size) judged unstable
/// (a stall).
fn store_fileio_study(
    store: &mut Store,
    name: &str,
    intervals: usize,
    unstable: impl Fn(&str, &str, &str) -> bool,
) {
    let variants = ["ext4-relatime", "xfs-noatime"];
    let mut cells = Vec::new();
    for repeat in 1..=2 {
        for variant in variants {
            for (mode, bs) in IO_SETTINGS {
                cells.push(Cell {
                    seq: cells.len() as u32 + 1,
                    label: format!(
                        "{variant}/file_test_mode={mode}/file_block_size={bs}/r{repeat}"
                    ),
                    variant: variant.into(),
                    levels: BTreeMap::new(),
                    params: [
                        ("file_test_mode".to_string(), serde_json::json!(mode)),
                        ("file_block_size".to_string(), serde_json::json!(bs)),
                    ]
                    .into(),
                    repeat,
                });
            }
        }
    }
    let new = NewStudy {
        name: name.into(),
        spec_toml: String::new(),
        spec_hash: name.into(),
        env: serde_json::json!({}),
        factors: vec![],
    };
    let id = store.create_study(&new, &cells).unwrap();
    for rec in store.study_cells(id).unwrap() {
        let c = &rec.cell;
        let mode = c.params["file_test_mode"].as_str().unwrap();
        let bs_text = c.params["file_block_size"].as_str().unwrap();
        let bs: u64 = if bs_text == "4K" { 4096 } else { 16384 };
        let mut plan = RunPlan::new(WorkloadOptions::new(WorkloadKind::OltpReadOnly));
        plan.threads = vec![16];
        plan.report_interval_s = 0.5;
        plan.fileio = Some(qpslab_core::fileio::FileIoOptions {
            mode: mode.parse().unwrap(),
            block_size: bs,
            num: 4,
            total_size: 32 << 20,
            ..Default::default()
        });
        let uuid = format!("{name}-{}", c.label);
        let meta = RunMeta {
            uuid: uuid.clone(),
            started_at: 1_700_000_000.0,
            command: "qpslab lab run".into(),
            plan,
            target: format!("files in /lab/io/{name}/{}", c.variant),
            server: Default::default(),
            host: Default::default(),
            tool_version: "0.1.0".into(),
            study_id: None,
            cell_label: None,
        }
        .in_study(name, &c.label);
        store.cell_running(rec.id).unwrap();
        let xfs = c.variant.starts_with("xfs");
        // Random reads of small blocks are the most operations, sequential writes the fewest.
        let base = match mode {
            "rndrd" => 40_000.0,
            "rndrw" => 12_000.0,
            _ => 6_000.0,
        } * if bs == 4096 { 1.0 } else { 0.6 };
        let iops = base * if xfs { 1.2 } else { 1.0 } * (1.0 + 0.01 * c.repeat as f64);
        let mut p = io_phase(mode, bs, iops, 0.4, intervals, c.seq as usize * 10);
        if unstable(&c.variant, mode, bs_text) {
            p.stability = Some(Stability {
                reasons: vec![Instability::Stall {
                    at_s: 1.0,
                    duration_s: 0.7,
                }],
            });
        }
        let run = store.record_phase(&meta, &p, &[]).unwrap();
        store.finish_run(&uuid, RunStatus::Completed).unwrap();
        store.cell_done(rec.id, run).unwrap();
    }
}

/// The text between `<h2 id="ID">` and the next `<h2`.
fn section<'a>(html: &'a str, id: &str) -> &'a str {
    let start = html
        .find(&format!("<h2 id=\"{id}\">"))
        .unwrap_or_else(|| panic!("no section '{id}'"));
    let rest = &html[start + 4..];
    &rest[..rest.find("<h2").unwrap_or(rest.len())]
}

/// Issue 47: a fileio study's charts name each row by its test mode and block size (not
/// `file_block_size=4K · file_test_mode=...` cut short), count throughput in MiB/s and IOPS,
/// never transactions, and its best result is never an unstable cell; the legibility probe
/// finds nothing.
#[test]
fn a_fileio_study_report_names_modes_counts_mib_and_iops_and_never_calls_unstable_best() {
    let s = Scratch::new();
    let mut store = Store::open(&s.db()).unwrap();
    // xfs' random 4K reads are its most operations, and unstable.
    store_fileio_study(&mut store, "fileio", 8, |v, m, bs| {
        v.starts_with("xfs") && m == "rndrd" && bs == "4K"
    });
    store_fileio_study(&mut store, "fileio-unstable", 8, |_, _, _| true);
    drop(store);
    let (v, html) = assert_legible(&s, "fileio");
    assert_eq!(v["first_chart"], "forest", "{v}");
    assert!(
        !html.contains("transactions"),
        "transactions in a fileio report"
    );
    assert!(
        !html.contains("file_block_size=4K · "),
        "a label by its keys"
    );
    for (id, unit) in [
        ("mib-s-at-16", "MiB/s (bars"),
        ("throughput-at-16", "IOPS (bars"),
        ("throughput-over-time-16", ">IOPS<"),
    ] {
        let at = html
            .find(&format!("id=\"{id}\""))
            .unwrap_or_else(|| panic!("no chart {id}"));
        let chart = &html[at..];
        let chart = &chart[..chart.find("</figure>").unwrap()];
        assert!(chart.contains(unit), "{id} not in {unit}: {chart}");
        if id.ends_with("-at-16") {
            // Every row says its mode and block size, whole.
            for variant in ["ext4-relatime", "xfs-noatime"] {
                for (mode, bs) in IO_SETTINGS {
                    let label = format!(">{variant} · {mode} · {bs}<");
                    assert!(chart.contains(&label), "{id} lacks {label}: {chart}");
                }
            }
        }
    }
    // The forest plot and the summary say each setting by its mode.
    let summary = section(&html, "summary");
    assert!(
        summary.contains("xfs-noatime vs ext4-relatime, rndrd, 16K, 16 sessions: throughput +"),
        "{summary}"
    );
    // The comparison's tables count I/O operations, not transactions or queries.
    let compared = &html[html.find("<h2>xfs-noatime vs ext4-relatime</h2>").unwrap()..];
    let compared = &compared[..compared.find("<h2 id=").unwrap()];
    assert_eq!(compared.matches("<td>IOPS</td>").count(), 6, "{compared}");
    assert!(!compared.contains("<td>qps"), "{compared}");
    let best = section(&html, "best");
    let xfs = &best[best.find("<td>xfs-noatime</td>").expect("xfs' best")..];
    let xfs = &xfs[..xfs.find("</tr>").unwrap()];
    // Its unstable random 4K reads are left out: its random 16K reads are the best stable.
    assert!(
        xfs.contains("file_block_size=16K file_test_mode=rndrd"),
        "xfs' best is not its best stable setting: {xfs}"
    );
    assert!(best.contains("<th>IOPS</th><th>MiB/s</th>"), "{best}");
    // None stable: the best result says so.
    let (_, html) = assert_legible(&s, "fileio-unstable");
    let best = section(&html, "best");
    assert_eq!(
        best.matches("none: no setting was stable").count(),
        2,
        "{best}"
    );
}

/// An event histogram of `n` latencies as a loaded server gives them: most near `p50` ms, p99
/// ten times that, and a tail to a hundred times it.
fn event_histogram(n: u64, p50: f64) -> qpslab_core::result::HistogramBlob {
    use hdrhistogram::serialization::{Serializer, V2Serializer};
    let mut h = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).unwrap();
    for i in 0..n {
        // 1/(1-f) is HdrHistogram's x: latency grows as its square root, then steeper.
        let x = 1.0 / (1.0 - i as f64 / n as f64);
        let ms = p50 * (x / 2.0).sqrt() * if x > 100.0 { x / 100.0 } else { 1.0 };
        h.record((ms.min(p50 * 100.0) * 1000.0) as u64).unwrap();
    }
    let mut v2 = Vec::new();
    V2Serializer::new().serialize(&h, &mut v2).unwrap();
    qpslab_core::result::HistogramBlob {
        name: "event".into(),
        v2,
    }
}

/// The server's readings at each interval of `p`: rows read, threads running, dirty pages and
/// its CPU.
fn telemetry(p: &PhaseResult) -> Vec<qpslab_store::TelemetrySample> {
    use qpslab_core::telemetry::{ProcUsage, Reading, StatusCounts, Tick, TickChange};
    p.samples
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut status = StatusCounts::default();
            status
                .counters
                .insert("Rows_read".into(), (s.events * 10) as i64);
            status.gauges.insert(
                "Threads_running".into(),
                u64::from(p.threads) + (i % 2) as u64,
            );
            status
                .gauges
                .insert("Innodb_buffer_pool_pages_dirty".into(), 100 + 7 * i as u64);
            qpslab_store::TelemetrySample {
                elapsed_s: s.elapsed_s,
                reading: Reading::Tick(Tick::Change(TickChange {
                    interval_s: s.interval_s,
                    status,
                    server: Some(ProcUsage {
                        user_s: 0.2,
                        sys_s: 0.1,
                        rss_kib: 100_000,
                        io: None,
                    }),
                    client: None,
                })),
            }
        })
        .collect()
}

/// A lone run (`qpslab run`) at 1, 4 and 16 sessions, each phase with its kept warm-up, its
/// event histogram and the server's readings; its id.
fn store_run(store: &mut Store) -> i64 {
    let mut plan = RunPlan::new(WorkloadOptions::new(WorkloadKind::OltpReadWrite));
    plan.threads = vec![1, 4, 16];
    plan.warmup_s = 2.0;
    plan.report_interval_s = 0.5;
    let meta = RunMeta {
        uuid: "lone-run".into(),
        started_at: 1_700_000_000.0,
        command: "qpslab run --threads 1,4,16".into(),
        plan,
        target: "root@localhost/sbtest".into(),
        server: qpslab_core::ServerInfo {
            version: "10.11.6-MariaDB".into(),
            flavor: "mariadb".into(),
            ..Default::default()
        },
        host: Default::default(),
        tool_version: "0.1.0".into(),
        study_id: None,
        cell_label: None,
    };
    let mut run = None;
    for (k, t) in [1u32, 4, 16].into_iter().enumerate() {
        let tps = 600.0 * f64::from(t).sqrt();
        let p50 = 1.5 + 0.5 * k as f64;
        let mut p = phase(t, tps, p50 * 10.0, 24, k);
        p.warmup = phase(t, tps * 0.7, p50 * 20.0, 4, k + 7)
            .samples
            .into_iter()
            .map(|mut s| {
                s.elapsed_s -= 2.0;
                s
            })
            .collect();
        p.histograms = vec![event_histogram(5000, p50)];
        p.stability = Some(Stability { reasons: vec![] });
        let ticks = telemetry(&p);
        run = Some(store.record_phase(&meta, &p, &ticks).unwrap());
    }
    store.finish_run("lone-run", RunStatus::Completed).unwrap();
    run.unwrap().0
}

/// A tune session's proof study as `qpslab tune` stores it: its spec from
/// [`qpslab_tune::confirm::proof_spec`], baseline and tuned cells in the confirmation's order
/// ([`qpslab_tune::confirm::order`]) at 8 sessions on one workload, the tuned server's variables
/// changed, and the confirmation's conclusion in its environment.
fn store_tune_study(store: &mut Store, name: &str, rounds: u32) {
    let order = qpslab_tune::confirm::order(rounds);
    let mut seen: BTreeMap<&str, u32> = BTreeMap::new();
    let cells: Vec<Cell> = order
        .iter()
        .enumerate()
        .map(|(i, side)| {
            let n = seen.entry(side.name()).or_default();
            *n += 1;
            Cell {
                seq: i as u32 + 1,
                label: format!("{}/r{n}", side.name()),
                variant: side.name().to_string(),
                levels: BTreeMap::new(),
                params: BTreeMap::new(),
                repeat: *n,
            }
        })
        .collect();
    let description = vec![
        "qpslab tune: confirming innodb_buffer_pool_size=512M, innodb_log_file_size=256M".into(),
    ];
    let spec = qpslab_tune::confirm::proof_spec(name, &description, [3, rounds], 120.0);
    let new = NewStudy {
        name: name.into(),
        spec_toml: spec,
        spec_hash: name.into(),
        env: serde_json::json!({"confirmation": {"verdict": "improvement"}}),
        factors: vec![],
    };
    let id = store.create_study(&new, &cells).unwrap();
    for rec in store.study_cells(id).unwrap() {
        let c = &rec.cell;
        let tuned = c.variant == "tuned";
        let mut plan = RunPlan::new(WorkloadOptions::new(WorkloadKind::OltpReadWrite));
        plan.threads = vec![8];
        plan.report_interval_s = 0.5;
        let uuid = format!("{name}-{}", c.label);
        let variables: BTreeMap<String, String> = [
            (
                "innodb_buffer_pool_size",
                if tuned { "536870912" } else { "134217728" },
            ),
            (
                "innodb_log_file_size",
                if tuned { "268435456" } else { "100663296" },
            ),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let meta = RunMeta {
            uuid: uuid.clone(),
            started_at: 1_700_000_000.0,
            command: "qpslab tune".into(),
            plan,
            target: "root@localhost/sbtest".into(),
            server: qpslab_core::ServerInfo {
                version: "10.11.6-MariaDB".into(),
                flavor: "mariadb".into(),
                variables: variables.into_iter().collect(),
                ..Default::default()
            },
            host: Default::default(),
            tool_version: "0.1.0".into(),
            study_id: None,
            cell_label: None,
        }
        .in_study(name, &c.label);
        store.cell_running(rec.id).unwrap();
        let tps =
            1500.0 * if tuned { 1.25 } else { 1.0 } * (1.0 + 0.02 * wobble(c.seq as usize, 3));
        let mut p = phase(8, tps, if tuned { 9.0 } else { 12.0 }, 12, c.seq as usize);
        p.histograms = vec![event_histogram(4000, if tuned { 2.0 } else { 2.6 })];
        p.stability = Some(Stability { reasons: vec![] });
        let run = store.record_phase(&meta, &p, &[]).unwrap();
        store.finish_run(&uuid, RunStatus::Completed).unwrap();
        store.cell_done(rec.id, run).unwrap();
    }
}

/// Issue 47: the legibility probe passes on a lone run's report (its phases' warm-up, latency
/// distributions and server readings drawn) and on a tune session's proof study.
#[test]
fn a_run_and_a_tune_study_report_have_no_clipped_text_and_distinct_series() {
    let s = Scratch::new();
    let mut store = Store::open(&s.db()).unwrap();
    let run = store_run(&mut store);
    store_tune_study(&mut store, "tune-1700000000-42", 6);
    drop(store);
    let (v, html) = assert_legible(&s, &run.to_string());
    assert!(v["charts"].as_u64().unwrap() >= 8, "{v}");
    for id in [
        "throughput-vs-sessions",
        "throughput-over-time-16",
        "latency-distribution-4",
        "rows-read-over-time-1",
    ] {
        assert!(html.contains(&format!("id=\"{id}\"")), "no chart {id}");
    }
    // The distribution's latency axis is log: ticks a decade apart.
    let at = html.find("id=\"latency-distribution-4\"").unwrap();
    let chart = &html[at..at + html[at..].find("</figure>").unwrap()];
    assert!(
        chart.contains(">1<") && chart.contains(">10<") && chart.contains(">50%<"),
        "{chart}"
    );
    let (v, html) = assert_legible(&s, "tune-1700000000-42");
    assert_eq!(v["first_section"], "summary", "{v}");
    assert_eq!(v["first_chart"], "forest", "{v}");
    let summary = section(&html, "summary");
    assert!(summary.contains("tuned vs baseline"), "{summary}");
    assert!(
        section(&html, "what-changed").contains("innodb_buffer_pool_size"),
        "{html}"
    );
}

/// A series of 24 runs of one benchmark whose throughput drops by 60% after the 12th: the
/// history report draws it legibly, with the change marked and its levels named.
#[test]
fn a_history_report_draws_the_series_with_its_change_point_legibly() {
    let s = Scratch::new();
    let mut store = Store::open(&s.db()).unwrap();
    for i in 0..24usize {
        let mut plan = RunPlan::new(WorkloadOptions::new(WorkloadKind::OltpPointSelect));
        plan.threads = vec![4];
        plan.labels.insert("build".into(), format!("{}", 100 + i));
        let uuid = format!("series-{i}");
        let meta = RunMeta {
            uuid: uuid.clone(),
            started_at: 1_700_000_000.0 + 3600.0 * i as f64,
            command: "qpslab run".into(),
            plan,
            target: "root@localhost/sbtest".into(),
            server: qpslab_core::ServerInfo {
                version: "10.11.6-MariaDB".into(),
                flavor: "mariadb".into(),
                ..Default::default()
            },
            host: Default::default(),
            tool_version: "0.1.0".into(),
            study_id: None,
            cell_label: None,
        };
        let level = if i < 12 { 1000.0 } else { 400.0 };
        let mut p = phase(4, level * (1.0 + 0.02 * wobble(i, 3)), 5.0, 12, i);
        p.stability = Some(Stability { reasons: vec![] });
        store.record_phase(&meta, &p, &[]).unwrap();
        store.finish_run(&uuid, RunStatus::Completed).unwrap();
    }
    drop(store);
    let (v, text) = measure_report(&s, &["--history", "oltp_point_select"]);
    let problems = v["problems"].as_array().unwrap();
    assert!(problems.is_empty(), "{problems:?}");
    assert!(v["charts"].as_u64().unwrap() >= 1, "{v}");
    assert!(text.contains("change point(s) found"), "{text}");
    let change = text
        .lines()
        .flat_map(|l| l.split("<li>"))
        .find(|l| l.contains("between run 12"))
        .unwrap_or_else(|| panic!("{text}"));
    let pct: f64 = change[..change.find('%').unwrap()].parse().unwrap();
    assert!((-62.0..-58.0).contains(&pct), "{change}");
    assert!(text.contains("level between change points"), "{text}");
    // A series that is not there: one line, the user's error, naming what is.
    let o = s.run(&["report", "--history", "nosuch"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("no series matches nosuch"),
        "{}",
        stderr(&o)
    );
}
