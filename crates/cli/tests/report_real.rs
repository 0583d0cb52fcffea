//! `qpslab compare` and `qpslab report` on real runs: an A/A comparison is not called
//! significant, an 8M against a 1G buffer pool on a dataset larger than 8M is; the HTML report
//! loads in headless Chromium without errors or requests and every chart draws data.
//!
//! The runs are made once per test process: two sandboxes (innodb_buffer_pool_size 8M and 1G,
//! both with O_DIRECT so the small pool really reads from storage), four interleaved rounds of
//! "8M, 1G, 1G again" in alternating directions, so that machine drift and order effects spread
//! over both sides and each side's repeats give its run-to-run variation.

mod common;
use common::*;
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

struct Runs {
    scratch: Scratch,
    small: Vec<String>,
    big: Vec<String>,
    big_again: Vec<String>,
}

fn measure(s: &Scratch, sandbox: &str, json: &std::path::Path) -> String {
    let o = s.run(&[
        "run",
        "oltp_point_select",
        "--sandbox",
        sandbox,
        "--tables",
        "4",
        "--table-size",
        "100000",
        "--rand-type",
        "uniform",
        "--threads",
        "4",
        "--time",
        "3",
        "--warmup",
        "1",
        "--report-interval",
        "0.25",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    v["run_id"].as_i64().unwrap().to_string()
}

fn runs() -> &'static Runs {
    static RUNS: OnceLock<Runs> = OnceLock::new();
    RUNS.get_or_init(|| {
        let s = Scratch::new();
        for (name, pool) in [("bp8m", "8M"), ("bp1g", "1G")] {
            let o = s.run(&[
                "server",
                "start",
                name,
                "--set",
                &format!("innodb_buffer_pool_size={pool}"),
                "--set",
                "innodb_flush_method=O_DIRECT",
            ]);
            assert!(o.status.success(), "{}", stderr(&o));
        }
        let json = s.path().join("run.json");
        // Each server loads its dataset on its first run; those runs warm up and are not used.
        measure(&s, "bp8m", &json);
        measure(&s, "bp1g", &json);
        let (mut small, mut big, mut big_again) = (Vec::new(), Vec::new(), Vec::new());
        // Rounds alternate direction (8M A A', then A' A 8M), as studies do: a fixed order
        // would make "second run on this server" a hidden factor (seen here: -17% for A').
        for round in 0..4 {
            let order: [(&str, usize); 3] = [("bp8m", 0), ("bp1g", 1), ("bp1g", 2)];
            let mut order = order.to_vec();
            if round % 2 == 1 {
                order.reverse();
            }
            for (server, side) in order {
                let id = measure(&s, server, &json);
                [&mut small, &mut big, &mut big_again][side].push(id);
            }
        }
        for name in ["bp8m", "bp1g"] {
            let _ = s.run(&["server", "stop", name]);
        }
        Runs {
            scratch: s,
            small,
            big,
            big_again,
        }
    })
}

fn compare_json(a: &str, b: &str) -> Value {
    let s = &runs().scratch;
    let o = s.run(&["compare", a, b, "--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap()
}

fn metric<'a>(c: &'a Value, name: &str) -> &'a Value {
    c["points"][0]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"] == name)
        .unwrap_or_else(|| panic!("no {name} in {c}"))
}

#[test]
fn a_a_comparison_is_not_significant() {
    let r = runs();
    let c = compare_json(&r.big.join(","), &r.big_again.join(","));
    for name in ["tps", "qps", "p99"] {
        let m = metric(&c, name);
        eprintln!("A/A {name}: {m}");
        assert_eq!(m["significant"], false, "A/A called significant: {m}");
        assert!(m["ci_low"].as_f64().unwrap() < 0.0 && m["ci_high"].as_f64().unwrap() > 0.0);
    }
    // Same servers, same settings: no configuration difference beyond the run's seed.
    let diffs = c["differences"].as_array().unwrap();
    assert!(
        diffs
            .iter()
            .all(|d| !d["name"].as_str().unwrap().starts_with("server.")),
        "{diffs:?}"
    );
}

#[test]
fn buffer_pool_8m_against_1g_is_significant() {
    let r = runs();
    let c = compare_json(&r.small.join(","), &r.big.join(","));
    let tps = metric(&c, "tps");
    eprintln!("8M vs 1G tps: {tps}");
    assert_eq!(tps["significant"], true, "{c}");
    assert_eq!(tps["verdict"], "better", "{tps}");
    assert!(tps["b"].as_f64().unwrap() > tps["a"].as_f64().unwrap());
    assert!(tps["ci_low"].as_f64().unwrap() > 0.0, "{tps}");
    let diffs = c["differences"].as_array().unwrap();
    let pool = diffs
        .iter()
        .find(|d| d["name"] == "server.innodb_buffer_pool_size")
        .unwrap_or_else(|| panic!("{diffs:?}"));
    assert_eq!(pool["a"], "8388608");
    assert_eq!(pool["b"], "1073741824");
    // The terminal table says the same.
    let o = r
        .scratch
        .run(&["compare", &r.small.join(","), &r.big.join(",")]);
    let out = stdout(&o);
    assert!(
        out.contains("better") && out.contains("innodb_buffer_pool_size"),
        "{out}"
    );
}

/// Where test artifacts (screenshots) are kept: `target/test-artifacts`.
fn artifacts() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/test-artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn chromium(args: &[&str], profile: &std::path::Path) -> std::process::Output {
    Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .output()
        .expect("chromium (apt-get install chromium)")
}

#[test]
fn html_report_loads_in_chromium_and_every_chart_draws() {
    let r = runs();
    let s = &r.scratch;
    let html = s.path().join("report.html");
    let pngs = s.path().join("png");
    let o = s.run(&[
        "report",
        &r.small.join(","),
        &r.big.join(","),
        "--out",
        html.to_str().unwrap(),
        "--png",
        pngs.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&html).unwrap();
    // What changed and the verdict come before any chart.
    let changed = text.find("What changed").unwrap();
    let verdict = text.find("Verdicts").unwrap();
    let first_chart = text.find("<svg").unwrap();
    assert!(changed < verdict && verdict < first_chart);
    assert!(
        text.contains("innodb_buffer_pool_size 8388608 → 1073741824"),
        "{text}"
    );

    let profile = tempfile::tempdir().unwrap();
    let url = format!("file://{}", html.display());
    let dom = chromium(&["--dump-dom", &url], profile.path());
    assert!(dom.status.success(), "{}", stderr(&dom));
    let dump = stdout(&dom);
    let log = stderr(&dom);
    for bad in ["Refused to", "Uncaught", "ERR_", ":CONSOLE("] {
        assert!(!log.contains(bad), "chromium logged '{bad}':\n{log}");
    }
    let svgs = dump.matches("<svg").count();
    assert!(svgs >= 5, "expected the charts in the DOM, found {svgs}");
    // Every chart has at least one series with points.
    for chunk in dump.split("<svg").skip(1) {
        let chart = &chunk[..chunk.find("</svg>").unwrap()];
        let drawn = chart
            .split("data-points=\"")
            .skip(1)
            .filter_map(|x| x[..x.find('"')?].parse::<usize>().ok())
            .any(|n| n > 0);
        assert!(
            drawn,
            "a chart drew no data: {}",
            &chart[..chart.len().min(300)]
        );
    }
    let shot = artifacts().join("report.png");
    let _ = std::fs::remove_file(&shot);
    let o = chromium(
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1280,2000",
            "--hide-scrollbars",
            &url,
        ],
        profile.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::metadata(&shot).unwrap().len() > 20_000);
    // The PNG charts exist and are real images.
    let written: Vec<_> = std::fs::read_dir(&pngs).unwrap().flatten().collect();
    assert_eq!(written.len(), svgs);
    for f in written {
        let bytes = std::fs::read(f.path()).unwrap();
        assert_eq!(&bytes[1..4], b"PNG");
    }
    std::fs::copy(&html, artifacts().join("report.html")).unwrap();
}
