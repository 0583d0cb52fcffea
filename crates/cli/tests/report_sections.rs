//! The HTML report of a real two-variant study stands on its own: opened in headless Chromium
//! it says what ran (workload, options, dataset), on what (server, its settings, the host), how
//! the client was placed, how fast and how stable each phase was, how latency was distributed
//! and what the server did meanwhile, for every session count; setups differ by their variant
//! names and never by a seed. A screenshot is kept in the test artifacts for a look by eye.

mod common;
use common::*;

const SPEC: &str = r#"
name = "two"
description = "buffer pool 8M vs 1G at 1 and 2 sessions"

[defaults]
workload = "oltp_point_select"
tables = 2
table_size = 10000
rand_type = "uniform"
warmup = "1s"
duration = "3s"
report_interval = "500ms"
repeats = 1
retries = 0

[sweep]
threads = [1, 2]

[[variant]]
name = "bp8m"
set = { innodb_buffer_pool_size = "8M", innodb_flush_method = "O_DIRECT" }

[[variant]]
name = "bp1g"
set = { innodb_buffer_pool_size = "1G", innodb_flush_method = "O_DIRECT" }
"#;

/// The text between `<h2 id="ID">` and the next `<h2`.
fn section<'a>(html: &'a str, id: &str) -> &'a str {
    let start = html
        .find(&format!("<h2 id=\"{id}\">"))
        .unwrap_or_else(|| panic!("no section '{id}'"));
    let rest = &html[start + 4..];
    &rest[..rest.find("<h2").unwrap_or(rest.len())]
}

#[test]
fn two_variant_study_report_answers_without_the_terminal() {
    let s = Scratch::new();
    let spec = s.path().join("two.toml");
    std::fs::write(&spec, SPEC).unwrap();
    let o = s.run(&["lab", "run", spec.to_str().unwrap()]);
    assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
    let html_path = s.path().join("report.html");
    let o = s.run(&["report", "two", "--out", html_path.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(&html_path).unwrap();

    // What ran, on what, who ran it when.
    let context = section(&html, "context");
    let host = qpslab_probe::host_facts();
    for want in [
        "oltp_point_select",
        "2 table(s) × 10000 rows = 20000 rows",
        "rand.rand_type=uniform",
        "innodb_flush_method",
        "O_DIRECT",
        "MariaDB",
        &host.cpu_model,
        &host.kernel,
        "qpslab",
        "lab run",
    ] {
        assert!(
            context.contains(&qpslab_report::svg::esc(want)),
            "context lacks '{want}'"
        );
    }
    // Setups differ by their variant names, in the buffer pool, never in a seed.
    assert!(context.contains("<th>bp8m</th><th>bp1g</th>"), "{context}");
    assert!(
        context.contains("<td>8388608</td><td>1073741824</td>"),
        "{context}"
    );
    assert!(
        !html.contains("rand.seed") && !html.contains("seed="),
        "a seed is listed"
    );
    // How the client was placed, beside each phase's verdict: below the charts, folded.
    let placement = section(&html, "placement");
    assert!(placement.contains("<details"), "{placement}");
    assert_eq!(placement.matches("event loop").count(), 4, "{placement}");
    assert!(placement.contains("stable"), "{placement}");
    // How fast, how stable, per interval at every session count; how latency is distributed;
    // what the server did.
    for (sec, ids) in [
        // Two session counts: dot plots, not lines over two x values.
        ("scaling", &["throughput-at-1", "p99-at-2"][..]),
        (
            "intervals",
            &[
                "throughput-over-time-1",
                "throughput-over-time-2",
                "p99-over-time-1",
                "p99-over-time-2",
            ],
        ),
        (
            "latency-distribution",
            &["latency-distribution-1", "latency-distribution-2"],
        ),
        (
            "server",
            &[
                "server-cpu-over-time-2",
                "innodb-reads-over-time-1",
                "rows-read-over-time-2",
                "dirty-pages-over-time-1",
                "threads-running-over-time-2",
            ],
        ),
    ] {
        let text = section(&html, sec);
        for id in ids {
            let at = text
                .find(&format!("id=\"{id}\""))
                .unwrap_or_else(|| panic!("section {sec} has no chart {id}"));
            let chart = &text[at..];
            let chart = &chart[..chart.find("</svg>").unwrap()];
            assert!(
                chart.contains("class=\"series\"")
                    || chart.contains("class=\"rows\" data-points=\"2\""),
                "chart {id} drew nothing"
            );
        }
    }
    assert!(section(&html, "intervals").contains("(stable)") || html.contains("(unstable)"));
    let results = section(&html, "results");
    assert!(results.contains("<th>stability</th>"), "{results}");

    // Chromium renders it without a request or an error; keep a screenshot to look at.
    let dom = render_in_chromium(&html_path, "report_sections.png", "1280,2400");
    assert!(dom.contains("id=\"latency-distribution-2\""));
    std::fs::copy(&html_path, artifacts().join("report_sections.html")).unwrap();
}
