//! One number per fact: a real run (oltp_point_select at 1 and 2 threads on the shared test
//! server, `--percentiles 50,95,99`) prints the same p50/p95/p99/max for a phase on every
//! surface: the run's own summary and sweep table, `show`, `show --json`, `show --format csv`,
//! `report --format md` and html (results and best result), `compare`, and `lab show` (table,
//! JSON, CSV) of a one-cell study; each checked against the value computed here from the stored
//! HDR histogram, within the rounding of the digits the surface prints. `show --hlog` writes
//! the histograms as an HdrHistogram interval log that reads back with the same counts and max.

mod common;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use common::*;
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;
use serde_json::Value;
use std::collections::BTreeMap;

/// The figures checked, by name.
const FIGURES: [&str; 4] = ["p50", "p95", "p99", "max"];

/// Latency figures of one phase, by figure name, in ms.
type Figures = BTreeMap<&'static str, f64>;

fn ok(s: &Scratch, args: &[&str]) -> String {
    let o = s.run(args);
    assert!(
        o.status.success(),
        "{args:?}: {}\n{}",
        stdout(&o),
        stderr(&o)
    );
    stdout(&o)
}

fn histogram(hex: &str) -> Histogram<u64> {
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .unwrap()
}

/// Each phase's figures computed from its stored event histogram (threads → figures), from a
/// run's JSON form.
fn truth(doc: &Value) -> BTreeMap<u64, (Figures, Histogram<u64>)> {
    let mut out = BTreeMap::new();
    for ph in doc["phases"].as_array().unwrap() {
        let blob = ph["result"]["histograms"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["name"] == "event")
            .unwrap();
        let h = histogram(blob["v2"].as_str().unwrap());
        let q = |p: f64| h.value_at_quantile(p) as f64 / 1e3;
        let f: Figures = [
            ("p50", q(0.50)),
            ("p95", q(0.95)),
            ("p99", q(0.99)),
            ("max", h.max() as f64 / 1e3),
        ]
        .into();
        out.insert(ph["threads"].as_u64().unwrap(), (f, h));
    }
    out
}

/// Asserts that `printed` (text with `decimals` places) is `want` rounded.
fn same(surface: &str, threads: u64, fig: &str, printed: &str, decimals: i32, want: f64) {
    let got: f64 = printed
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{surface} @{threads} {fig}: '{printed}' is not a number"));
    let slack = 0.5 * 10f64.powi(-decimals) + 1e-9;
    assert!(
        (got - want).abs() <= slack,
        "{surface} at {threads} thread(s): {fig} printed {printed}, the phase's histogram gives {want}"
    );
    eprintln!("{surface:>16} @{threads} {fig}: {printed} (histogram {want})");
}

/// The decimals of a printed number.
fn decimals(s: &str) -> i32 {
    s.trim().split_once('.').map_or(0, |(_, d)| d.len() as i32)
}

/// Rows of an aligned terminal table (header line, dashes, rows) found at `header_start`,
/// as column name → cell.
fn terminal_rows(text: &str, header_start: &str) -> Vec<BTreeMap<String, String>> {
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with(header_start))
        .unwrap_or_else(|| panic!("no table starting '{header_start}' in:\n{text}"));
    // Column spans from the dashes line.
    let dashes = lines[at + 1];
    let mut spans = Vec::new();
    let mut start = None;
    for (i, c) in dashes.char_indices().chain([(dashes.len(), ' ')]) {
        match (c, start) {
            ('-', None) => start = Some(i),
            (' ', Some(s)) => {
                spans.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    let cell = |l: &str, (a, b): (usize, usize)| -> String {
        let chars: Vec<char> = l.chars().collect();
        chars[a.min(chars.len())..b.min(chars.len())]
            .iter()
            .collect::<String>()
            .trim()
            .to_string()
    };
    let names: Vec<String> = spans.iter().map(|s| cell(lines[at], *s)).collect();
    lines[at + 2..]
        .iter()
        .take_while(|l| !l.trim().is_empty() && !l.starts_with("stored as"))
        .map(|l| {
            names
                .iter()
                .cloned()
                .zip(spans.iter().map(|s| cell(l, *s)))
                .collect()
        })
        .collect()
}

/// Rows of a Markdown table whose header line starts with `header_start`.
fn markdown_rows(text: &str, header_start: &str) -> Vec<BTreeMap<String, String>> {
    let split = |l: &str| -> Vec<String> {
        l.trim()
            .trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_string())
            .collect()
    };
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with(header_start))
        .unwrap_or_else(|| panic!("no table starting '{header_start}' in:\n{text}"));
    let names = split(lines[at]);
    lines[at + 2..]
        .iter()
        .take_while(|l| l.starts_with('|'))
        .map(|l| names.iter().cloned().zip(split(l)).collect())
        .collect()
}

/// Rows of the first HTML table whose header holds `first_header`.
fn html_rows(html: &str, first_header: &str) -> Vec<BTreeMap<String, String>> {
    let cells = |row: &str, tag: &str| -> Vec<String> {
        let open = format!("<{tag}");
        let close = format!("</{tag}>");
        row.split(&open)
            .skip(1)
            .map(|c| {
                let body = &c[c.find('>').unwrap() + 1..];
                body[..body.find(&close).unwrap()].to_string()
            })
            .collect()
    };
    let table = html
        .split("<table")
        .find(|t| t.contains(&format!(">{first_header}</th>")))
        .unwrap_or_else(|| panic!("no table with header {first_header}"));
    let table = &table[..table.find("</table>").unwrap()];
    let rows: Vec<&str> = table.split("<tr").skip(1).collect();
    let names = cells(rows[0], "th");
    rows[1..]
        .iter()
        .map(|r| names.iter().cloned().zip(cells(r, "td")).collect())
        .collect()
}

/// Checks the figures of `rows` (one per phase, the thread count in column `at`, read by
/// `threads_of`) against `truth`, the columns named by `column`.
fn check_rows(
    surface: &str,
    rows: &[BTreeMap<String, String>],
    threads_of: impl Fn(&BTreeMap<String, String>) -> u64,
    column: impl Fn(&str) -> String,
    truth: &BTreeMap<u64, (Figures, Histogram<u64>)>,
) {
    assert_eq!(rows.len(), truth.len(), "{surface}: {rows:?}");
    for r in rows {
        let t = threads_of(r);
        for fig in FIGURES {
            let printed = &r[&column(fig)];
            same(
                surface,
                t,
                fig,
                printed,
                decimals(printed),
                truth[&t].0[fig],
            );
        }
    }
}

/// The run's own summaries: one `Latency (ms):` block per phase, in the order they ran.
fn summaries(out: &str) -> Vec<BTreeMap<String, String>> {
    let mut blocks: Vec<BTreeMap<String, String>> = Vec::new();
    let mut inside = false;
    for l in out.lines() {
        if l.starts_with("Latency (ms):") {
            blocks.push(BTreeMap::new());
            inside = true;
        } else if inside && l.starts_with("         ") {
            let (k, v) = l.trim().rsplit_once(':').unwrap();
            let k = match k {
                "max" => "max".to_string(),
                k => format!("p{}", k.trim_end_matches("th percentile")),
            };
            blocks.last_mut().unwrap().insert(k, v.trim().to_string());
        } else {
            inside = false;
        }
    }
    blocks
}

const RUN_ARGS: [&str; 14] = [
    "--tables",
    "1",
    "--table-size",
    "1000",
    "--threads",
    "1,2",
    "--time",
    "3",
    "--warmup",
    "0",
    "--report-interval",
    "0.5",
    "--percentiles",
    "50,95,99",
];

#[test]
fn every_surface_prints_the_phase_histograms_percentiles() {
    let s = Scratch::new();
    let sock = socket();
    sql("DROP DATABASE IF EXISTS one_number");
    prepare_shared(
        &s,
        "oltp_point_select",
        "one_number",
        &["--tables", "1", "--table-size", "1000"],
    );
    let mut args = vec![
        "run",
        "oltp_point_select",
        "--socket",
        &sock,
        "--database",
        "one_number",
    ];
    args.extend(RUN_ARGS);
    let run_out = ok(&s, &args);
    let doc: Value = serde_json::from_str(&ok(&s, &["show", "1", "--json"])).unwrap();
    let truth = truth(&doc);
    assert_eq!(truth.keys().copied().collect::<Vec<_>>(), vec![1, 2]);

    // The live summary of each phase, in the order they ran.
    let blocks = summaries(&run_out);
    assert_eq!(blocks.len(), 2, "{run_out}");
    for (t, b) in [1u64, 2].iter().zip(&blocks) {
        for fig in FIGURES {
            same("summary", *t, fig, &b[fig], 2, truth[t].0[fig]);
        }
    }
    // The run's sweep table and `show`'s.
    let threads = |r: &BTreeMap<String, String>| r["threads"].parse().unwrap();
    let col = |f: &str| format!("{f} ms");
    check_rows(
        "run table",
        &terminal_rows(&run_out, "threads"),
        threads,
        col,
        &truth,
    );
    let show = ok(&s, &["show", "1"]);
    check_rows(
        "show",
        &terminal_rows(&show, "threads"),
        threads,
        col,
        &truth,
    );

    // `show --json`: the summary's figures, and the same as `--format json`.
    for ph in doc["phases"].as_array().unwrap() {
        let t = ph["threads"].as_u64().unwrap();
        for fig in FIGURES {
            let v = ph["latency_ms"][fig].as_f64().unwrap();
            assert_eq!(v, truth[&t].0[fig], "show --json @{t} {fig}");
        }
    }
    let again: Value = serde_json::from_str(&ok(&s, &["show", "1", "--format", "json"])).unwrap();
    assert_eq!(again["phases"], doc["phases"]);

    // CSV: one row per phase, the same columns with or without RUN.
    let csv = ok(&s, &["show", "1", "--format", "csv"]);
    let lines: Vec<&str> = csv.lines().collect();
    let header: Vec<&str> = lines[0].split(',').collect();
    assert_eq!(header[0], "run_id", "{csv}");
    let rows: Vec<BTreeMap<String, String>> = lines[1..]
        .iter()
        .map(|l| {
            header
                .iter()
                .map(|h| h.to_string())
                .zip(l.split(',').map(String::from))
                .collect()
        })
        .collect();
    let csv_col = |f: &str| match f {
        "max" => "lat_max_ms".to_string(),
        f => format!("{f}_ms"),
    };
    check_rows("show csv", &rows, threads, csv_col, &truth);
    assert_eq!(
        ok(&s, &["show", "--format", "csv"]).lines().next(),
        Some(lines[0])
    );

    // The report's results table in Markdown and HTML, and its best result (p99).
    let key =
        |r: &BTreeMap<String, String>| r["at"].trim_start_matches("threads=").parse().unwrap();
    let md = ok(&s, &["report", "1", "--format", "md"]);
    check_rows(
        "report md",
        &markdown_rows(&md, "| variant | at | repeat | run"),
        key,
        col,
        &truth,
    );
    let html = ok(&s, &["report", "1", "--format", "html"]);
    check_rows("report html", &html_rows(&html, "p50 ms"), key, col, &truth);
    for best in markdown_rows(&md, "| variant | at | tps | qps | p99") {
        let t = key(&best);
        same(
            "report best",
            t,
            "p99",
            &best["p99 ms"],
            3,
            truth[&t].0["p99"],
        );
    }

    // compare (a run against itself): each side's value is the phase's.
    let cmp = ok(&s, &["compare", "1", "1"]);
    for t in [1u64, 2] {
        let section = cmp
            .split(&format!("== threads={t} =="))
            .nth(1)
            .unwrap_or_else(|| panic!("{cmp}"));
        for r in terminal_rows(section.trim_start_matches('\n'), "metric") {
            let fig = r["metric"].trim_end_matches(" (ms)");
            if let Some(want) = truth[&t].0.get(fig) {
                same("compare", t, fig, &r["run 1"], 3, *want);
            }
        }
    }
    let cj: Value =
        serde_json::from_str(&ok(&s, &["compare", "1", "1", "--format", "json"])).unwrap();
    for p in cj["points"].as_array().unwrap() {
        let t: u64 = p["key"]
            .as_str()
            .unwrap()
            .trim_start_matches("threads=")
            .parse()
            .unwrap();
        for m in p["metrics"].as_array().unwrap() {
            if let Some(want) = truth[&t].0.get(m["metric"].as_str().unwrap()) {
                assert_eq!(m["a"].as_f64().unwrap(), *want, "compare json @{t}: {m}");
            }
        }
    }

    // The interval log: one line per phase (and per statement kind), read back by
    // hdrhistogram's own reader with the phase's counts and max.
    let hlog = s.path().join("run1.hlog");
    ok(&s, &["show", "1", "--hlog", hlog.to_str().unwrap()]);
    let bytes = std::fs::read(&hlog).unwrap();
    let mut events = BTreeMap::new();
    for e in IntervalLogIterator::new(&bytes) {
        if let LogEntry::Interval(i) = e.unwrap() {
            let raw = STANDARD.decode(i.encoded_histogram()).unwrap();
            let h: Histogram<u64> = Deserializer::new()
                .deserialize(&mut raw.as_slice())
                .unwrap();
            let tag = i.tag().unwrap().as_str().to_string();
            assert!((i.max() - h.max() as f64 / 1e3).abs() < 1e-3, "{tag}");
            events.insert(tag, h);
        }
    }
    for (t, (_, h)) in &truth {
        let got = &events[&format!("threads_{t}")];
        assert_eq!((got.len(), got.max()), (h.len(), h.max()), "threads_{t}");
        assert_eq!(got, h);
    }
    assert!(
        events.contains_key("threads_1.point_selects"),
        "{:?}",
        events.keys()
    );

    lab_show(&s, &sock);
}

/// `lab show` (table, JSON, CSV) of a one-cell study on the same server prints its run's
/// figures.
fn lab_show(s: &Scratch, sock: &str) {
    let spec = s.path().join("one.toml");
    std::fs::write(
        &spec,
        format!(
            "name = \"one\"\n[defaults]\nworkload = \"oltp_point_select\"\ntables = 1\n\
             table_size = 1000\nduration = \"2s\"\nwarmup = 0\nthreads = 2\nretries = 0\n\
             report_interval = 0.5\npercentiles = [50, 95, 99]\n[[variant]]\nname = \"ext\"\n\
             target = \"mysql://root@localhost/one_number?socket={sock}\"\n"
        ),
    )
    .unwrap();
    ok(s, &["lab", "run", spec.to_str().unwrap()]);
    let v: Value = serde_json::from_str(&ok(s, &["lab", "show", "one", "--json"])).unwrap();
    let cell = &v["cells"][0];
    let truth = truth(&cell["run"]);
    let t = 2u64;
    for fig in FIGURES {
        let got = cell["run"]["phases"][0]["latency_ms"][fig]
            .as_f64()
            .unwrap();
        assert_eq!(got, truth[&t].0[fig], "lab show --json {fig}");
    }
    let table = ok(s, &["lab", "show", "one"]);
    let rows = terminal_rows(&table, "seq");
    check_rows("lab show", &rows, |_| t, |f| format!("{f} ms"), &truth);
    let csv = ok(s, &["lab", "show", "one", "--csv"]);
    let lines: Vec<&str> = csv.lines().collect();
    let header: Vec<&str> = lines[0].split(',').collect();
    // The params field is quoted JSON with commas: read the row from its end.
    let mut fields: Vec<&str> = lines[1].rsplit(',').take(header.len() - 6).collect();
    fields.reverse();
    let named: BTreeMap<String, String> = header[header.len() - fields.len()..]
        .iter()
        .map(|h| h.to_string())
        .zip(fields.iter().map(|f| f.to_string()))
        .collect();
    let csv_col = |f: &str| match f {
        "max" => "lat_max_ms".to_string(),
        f => format!("{f}_ms"),
    };
    check_rows("lab show csv", &[named], |_| t, csv_col, &truth);
}
